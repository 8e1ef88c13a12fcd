"""Faults at scale: two inventory workers behind HAProxy on one Postgres and on Redis through Sentinel (a master, its
replica, one Sentinel), 4 agents booking adjustments and transfers with `_call_id`s at a steady rate (retrying with
the same id), 5 Chromium tabs watching; the Redis master killed and restarted empty, the master stalled for 2 s, a
worker killed and restarted, Postgres restarted fast, a Sentinel failover to the replica, each `--rounds` times
(default 3). Prints a table per fault and checks: every booking acknowledged, 0 lost, 0 doubled, 0 applied but
unacknowledged (each adjustment's movement carries its call id in its reason), every tab shows the database's figures
within 10 s of each fault, and at least 10,000 cross-caller attempts on both workers with 0 successes. Exits
non-zero on a miss. `make faults` runs it longer."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Page, async_playwright, expect

from bench.support.faults import RETRYABLE, Agents, Attempt, Intruder, agent_client
from bench.support.latency import CHROMIUM_ARGS, percentile
from tests.support.e2e import RunningServer, run_server
from tests.support.haproxy import free_port, run_haproxy
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.redis_engines import SentinelSetup, start_sentinel
from tests.views.inventory.support import on_hand_cell
from webapp import open_database

AGENTS = 4
TABS_WITHIN = 10.0  # seconds after a fault by which every tab shows the database's figures
CROSS_CALLER = 10_000
AFTER = 2.0  # seconds after a fault is undone that still count as during it
WORKER_AWAY = 3.0  # seconds a killed worker stays down (a tab reloading meanwhile lands on the survivor)
KINDS = ("redis-kill", "redis-stall", "worker-kill", "postgres-restart", "sentinel-failover")
DOWN_AFTER = 5000  # ms the Sentinel waits before it deems the master down: a 1 s kill is a restart, not a failover
SETTINGS = ("--call-timeout", "10")  # the other durations as in production (a tab has 15 s to come back)


@dataclass
class Fault:
    kind: str
    injected: float
    restored: float = 0.0
    tabs: float = float("inf")  # seconds from `restored` until every tab showed the database's figures


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

    def start(self, name: str) -> None:
        stack = contextlib.ExitStack()
        argv = (*self.args, "--port", str(self.ports[name]), "--worker-id", name)
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


def stock(db: str, skus: list[str]) -> dict[tuple[str, str], int]:
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute("SELECT warehouse, sku, on_hand FROM inventory_stock").fetchall()
    return {(w, s): int(n) for w, s, n in rows if s in skus}


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


def report(faults: list[Fault], attempts: list[Attempt]) -> None:
    def during(attempt: Attempt, fault: Fault) -> bool:
        return fault.injected <= attempt.started <= fault.restored + AFTER

    print(f"{'fault':<17} {'n':>2} {'calls':>6} {'p50 ms':>7} {'p99 ms':>8} {'1st ok s':>8} {'tabs s':>6}  errors")
    inside: set[int] = set()
    for kind in KINDS:
        mine = [fault for fault in faults if fault.kind == kind]
        seen = [a for a in attempts if any(during(a, fault) for fault in mine)]
        inside.update(id(a) for a in seen)
        first = [
            min((a.started + a.ms / 1000 for a in attempts if a.code == "OK" and a.started >= f.injected), default=0.0)
            - f.injected
            for f in mine
        ]
        codes = Counter(a.code for a in seen if a.code != "OK")
        ms = [a.ms for a in seen] or [0.0]
        worst_tabs = max((f.tabs for f in mine), default=0.0)
        errors = ", ".join(f"{code} {count}" for code, count in codes.most_common()) or "none"
        row = f"{kind:<17} {len(mine):>2} {len(seen):>6} {percentile(ms, 0.5):>7.1f} {percentile(ms, 0.99):>8.1f}"
        print(f"{row} {max(first, default=0.0):>8.2f} {worst_tabs:>6.2f}  {errors}")
    calm = [a.ms for a in attempts if id(a) not in inside] or [0.0]
    print(f"{'outside faults':<17} {'':>2} {len(calm):>6} {percentile(calm, 0.5):>7.1f} {percentile(calm, 0.99):>8.1f}")


def audit(db: str, agents: Agents, first_movement: int, before: dict[tuple[str, str], int]) -> list[str]:
    """What went wrong in the database, compared with what the agents were told."""
    missed: list[str] = []
    unacked = [b for b in agents.bookings if not b.acked]
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute(
            "SELECT reason FROM inventory_movements WHERE id > ? AND reason LIKE 'bench %'", (first_movement,)
        ).fetchall()
        (transfers,) = conn.execute(
            "SELECT count(*) FROM inventory_movements WHERE id > ? AND reason LIKE 'Transfer %'", (first_movement,)
        ).fetchone()
    booked = Counter(str(reason).removeprefix("bench ") for (reason,) in rows)
    adjusts = [b for b in agents.bookings if b.kind == "adjust"]
    lost = [b.call_id for b in adjusts if b.acked and booked[b.call_id] == 0]
    doubled = [b.call_id for b in adjusts if booked[b.call_id] > 1]
    applied_unacked = [b.call_id for b in adjusts if not b.acked and booked[b.call_id] > 0]
    moved = 2 * sum(1 for b in agents.bookings if b.kind == "transfer" and b.acked)
    expected = dict(before)
    for booking in agents.bookings:
        if booking.acked:
            for key, units in booking.effect.items():
                expected[key] += units
    after = stock(db, sorted({sku for _, sku in before}))
    print(
        f"bookings {len(agents.bookings)} ({len(adjusts)} adjustments, {moved // 2} transfers), acknowledged "
        f"{len(agents.bookings) - len(unacked)}; lost {len(lost)}, doubled {len(doubled)}, applied but "
        f"unacknowledged {len(applied_unacked)}; transfer movements {transfers} of {moved}; stock as acknowledged: "
        f"{'yes' if after == expected else 'NO'}"
    )
    checks = [
        (not unacked, f"{len(unacked)} booking(s) never acknowledged"),
        (not lost, f"lost: {lost[:5]}"),
        (not doubled, f"doubled: {doubled[:5]}"),
        (not applied_unacked, f"applied but unacknowledged: {applied_unacked[:5]}"),
        (transfers == moved, f"transfer movements {transfers}, acknowledged {moved}"),
        (after == expected, "the stock differs from what the agents were told"),
    ]
    missed += [why for ok, why in checks if not ok]
    return missed


async def run(rounds: int, calm: float, cross: int, logs: Path | None = None) -> bool:
    postgres, sentinel = start_postgres(), start_sentinel(DOWN_AFTER)
    lb = free_port()
    base = f"http://127.0.0.1:{lb}"
    names = [f"agent{n}" for n in range(AGENTS)] + ["watcher", "intruder"]
    tokens = {name: f"{name}-token-{free_port()}" for name in names}
    argv = ("--redis-url", sentinel.url, "--base-url", base, *SETTINGS)
    argv += tuple(arg for name in names for arg in ("--token", f"{name}={tokens[name]}"))
    with tempfile.TemporaryDirectory() as folder:
        ports = {"w1": free_port(), "w2": free_port()}
        workers = Workers(Path(folder), postgres.new_database(), argv, ports, logs=logs)
        try:
            await asyncio.gather(*(asyncio.to_thread(workers.start, name) for name in ("w1", "w2")))
            with run_haproxy(lb, workers.ports["w1"], workers.ports["w2"]):
                return await _drive(workers, sentinel, postgres, base, tokens, rounds, calm, cross)
        finally:
            workers.close()
            sentinel.close()
            postgres.stop()


async def _drive(
    workers: Workers,
    sentinel: SentinelSetup,
    postgres: PostgresServer,
    base: str,
    tokens: dict[str, str],
    rounds: int,
    calm: float,
    cross: int,
) -> bool:
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
                for kind in KINDS:
                    await asyncio.sleep(calm)  # steady load between faults
                    fault = Fault(kind, time.monotonic())
                    await inject(kind, sentinel, postgres, workers, ("w2", "w1")[round_number % 2])
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
    report(faults, agents.attempts)
    missed = audit(workers.db, agents, int(first_movement), before)
    late = [f"{f.kind} {f.tabs:.1f} s" for f in faults if f.tabs > TABS_WITHIN]
    if late:
        missed.append(f"tabs showed the database's figures later than {TABS_WITHIN:g} s after: {late}")
    strange = {a.code for a in agents.attempts} - RETRYABLE - {"OK", "HTTP"}
    if strange:
        missed.append(f"codes that are not retryable appeared: {sorted(strange)}")
    missed += await _cross_callers(workers, base, tokens, views, cross)
    for why in missed:
        print(f"MISSED: {why}")
    return not missed


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
