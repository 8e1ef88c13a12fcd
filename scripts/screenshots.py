"""`make screenshots`: the docs' images, taken with Debian's Chromium while the scripted agent of `make demo` drives the
inventory view of a server started on a free port with a fresh database.

Writes `inventory-and-viewer.png` (the view beside the call viewer, for the README) and `viewer.png` (the call
viewer, for its guide) into the folder given (default `docs/images`); each must stay under 200 kB.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
import tempfile
from pathlib import Path

from mcp import Client
from playwright.async_api import Browser, Page, async_playwright

from scripts.demo import Demo, own_server

CHROMIUM = "/usr/bin/chromium"
MAX_BYTES = 200_000
HEIGHT = 760
VIEW_WIDTH = 860
VIEWER_WIDTH = 760
_SIDE_BY_SIDE = """<!doctype html><html><body style="margin:0;display:flex;background:#e5e7eb;gap:4px">
<img src="data:image/png;base64,{left}"><img src="data:image/png;base64,{right}"></body></html>"""


async def _tab(browser: Browser, url: str, width: int) -> Page:
    page = await browser.new_page(viewport={"width": width, "height": HEIGHT})
    await page.goto(url, wait_until="networkidle", timeout=30_000)
    return page


async def _settled(page: Page) -> bytes:
    """The page once its network is quiet and the last frame is drawn."""
    await page.wait_for_load_state("networkidle", timeout=30_000)
    await page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return await page.screenshot(type="png")


async def take(base_url: str, folder: Path) -> list[Path]:
    """Drive the demo scenario with the view and the viewer open, then write the images; the paths written."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        )
        try:
            viewer = await _tab(browser, base_url + "/viewer", VIEWER_WIDTH)
            async with Client(base_url + "/mcp", mode="legacy") as client:
                demo = Demo(client, pause=0.0)
                opened = await demo.ask("inventory", warehouse_code="BER")
                view = await _tab(browser, opened["url"], VIEW_WIDTH)
                await demo.wait_for_tab(30.0)
                low = await demo.ask("inventory_update", low_stock_only=True)
                if low:
                    await demo.ask("inventory_select_item", sku=low[0]["sku"])
                await demo.ask("inventory_stock_report", group_by="category")
            await viewer.get_by_text("inventory_stock_report", exact=True).first.click()  # its result, chart included
            left, right = await _settled(view), await _settled(viewer)
            pair = await browser.new_page(viewport={"width": VIEW_WIDTH + VIEWER_WIDTH + 4, "height": HEIGHT})
            encoded = {"left": base64.b64encode(left).decode(), "right": base64.b64encode(right).decode()}
            await pair.set_content(_SIDE_BY_SIDE.format(**encoded))
            images = {"inventory-and-viewer.png": await pair.screenshot(type="png"), "viewer.png": right}
        finally:
            await browser.close()
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, image in images.items():
        if len(image) > MAX_BYTES:
            raise SystemExit(f"screenshots: {name} is {len(image):,} bytes, over the {MAX_BYTES:,} the docs allow")
        (folder / name).write_bytes(image)
        written.append(folder / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", nargs="?", type=Path, default=Path("docs/images"), help="where the images go")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="webapp-screenshots-") as scratch, own_server(Path(scratch) / "db") as url:
        for path in asyncio.run(take(url.rstrip("/"), args.folder)):
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
