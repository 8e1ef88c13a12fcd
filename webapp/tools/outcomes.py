"""Stored outcomes of calls with a `_call_id` (framework-owned table `webapp_call_outcomes`): a retry with the same id
gets the first attempt's result, on whichever worker it lands, instead of acting again.

A call first claims its id (a row `running` with a random claim token), then its handler stores the result in its
own write transaction (`ctx.outcome.store(db, value)`), fenced by the token: an attempt whose claim a retry took over
stores nothing, so its transaction rolls back. A retry that finds the id still claimed waits for it (bounded).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types
import orjson

from webapp.core.database import FrameworkTable, dump_json
from webapp.core.sql import Database

__all__ = ["Claim", "Done", "Outcome", "OutcomeLost", "OutcomeStore", "Reused", "arguments_digest"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS webapp_call_outcomes (
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    call_id TEXT NOT NULL,
    arguments TEXT NOT NULL,
    token TEXT NOT NULL,
    worker TEXT,
    state TEXT NOT NULL,
    result TEXT,
    started_at {float} NOT NULL,
    PRIMARY KEY (principal, tool, call_id)
)""",
    "CREATE INDEX IF NOT EXISTS webapp_call_outcomes_by_age ON webapp_call_outcomes (started_at)",
)
_KEY = "principal = ? AND tool = ? AND call_id = ?"
_RUNNING = f"{_KEY} AND token = ? AND state = 'running'"  # an attempt's claim, not yet stored: it stores once
_POLL = 0.02  # seconds between two looks at a claimed id whose first attempt is still running
_ASK = 0.25  # seconds between two questions whether the worker running the first attempt is gone


class OutcomeLost(Exception):
    """The call's claim on its `_call_id` was taken over (or given up) meanwhile: this attempt must change nothing."""


def arguments_digest(arguments: Any) -> str:
    """What tells two calls with one `_call_id` apart: a digest of their validated arguments."""
    return hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class Done:
    """The id already has an outcome: the result to answer with."""

    result: mcp_types.CallToolResult


@dataclass(frozen=True, slots=True)
class Reused:
    """The id stands for a call with other arguments."""


@dataclass(frozen=True, slots=True)
class Claim:
    """This attempt holds the id (its token fences the outcome's write)."""

    token: str


class Outcome:
    """One call's claim on its `_call_id` (`ctx.outcome`): `store` keeps the handler's value as the call's result."""

    def __init__(
        self, key: tuple[str, str, str], token: str, render: Callable[[Any], mcp_types.CallToolResult]
    ) -> None:
        self.key = key
        self.token = token
        self.render = render
        """Turns a handler's value into the tool's result (the pipeline's wrapping; an app layer may wrap it)."""
        self.result: mcp_types.CallToolResult | None = None
        """The result stored (None until `store` ran)."""

    def store(self, db: Any, value: object) -> None:
        """Keep `value` as the call's result in `db`'s open transaction (the handler's); OutcomeLost when a retry
        took the call over, which rolls that transaction back."""
        assert isinstance(db, Database)
        result = self.render(value)
        text = dump_json(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        done = db.execute(
            f"UPDATE webapp_call_outcomes SET state = 'done', result = ? WHERE {_RUNNING}",
            (text, *self.key, self.token),
        )
        if done.rowcount != 1:  # taken over, or stored already: a call delivered twice acts once
            raise OutcomeLost(self.key[1])
        self.result = result


class OutcomeStore(FrameworkTable):
    """Claims and outcomes of `_call_id`s in the app's database (every write commits at once, on the store's thread)."""

    schema = _SCHEMA

    def __init__(self, target: Any, *, claim_for: float) -> None:
        super().__init__(target)
        self.claim_for = claim_for
        """Seconds an attempt may hold an id without an outcome (its longest run); after that a retry takes it over."""
        self._given_up: list[tuple[tuple[str, str, str], str]] = []  # claims to drop once the database answers
        self.worker: str | None = None
        """This worker's id among several (set by `webapp.cluster`): claims name the worker that runs the attempt."""
        self.gone: Callable[[str], Awaitable[bool]] | None = None
        """Whether a worker is gone (set by `webapp.cluster`): a retry takes over a dead worker's claim at once."""
        self.hits = 0
        """Retries answered with their call's stored outcome (the server's metrics read it)."""

    async def begin(self, key: tuple[str, str, str], digest: str) -> Done | Reused | Claim:
        """Claim the id for a new attempt, or the stored outcome; waits (at most `claim_for`) while another attempt
        holds it."""
        while self._given_up:  # claims of attempts that failed while the database was away
            await self.give_up(*self._given_up[-1])
            self._given_up.pop()
        asked = float("-inf")  # time.monotonic() of the last question whether its worker is gone
        while True:
            token = secrets.token_hex(16)
            found = await self._run(self._claim, key, digest, token)
            if isinstance(found, Claim):
                return found
            if found is None:
                continue  # another attempt claimed it just now
            arguments, held, state, result, started, worker = found
            if arguments != digest:
                return Reused()
            if state == "done":
                self.hits += 1
                return Done(mcp_types.CallToolResult.model_validate(orjson.loads(result)))
            abandoned = time.time() - float(started) >= self.claim_for  # `started` is stored: a wall-clock time
            looked = time.monotonic()
            if not abandoned and worker not in (None, self.worker) and self.gone is not None and looked - asked >= _ASK:
                asked = looked
                abandoned = await self.gone(str(worker))  # its worker died with the attempt
            if abandoned:  # that attempt is gone: take the id over
                if await self._run(self._take, key, token, held):
                    return Claim(token)
                continue
            await asyncio.sleep(_POLL)

    async def finish(self, outcome: Outcome, result: mcp_types.CallToolResult) -> None:
        """After a handler that stored nothing itself: keep its result (no-op when a retry took the id over)."""
        text = dump_json(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        await self._run(
            self._write,
            f"UPDATE webapp_call_outcomes SET state = 'done', result = ? WHERE {_RUNNING}",
            (text, *outcome.key, outcome.token),
        )

    def give_up_later(self, key: tuple[str, str, str], token: str) -> None:
        """`give_up` failed (the database is away): drop the claim before this store's next `begin`, so a retry need
        not wait until the claim counts as abandoned."""
        self._given_up.append((key, token))

    async def give_up(self, key: tuple[str, str, str], token: str) -> None:
        """The attempt failed before its handler stored anything: a retry may run the call (an attempt still running
        elsewhere then fails to store, and changes nothing)."""
        await self._run(self._write, f"DELETE FROM webapp_call_outcomes WHERE {_RUNNING}", (*key, token))

    async def prune(self, older_than: float) -> int:
        """Forget outcomes started before `older_than` (seconds since the epoch); how many."""
        return await self._run(self._write, "DELETE FROM webapp_call_outcomes WHERE started_at < ?", (older_than,))

    # -- on the store's thread -------------------------------------------------------------------------------------
    def _claim(self, key: tuple[str, str, str], digest: str, token: str) -> Claim | tuple[Any, ...] | None:
        """The id claimed with `token` when nobody holds it; else its row; None when another attempt claimed it between
        the look and the claim."""
        found = self._conn.execute(
            f"SELECT arguments, token, state, result, started_at, worker FROM webapp_call_outcomes WHERE {_KEY}", key
        ).fetchone()
        if found is not None:
            return tuple(found)
        inserted = self._conn.execute(
            "INSERT INTO webapp_call_outcomes (principal, tool, call_id, arguments, token, worker, state, "
            "started_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?) ON CONFLICT DO NOTHING",
            (*key, digest, token, self.worker, time.time()),
        )
        return Claim(token) if inserted.rowcount == 1 else None

    def _take(self, key: tuple[str, str, str], token: str, held: str) -> bool:
        taken = self._conn.execute(
            f"UPDATE webapp_call_outcomes SET token = ?, worker = ?, started_at = ? WHERE {_KEY} AND token = ?",
            (token, self.worker, time.time(), *key, held),
        )
        return taken.rowcount == 1

    def _write(self, query: str, params: tuple[Any, ...]) -> int:
        return self._conn.execute(query, params).rowcount
