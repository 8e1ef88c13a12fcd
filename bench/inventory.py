"""The inventory view at speed and at scale: what an action costs, and what watching views add to it.

1. Latency, both protocol modes, one interleaved run of `--calls` rounds: `warehouses list` (the plain baseline),
   the counter app's confirmed action (the floor: one browser round trip), and every inventory action plus
   `inventory_update` on live Chromium tabs with confirmation, in a new random order each round (each call follows
   every other equally often: a call shares the cores with the drawing of the one before). Target: inventory p50
   ≤ 1.25×, p99 ≤ 2.0× the floor (the plain tool's ratio beside; the floor's own breakdown is `bench.bridge`'s).
   The guard that does not move with the framework: a plain tool of the `mcp` SDK's own low-level server in the same
   rounds; `inventory_refresh_stock` ÷ it ≤ 1.1 × the ratio c25359e reached (`bench.support.latency.SDK_RATIO`).
2. Fan-out: one `inventory_adjust_stock` every 250 ms (each one update of a watching view) with N = 1, 5, 20, 100
   views watching the warehouse (light tabs: `tests.support.light_tab`). Targets: p50 at N=20 ≤ 1.3× at N=1; server
   CPU (/proc, N=100 against N=1) per delivered update per watching view ≤ 0.25 ms, printed beside the framework's
   floor: the same figure for a view whose whole update is one label's text (`bench.support.label_app`, a server of
   its own, its watchers and changes the same, each change halfway between two adjustments). Steps (a report): the
   view's own steps of an update timed inside the server while 100 light tabs watch (`bench.support.view_steps`): what
   the figure holds beyond the floor. Burst: 100 changes
   started in 1 s while 20 light tabs watch: the updates (socket messages) a watching tab receives ≤ 12
   (`--view-coalesce`). Then Chromium tabs: the acting call with 10 watching tabs ≤ 2.0× with none, a watching tab ≤
   5 ms of main-thread CPU per change (CDP; beside it two floors changed by a script: one stock cell's text, and what
   the change itself draws without the framework), every tab shows an agent's and a person's change within 1 s.
3. 1,000 open views on one worker (light tabs): RSS ≤ 1 GB, a plain call's p50 ≤ 1.5× without the other views, the
   acting call's ≤ 1.5× the same call on a warehouse nobody else watches (alternating, in the same minutes), a change
   reaches every view within 2 s.
4. Memory: the server's RSS slope over 10, 30 and 50 open views, each with a Chromium tab attached, each reading after
   200 changes at 2/s and a 70 s idle; the median of 3 runs (`--runs`). Target ≤ 1 MB per view.
5. The collector: a plain call's p50, p99 and max over 3,000 calls while 200 views watch a change every 250 ms, with
   Python's collector thresholds and with raised ones (a report: the server keeps Python's).
Run: `.venv/bin/python -m bench.inventory [--calls 200] [--only tabs]`; the exit code says whether every target was
met (about 20 minutes in all). `--pause 0.3 --only latency` starts each latency call once the tabs have drawn the
previous one: what a call costs when it does not share the cores with the drawing of the one before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path

from bench.support.burst import burst
from bench.support.collector import collector
from bench.support.fanout import chromium_tabs, fan_out, open_views
from bench.support.latency import latency
from bench.support.memory import memory
from bench.support.sdk_server import sdk_server
from bench.support.steps import view_steps
from tests.support.e2e import RunningServer, run_server

INVENTORY, COUNTER, FLOOR = "views.inventory:build", "tests.support.test_app:build", "bench.support.label_app:build"
STEPS = "bench.support.view_steps:build"
PARTS = ("latency", "fan-out", "steps", "burst", "tabs", "views", "memory", "collector")


@contextlib.contextmanager
def _server(folder: str, name: str, *args: str, app: str = INVENTORY) -> Generator[RunningServer]:
    with run_server(*args, app=app, db=Path(folder) / f"{name}.db") as server:
        yield server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="rounds of the latency run per mode (default 200)")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds before each latency call (a diagnosis)")
    parser.add_argument("--changes", type=int, default=200, help="changes per fan-out size (default 200)")
    parser.add_argument("--idle", type=float, default=70.0, help="seconds of idle before each memory reading")
    parser.add_argument("--runs", type=int, default=3, help="runs of the memory part, the median printed (default 3)")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts (repeatable)")
    args = parser.parse_args()
    parts = args.only or PARTS
    met: dict[str, bool] = {}
    with tempfile.TemporaryDirectory() as folder:
        if "latency" in parts:
            with (
                _server(folder, "latency") as inventory,
                _server(folder, "counter", app=COUNTER) as counter,
                sdk_server() as sdk,
            ):
                servers = inventory, counter, sdk
                met["latency"] = asyncio.run(latency(servers, args.calls, Path(folder) / "latency.db", args.pause))
        if "fan-out" in parts:
            with _server(folder, "fanout") as server, _server(folder, "floor", app=FLOOR) as floor:
                met["fan-out"] = asyncio.run(fan_out(server, floor, args.changes))
        if "steps" in parts:  # a report: where the fan-out figure's share above the floor goes
            with _server(folder, "steps", app=STEPS) as server:
                asyncio.run(view_steps(server, args.changes))
        if "burst" in parts:
            with _server(folder, "burst") as server:
                met["burst"] = asyncio.run(burst(server))
        if "tabs" in parts:
            with _server(folder, "tabs") as server:
                met["chromium tabs"] = asyncio.run(chromium_tabs(server))
        if "views" in parts:  # a few minutes: the server builds a view per light tab
            with _server(folder, "views") as server:
                met["1,000 views"] = asyncio.run(open_views(server))
        if "collector" in parts:  # about a minute
            met["collector"] = collector(folder)
        if "memory" in parts:  # about 9 minutes a run
            met["memory"] = memory(lambda name: _server(folder, name), args.changes, args.idle, args.runs)
    print("\n" + ", ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in met.items()))
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
