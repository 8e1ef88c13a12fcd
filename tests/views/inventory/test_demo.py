"""`make demo` end to end: the scripted agent starts a server, prints the view's URL and drives the open tab."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest
from playwright.async_api import Page, expect

from tests.support.e2e import REPO, child_env

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session loop

VIEW_URL = re.compile(r"(http://127\.0\.0\.1:\d+/inventory\?key=\S+)")


async def test_the_demo_drives_the_view_a_person_opens_from_its_printed_url(page: Page) -> None:
    demo = await asyncio.create_subprocess_exec(
        sys.executable,
        "scripts/demo.py",
        "--pause",
        "0",
        "--no-wait",
        "--tab-timeout",
        "30",
        cwd=REPO,
        env=child_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert demo.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(90):
            while line := (await demo.stdout.readline()).decode():
                lines.append(line)
                if (match := VIEW_URL.search(line)) and not page.url.startswith("http"):
                    await page.goto(match.group(1))
            assert await demo.wait() == 0, "".join(lines)
    finally:
        if demo.returncode is None:
            demo.kill()
            await demo.wait()
    output = "".join(lines)
    for step in ("→ inventory(warehouse_code='BER')", "→ inventory_adjust_stock(", "→ inventory_stock_report("):
        assert step in output
    assert "✗ <message>Only " in output and "Nothing was changed." in output
    assert output.rstrip().endswith("Done: every call above is in the call log at /viewer.")
    await expect(page.get_by_test_id("status")).to_contain_text("Reconnecting…")  # the demo stopped its server
