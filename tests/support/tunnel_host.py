"""The Claude-policy harness as Claude Desktop with a local server, for the tunnel's browser tests: the view's own tool
calls carried to the server through the test's MCP client, every browser request to the server aborted, and the
locators of the view inside the harness's frames."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp import Client
from playwright.async_api import BrowserContext, Frame, FrameLocator, Locator, Page

from tests.support.claude_calls import HostCalls, carry_calls
from tests.support.claude_host import ClaudeHost
from tests.views.inventory.support import call, structured

__all__ = [
    "FONTS",
    "IMPORT_EVERY_MODULE",
    "TITLE",
    "Host",
    "on_hand",
    "open_host",
    "shell_of",
    "show",
    "stock_row",
    "transport",
    "view_frame",
    "view_in",
]

TITLE = "The live inventory view"
FONTS = """document.fonts.ready.then(() => {
  const faces = {};
  for (const face of document.fonts) {
    if (face.status !== "unloaded") (faces[face.family.replaceAll('"', "")] ??= []).push(face.status);
  }
  return faces;
})"""
"""In a view's document: the font faces it uses and how they loaded (`{family: [status, …]}`)."""
IMPORT_EVERY_MODULE = """(async () => {
  const { imports } = JSON.parse(document.querySelector('script[type="importmap"]').textContent);
  const inlined = Object.keys(imports).filter((key) => imports[key].startsWith("data:"));
  const failed = (key) => import(key).then(() => null, (error) => `${key}: ${error}`);
  return (await Promise.all(inlined.map(failed))).filter(Boolean);
})()"""
"""In a tunnelled view's document: import every module its import map inlines; the errors of those that fail."""


@dataclass
class Host:
    """The harness page, as Claude Desktop with a local server: `calls` carries the view's own tool calls to the
    server (through `calls.carrier[0]`) and aborts every browser request to a server in `calls.blocked`."""

    page: Page
    sandbox_origin: str
    calls: HostCalls


async def open_host(context: BrowserContext, harness_host: ClaudeHost) -> Host:
    page = await context.new_page()
    calls = await carry_calls(context, page)
    await page.goto(harness_host.url)
    return Host(page, harness_host.sandbox_origin, calls)


async def show(host: Host, agent: Client, calls: str = "forward", **shown: Any) -> dict[str, Any]:
    """Open the view as Claude's model would and render it under Claude's policy for an http:// server (its
    domains dropped, nothing of the browser's reaching it); the host carries the view's own calls through `agent`'s
    connection as `calls` says."""
    host.calls.carrier[:] = [agent]
    tool = next(tool for tool in (await agent.list_tools()).tools if tool.name == "inventory")
    assert tool.meta is not None
    resource = (await agent.read_resource(tool.meta["ui"]["resourceUri"])).contents[0]
    result = await call(agent, "inventory", warehouse_code="BER")
    opened = structured(result)
    host.calls.blocked.append(opened["url"].split("/inventory")[0])
    details = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": {},
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "sandboxOrigin": host.sandbox_origin,
        "keepHttp": False,
        "opaque": False,
        "theme": "light",
        "honourFrames": False,
        "calls": calls,
        **shown,
    }
    await host.page.evaluate("shown => window.harness.show(shown)", details)
    return {**opened, "meta": result.meta}


def shell_of(host: Host, index: int = 0) -> FrameLocator:
    return host.page.frame_locator(f"iframe[data-index='{index}']").frame_locator("iframe")


def view_in(host: Host, index: int = 0) -> FrameLocator:
    return shell_of(host, index).frame_locator(f"iframe[title='{TITLE}']")


def stock_row(view: FrameLocator, sku: str) -> Locator:
    return view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku)


def on_hand(view: FrameLocator, sku: str) -> Locator:
    return stock_row(view, sku).locator("td").nth(3)


async def transport(host: Host) -> str | None:
    """How the shell says the view runs (`window.__webappTransport`)."""
    for frame in host.page.frames:
        if not frame.is_detached() and (value := await frame.evaluate("window.__webappTransport || null")):
            return str(value)
    return None


async def view_frame(host: Host) -> Frame:
    """The view's own frame (inside the shell's), for what only a frame can do (a reload)."""
    for frame in host.page.frames:
        framed = not frame.is_detached() and frame.parent_frame is not None
        if framed and await (await frame.frame_element()).get_attribute("title") == TITLE:
            return frame
    raise AssertionError("no tunnelled view in the harness")
