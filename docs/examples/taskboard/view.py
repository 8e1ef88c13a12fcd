"""The task board's live view: a NiceGUI page of three columns, the tools an agent drives it with, its updates."""

from __future__ import annotations

from typing import Any

from nicegui import ui

from docs.examples.taskboard.presenters import BOARD
from docs.examples.taskboard.tasks import COLUMNS, BoardInput, Column, MoveTask, NewTask, Task
from webapp import BuiltResult, McpAppUpdateEvent, ResponseBuilder, ViewContext, mcp_app, mcp_app_action, tool_error

__all__ = ["TaskBoardView"]


# --8<-- [start:app]
@mcp_app(
    description="Shows a task board (todo, doing, done) the user watches while you plan and track work.",
    route="/taskboard",
    input=BoardInput,
)
class TaskBoardView:
    def __init__(self, view: ViewContext[BoardInput]) -> None:
        self.view = view
        if not view.data:  # a new view; a reloaded or restarted one gets its saved data back
            opening = view.input or BoardInput()
            view.data.update(title=opening.title, show_done=opening.show_done, tasks=[], next_id=1)
        self.heading = ui.label(self.view.data["title"]).classes("text-2xl").props("data-testid=board-title")
        self.columns()

    # --8<-- [end:app]
    # --8<-- [start:render]
    @property
    def tasks(self) -> list[Task]:
        return [Task.model_validate(task) for task in self.view.data["tasks"]]

    @ui.refreshable_method
    def columns(self) -> None:
        shown = [column for column in COLUMNS if column != "done" or self.view.data["show_done"]]
        with ui.row().classes("w-full items-start gap-4"):
            for column in shown:
                with ui.card().classes("w-64").props(f"data-testid=column-{column}"):
                    ui.label(column).classes("text-lg font-bold")
                    for task in self.tasks:
                        if task.column == column:
                            self.card(task)

    def card(self, task: Task) -> None:
        with ui.row().classes("w-full items-center justify-between").props(f"data-testid=task-{task.id}"):
            ui.label(task.title)
            if task.column != "done":  # a person moves a task on by a click, as an agent does by a tool
                ui.button("→", on_click=lambda: self.move_on(task)).props("flat dense data-testid=move-on")

    def move_on(self, task: Task) -> None:
        self.place(task.id, COLUMNS[COLUMNS.index(task.column) + 1])
        self.view.save()  # a person's change is saved at once; an agent's call is saved when it ends

    def place(self, task_id: int, column: Column) -> None:
        for task in self.view.data["tasks"]:
            if task["id"] == task_id:
                task["column"] = column
        self.columns.refresh()

    # --8<-- [end:render]
    # --8<-- [start:actions]
    @mcp_app_action(description="Adds a task to the board (to 'todo' unless you name a column). Returns the task.")
    def add_task(self, params: NewTask) -> Task:
        task = Task(id=self.view.data["next_id"], title=params.title, column=params.column)
        self.view.data["next_id"] = task.id + 1
        self.view.data["tasks"].append(task.model_dump())
        self.columns.refresh()
        return task

    @mcp_app_action(description="Moves a task to another column. Returns the task where it is now.")
    def move_task(self, params: MoveTask) -> Task | BuiltResult:
        if not any(task.id == params.task_id for task in self.tasks):
            return tool_error(
                "NOT_FOUND",
                message=f"No task has the id {params.task_id}.",
                suggestion="Call taskboard_summary to see every task with its id.",
                available_actions=["taskboard_summary"],
            )
        self.place(params.task_id, params.to)
        return next(task for task in self.tasks if task.id == params.task_id)

    @mcp_app_action(description="Every task on the board with a chart of tasks per column.", returns=BOARD)
    def summary(self) -> list[Task]:
        return self.tasks

    # --8<-- [end:actions]
    # --8<-- [start:update]
    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> ResponseBuilder:
        changed = event.arguments_as(BoardInput)
        sent: dict[str, Any] = {name: getattr(changed, name) for name in event.fields_set}
        self.view.data.update(sent)
        self.heading.text = self.view.data["title"]
        self.columns.refresh()
        return BOARD.make(self.tasks).llm_hint(f"The board now shows: {', '.join(sorted(sent)) or 'no change'}.")

    # --8<-- [end:update]
