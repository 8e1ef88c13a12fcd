"""A worker holding many open inventory views is killed: how fast their tabs are back on the surviving workers.

Three inventory workers share one Postgres and one Redis on loopback. Worker A gets `--tabs` light tabs of
`/inventory` (each a view of its own: NiceGUI's page load and socket handshake, no rendering), then A is killed
(SIGKILL) and every tab loads its view again by its key on B or C in turn, as a browser reloads through a load
balancer that lost the tab's worker. The clock runs from the kill until the survivors' `/metrics` count every tab
attached again. Printed beside it: reattaches per second per core (the survivors' CPU seconds over the storm) and the
SQL statements per reattach (`pg_stat_statements`, every statement the survivors sent during the storm).
Run: `.venv/bin/python -m bench.reattach [--tabs 1000]`; the exit code says whether the target was met.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from bench.support.fanout import cpu_seconds
from tests.support.e2e import RunningServer, run_server
from tests.support.light_tab import LightTabs
from tests.support.ops import scrape
from tests.support.postgres import start_postgres
from tests.support.redis import start_redis

INVENTORY = "views.inventory:build"
BACK_WITHIN_S = 10.0
_GIVE_UP_S = 60.0


def attached(server: RunningServer) -> int:
    """The tabs attached on `server`, from its /metrics (0 while it is too busy to answer)."""
    try:
        return int(scrape(f"{server.base_url}/metrics").get("webapp_tabs_attached"))
    except httpx.TimeoutException:
        return 0


async def until_attached(servers: list[RunningServer], tabs: int, give_up: float = _GIVE_UP_S) -> dict[float, float]:
    """Seconds until `servers` had half, 90 %, 99 % and all of `tabs` attached between them (polled every 0.1 s);
    the shares not reached within `give_up` seconds are left out."""
    started, reached = time.monotonic(), {}
    shares = (0.5, 0.9, 0.99, 1.0)
    while len(reached) < len(shares) and time.monotonic() - started < give_up:
        count = sum(await asyncio.gather(*(asyncio.to_thread(attached, server) for server in servers)))
        for share in shares:
            if share not in reached and count >= share * tabs:
                reached[share] = time.monotonic() - started
        await asyncio.sleep(0.1)
    return reached


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


async def storm(tabs: int) -> bool:
    postgres = start_postgres("shared_preload_libraries=pg_stat_statements")
    redis = start_redis()
    folder = Path(tempfile.mkdtemp(prefix="webapp-bench-"))
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
            doomed, survivors = workers[0], workers[1:]
            light = LightTabs(f"{doomed.base_url}/inventory")
            stack.callback(light.close)
            print(f"opening {tabs} light tabs of /inventory on worker A …", flush=True)
            await light.open(tabs)
            await until_attached([doomed], tabs)  # every tab of A attached before it is killed
            await light.move(*(server.base_url for server in survivors))
            reset_statements(database)
            cpu_before = sum(cpu_seconds(server.process.pid) for server in survivors)
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait()
            reached = await until_attached(survivors, tabs)
            cpu = sum(cpu_seconds(server.process.pid) for server in survivors) - cpu_before
            sql = statements(database)
    finally:
        redis.close()
        postgres.stop()
    seconds = reached.get(1.0)
    met = seconds is not None and seconds <= BACK_WITHIN_S
    print(f"\nworker A with {tabs} open views killed; the tabs back on B and C (/metrics: tabs attached)")
    print("  " + ", ".join(f"{share:.0%} after {at:.2f} s" for share, at in reached.items()))
    back = f"never within {_GIVE_UP_S:g} s" if seconds is None else f"after {seconds:.2f} s"
    print(f"all back {back} — target ≤ {BACK_WITHIN_S:g} s — {'met' if met else 'MISSED'}")
    print(f"reattaches per second per core: {tabs / cpu:.0f} ({cpu:.2f} CPU seconds on the survivors)")
    total = sum(calls for calls, _ in sql)
    print(f"SQL statements per reattach: {total / tabs:.1f} ({total} during the storm); the most frequent:")
    for calls, query in sql[:6]:
        print(f"  {calls / tabs:>5.2f}  {query[:110]}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tabs", type=int, default=1000, help="light tabs (views) on the worker that is killed")
    options = parser.parse_args()
    sys.exit(0 if asyncio.run(storm(options.tabs)) else 1)


if __name__ == "__main__":
    main()
