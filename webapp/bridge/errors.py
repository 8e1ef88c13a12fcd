"""Why a call could not reach a view, and the error envelope the agent gets for it (apps.md §11; the texts are the
registry's, `webapp.responses.codes`)."""

from __future__ import annotations

from typing import Literal

from webapp.responses.builder import BuiltResult, tool_error
from webapp.responses.codes import error_code

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
        return self._texts()[0]

    @property
    def recovery(self) -> str | None:
        return self._texts()[1]

    def _texts(self) -> tuple[str, str | None]:
        values = {"app": self.app, "view": _shown(self.view), "seconds": f"{self.seconds:g}", "limit": self.limit}
        return error_code(self.code).texts(**values)

    def result(self) -> BuiltResult:
        """The `tool_error` envelope of apps.md §11."""
        actions = (self.app,) if self.code == "VIEW_NOT_OPEN" else ()
        return tool_error(self.code, message=self.message, suggestion=self.recovery, available_actions=actions)
