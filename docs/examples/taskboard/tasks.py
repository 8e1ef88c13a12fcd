"""The task board's vocabulary: its columns, a task, and the pydantic inputs of its tools."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["COLUMNS", "BoardInput", "Column", "MoveTask", "NewTask", "Task"]

Column = Literal["todo", "doing", "done"]
COLUMNS: tuple[Column, ...] = ("todo", "doing", "done")


class BoardInput(BaseModel):
    """The opening tool's input (`taskboard`), and the fields `taskboard_update` may change."""

    model_config = ConfigDict(extra="forbid")  # a mistyped field is a validation error, not ignored

    title: str = Field(default="Tasks", min_length=1, max_length=80, description="The heading of the board.")
    show_done: bool = Field(default=True, description="Whether the board shows its 'done' column.")


class NewTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=120, description="What is to be done, in a few words.")
    column: Column = Field(default="todo", description="Where the task starts: todo, doing or done.")


class MoveTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: int = Field(ge=1, description="The task's id, as taskboard_add_task or taskboard_summary gave it.")
    to: Column = Field(description="The column to move the task to: todo, doing or done.")


class Task(BaseModel):
    """One task as the agent sees it (and as the view keeps it in its saved data)."""

    id: int
    title: str
    column: Column
