"""The browser's wire parser on a 1 MB result: `parseBlocks` (static/wire.js) timed in Node, warm.

Run: `.venv/bin/python -m bench.parser`; the exit code says whether the target was met. Target: p50 of the warm runs
at most 20 ms for a presenter result of at least 1 MB (data block, a Markdown table of every row, ECharts charts,
rules, suggestions). The run also checks that Node's blocks equal `parse_blocks`' (else the figure means nothing).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from webapp import Presenter, Suggestion, UiBlock, ui
from webapp.wire import parse_blocks

ROWS = 2_600
RUNS = 21
WARM_UP = 10
TARGET_MS = 20.0
MIN_BYTES = 1_000_000
WIRE_JS = Path(__file__).parents[1] / "static" / "wire.js"
CATEGORIES = ("fasteners", "tools", "paint", "electrical", "plumbing")
WAREHOUSES = ("BER", "HAM", "MUC")
# Reads the texts and Python's blocks on stdin; prints whether they agree, the first call's and the warm timings (ms).
_NODE = """
import { isDeepStrictEqual } from "node:util";
const [wire, warmUp, runs] = process.argv.slice(-3);
const { parseBlocks } = await import(wire);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { texts, expected } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const first = performance.now();
const same = isDeepStrictEqual(parseBlocks(texts), expected);
const cold = performance.now() - first;
for (let i = 0; i < Number(warmUp); i++) parseBlocks(texts);
const timings = [];
for (let i = 0; i < Number(runs); i++) {
  globalThis.gc();
  const start = performance.now();
  parseBlocks(texts);
  timings.push(performance.now() - start);
}
process.stdout.write(JSON.stringify({ same, cold, timings, version: process.version }));
"""


class StockRow(BaseModel):
    sku: str
    name: str
    category: str
    warehouse: str
    on_hand: int
    available: int
    reorder_point: int
    unit: str
    unit_cost_cents: int
    supplier: str


def make_rows(count: int = ROWS) -> list[dict[str, Any]]:
    """Deterministic inventory rows with some non-ASCII text, as a real catalogue has."""
    return [
        {
            "sku": f"SKU-{index:05d}",
            "name": f"Sechskantschraube M{4 + index % 9} × {10 + index % 40} mm, verzinkt",
            "category": CATEGORIES[index % len(CATEGORIES)],
            "warehouse": WAREHOUSES[index % len(WAREHOUSES)],
            "on_hand": (index * 37) % 500,
            "available": (index * 29) % 450,
            "reorder_point": 40 + index % 60,
            "unit": "pcs",
            "unit_cost_cents": 15 + (index * 13) % 2_000,
            "supplier": f"Lieferant {index % 17} GmbH & Co. KG",
        }
        for index in range(count)
    ]


def _charts(rows: list[dict[str, Any]], ctx: Any) -> list[UiBlock]:
    low = [row for row in rows if row["available"] < row["reorder_point"]][:40]
    by_category = {c: sum(r["on_hand"] for r in rows if r["category"] == c) for c in CATEGORIES}
    columns = list(StockRow.model_fields)
    return [
        ui.summary(f"{len(rows)} items, {len(low)} shown as low on stock.", priority=0),
        ui.echarts(
            {
                "tooltip": {"trigger": "axis"},
                "xAxis": {"type": "category", "data": [row["sku"] for row in low]},
                "yAxis": {"type": "value"},
                "series": [
                    {"name": "available", "type": "bar", "data": [row["available"] for row in low]},
                    {"name": "reorder point", "type": "line", "data": [row["reorder_point"] for row in low]},
                ],
            },
            title="Low stock",
            width="half",
        ),
        ui.echarts(
            {"series": [{"type": "pie", "data": [{"name": c, "value": v} for c, v in by_category.items()]}]},
            title="Units by category",
            width="half",
        ),
        ui.table(columns, ([row[c] for c in columns] for row in rows), title="Stock", width="full", priority=2),
    ]


def _suggestions(first: dict[str, Any], ctx: Any) -> list[Suggestion]:
    return [
        Suggestion("inventory_adjust_stock", f"Restock {first['sku']}."),
        Suggestion("inventory_stock_report", "Compare the warehouses' stock value."),
    ]


def make_result() -> list[str]:
    presenter = (
        Presenter("StockRow", StockRow)
        .collection_ui(_charts)
        .rules(["unit_cost_cents is in CENTS. Divide by 100.", "An item is low when available < reorder_point."])
        .suggest(_suggestions)
    )
    result = presenter.make(make_rows()).build()
    return [block.text for block in result.content if block.type == "text"]


def main() -> int:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH: install Node 20 or newer (Debian: apt-get install nodejs).")
    texts = make_result()
    expected = [dataclasses.asdict(block) for block in parse_blocks(texts)]
    size = sum(len(text.encode()) for text in texts)
    if size < MIN_BYTES:
        raise SystemExit(f"The result is {size:,} bytes, under {MIN_BYTES:,}: raise ROWS.")
    run = subprocess.run(
        [node, "--expose-gc", "--input-type=module", "-e", _NODE, WIRE_JS.as_uri(), str(WARM_UP), str(RUNS)],
        input=json.dumps({"texts": texts, "expected": expected}).encode(),
        capture_output=True,
        check=True,
        timeout=120,
    )
    report = json.loads(run.stdout)
    timings = sorted(report["timings"])
    p50 = timings[len(timings) // 2]
    kinds = ", ".join(block["kind"] for block in expected)
    print(f"result: {size:,} bytes in {len(texts)} texts ({kinds}); Node {report['version']}")
    print(f"blocks equal parse_blocks': {report['same']}")
    print(f"parseBlocks, warm, {RUNS} runs: p50 {p50:.2f} ms, min {timings[0]:.2f} ms, max {timings[-1]:.2f} ms")
    print(f"first call (cold, with the comparison): {report['cold']:.2f} ms")
    print(f"target p50 <= {TARGET_MS:.0f} ms")
    met = report["same"] and p50 <= TARGET_MS
    print("every target met" if met else "a target was MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
