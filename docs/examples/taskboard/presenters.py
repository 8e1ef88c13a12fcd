"""How the task board answers an agent: the tasks as data, a chart of tasks per column, rules and next steps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from docs.examples.taskboard.tasks import COLUMNS, Task
from webapp import Presenter, Suggestion, UiBlock, ui

__all__ = ["BOARD"]


def _board_ui(tasks: list[dict[str, Any]], ctx: Any) -> Iterable[UiBlock | None]:
    counts = [sum(1 for task in tasks if task["column"] == column) for column in COLUMNS]
    chart = {
        "tooltip": {"trigger": "axis"},
        "xAxis": {"type": "category", "data": list(COLUMNS)},
        "yAxis": {"type": "value", "minInterval": 1},
        "series": [{"name": "tasks", "type": "bar", "data": counts, "color": "#4f46e5"}],
    }
    open_tasks = counts[0] + counts[1]
    return [
        ui.echarts(chart, title="Tasks per column", width="full"),
        ui.summary(f"{len(tasks)} task(s) on the board, {open_tasks} still open."),
    ]


def _board_suggestions(task: dict[str, Any], ctx: Any) -> Iterable[Suggestion | None]:
    return [Suggestion("taskboard_move_task", "Move a task to another column by its id.")]


BOARD = (
    Presenter("Board", Task)
    .collection_ui(_board_ui)
    .rules(["A task's column is todo, doing or done; ids never change."])
    .suggest(_board_suggestions)
)
