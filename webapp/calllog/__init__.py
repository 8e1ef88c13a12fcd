"""The record of every MCP call: kept in memory with secrets masked, persisted in the framework's tables, shared
between workers."""

from webapp.calllog.masking import Masker, mask_secret
from webapp.calllog.memory import CallKey, CallLog, CallRecord, Subscription, clip, note_routed_view
from webapp.calllog.outcome import CANCELLED_TEXT, cancelled_result, outcome_code
from webapp.calllog.shared import TOPIC, CallSharing
from webapp.calllog.store import DEFAULT_KEEP, DEFAULT_MAX_AGE, CallLogStore

__all__ = [
    "CANCELLED_TEXT",
    "DEFAULT_KEEP",
    "DEFAULT_MAX_AGE",
    "TOPIC",
    "CallKey",
    "CallLog",
    "CallLogStore",
    "CallRecord",
    "CallSharing",
    "Masker",
    "Subscription",
    "cancelled_result",
    "clip",
    "mask_secret",
    "note_routed_view",
    "outcome_code",
]
