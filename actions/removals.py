"""Asking the person before an agent takes more than half of an item's stock (apps.md §17): the question, the form
the person answers, and the answer an agent gets when the person says no."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from actions.domain import MAX_REASON_LENGTH, StockRow
from actions.inputs import AdjustStockInput
from actions.store import InventoryStore
from webapp import BuiltResult, CallContext, tool_error

__all__ = ["QUESTION_KEY", "Removal", "RemovalApproval", "ask_before_removal", "is_large_removal"]

QUESTION_KEY: Final = "large_removal"
"""The key of the question on the wire (`inputRequests` in 2026)."""


class RemovalApproval(BaseModel):
    """The form the person fills to let a large removal go ahead."""

    model_config = ConfigDict(str_strip_whitespace=True, title="Approve the removal")

    reason: str = Field(
        min_length=1,
        max_length=MAX_REASON_LENGTH,
        title="Reason",
        description=(
            "Why this much stock leaves, in a few words (e.g. 'Pallet damaged in transit'); recorded with the "
            "movement. Decline to keep the stock as it is."
        ),
    )


@dataclass(frozen=True, slots=True)
class Removal:
    """Whether a removal goes on: with `reason` to record, or not at all (`refused`: the agent's answer)."""

    reason: str = ""
    refused: BuiltResult | None = None


def is_large_removal(delta: int, row: StockRow) -> bool:
    """More than half of the item's on-hand units, and no more than are available (a removal the store refuses
    anyway is not worth a question: the agent gets INSUFFICIENT_STOCK)."""
    taken = -delta
    return delta < 0 and taken * 2 > row.on_hand and taken <= row.available


def question(row: StockRow, delta: int, reason: str) -> str:
    """What the person reads: stating the figures, so a changed stock asks again (an answer fits one question)."""
    return (
        f"The agent wants to take {-delta} of the {row.on_hand} units of {row.sku} ({row.name}) on hand in "
        f"warehouse {row.warehouse}: more than half of its stock. The agent's reason: {reason!r}. Give the reason "
        "to record to let it go ahead, or decline to change nothing."
    )


async def ask_before_removal(
    ctx: CallContext | None, store: InventoryStore, warehouse: str, params: AdjustStockInput
) -> Removal:
    """Ask the person before a large removal (`is_large_removal`, of the item's stock in `warehouse` as the store
    has it now) when the client can ask them; else (an addition, a small removal, a client without elicitation) the
    agent's own reason goes on unasked. Call it before any side effect: a call that asks runs again from the start
    with the answer. An unknown sku raises the store's `UnknownSku`."""
    if ctx is None or params.delta >= 0 or not ctx.supports(elicitation=True):
        return Removal(reason=params.reason)
    row = store.get_stock(params.sku, warehouse)
    if not is_large_removal(params.delta, row):
        return Removal(reason=params.reason)
    asked = question(row, params.delta, params.reason)
    answer: Any = await ctx.elicit(asked, RemovalApproval, key=QUESTION_KEY)
    if answer.action == "accept":
        approval: RemovalApproval = answer.data
        return Removal(reason=approval.reason)
    return Removal(refused=removal_refused(row, params.delta, str(answer.action)))


def removal_refused(row: StockRow, delta: int, action: str) -> BuiltResult:
    """A warning, not an error (`isError` false): the person answered, and the answer is the call's outcome (a retry
    with the same `_call_id` gets it again without asking)."""
    said = "declined" if action == "decline" else "dismissed the question about"
    return tool_error(
        "REMOVAL_DECLINED",
        severity="warning",
        message=(
            f"The person {said} taking {-delta} of the {row.on_hand} units of {row.sku} in warehouse "
            f"{row.warehouse}. Nothing was changed."
        ),
        suggestion=(
            "Tell the person the stock is unchanged. Book the removal again only if they ask for it "
            "(with a new _call_id if you send one): they will be asked again."
        ),
        details={
            "sku": row.sku,
            "warehouse": row.warehouse,
            "on_hand": row.on_hand,
            "requested": -delta,
            "answer": action,
        },
    )
