"""The Claude-policy harness host as Claude Desktop with a local server: the view's own tool calls (`calls:
"forward"`) carried to the server through an official MCP client, and every browser request to the server aborted,
so that nothing reaches it but the host's MCP connection. Each carried call is recorded (name, instants, sizes).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from playwright.async_api import BrowserContext, Page, Route

__all__ = ["Carried", "HostCalls", "carry_calls"]


@dataclass(frozen=True)
class Carried:
    """One tool call the host carried for a view: `started`/`answered` on `time.perf_counter()`, the sizes in bytes
    of its arguments and of its result as JSON, and the result's structured content."""

    name: str
    arguments: dict[str, Any]
    started: float
    answered: float
    sent_bytes: int
    result_bytes: int
    structured: dict[str, Any]


@dataclass
class HostCalls:
    """What the host carries and through which client (`carrier[0]`, set before the view calls)."""

    carrier: list[Client] = field(default_factory=list)
    carried: list[Carried] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)  # the servers (base URLs) the browser must not reach
    reached: list[str] = field(default_factory=list)  # browser requests to them (each aborted)


def _size(data: Any) -> int:
    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())


async def carry_calls(context: BrowserContext, page: Page, *servers: str) -> HostCalls:
    """Abort every request of `context` to `servers` (base URLs; more may be added to `HostCalls.blocked` later) and
    answer the harness's `harnessCallTool` binding on `page` through `HostCalls.carrier`; call before the page opens
    the harness."""
    calls = HostCalls(blocked=list(servers))

    async def cut(route: Route) -> None:
        calls.reached.append(route.request.url)
        await route.abort()

    async def carry(_: Any, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = str(params["name"]), dict(params.get("arguments") or {})
        started = time.perf_counter()
        result = await calls.carrier[0].call_tool(name, arguments)
        answer = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        structured = answer.get("structuredContent") or {}
        answered = time.perf_counter()
        calls.carried.append(Carried(name, arguments, started, answered, _size(params), _size(answer), structured))
        return answer

    await context.route(lambda url: any(url.startswith(server + "/") for server in calls.blocked), cut)
    await page.expose_binding("harnessCallTool", carry)
    return calls
