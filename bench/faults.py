"""Faults at scale: two inventory workers behind HAProxy on one Postgres, 4 agents booking adjustments and transfers
with `_call_id`s at a steady rate (retrying with the same id), 5 Chromium tabs watching. Two runs, each fault
`--rounds` times (default 3):
- Redis through Sentinel (a master, its replica, one Sentinel): the Redis master killed and restarted empty, the
  master stalled for 2 s, a worker killed and restarted, Postgres restarted fast, a Sentinel failover to the replica;
- the network nemesis on a standalone Redis, a fault proxy in front of each worker's (`bench.support.nemesis`): a
  connection cut after a command ran, a command sent twice, one worker's flows black-holed for 10 s, a Redis-only
  partition of one worker, 200 ms of delay.
Prints a table per fault and checks: ≥ 1,000 bookings, every booking acknowledged, 0 lost, 0 doubled, 0 applied but
unacknowledged (each adjustment's movement carries its call id in its reason), every tab shows the database's figures
within 10 s of each fault, every call answered within 10 s (the longest printed), and at least 10,000 cross-caller
attempts on both workers with 0 successes. Exits non-zero on a miss. `make faults` runs it longer."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Page, async_playwright, expect

from bench.support.faults import RETRYABLE, Agents, Intruder, agent_client
from bench.support.faults_audit import ANSWER_WITHIN, Fault, audit, report, stock
from bench.support.latency import CHROMIUM_ARGS
from bench.support.nemesis import NETWORK_KINDS, network_fault
from tests.support.e2e import RunningServer, run_server
from tests.support.fault_proxy import FaultProxy
from tests.support.haproxy import free_port, run_haproxy
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.redis import start_redis
from tests.support.redis_engines import SentinelSetup, start_sentinel
from tests.views.inventory.support import on_hand_cell
from webapp import open_database

AGENTS = 4
TABS_WITHIN = 10.0  # seconds after a fault by which every tab shows the database's figures
BOOKINGS = 1000  # bookings of both runs together, at least
CROSS_CALLER = 10_000
WORKER_AWAY = 3.0  # seconds a killed worker stays down (a tab reloading meanwhile lands on the survivor)
KINDS = ("redis-kill", "redis-stall", "worker-kill", "postgres-restart", "sentinel-failover")
DOWN_AFTER = 5000  # ms the Sentinel waits before it deems the master down: a 1 s kill is a restart, not a failover
SETTINGS = ("--call-timeout", "10")  # the other durations as in production (a tab has 15 s to come back)


@dataclass
class Workers:
    """w1 and w2 on fixed ports (HAProxy knows them), restartable after a kill."""

    folder: Path
    db: str
    args: tuple[str, ...]
    ports: dict[str, int]
    stacks: dict[str, contextlib.ExitStack] = field(default_factory=dict[str, contextlib.ExitStack])
    running: dict[str, RunningServer] = field(default_factory=dict[str, RunningServer])
    logs: Path | None = None
    redis: dict[str, str] = field(default_factory=dict[str, str])
    """Each worker's own `--redis-url` (through a fault proxy of its own), where they differ."""

    def start(self, name: str) -> None:
        stack = contextlib.ExitStack()
        argv = (*self.args, "--port", str(self.ports[name]), "--worker-id", name)
        if name in self.redis:
            argv += ("--redis-url", self.redis[name])
        self.running[name] = stack.enter_context(
            run_server(*argv, db=self.db, app="views.inventory:build", cwd=self.folder)
        )
        self.stacks[name] = stack

    def kill(self, name: str) -> None:
        self.running[name].process.send_signal(signal.SIGKILL)
        self.stacks.pop(name).close()
        self.keep(name)

    def keep(self, name: str) -> None:
        """Append the worker's output so far to `logs`/<name>.log (with `--logs`)."""
        if self.logs is not None:
            with (self.logs / f"{name}.log").open("a") as log:
                log.write(self.running[name].output + "\n")

    def close(self) -> None:
        for name, stack in self.stacks.items():
            stack.close()
            self.keep(name)


def views_table(db: str) -> str:
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute("SELECT substr(handle, 1, 6), principal, state, worker FROM webapp_views").fetchall()
    return "; ".join(" ".join(str(value) for value in row) for row in rows)


def pick_skus(db: str) -> list[str]:
    """Items with plenty of units in both BER and HAM (transfers go both ways)."""
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute(
            "SELECT b.sku FROM inventory_stock b JOIN inventory_stock h ON h.sku = b.sku AND h.warehouse = 'HAM'"
            " WHERE b.warehouse = 'BER' ORDER BY b.on_hand + h.on_hand DESC LIMIT ?",
            (AGENTS,),
        ).fetchall()
    return [str(row[0]) for row in rows]


async def open_tabs(browser: Browser, base: str, urls: list[str]) -> list[Page]:
    """One Chromium tab per view URL; the balancer's cookie puts them on w1 and w2 in turn."""
    pages: list[Page] = []
    for number, url in enumerate(urls):
        context = await browser.new_context()
        await context.add_cookies([{"name": "WEBAPP_WORKER", "value": f"w{number % 2 + 1}", "url": base}])
        page = await context.new_page()
        await page.goto(url)
        await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=30_000)
        pages.append(page)
    return pages


async def tabs_agree(pages: list[Page], figures: dict[tuple[str, str], int], timeout: float) -> None:
    async def one(page: Page) -> None:
        try:
            for (warehouse, sku), units in figures.items():
                if warehouse == "BER":
                    await expect(on_hand_cell(page, sku)).to_have_text(f"{units:,}", timeout=timeout * 1000)
        except AssertionError:
            text = " ".join((await page.inner_text("body")).split())[:300]
            print(f"tab {pages.index(page) + 1} of {len(pages)} ({page.url.split('?')[0]}) shows: {text!r}")
            raise

    await asyncio.gather(*(one(page) for page in pages))


Inject = Callable[[str, str], Awaitable[None]]
"""Make the fault `kind` (the first argument; `victim` the worker it takes, where it takes one) and undo it."""


async def inject(kind: str, sentinel: SentinelSetup, postgres: PostgresServer, workers: Workers, victim: str) -> None:
    """Make the fault and undo it (returns once it is undone)."""
    redis = sentinel.master()
    if kind == "redis-kill":
        assert redis.process is not None
        redis.process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(redis.process.wait, 10)
        redis.stop()
        await asyncio.sleep(1.0)  # the outage
        await asyncio.to_thread(redis.start)  # empty: no leases, no epochs
    elif kind == "redis-stall":
        with redis.frozen():
            await asyncio.sleep(2.0)
    elif kind == "sentinel-failover":
        await asyncio.to_thread(sentinel.failover)  # the replica becomes the master, the master its replica
    elif kind == "worker-kill":
        workers.kill(victim)
        await asyncio.sleep(WORKER_AWAY)  # the tabs on it reconnect through HAProxy to the survivor meanwhile
        await asyncio.to_thread(workers.start, victim)
    else:
        await asyncio.to_thread(postgres.restart)


async def run(rounds: int, calm: float, cross: int, logs: Path | None = None) -> bool:
    """Both runs; whether every check held."""
    print("== Redis through Sentinel: process faults and a failover")
    bookings, met = await _run_sentinel(rounds, calm, cross, logs)
    print("\n== the network nemesis, a fault proxy in front of each worker's standalone Redis")
    more, network_met = await _run_network(rounds, calm, logs)
    enough = bookings + more >= BOOKINGS
    print(f"\nbookings in both runs: {bookings + more} (target ≥ {BOOKINGS:,})")
    return met and network_met and enough


def _setting(base: str, redis_url: str | None, tokens: dict[str, str]) -> tuple[str, ...]:
    argv = ("--base-url", base, *SETTINGS, *(("--redis-url", redis_url) if redis_url else ()))
    return argv + tuple(arg for name, token in tokens.items() for arg in ("--token", f"{name}={token}"))


def _tokens() -> dict[str, str]:
    names = [f"agent{n}" for n in range(AGENTS)] + ["watcher", "intruder"]
    return {name: f"{name}-token-{free_port()}" for name in names}


async def _run_sentinel(rounds: int, calm: float, cross: int, logs: Path | None) -> tuple[int, bool]:
    postgres, sentinel = start_postgres(), start_sentinel(DOWN_AFTER)
    lb, tokens = free_port(), _tokens()
    base = f"http://127.0.0.1:{lb}"
    with tempfile.TemporaryDirectory() as folder:
        ports = {"w1": free_port(), "w2": free_port()}
        workers = Workers(Path(folder), postgres.new_database(), _setting(base, sentinel.url, tokens), ports, logs=logs)
        try:
            await asyncio.gather(*(asyncio.to_thread(workers.start, name) for name in ("w1", "w2")))

            async def faults(kind: str, victim: str) -> None:
                await inject(kind, sentinel, postgres, workers, victim)

            with run_haproxy(lb, workers.ports["w1"], workers.ports["w2"]):
                return await _drive(workers, base, tokens, rounds, calm, cross, KINDS, faults)
        finally:
            workers.close()
            sentinel.close()
            postgres.stop()


async def _run_network(rounds: int, calm: float, logs: Path | None) -> tuple[int, bool]:
    postgres, redis = start_postgres(), start_redis()
    lb, tokens = free_port(), _tokens()
    base = f"http://127.0.0.1:{lb}"
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        proxies = {name: stack.enter_context(FaultProxy(redis.port)) for name in ("w1", "w2")}
        ports = {"w1": free_port(), "w2": free_port()}
        workers = Workers(Path(folder), postgres.new_database(), _setting(base, None, tokens), ports, logs=logs)
        workers.redis = {name: proxy.url for name, proxy in proxies.items()}
        try:
            await asyncio.gather(*(asyncio.to_thread(workers.start, name) for name in ("w1", "w2")))

            async def faults(kind: str, victim: str) -> None:
                await network_fault(kind, proxies, victim)

            with run_haproxy(lb, workers.ports["w1"], workers.ports["w2"]):
                return await _drive(workers, base, tokens, rounds, calm, 0, NETWORK_KINDS, faults)
        finally:
            workers.close()
            redis.close()
            postgres.stop()


async def _drive(
    workers: Workers,
    base: str,
    tokens: dict[str, str],
    rounds: int,
    calm: float,
    cross: int,
    kinds: tuple[str, ...],
    faults_of: Inject,
) -> tuple[int, bool]:
    """The agents' load with each of `kinds` made `rounds` times; the bookings made and whether every check held."""
    mcp = base + "/mcp"
    views, urls = [], []
    for name in [f"agent{n}" for n in range(AGENTS)] + ["watcher"]:
        async with agent_client(mcp, tokens[name]) as client:
            opened = (await client.call_tool("inventory", {"warehouse_code": "BER"})).structured_content or {}
            views.append(str(opened["view"]))
            urls.append(str(opened["url"]))
    skus = pick_skus(workers.db)
    before = stock(workers.db, skus)
    with contextlib.closing(open_database(workers.db)) as conn:
        (first_movement,) = conn.execute("SELECT coalesce(max(id), 0) FROM inventory_movements").fetchone()
    agents = Agents(mcp, [tokens[f"agent{n}"] for n in range(AGENTS)], views[:AGENTS], skus)
    faults: list[Fault] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            pages = await open_tabs(browser, base, urls)
            stop = asyncio.Event()
            agents.running.set()
            load = asyncio.create_task(agents.run(stop))
            for round_number in range(rounds):
                for kind in kinds:
                    await asyncio.sleep(calm)  # steady load between faults
                    fault = Fault(kind, time.monotonic())
                    await faults_of(kind, ("w2", "w1")[round_number % 2])
                    fault.restored = time.monotonic()
                    faults.append(fault)
                    await agents.drained()
                    figures = stock(workers.db, skus)
                    left = max(0.5, fault.restored + TABS_WITHIN + 5 - time.monotonic())
                    try:
                        await tabs_agree(pages, figures, left)
                        fault.tabs = time.monotonic() - fault.restored
                    except AssertionError as error:
                        print(f"{kind}: a tab did not show {figures}: {str(error)[:600]}")
                        print(views_table(workers.db))
                    agents.running.set()
            await agents.drained()
            stop.set()
            agents.running.set()
            await load
        finally:
            await browser.close()
    report(faults, agents.attempts, kinds)
    missed = audit(workers.db, agents, int(first_movement), before)
    slow = [a for a in agents.attempts if a.ms > ANSWER_WITHIN * 1000]
    if slow:
        longest = max(a.ms for a in slow) / 1000
        missed.append(f"{len(slow)} call(s) answered later than {ANSWER_WITHIN:g} s (the longest {longest:.1f} s)")
    late = [f"{f.kind} {f.tabs:.1f} s" for f in faults if f.tabs > TABS_WITHIN]
    if late:
        missed.append(f"tabs showed the database's figures later than {TABS_WITHIN:g} s after: {late}")
    strange = {a.code for a in agents.attempts} - RETRYABLE - {"OK", "HTTP"}
    if strange:
        missed.append(f"codes that are not retryable appeared: {sorted(strange)}")
    if cross:
        missed += await _cross_callers(workers, base, tokens, views, cross)
    for why in missed:
        print(f"MISSED: {why}")
    return len(agents.bookings), not missed


async def _cross_callers(
    workers: Workers, base: str, tokens: dict[str, str], views: list[str], total: int
) -> list[str]:
    urls = [workers.running[name].mcp_url for name in ("w1", "w2")]
    intruder = Intruder(urls, base + "/mcp", tokens["intruder"], tokens["agent0"], views)
    started = time.monotonic()
    await intruder.run(total)
    took = time.monotonic() - started
    print(
        f"cross-caller attempts on both workers: {intruder.attempts} in {took:.1f} s (another principal's _view and "
        f"call ids, guessed handles, another principal's session id): {intruder.successes} succeeded"
    )
    missed: list[str] = []
    if intruder.attempts < total:
        missed.append(f"only {intruder.attempts} cross-caller attempts (target {total})")
    if intruder.successes:
        missed.append(f"{intruder.successes} cross-caller attempt(s) succeeded")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="times each fault is injected (default 3)")
    parser.add_argument("--calm", type=float, default=3.0, help="seconds of steady load before each fault")
    parser.add_argument("--cross", type=int, default=CROSS_CALLER, help="cross-caller attempts (default 10,000)")
    parser.add_argument("--logs", type=Path, help="a folder for the workers' output")
    args = parser.parse_args()
    return 0 if asyncio.run(run(args.rounds, args.calm, args.cross, args.logs)) else 1


if __name__ == "__main__":
    sys.exit(main())
