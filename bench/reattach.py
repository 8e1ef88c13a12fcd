"""A worker holding many open inventory views is killed: how fast their tabs are back on the surviving workers, and
what one reattach costs, split between NiceGUI's floor and the product.

Three inventory workers share one Postgres and one Redis on loopback. Worker A gets `--tabs` light tabs of
`/inventory` (each a view of its own: NiceGUI's page load and socket handshake, no rendering; the tabs run in one
process of their own, on the same cores), then A is killed (SIGKILL) and every tab loads its view again by its key on
B or C in turn, as a browser reloads through a load balancer that lost the tab's worker. The clock runs from the kill
until the survivors' `/metrics` count every tab attached again (a survivor too busy to answer counts none yet).
Printed beside it: reattaches per second per core and the CPU of one reattach (the survivors' CPU seconds over the
storm, and the light tabs' beside them), the page loads per tab (more than one when a load failed and was tried
again), and the SQL statements per reattach (`pg_stat_statements`, every statement the survivors sent).

Then the page-build profile that proves the floor. The elements of an inventory page built in this process are
counted by kind (`bench.support.bare_page`), and the same storm runs against three servers of a bare NiceGUI page
that builds exactly those elements (texts, props, classes, listeners and data) and nothing else: NiceGUI's own CPU
per page load of this page. The rest of the inventory's CPU per reattach is the product's part: webapp's
middleware, bridge, view row and Redis lease, and the view's reads and logic. With the survivors' cores (one per
survivor, at most the machine's), tabs × the floor ÷ cores is the least time any product on NiceGUI could take with
this page; the last line says whether that alone misses the target.
Run: `.venv/bin/python -m bench.reattach [--tabs 1000]` (two to three minutes); the exit code says whether the target
was met.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import psycopg

from bench.support.bare_page import Node, inventory_census, kinds, run_bare_page
from bench.support.fanout import cpu_seconds
from tests.support.e2e import run_server
from tests.support.light_tab import LightTabs
from tests.support.ops import scrape
from tests.support.postgres import start_postgres
from tests.support.redis import start_redis

INVENTORY = "views.inventory:build"
BACK_WITHIN_S = 10.0
_GIVE_UP_S = 60.0
_SHARES = (0.5, 0.9, 0.99, 1.0)


class Worker(Protocol):
    @property
    def base_url(self) -> str: ...
    @property
    def process(self) -> subprocess.Popen[Any]: ...


@dataclass(frozen=True, slots=True)
class Storm:
    """What one storm measured: when each share of the tabs was back, and the CPU seconds it took."""

    tabs: int
    loads: int
    """The tabs' page loads during the storm: one per tab, more when a load failed and was tried again."""
    reached: dict[float, float]
    cpu: float
    """The survivors' CPU seconds from the kill until every tab was back (or the giving up)."""
    tabs_cpu: float
    """The light tabs' CPU seconds meanwhile (on the same cores)."""
    cores: int
    """The cores the survivors can use: one each (a worker is one Python process), at most the machine's."""

    @property
    def seconds(self) -> float | None:
        return self.reached.get(1.0)

    @property
    def per_reattach_ms(self) -> float:
        return self.cpu / self.tabs * 1000

    @property
    def per_load_ms(self) -> float:
        return self.cpu / max(self.loads, 1) * 1000


def attached(base_url: str) -> int:
    """The tabs attached on the server at `base_url`, from its /metrics (0 while it is too busy to answer)."""
    try:
        return int(scrape(f"{base_url}/metrics").get("webapp_tabs_attached"))
    except httpx.TimeoutException:
        return 0


async def until_attached(base_urls: list[str], tabs: int, give_up: float = _GIVE_UP_S) -> dict[float, float]:
    """Seconds until the servers had half, 90 %, 99 % and all of `tabs` attached between them (polled every 0.1 s);
    the shares not reached within `give_up` seconds are left out."""
    started, reached = time.monotonic(), {}
    while len(reached) < len(_SHARES) and time.monotonic() - started < give_up:
        count = sum(await asyncio.gather(*(asyncio.to_thread(attached, url) for url in base_urls)))
        for share in _SHARES:
            if share not in reached and count >= share * tabs:
                reached[share] = time.monotonic() - started
        await asyncio.sleep(0.1)
    return reached


@contextlib.asynccontextmanager
async def kill_and_reattach(
    doomed: Worker, survivors: Sequence[Worker], tabs: int, before_kill: Callable[[], None] = lambda: None
) -> AsyncGenerator[Storm]:
    """Open `tabs` light tabs on `doomed`, kill it, and measure the tabs' way back to `survivors`; the tabs close
    when the block ends (a closing tab is a write of its view's row: read the statements before)."""
    light = LightTabs(f"{doomed.base_url}/inventory")
    try:
        await light.open(tabs)
        await until_attached([doomed.base_url], tabs)  # every tab attached before the kill
        await light.move(*(server.base_url for server in survivors))
        before_kill()
        loads_before = await light.loads()
        cpu_before = sum(cpu_seconds(server.process.pid) for server in survivors)
        tabs_before = cpu_seconds(light.pid)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait()
        reached = await until_attached([server.base_url for server in survivors], tabs)
        cpu = sum(cpu_seconds(server.process.pid) for server in survivors) - cpu_before
        tabs_cpu = cpu_seconds(light.pid) - tabs_before
        loads = await light.loads() - loads_before
        yield Storm(tabs, loads, reached, cpu, tabs_cpu, min(len(survivors), os.cpu_count() or 1))
    finally:
        light.close()


def reset_statements(database: str) -> None:
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute("SELECT pg_stat_statements_reset()")


def statements(database: str) -> list[tuple[int, str]]:
    """The SQL statements run on `database` since the reset (pg_stat_statements): calls and text, most called first."""
    with psycopg.connect(database, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT calls, query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
            " WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC"
        ).fetchall()
    return [(int(calls), " ".join(str(query).split())) for calls, query in rows]


async def inventory_storm(tabs: int, folder: Path) -> tuple[Storm, list[tuple[int, str]], list[Node]]:
    """The storm of the inventory's workers; with the SQL they sent and the census of an inventory page."""
    postgres = start_postgres("shared_preload_libraries=pg_stat_statements")
    redis = start_redis()
    try:
        database = postgres.new_database()
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute("CREATE EXTENSION pg_stat_statements")
        with contextlib.ExitStack() as stack:
            workers = [
                stack.enter_context(
                    run_server("--redis-url", redis.url, "--worker-id", name, app=INVENTORY, db=database, cwd=folder)
                )
                for name in ("A", "B", "C")
            ]
            print(f"opening {tabs} light tabs of /inventory on worker A …", flush=True)
            async with kill_and_reattach(workers[0], workers[1:], tabs, lambda: reset_statements(database)) as storm:
                sql = statements(database)
        nodes = await inventory_census(database)
    finally:
        redis.close()
        postgres.stop()
    return storm, sql, nodes


async def floor_storm(tabs: int, nodes: list[Node], folder: Path) -> Storm:
    """The same storm against three servers of a bare NiceGUI page with the inventory page's elements."""
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(run_bare_page(nodes, folder)) for _ in range(3)]
        print(f"\nopening {tabs} light tabs of a bare NiceGUI page with the same {len(nodes)} elements …", flush=True)
        async with kill_and_reattach(servers[0], servers[1:], tabs) as storm:
            return storm


def report(storm: Storm, sql: list[tuple[int, str]], nodes: list[Node], floor: Storm) -> bool:
    tabs, seconds = storm.tabs, storm.seconds
    met = seconds is not None and seconds <= BACK_WITHIN_S
    print(f"\nworker A with {tabs} open views killed; the tabs back on B and C (/metrics: tabs attached)")
    print("  " + ", ".join(f"{share:.0%} after {at:.2f} s" for share, at in storm.reached.items()))
    back = f"never within {_GIVE_UP_S:g} s" if seconds is None else f"after {seconds:.2f} s"
    print(f"all back {back} — target ≤ {BACK_WITHIN_S:g} s — {'met' if met else 'MISSED'}")
    print(
        f"reattaches per second per core: {tabs / storm.cpu:.0f} ({storm.per_reattach_ms:.1f} ms of CPU each;"
        f" {storm.cpu:.2f} CPU seconds on the survivors, {storm.tabs_cpu:.2f} in the light tabs beside them;"
        f" {storm.loads / tabs:.2f} page loads per tab)"
    )
    total = sum(calls for calls, _ in sql)
    print(f"SQL statements per reattach: {total / tabs:.1f} ({total} during the storm); the most frequent:")
    for calls, query in sql[:6]:
        print(f"  {calls / tabs:>5.2f}  {query[:110]}")

    # the floor per page load: a load that failed and was tried again costs the bare page too, not the product
    floor_ms = floor.per_load_ms
    floor_back = "never" if floor.seconds is None else f"after {floor.seconds:.2f} s"
    print(f"\npage-build profile: the CPU of one reattach on the survivors, split (the same storm, {tabs} tabs)")
    print(f"  the inventory page   {storm.per_reattach_ms:5.1f} ms  {len(nodes)} elements: {kinds(nodes)}")
    print(
        f"  NiceGUI's floor      {floor_ms:5.1f} ms  a bare NiceGUI page with the same elements and nothing else (all"
        f" back {floor_back}, {floor.loads / tabs:.2f} page loads per tab, {floor.loads / floor.cpu:.0f} per second"
        " per core)"
    )
    product_ms = storm.per_reattach_ms - floor_ms
    print(
        f"  the product's part   {product_ms:5.1f} ms  webapp (middleware, bridge, view row, Redis lease), the view's"
        " reads and logic"
    )
    cores = storm.cores
    least = tabs * floor_ms / 1000 / cores
    verdict = (
        f"> {BACK_WITHIN_S:g} s: out of reach on this machine, whatever the product does"
        if least > BACK_WITHIN_S
        else f"≤ {BACK_WITHIN_S:g} s: within NiceGUI's reach; with the product's part,"
        f" {tabs * storm.per_reattach_ms / 1000 / cores:.1f} s"
    )
    print(
        f"floor: {floor_ms:.1f} ms of framework CPU per page build × {tabs} tabs / {cores} cores = {least:.1f} s",
        verdict,
    )
    return met


async def reattach(tabs: int) -> bool:
    folder = Path(tempfile.mkdtemp(prefix="webapp-bench-"))
    storm, sql, nodes = await inventory_storm(tabs, folder)
    floor = await floor_storm(tabs, nodes, folder)
    return report(storm, sql, nodes, floor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tabs", type=int, default=1000, help="light tabs (views) on the worker that is killed")
    options = parser.parse_args()
    sys.exit(0 if asyncio.run(reattach(options.tabs)) else 1)


if __name__ == "__main__":
    main()
