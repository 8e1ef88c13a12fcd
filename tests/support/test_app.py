"""A small MCP app for the bridge tests (`--app tests.support.test_app:build`): a counter with a title.

Actions: increment, reset, explode (raises), hang (waits until cancelled), count_to (reports progress), peek (reads
only), double and trace (in an actions class); the update observer sets the title and the count. A notes app has no
observer.
Plain tools: `ping`, `wait_deleted`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nicegui import Client, app, ui
from pydantic import BaseModel, ConfigDict, Field

from webapp.apps.definition import McpAppUpdateEvent, ViewContext, mcp_app, mcp_app_action
from webapp.bridge.app_tools import install_apps
from webapp.core.context import CallContext
from webapp.server.composition import WebApp
from webapp.tools.registry import Tool

__all__ = ["CounterView", "NotesView", "build"]


class CounterInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="Counter", max_length=80, description="The heading shown above the count.")
    start: int | None = Field(default=None, ge=0, description="Sets the count.")


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: int = Field(default=1, ge=1, le=1000, description="How much to add.")


class CountTo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int = Field(ge=1, le=50)


class Count(BaseModel):
    count: int
    title: str


class CounterActions:
    @mcp_app_action(description="Doubles the count. Returns the new count and title.")
    def double(self, view: CounterView) -> Count:
        view.set_count(view.count * 2)
        return Count(count=view.count, title=view.title)

    @mcp_app_action(description="Records entering and leaving, with a browser round trip in between.")
    async def trace(self, view: CounterView) -> dict[str, Any]:
        view.trace.append("enter")
        await ui.run_javascript("return 1", timeout=5)
        view.trace.append("exit")
        return {"trace": list(view.trace)}


@mcp_app(description="Shows a counter with a title.", route="/counter", input=CounterInput, actions=(CounterActions,))
class CounterView:
    def __init__(self, view: ViewContext[CounterInput]) -> None:
        self.view = view
        if not view.data:
            start = view.input or CounterInput()
            view.data.update(title=start.title, count=start.start or 0)
        self.trace: list[str] = []
        self.title_label = ui.label(self.title).props("data-testid=title")
        self.count_label = ui.label(str(self.count)).props("data-testid=count")
        self.status = ui.label("").props("data-testid=status")
        ui.button("+1", on_click=self.bump).props("data-testid=bump")

    @property
    def count(self) -> int:
        return int(self.view.data["count"])

    @property
    def title(self) -> str:
        return str(self.view.data["title"])

    def set_count(self, count: int) -> None:
        self.view.data["count"] = count
        self.count_label.text = str(count)

    def bump(self) -> None:
        """A person's click: saved at once, so a reload shows it."""
        self.set_count(self.count + 1)
        self.view.save()

    @mcp_app_action(description="Adds to the count. Returns the new count.")
    def increment(self, params: Step) -> dict[str, int]:
        self.set_count(self.count + params.by)
        return {"count": self.count}

    @mcp_app_action(description="Resets the count to zero.", scope="counter:write")
    def reset(self) -> None:
        self.set_count(0)

    @mcp_app_action(description="Fails on purpose.")
    def explode(self) -> None:
        raise RuntimeError("exploded on purpose")

    @mcp_app_action(description="Waits until it is cancelled.")
    async def hang(self) -> None:
        self.status.text = "hanging"
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.status.text = "cancelled"
            raise

    @mcp_app_action(description="Counts to n, reporting progress.")
    async def count_to(self, params: CountTo, *, ctx: CallContext) -> str:
        for step in range(1, params.n + 1):
            await ctx.report_progress(step, params.n, f"counted {step}")
        self.status.text = f"counted to {params.n}"
        return f"counted to {params.n}"

    @mcp_app_action(description="Returns the count and title without changing the view.")
    def peek(self) -> Count:
        return Count(count=self.count, title=self.title)

    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> str:
        new = event.arguments_as(CounterInput)
        if "title" in event.fields_set:
            self.view.data["title"] = new.title
            self.title_label.text = new.title
        if "start" in event.fields_set and new.start is not None:
            self.set_count(new.start)
        return f"Counter updated: {', '.join(sorted(event.fields_set)) or 'nothing'}."


class NoteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(default="", max_length=200, description="The first line of the note.")


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    line: str = Field(max_length=200)


@mcp_app(description="Shows a note of a few lines.", route="/notes", input=NoteInput)
class NotesView:
    """An app without update observer: opening it again rebuilds it in place with the new input."""

    def __init__(self, view: ViewContext[NoteInput]) -> None:
        self.view = view
        if "lines" not in view.data:
            view.data["lines"] = [view.input.text] if view.input and view.input.text else []
        self.label = ui.label(self.text).props("data-testid=note")

    @property
    def text(self) -> str:
        return " | ".join(self.view.data["lines"])

    @mcp_app_action(description="Appends a line to the note.")
    def append(self, params: Line) -> str:
        self.view.data["lines"].append(params.line)
        self.label.text = self.text
        return self.text


class WaitDeleted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    count: int = Field(default=1, ge=1)
    timeout: float = 10.0


def _page_key(client: Client) -> str:
    try:
        return client.request.query_params.get("key", "")
    except Exception:
        return ""


def build(webapp: WebApp) -> None:
    """The counter app, plus `ping` (a plain tool, the benchmark's baseline) and `wait_deleted` (waits until NiceGUI
    deleted `count` tabs that were loaded with `?key=key`: the late delete of an older tab has happened)."""
    install_apps(webapp, CounterView, NotesView)
    deleted: dict[str, int] = {}
    changed = asyncio.Condition()

    async def on_delete(client: Client) -> None:
        async with changed:
            key = _page_key(client)
            deleted[key] = deleted.get(key, 0) + 1
            changed.notify_all()

    app.on_delete(on_delete)

    async def wait_deleted(params: WaitDeleted) -> str:
        async with asyncio.timeout(params.timeout), changed:
            await changed.wait_for(lambda: deleted.get(params.key, 0) >= params.count)
        return f"{deleted[params.key]} deleted"

    webapp.add_tool(Tool("ping", description="Answers pong.", handler=lambda: "pong"))
    webapp.add_tool(
        Tool("wait_deleted", description="Waits for deleted tabs.", handler=wait_deleted, input=WaitDeleted)
    )
