"""Once, not twice: the pipeline of a tool call that sends a `_call_id` (its outcome kept in `webapp.tools.outcomes`),
and the envelope of a handler that raised (STORE_UNAVAILABLE when the database is away)."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Final

import mcp_types
from pydantic import BaseModel

from webapp.core.context import CallContext, InputRequired, MissingCapability
from webapp.core.sql import UNAVAILABLE_ERRORS
from webapp.responses.builder import framework_error
from webapp.tools.action import Action, wrap_result
from webapp.tools.outcomes import Claim, Done, Outcome, OutcomeLost, OutcomeStore, arguments_digest

__all__ = ["CALL_ID", "call_once", "failure"]

logger = logging.getLogger(__name__)
CALL_ID: Final = "_call_id"


async def call_once(
    store: OutcomeStore,
    tool: str,
    chosen: Action,
    params: BaseModel | None,
    ctx: CallContext,
    reserved: dict[str, Any],
    select: list[str] | None,
) -> mcp_types.CallToolResult:
    """A call with a `_call_id`: its stored outcome, or the handler run once with `ctx.outcome`. Looked up right
    after the caller is known and before the handler routes anything, so a retry landing on any worker finds it.
    A round that asks the client (`InputRequired`) gives the claim back; a decline the handler returns is the
    call's outcome like any other value."""
    call_id = str(reserved[CALL_ID])
    key = (ctx.caller.principal or "", tool, call_id)
    ctx = dataclasses.replace(ctx, call_id=call_id)
    mine = ctx.claim is None  # a forwarded call runs under the claim its first worker holds
    try:
        if ctx.claim is not None:
            token = ctx.claim
        else:
            sent = params.model_dump(mode="json") if params is not None else None
            found = await store.begin(key, arguments_digest([chosen.name, sent]))
            if isinstance(found, Done):
                return found.result
            if not isinstance(found, Claim):
                return _reused(chosen.label, call_id)
            token = found.token
    except UNAVAILABLE_ERRORS as exc:
        return failure(chosen.label, exc)
    outcome = Outcome(key, token, lambda value: wrap_result(value, chosen.returns, ctx, select))
    ctx = dataclasses.replace(ctx, outcome=outcome)
    try:
        value = await chosen.run(params, ctx, reserved)
        result = outcome.result or wrap_result(value, chosen.returns, ctx, select)
    except (InputRequired, MissingCapability):
        if mine:  # a round that asks gives its claim back: the call with the answers claims it again
            try:
                await store.give_up(key, token)
            except UNAVAILABLE_ERRORS:
                store.give_up_later(key, token)
        raise
    except Exception as exc:
        result = failure(chosen.label, exc)
    if outcome.result is None:  # the handler stored nothing in a transaction of its own
        try:
            if not result.is_error:
                await store.finish(outcome, result)
            elif mine:
                await store.give_up(key, token)
        except UNAVAILABLE_ERRORS:
            logger.warning("the outcome of a %s call could not be kept (the database is away)", tool)
            if result.is_error and mine:
                store.give_up_later(key, token)
    return result


def failure(label: str, exc: Exception) -> mcp_types.CallToolResult:
    """The envelope of a handler that raised: STORE_UNAVAILABLE when the database is away (nothing committed)."""
    if isinstance(exc, UNAVAILABLE_ERRORS):
        logger.warning("Tool call %s: the database cannot be reached (%s)", label, type(exc).__name__)
        return framework_error("STORE_UNAVAILABLE", label=label)
    if isinstance(exc, OutcomeLost):
        return framework_error("VIEW_TIMEOUT", "taken over", label=label)
    logger.error("Tool call %s failed", label, exc_info=exc)
    return framework_error("INTERNAL_ERROR", label=label, error=exc)


def _reused(label: str, call_id: str) -> mcp_types.CallToolResult:
    return framework_error("INVALID_INPUT", label=label, call_id=call_id)
