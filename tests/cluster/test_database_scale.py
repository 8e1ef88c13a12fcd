"""The database at scale (apps.md §14.1): a page load, an opening call and a routed call of a worker among several run
as many SQL statements with 2,000 views in the table as with 10, and the routing, sweep and reclaim queries read
`webapp_views` through an index (SQLite's `EXPLAIN QUERY PLAN` shows no scan of it).

One in-process worker (counter app, Redis on loopback) over a database that other principals' views already fill.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_server import InProcess, in_process_server
from webapp.bridge.dispatch import Bridge
from webapp.bridge.store import ViewRow, ViewStore
from webapp.cluster import install_cluster
from webapp.core.dbthread import DatabaseThread
from webapp.core.sql import Database, Rows, open_database
from webapp.server import WebApp

T = TypeVar("T")

TOKEN = "scale-token-5d1c9e"
BACKGROUND = ("webapp-view-sweeps", "looks-")  # the loops of the sweeps and the worker's look at the others


def worker_app(webapp: WebApp) -> Bridge:
    """The counter app on one worker among several (as `webapp serve --redis-url` installs it)."""
    bridge = counter_app(webapp)
    assert install_cluster(webapp) is not None
    return bridge


async def fill(db: Path, views: int) -> None:
    """`views` views of other principals: half held by another worker, half closed and held by nobody."""
    store = ViewStore(db)
    await store.open()
    try:
        for n in range(views):
            live = n % 2 == 0
            store.save_soon(
                ViewRow(
                    handle=f"handle-{n}",
                    attach_key=f"key-{n}",
                    app="counter",
                    principal=f"someone-{n % 97}",
                    session_id=f"session-{n}",
                    bound=True,
                    state="live" if live else "closed",
                    input='{"title": "x"}',
                    data="{}",
                    created=float(n),
                    bound_at=float(n),
                    changed_at=1e12,  # nothing to expire while the test runs
                    worker="elsewhere" if live else None,
                )
            )
    finally:
        await store.close()


class _Counted:
    """A statement's rows, counted as they are fetched."""

    def __init__(self, rows: Rows, fetched: list[int]) -> None:
        self._rows, self._fetched = rows, fetched

    @property
    def rowcount(self) -> int:
        return self._rows.rowcount

    def fetchone(self) -> Any:
        row = self._rows.fetchone()
        self._fetched[0] += row is not None
        return row

    def fetchall(self) -> list[Any]:
        rows = self._rows.fetchall()
        self._fetched[0] += len(rows)
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


@contextlib.contextmanager
def counted(statements: list[str], fetched: list[int]) -> Generator[None]:
    """Record every statement `Database.execute` runs and the rows read, except the background loops' (the stores run
    them on threads of their own: each is tagged by the task that handed it over)."""
    original, handed = Database.execute, DatabaseThread.run
    background = threading.local()

    async def run(self: DatabaseThread, work: Callable[[], T]) -> T:
        task = asyncio.current_task()
        quiet = task is not None and task.get_name().startswith(BACKGROUND)

        def tagged() -> T:
            background.on = quiet
            try:
                return work()
            finally:
                background.on = False

        return await handed(self, tagged)

    def execute(self: Database, sql: str, params: Sequence[Any] = ()) -> Rows:
        if getattr(background, "on", False):
            return original(self, sql, params)
        statements.append(sql)
        return _Counted(original(self, sql, params), fetched)

    Database.execute = execute  # type: ignore[method-assign]
    DatabaseThread.run = run  # type: ignore[method-assign]
    try:
        yield
    finally:
        Database.execute = original  # type: ignore[method-assign]
        DatabaseThread.run = handed  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def counting(counts: dict[str, tuple[int, int]], what: str, server: InProcess) -> AsyncGenerator[None]:
    """`counts[what]`: the statements run and the rows they read meanwhile (the writes handed over without waiting
    included)."""
    statements: list[str] = []
    fetched = [0]
    with counted(statements, fetched):
        yield
        await server.bridge.registry.flush()
    counts[what] = (len(statements), fetched[0])


async def statements_with(folder: Path, views: int, redis_url: str) -> dict[str, tuple[int, int]]:
    """How many statements an opening call, the page load of its view and a call without `_view` run, and how many
    rows they read."""
    await fill(folder / "app.db", views)
    counts: dict[str, tuple[int, int]] = {}
    options: dict[str, Any] = {"token": [f"scaler={TOKEN}"], "browser_confirm": False, "wait_for_live": 5.0}
    async with (
        in_process_server(folder, worker_app, redis_url=redis_url, worker_id="w1", **options) as server,
        server.mcp(TOKEN) as agent,
    ):
        assert server.bridge.transport.shared
        async with counting(counts, "opening call", server):
            opened = await agent.call_tool("counter", {"title": "scale"})
        assert opened.structured_content is not None, opened
        async with counting(counts, "page load", server):
            tab = await server.open_tab(str(opened.structured_content["url"]))
            await server.attached(tab)
        async with counting(counts, "routed call", server):
            result = await agent.call_tool("counter_increment", {})
        assert not result.is_error, result
    return counts


async def test_a_page_load_an_opening_call_and_a_routed_call_run_and_read_as_much_with_2000_views_as_with_10(
    tmp_path: Path, redis_db: str
) -> None:
    few = await statements_with(tmp_path / "few", 10, redis_db)
    many = await statements_with(tmp_path / "many", 2000, redis_db)
    assert few == many, (few, many)
    assert all(statements > 0 for statements, _ in few.values()), few


async def plans(db: Path, worker: str) -> dict[str, list[str]]:
    """SQLite's query plan of each routing, sweep and reclaim statement the store runs."""
    store = ViewStore(db)
    await store.open()
    ran: list[tuple[str, Sequence[Any]]] = []
    original = Database.execute

    def execute(self: Database, sql: str, params: Sequence[Any] = ()) -> Rows:
        ran.append((sql, params))
        return original(self, sql, params)

    Database.execute = execute  # type: ignore[method-assign]
    try:
        await store.of_caller("someone-1", "session-1", unbound=False)
        await store.of_caller(None, "session-1", unbound=True)
        await store.of_caller(None, None, unbound=False)
        await store.find("handle", "handle-1")
        await store.find("attach_key", "key-1")
        await store.sweepable(worker, 1.0)
        await store.released()
        await store.holders(worker)
        await store.release_worker("gone", 1.0)
    finally:
        Database.execute = original  # type: ignore[method-assign]
        await store.close()
    with contextlib.closing(open_database(db)) as conn:
        return {
            sql: [str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()]
            for sql, params in ran
        }


async def test_the_routing_sweep_and_reclaim_queries_read_the_views_through_an_index(tmp_path: Path) -> None:
    await fill(tmp_path / "app.db", 2000)
    found = await plans(tmp_path / "app.db", "w1")
    assert len(found) == 9, list(found)
    for sql, plan in found.items():
        assert not any(step.startswith("SCAN webapp_views") for step in plan), (sql, plan)
        assert any(step.startswith("SEARCH webapp_views USING") for step in plan), (sql, plan)
    kinds = Counter(step.split(" (")[0] for plan in found.values() for step in plan if "USING" in step)
    assert kinds, found
