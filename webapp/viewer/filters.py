"""Which calls the viewer's list shows, read from and written to the page's query string."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from webapp.calllog.memory import CallKey, CallRecord

__all__ = ["Filters", "call_key", "call_ref"]

_MASK_LEN = 6


def _prefix(value: str | None) -> str | None:
    if not value:
        return None
    value = value.removesuffix("…")[:_MASK_LEN]
    return value or None


@dataclass(frozen=True)
class Filters:
    """Which calls the list shows; `view` and `session` match by their masked 6-character prefix."""

    tool: str | None = None
    view: str | None = None
    session: str | None = None
    errors: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "view", _prefix(self.view))
        object.__setattr__(self, "session", _prefix(self.session))
        object.__setattr__(self, "tool", self.tool or None)

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> Filters:
        flag = params.get("errors", "").lower()
        return cls(
            tool=params.get("tool") or None,
            view=params.get("view"),
            session=params.get("session"),
            errors=flag in ("1", "true", "yes", "on"),
        )

    def query(self, call: str | int | None = None) -> str:
        items = {"tool": self.tool, "view": self.view, "session": self.session, "errors": "1" if self.errors else None}
        items["call"] = None if call is None else str(call)
        return urlencode({key: value for key, value in items.items() if value}, safe=":")  # `call=w1:7` reads as is

    def matches(self, record: CallRecord) -> bool:
        if self.tool and record.tool != self.tool:
            return False
        if self.errors and not record.is_error:
            return False
        if self.view and not (record.view or "").startswith(self.view):
            return False
        return not (self.session and not (record.session_id or "").startswith(self.session))


def call_ref(key: CallKey) -> str:
    """How a link names a call: its seq, after its worker's id and `:` when there are several workers."""
    worker, seq = key
    return f"{worker}:{seq}" if worker else str(seq)


def call_key(ref: str, worker: str) -> CallKey | None:
    """The call a link names (`call_ref`); a bare seq is one of `worker`'s calls."""
    named, _, seq = ref.rpartition(":")
    return (named or worker, int(seq)) if seq.isdigit() and seq.isascii() else None
