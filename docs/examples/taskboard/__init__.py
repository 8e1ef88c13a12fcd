"""The tutorial's task board: `build(webapp)` is its `--app` factory (`docs.examples.taskboard:build`)."""

from __future__ import annotations

from docs.examples.taskboard.view import TaskBoardView
from webapp import WebApp, install_apps

__all__ = ["TaskBoardView", "build"]


def build(webapp: WebApp) -> None:
    """Serve the task board at `/taskboard` with its tools (`taskboard`, `taskboard_update`, `taskboard_*`)."""
    install_apps(webapp, TaskBoardView)
