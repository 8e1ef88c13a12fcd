"""Stored outcomes of calls with a `_call_id`, on a real database (SQLite and Postgres): a plain tool through the
call pipeline acts once per id, a handler's transaction keeps the outcome with its change, a retry waits for the
attempt in flight, a claim taken over fences the late attempt, and another principal never sees the outcome."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import mcp_types
import pytest
import pytest_asyncio
from pydantic import BaseModel

from webapp import CallContext, Database, open_database
from webapp.core.context import Caller
from webapp.responses import success
from webapp.tools import Tool
from webapp.tools.outcomes import Claim, Done, Outcome, OutcomeLost, OutcomeStore

CALL_ID = {"type": "string", "minLength": 1, "maxLength": 64}


class Book(BaseModel):
    units: int


@pytest.fixture
def db(database: str) -> Iterator[Database]:
    with contextlib.closing(open_database(database)) as conn:
        conn.execute("CREATE TABLE booked (units BIGINT NOT NULL)")
        yield conn


@pytest_asyncio.fixture(loop_scope="session")
async def store(database: str, db: Database) -> AsyncIterator[OutcomeStore]:
    outcomes = OutcomeStore(database, claim_for=5.0)
    await outcomes.open()
    yield outcomes
    await outcomes.close()


def ctx(principal: str = "alice") -> CallContext:
    return CallContext(Caller(principal=principal, session_id=None, protocol="2026-07-28"), "book")


def text(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


def same(*results: mcp_types.CallToolResult) -> bool:
    return len({str(result.model_dump(exclude={"meta"})) for result in results}) == 1


def booked(db: Database) -> int:
    return int(db.execute("SELECT count(*) FROM booked").fetchone()[0])


def booking_tool(
    db: Database, store: OutcomeStore, gate: asyncio.Event | None = None, entered: asyncio.Event | None = None
) -> Tool:
    async def book(params: Book, *, ctx: CallContext) -> dict[str, Any]:
        if entered is not None:
            entered.set()
        if gate is not None:
            await gate.wait()
        value = {"units": params.units, "booked": booked(db) + 1}
        with db.transaction("test"):
            db.execute("INSERT INTO booked (units) VALUES (?)", (params.units,))
            if ctx.outcome is not None:  # a call with a _call_id
                ctx.outcome.store(db, value)
        return value

    return (
        Tool("book", description="Books units.", handler=book, input=Book)
        .reserve("_call_id", CALL_ID)
        .keep_outcomes(store)
    )


async def test_a_repeated_call_id_gets_the_stored_outcome_and_acts_once(db: Database, store: OutcomeStore) -> None:
    tool = booking_tool(db, store)
    first = await tool.call({"units": 3, "_call_id": "c-1"}, ctx())
    again = await tool.call({"units": 3, "_call_id": "c-1"}, ctx())
    assert not first.is_error and same(first, again) and booked(db) == 1
    other = await tool.call({"units": 4, "_call_id": "c-1"}, ctx())
    assert other.is_error and 'code="INVALID_INPUT"' in text(other) and "'c-1'" in text(other)
    assert booked(db) == 1
    theirs = await tool.call({"units": 3, "_call_id": "c-1"}, ctx("mallory"))  # another principal's id space
    assert not theirs.is_error and not same(theirs, first) and booked(db) == 2
    fresh = await tool.call({"units": 3}, ctx())  # no id: no outcome kept, acts every time
    assert not fresh.is_error and booked(db) == 3


async def test_retries_while_the_first_attempt_runs_wait_for_it_instead_of_acting(
    db: Database, store: OutcomeStore
) -> None:
    gate, entered = asyncio.Event(), asyncio.Event()
    tool = booking_tool(db, store, gate, entered)
    calls = [asyncio.create_task(tool.call({"units": 1, "_call_id": "c-2"}, ctx())) for _ in range(4)]
    async with asyncio.timeout(5):
        await entered.wait()  # one attempt claimed the id; the others' lookups were handed over with its own
    gate.set()
    results = await asyncio.gather(*calls)
    assert same(*results) and not results[0].is_error and booked(db) == 1


async def test_an_attempt_whose_claim_was_taken_over_changes_nothing(db: Database, database: str) -> None:
    key = ("alice", "book", "c-3")
    slow = OutcomeStore(database, claim_for=0.0)  # every claim counts as abandoned at once
    await slow.open()
    try:
        first, second = await slow.begin(key, "args"), await slow.begin(key, "args")  # the second takes it over
        assert isinstance(first, Claim) and isinstance(second, Claim) and first != second
        late = Outcome(key, first.token, success)
        with pytest.raises(OutcomeLost), db.transaction("test"):
            db.execute("INSERT INTO booked (units) VALUES (1)")
            late.store(db, {"units": 1})
        assert booked(db) == 0 and late.result is None
        Outcome(key, second.token, success).store(db, {"units": 2})
        assert isinstance(done := await slow.begin(key, "args"), Done) and "2" in text(done.result)
    finally:
        await slow.close()


async def test_two_stores_under_one_claim_commit_once(db: Database, store: OutcomeStore) -> None:
    key = ("alice", "book", "c-4")
    claim = await store.begin(key, "args")
    assert isinstance(claim, Claim)
    first, copy = Outcome(key, claim.token, success), Outcome(key, claim.token, success)  # a request delivered twice
    with db.transaction("test"):
        db.execute("INSERT INTO booked (units) VALUES (1)")
        first.store(db, {"units": 1})
    with pytest.raises(OutcomeLost), db.transaction("test"):
        db.execute("INSERT INTO booked (units) VALUES (1)")
        copy.store(db, {"units": 1})
    assert booked(db) == 1 and copy.result is None
