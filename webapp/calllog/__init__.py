"""The record of every MCP call: kept in memory with secrets masked, persisted in the framework's tables."""

from webapp.calllog.memory import CallLog, CallRecord, Masker, Subscription, clip, mask_secret, note_routed_view
from webapp.calllog.store import DEFAULT_KEEP, DEFAULT_MAX_AGE, CallLogStore

__all__ = [
    "DEFAULT_KEEP",
    "DEFAULT_MAX_AGE",
    "CallLog",
    "CallLogStore",
    "CallRecord",
    "Masker",
    "Subscription",
    "clip",
    "mask_secret",
    "note_routed_view",
]
