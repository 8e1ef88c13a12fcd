"""Why a call could not reach a view, and the exact error envelopes the agent gets for it (apps.md §11)."""

from __future__ import annotations

from typing import Literal

from webapp.responses.builder import BuiltResult, tool_error

__all__ = ["ViewError", "ViewErrorCode"]

ViewErrorCode = Literal[
    "VIEW_NOT_OPEN",
    "VIEW_OPENING",
    "VIEW_CLOSED",
    "VIEW_REPLACED",
    "VIEW_AMBIGUOUS",
    "VIEW_UNKNOWN",
    "VIEW_TIMEOUT",
    "TOO_MANY_VIEWS",
    "VIEW_UNAVAILABLE",
    "BRIDGE_UNAVAILABLE",
]


_SHOWN_ID = 64  # characters of a caller's view id an error repeats (the `_view` schema allows no more)


def _seconds(value: float) -> str:
    return f"{value:g}"


def _shown(view: str) -> str:
    return view if len(view) <= _SHOWN_ID else view[:_SHOWN_ID] + "…"


class ViewError(Exception):
    """A call to an app's view failed before or around its handler; `result()` is the envelope for the agent.

    `view` is the id the caller passed (only VIEW_REPLACED and VIEW_UNKNOWN show it, and only to that caller).
    """

    def __init__(self, code: ViewErrorCode, app: str, *, view: str = "", seconds: float = 0.0, limit: int = 0) -> None:
        self.code: ViewErrorCode = code
        self.app = app
        self.view = view
        self.seconds = seconds
        self.limit = limit
        super().__init__(f"{code} ({app})")  # never the view id: exception texts may reach logs

    @property
    def message(self) -> str:
        app, view = self.app, _shown(self.view)
        match self.code:
            case "VIEW_NOT_OPEN":
                return f"The view '{app}' is not open in this conversation. Call the tool '{app}' to open it."
            case "VIEW_OPENING":
                return f"The view '{app}' is still opening: no browser has attached to it yet."
            case "VIEW_CLOSED":
                return f"The view '{app}' was closed. Call the tool '{app}' to open it again."
            case "VIEW_REPLACED":
                return f"The view '{view}' was replaced by a newer '{app}' view."
            case "VIEW_AMBIGUOUS":
                return f"Several '{app}' views are open; pass _view to choose one."
            case "VIEW_UNKNOWN":
                return f"No '{app}' view has the id '{view}'."
            case "VIEW_TIMEOUT":
                return (
                    f"The view '{app}' did not answer within {_seconds(self.seconds)} seconds; "
                    "the action may not have run."
                )
            case "VIEW_UNAVAILABLE":
                return f"The server holding the view '{app}' is gone; its tab reconnects on its own."
            case "BRIDGE_UNAVAILABLE":
                return f"The view '{app}' is served by another worker, which cannot be reached now."
            case "TOO_MANY_VIEWS":
                return (
                    f"No new '{app}' view was opened: {self.limit} views are already open for this caller, "
                    "which is the limit."
                )

    @property
    def recovery(self) -> str | None:
        app = self.app
        match self.code:
            case "VIEW_NOT_OPEN":
                return f"Call '{app}' first, then retry this call."
            case "VIEW_OPENING":
                return "Ask the user to open the view's URL, then retry."
            case "VIEW_REPLACED":
                return f"Retry without _view, or call '{app}'."
            case "VIEW_AMBIGUOUS":
                return f"Call '{app}' to get the id of your view."
            case "VIEW_UNKNOWN":
                return f"Call '{app}' to open a view."
            case "TOO_MANY_VIEWS":
                return "Pass _view to reuse one of your open views, or ask the user to close view tabs, then retry."
            case "VIEW_TIMEOUT":
                return "Retry with the same _call_id."
            case "VIEW_UNAVAILABLE" | "BRIDGE_UNAVAILABLE":
                return "Retry in a few seconds with the same _call_id."
            case "VIEW_CLOSED":
                return None

    def result(self) -> BuiltResult:
        """The `tool_error` envelope of apps.md §11."""
        actions = (self.app,) if self.code == "VIEW_NOT_OPEN" else ()
        return tool_error(self.code, message=self.message, suggestion=self.recovery, available_actions=actions)
