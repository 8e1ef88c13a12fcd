"""`make demo`: a scripted agent drives the inventory view over MCP while you watch it in the browser.

It connects like a real agent, with the official MCP client, to `--url` (a running server's base URL), or to a
server it starts on a free port with a fresh database. It opens the view, prints its URL (`--open-browser` opens it),
waits for a browser tab, then works through a short scenario with a pause between steps.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import webbrowser
from collections.abc import Generator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp_types
from mcp import Client

REPO = Path(__file__).resolve().parents[1]
BANNER = re.compile(r'webapp serving on (http://[^\s"]+)')  # the banner's first line, or its JSON line's message
STARTUP_TIMEOUT = 30.0


def say(text: str) -> None:
    print(text, flush=True)


def texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def data(result: mcp_types.CallToolResult) -> Any:
    """The data block as JSON (the first block of every presenter answer)."""
    return json.loads(texts(result)[0])


def error_code(result: mcp_types.CallToolResult) -> str | None:
    match = re.match(r'<tool_error code="([A-Z_]+)"', texts(result)[0]) if result.is_error else None
    return match.group(1) if match else None


def _listening(base_url: str, timeout: float) -> bool:
    """Whether the server accepts connections within `timeout` (it prints its banner before it listens)."""
    parts = urlsplit(base_url)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while time.monotonic() < deadline:
        try:
            socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=1).close()
            return True
        except OSError:
            time.sleep(delay)  # not listening yet: back off briefly and retry
            delay = min(delay * 2, 0.2)
    return False


@contextlib.contextmanager
def own_server(db: Path) -> Generator[str]:
    """`python -m webapp serve` on a free port; yields its base URL once it listens, stops it afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NICEGUI_", "WEBAPP_"))}
    command = [sys.executable, "-m", "webapp", "serve", "--port", "0", "--db", str(db), "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    found: list[str] = []
    ready = threading.Event()

    def read_banner() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if not found and (match := BANNER.search(line)):
                found.append(match.group(1))
                ready.set()
        ready.set()  # the process ended

    threading.Thread(target=read_banner, daemon=True).start()
    try:
        if not ready.wait(STARTUP_TIMEOUT) or not found or not _listening(found[0], STARTUP_TIMEOUT):
            raise SystemExit(
                f"demo: the server did not start within {STARTUP_TIMEOUT:g} s (exit code {process.poll()})"
            )
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


class Demo:
    """The scenario: each step says what the agent does, calls one tool and says what came back."""

    def __init__(self, client: Client, pause: float) -> None:
        self.client = client
        self.pause = pause

    async def call(self, tool: str, **arguments: Any) -> mcp_types.CallToolResult:
        shown = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        say(f"\n→ {tool}({shown})")
        result = await self.client.call_tool(tool, arguments)
        if result.is_error:
            say("  ✗ " + texts(result)[0].splitlines()[1])
        return result

    async def ask(self, tool: str, **arguments: Any) -> Any:
        """Call a tool that must succeed; its data block as JSON."""
        result = await self.call(tool, **arguments)
        if result.is_error:
            raise SystemExit(f"demo: {tool} failed:\n" + "\n".join(texts(result)))
        return data(result)

    async def step(self) -> None:
        await asyncio.sleep(self.pause)

    async def wait_for_tab(self, timeout: float) -> None:
        """Ask the view for its totals until a browser tab shows it (the server waits a while on each call)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = await self.client.call_tool("inventory_refresh_stock", {})
            if not result.is_error:
                totals = data(result)
                say(
                    f"  The view is open: {totals['items']} items, {totals['units_on_hand']:,} units on hand, "
                    f"{totals['low_stock']} low on stock in {totals['warehouse']}."
                )
                return
            if error_code(result) not in ("VIEW_OPENING", "VIEW_CLOSED") or loop.time() > deadline:
                raise SystemExit("demo: " + texts(result)[0])
            say("  … waiting for you to open the view's URL in a browser")

    async def run(self, open_browser: bool, tab_timeout: float) -> None:
        listed = await self.ask("warehouses", action="list")
        say("  " + "; ".join(f"{w['code']} {w['name']} ({w['items']} items)" for w in listed))
        await self.step()

        opened = await self.ask("inventory", warehouse_code="BER")
        say(f"\n  Open this URL to watch the agent work:\n\n    {opened['url']}\n")
        if open_browser:
            webbrowser.open(opened["url"])
        await self.wait_for_tab(tab_timeout)
        await self.step()

        low = await self.ask("inventory_update", low_stock_only=True)
        say("  Low on stock: " + ", ".join(f"{r['sku']} ({r['available']} < {r['reorder_point']})" for r in low))
        await self.step()
        if not low:
            return
        first = low[0]
        item = await self.ask("inventory_select_item", sku=first["sku"])
        say(f"  {item['sku']} {item['name']}: {item['on_hand']} on hand, {item['available']} available.")
        await self.step()

        restock = first["reorder_point"] - first["available"] + 10
        receipt = {"sku": first["sku"], "delta": restock, "reason": "Goods receipt PO-DEMO-1"}
        item = await self.ask("inventory_adjust_stock", **receipt)
        say(f"  Booked {restock} {item['unit']}: {item['available']} available now.")
        await self.step()

        await self.call("inventory_adjust_stock", sku=first["sku"], delta=-100_000, reason="Oversized pick")
        say("  (Refused, and nothing changed: the agent cannot take more than is available.)")
        await self.step()

        if len(low) > 1:
            second = low[1]
            moved = await self.call(
                "inventory_transfer_stock", sku=second["sku"], from_warehouse="HAM", to_warehouse="BER", quantity=3
            )
            if not moved.is_error:
                done = data(moved)
                say(f"  Moved 3 {second['sku']} HAM → BER: HAM {done['from_on_hand']}, BER {done['to_on_hand']}.")
            await self.step()

        await self.call("inventory_update", low_stock_only=False, category="Power tools")
        await self.step()
        report = await self.ask("inventory_stock_report", group_by="category")
        say("  " + "; ".join(f"{g['group']}: {g['units_on_hand']:,} units" for g in report))
        await self.step()
        report = await self.ask("inventory_stock_report", group_by="warehouse")
        say("  " + "; ".join(f"{g['group']}: €{g['stock_value_cents'] / 100:,.2f}" for g in report))
        await self.step()

        await self.call("inventory_update", category=None, warehouse_code="HAM")
        await self.step()
        await self.call("inventory_update", warehouse_code="BER")
        say("\nDone: every call above is in the call log at /viewer.")


async def drive(base_url: str, args: argparse.Namespace) -> None:
    say(f"Connecting to {base_url}/mcp as an agent …")
    async with Client(base_url.rstrip("/") + "/mcp", mode="legacy") as client:
        await Demo(client, args.pause).run(args.open_browser, args.tab_timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", default=os.environ.get("URL") or None, help="base URL of a running server")
    parser.add_argument("--open-browser", action="store_true", help="open the view in the local browser")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between steps (default 2)")
    parser.add_argument("--tab-timeout", type=float, default=300.0, help="seconds to wait for a browser tab")
    parser.add_argument("--no-wait", action="store_true", help="stop a server the demo started right at the end")
    args = parser.parse_args(argv)
    try:
        if args.url:
            asyncio.run(drive(args.url, args))
            return 0
        with tempfile.TemporaryDirectory(prefix="webapp-demo-") as folder, own_server(Path(folder) / "demo.db") as url:
            asyncio.run(drive(url, args))
            if not args.no_wait:
                say(f"The server keeps running at {url} (the viewer: {url}/viewer). Press Ctrl+C to stop it.")
                threading.Event().wait()
    except KeyboardInterrupt:
        say("\nStopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
