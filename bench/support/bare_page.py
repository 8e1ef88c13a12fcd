"""NiceGUI's floor for `bench.reattach`: the elements of a built inventory page taken as a census, and a bare NiceGUI
page that builds the same elements (kinds, nesting, texts, props, classes, styles, listeners and data) with no product
code: no store, no bridge, no view logic, no webapp middleware.

`python -m bench.support.bare_page CENSUS PORT` serves that page at `/inventory` as a worker serves the inventory: it
awaits the tab's socket before building, gives a tab without a key one (`history.replaceState`, as a new view's tab
gets its key), and counts its built pages in `/metrics` (`webapp_tabs_attached`). It runs NiceGUI's `ui.run` as a
worker does (wsproto, no Tailwind, the worker's default reconnect grace) with the worker's two tunings of NiceGUI
(its heap keeper and untimed outbox waits): the floor is NiceGUI at its cheapest, a lower bound of what any page
with these elements costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from nicegui import Client, app, core, ui
from nicegui.element import Element
from nicegui.elements.query import QueryElement
from nicegui.page import page
from starlette.responses import PlainTextResponse

from tests.support.haproxy import free_port

__all__ = ["BarePage", "Node", "census", "inventory_census", "kinds", "rebuild", "run_bare_page"]

ROUTE = "/inventory"
_START_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Node:
    """One element of a built page: its NiceGUI kind (the first class of its type's ancestry that NiceGUI defines),
    the index of its parent among the nodes before it (-1: the page's content) and the slot it is in."""

    kind: str
    parent: int
    slot: str
    text: str | None
    props: dict[str, Any]
    classes: list[str]
    style: dict[str, str]
    events: list[str]
    args: dict[str, Any] = field(default_factory=lambda: {})
    """What its kind's constructor needs (a select's options, a table's columns and rows, a chart's options)."""


def _kind(element: Element) -> str:
    return next(cls.__name__ for cls in type(element).__mro__ if cls.__module__.startswith("nicegui."))


def _args(element: Element) -> dict[str, Any]:
    if isinstance(element, ui.select):
        return {"options": element.options, "value": element.value}
    if isinstance(element, ui.table):
        return {"columns": element.columns, "rows": element.rows, "row_key": element.row_key}
    if isinstance(element, ui.echart):
        return {"options": element.options}
    if isinstance(element, QueryElement):
        return {"selector": element.props["selector"]}
    if isinstance(element, ui.input | ui.number | ui.switch):
        return {"value": element.value}
    return {}


def census(client: Client) -> list[Node]:
    """The elements of the page built in `client` (its content and its `ui.query`s), parents first."""
    nodes: list[Node] = []
    index = {client.content.id: -1}
    for element in client.elements.values():
        slot = element.parent_slot
        if slot is None or (slot.parent.id not in index and not isinstance(element, QueryElement)):
            continue  # the client's own layout
        index[element.id] = len(nodes)
        nodes.append(
            Node(
                kind=_kind(element),
                parent=index.get(slot.parent.id, -1),
                slot=slot.name,
                text=element._text,  # pyright: ignore[reportPrivateUsage]
                props=dict(element.props),
                classes=list(element.classes),
                style=dict(element.style),
                events=[listener.type for listener in element._event_listeners.values()],  # pyright: ignore[reportPrivateUsage]
                args=_args(element),
            )
        )
    return nodes


def kinds(nodes: list[Node]) -> str:
    """`34 Label, 22 Element, …`: the census by kind, most frequent first."""
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.kind] = counts.get(node.kind, 0) + 1
    return ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items(), key=lambda item: -item[1]))


class _WorkerTab:
    """What a worker tells a view about its tab (`views.inventory.BridgeTabs`): a call-log link, no agent yet."""

    def viewer_link(self) -> str | None:
        return "/viewer"

    def opened_by_agent(self) -> bool:
        return False


async def inventory_census(database: str, data: dict[str, Any] | None = None) -> list[Node]:
    """The census of an inventory page built in this process on `database` (a NiceGUI client without a server), from
    a view's saved `data` (None: a new view's)."""
    # the product's modules are loaded here, by the benchmark, never by the bare page's server
    from actions.store import SqlInventoryStore
    from views.inventory import inventory_view
    from webapp import AppEvents
    from webapp.apps.definition import ViewContext

    loop, core.loop = core.loop, asyncio.get_running_loop()  # a client's outbox runs on it
    events = AppEvents()
    try:
        with SqlInventoryStore(database, events=events, seed_demo=False) as store:
            view = inventory_view(store, events, _WorkerTab())
            client = Client(page(ROUTE))
            try:
                with client:
                    view(ViewContext(app="inventory", input=None, data=dict(data or {}), save=lambda: None))
                return census(client)
            finally:
                client.delete()
    finally:
        core.loop = loop


def _make(node: Node) -> Element:
    text, args = node.text or "", node.args
    makers: dict[str, Callable[[], Element]] = {
        "Label": lambda: ui.label(text),
        "Row": ui.row,
        "Column": ui.column,
        "Card": ui.card,
        "Icon": lambda: ui.icon(str(node.props.get("name", ""))),
        "Button": lambda: ui.button(text),
        "Tooltip": lambda: ui.tooltip(text),
        "Select": lambda: ui.select(args["options"], value=args["value"]),
        "Input": lambda: ui.input(value=args["value"] or ""),
        "Number": lambda: ui.number(value=args["value"]),
        "Switch": lambda: ui.switch(text, value=bool(args["value"])),
        "Table": lambda: ui.table(columns=args["columns"], rows=args["rows"], row_key=args["row_key"]),
        "EChart": lambda: ui.echart(args["options"]),
    }
    return makers.get(node.kind, lambda: ui.element("div"))()  # an app's own component: a plain element


def _ignore() -> None:
    pass


def rebuild(nodes: list[Node], client: Client) -> None:
    """Build `nodes` in `client`'s content with NiceGUI's own elements."""
    made: list[Element] = []
    for node in nodes:
        if node.kind == "QueryElement":
            query = ui.query(node.args["selector"]).classes(" ".join(node.props.get("classes", [])))
            made.append(query._element())  # pyright: ignore[reportPrivateUsage,reportArgumentType]
            continue
        parent = client.content if node.parent < 0 else made[node.parent]
        with parent.slots.get(node.slot) or parent.add_slot(node.slot):
            element = _make(node)
        changed = {name: value for name, value in node.props.items() if element.props.get(name) != value}
        if changed:
            element.props.update(changed)
        if node.classes:
            element.classes(" ".join(node.classes))
        if node.style:
            element.style.update(node.style)
        heard = {listener.type for listener in element._event_listeners.values()}  # pyright: ignore[reportPrivateUsage]
        for event in node.events:
            if event not in heard:
                element.on(event, _ignore)
        made.append(element)


@dataclass
class BarePage:
    """A running bare page server; what it writes goes to `log`."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path


@contextlib.contextmanager
def run_bare_page(nodes: list[Node], folder: Path) -> Generator[BarePage]:
    """Serve a bare page of `nodes` on a free port until the block ends (its census and its log in `folder`)."""
    census_file = folder / "census.json"
    census_file.write_text(json.dumps([asdict(node) for node in nodes], default=list))
    port = free_port()
    log = folder / f"bare-page-{port}.log"
    command = [sys.executable, "-m", "bench.support.bare_page", str(census_file), str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    served = BarePage(process, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while not _answers(f"{served.base_url}/metrics"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bare page did not start (exit code {process.poll()})")
            time.sleep(0.1)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _serve(census_file: Path, port: int) -> None:
    from webapp.core.settings import Settings
    from webapp.server.heap import HeapKeeper
    from webapp.server.outbox_waits import untimed_outbox_waits

    nodes = [Node(**node) for node in json.loads(census_file.read_text())]
    built: set[str] = set()

    @ui.page(ROUTE)
    async def _page(client: Client, key: str = "") -> None:  # pyright: ignore[reportUnusedFunction]
        await client.connected(timeout=60)
        if not key:
            ui.navigate.history.replace(f"{ROUTE}?key={uuid.uuid4().hex}")
        rebuild(nodes, client)
        built.add(client.id)
        client.on_delete(lambda: built.discard(client.id))

    @app.get("/metrics")
    def _metrics() -> PlainTextResponse:  # pyright: ignore[reportUnusedFunction]
        text = f"# TYPE webapp_tabs_attached gauge\nwebapp_tabs_attached {len(built)}\n"
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    keeper = HeapKeeper()
    app.on_startup(keeper.start)
    app.on_shutdown(keeper.stop)
    untimed_outbox_waits()
    ui.run(
        host="127.0.0.1",
        port=port,
        reload=False,
        show=False,
        tailwind=False,
        show_welcome_message=False,
        # a worker's default: NiceGUI derives the socket's ping interval and timeout from it, and the default 3 s
        # drops sockets whose pings wait behind a storm's page builds (the tabs load again: a storm of its own)
        reconnect_timeout=Settings.model_fields["reconnect_grace"].default,
    )


if __name__ in {"__main__", "__mp_main__"}:
    _serve(Path(sys.argv[1]), int(sys.argv[2]))
