"""A test app for `--app tests.support.apps:build`: a few plain tools and pages, no database.

Tools: `echo`, `whoami` (the call's context), `boom` (raises), `progress` (reports progress), `wait_session_end`
(waits until a legacy session ended), `calllog_tail` (the last call-log records), `hold` (runs until the server
stops, or past it). Pages: `/` and `/hello`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import mcp_types
from nicegui import ui

from webapp.core.context import CallContext
from webapp.server.composition import WebApp, internal_error

__all__ = ["FunctionTool", "TinyRegistry", "add_pages", "add_tools", "build"]

Handler = Callable[[dict[str, Any], CallContext | None], Awaitable[mcp_types.CallToolResult]]
_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FunctionTool:
    name: str
    description: str
    handler: Handler
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(_OBJECT))
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: mcp_types.ToolAnnotations | None = None
    icons: list[mcp_types.Icon] | None = None

    async def call(self, arguments: dict[str, Any] | None, ctx: CallContext | None = None) -> mcp_types.CallToolResult:
        return await self.handler(arguments or {}, ctx)


class TinyRegistry:
    """A registry with the `webapp.tools.ToolRegistry` verbs; exceptions escape on purpose (the server catches)."""

    def __init__(self) -> None:
        self._tools: dict[str, FunctionTool] = {}

    def add(self, tool: FunctionTool, /) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str, /) -> FunctionTool | None:
        return self._tools.get(name)

    def tools(self) -> list[FunctionTool]:
        return list(self._tools.values())

    async def call(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext | None = None
    ) -> mcp_types.CallToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return internal_error(name, LookupError(f"no tool {name!r}"))
        return await tool.call(arguments, ctx)


def text(value: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=value)])


def structured(value: dict[str, Any]) -> mcp_types.CallToolResult:
    import json

    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(value))], structured_content=value
    )


def build(webapp: WebApp) -> None:
    """The app factory: the test tools and pages."""
    add_tools(webapp)
    add_pages()


def add_tools(webapp: WebApp) -> None:
    """Give `webapp` a `TinyRegistry` with the test tools."""
    webapp.registry = TinyRegistry()
    ended: dict[str, asyncio.Event] = {}

    def ended_event(session_id: str) -> asyncio.Event:
        return ended.setdefault(session_id, asyncio.Event())

    webapp.on_session_end(lambda session_id: ended_event(session_id).set())

    async def echo(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        return text(str(args.get("text", "")))

    async def whoami(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        assert ctx is not None
        return structured({**asdict(ctx.caller), "tool": ctx.tool, "base_url": ctx.base_url})

    async def boom(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        print("boom: a stray print, which must never reach the stdio wire")
        raise RuntimeError("boom <on purpose>")

    async def progress(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        assert ctx is not None
        steps = int(args.get("steps", 3))
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return text(f"{steps} steps")

    async def wait_session_end(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        session_id = str(args["session_id"])
        await asyncio.wait_for(ended_event(session_id).wait(), float(args.get("timeout", 10)))
        return text("ended")

    async def hold(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        """Runs until the server begins to stop, then answers; with `past_stop`, runs on until it is ended."""
        log.info("holding a call until the server stops")
        await webapp.drain.stopping.wait()
        if args.get("past_stop"):
            await asyncio.Event().wait()  # never set: only the stopping server's drain ends this call
        return text("released by the stop")

    async def calllog_tail(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        records = webapp.calllog.records()[-int(args.get("n", 5)) :]
        rows = [{**asdict(r), "time": r.time.isoformat()} for r in records]
        return structured({"records": rows})

    schema_text = {**_OBJECT, "properties": {"text": {"type": "string"}}}
    schema_steps = {**_OBJECT, "properties": {"steps": {"type": "integer"}}}
    schema_session = {**_OBJECT, "properties": {"session_id": {"type": "string"}, "timeout": {"type": "number"}}}
    schema_n = {**_OBJECT, "properties": {"n": {"type": "integer"}}}
    for tool in (
        FunctionTool("echo", "Echoes the text.", echo, schema_text),
        FunctionTool("whoami", "Tells who is calling.", whoami),
        FunctionTool("boom", "Always raises.", boom),
        FunctionTool("progress", "Reports progress.", progress, schema_steps),
        FunctionTool("wait_session_end", "Waits until a session ended.", wait_session_end, schema_session),
        FunctionTool("calllog_tail", "The last call-log records.", calllog_tail, schema_n),
        FunctionTool(
            "hold", "Runs until the server stops.", hold, {**_OBJECT, "properties": {"past_stop": {"type": "boolean"}}}
        ),
    ):
        webapp.add_tool(tool)


def add_pages() -> None:
    @ui.page("/")
    def home() -> None:
        ui.label("webapp test home")

    @ui.page("/hello")
    def hello(key: str = "") -> None:
        ui.label(f"hello, {len(key)} characters of key")
