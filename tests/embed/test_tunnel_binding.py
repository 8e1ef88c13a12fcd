"""The tunnel tools over MCP, as any caller could call them: a tunnel is minted only by spending a view's boot ticket,
by its principal; everything else gets TUNNEL_UNKNOWN (one text, whatever the cause) or TUNNEL_REFUSED, and nothing
reaches NiceGUI then. Tunnel calls stay out of the call log. A page's socket spoken by hand over the tunnel (NiceGUI's
own socket app behind it) shows what engine.io survives: answers kept per request, lost polls collected.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support.e2e import RunningServer, run_server
from tests.support.views import connect, texts
from tests.views.inventory.support import INVENTORY_APP

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"
CHUNK = 16_384


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tunnel-binding")


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[RunningServer]:
    tokens = ("--token", f"alice={ALICE}", "--token", f"bob={BOB}", "--tunnel-chunk", str(CHUNK))
    with run_server(*tokens, app=INVENTORY_APP, db=folder / "inventory.db") as running:
        yield running


async def ticket_of(client: Client, warehouse: str = "BER") -> str:
    """A fresh boot ticket: the opening result's `_meta` (a client that declared nothing gets it too)."""
    result = await client.call_tool("inventory", {"warehouse_code": warehouse})
    assert result.meta is not None
    return str(result.meta["webapp/view"]["ticket"])


async def tunnel_call(client: Client, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """(the error code, or "" for a result) and the structured content of one tunnel tool call."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        text = texts(result)[0]
        code = re.search(r'code="([A-Z_]+)"', text) or re.search(r"\b(TUNNEL_[A-Z]+|VALIDATION_ERROR)\b", text)
        return (code.group(1) if code else text), {"text": text}
    assert result.structured_content is not None
    return "", dict(result.structured_content)


async def opened(client: Client) -> dict[str, Any]:
    code, data = await tunnel_call(client, "webapp_tunnel_open", ticket=await ticket_of(client))
    assert code == "", data
    return data


async def page_of(client: Client, data: dict[str, Any]) -> str:
    parts = [data["body"]]
    for part in range(1, data["parts"]):
        code, answer = await tunnel_call(
            client, "webapp_tunnel_http", tunnel=data["tunnel"], answer=data["answer"], part=part
        )
        assert code == "", answer
        parts.append(answer["body"])
    return "".join(parts)


@dataclass(frozen=True)
class Socket:
    """A tunnelled page's socket spoken by hand: its NiceGUI client connected over the tunnel, in one engine.io
    session (`query` carries its sid)."""

    client: Client
    tunnel: str
    view: str
    client_id: str
    query: str

    async def call(self, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return await tunnel_call(self.client, "webapp_tunnel_http", tunnel=self.tunnel, **arguments)

    async def handshake(self) -> str:
        """A new engine.io session, its socket.io connection (NiceGUI's implicit handshake) made: its query."""
        handshake = self.query.split("&sid=")[0]
        code, opened = await self.call(method="GET", query=handshake)
        assert code == "" and opened["body"].startswith("0{"), opened
        query = f"{handshake}&sid={json.loads(opened['body'][1:])['sid']}"
        assert (await self.call(method="POST", query=query, body="40"))[0] == ""
        code, connected = await self.call(method="GET", query=query, wait_ms=5000)
        assert code == "" and connected["body"].startswith("40{"), connected
        return query

    async def held_get(self) -> None:
        """GETs until one is held at the socket app (everything queued before taken), that one left held."""
        async with asyncio.timeout(15):
            while not (await self.call(method="GET", query=self.query, wait_ms=300))[1].get("pending"):
                pass

    async def received(self, query: str, packet: str) -> None:
        """GETs of session `query` (none refused) until `packet` came."""
        async with asyncio.timeout(15):
            while True:
                code, got = await self.call(method="GET", query=query, wait_ms=5000)
                assert code == "", got
                if packet in got["body"].split("\x1e"):
                    return


async def socket_of(client: Client) -> Socket:
    """A view opened, its tunnel minted and its page's socket connected over it, introducing the host as the page's
    head script does (only the page's last part fetched: the client id and the elements are there)."""
    result = await client.call_tool("inventory", {"warehouse_code": "BER"})
    assert result.meta is not None and result.structured_content is not None
    code, data = await tunnel_call(client, "webapp_tunnel_open", ticket=str(result.meta["webapp/view"]["ticket"]))
    assert code == "", data
    last = data["parts"] - 1
    code, end = await tunnel_call(client, "webapp_tunnel_http", tunnel=data["tunnel"], answer=data["answer"], part=last)
    client_id = re.search(r"client_id\W{1,16}([0-9a-f-]{36})", end["body"])
    listener = re.search(r'"listener_id":"([0-9a-f-]{36})","type":"webappHost"', end["body"])
    assert code == "" and client_id is not None and listener is not None
    handshake = (
        f"client_id={client_id.group(1)}&next_message_id=0&implicit_handshake=true&tab_id=tab&document_id=doc"
        "&EIO=4&transport=polling"
    )
    socket = Socket(client, data["tunnel"], str(result.structured_content["view"]), client_id.group(1), handshake)
    socket = replace(socket, query=await socket.handshake())
    init = {"id": 0, "client_id": socket.client_id, "listener_id": listener.group(1), "args": ['{"t":"init"}']}
    code, introduced = await socket.call(method="POST", query=socket.query, body="42" + json.dumps(["event", init]))
    assert code == "", introduced  # the view is built on its tab now, not after the host's 5 s of grace
    return socket


async def test_a_ticket_opens_one_tunnel_whose_page_comes_in_parts_within_the_chunk(server: RunningServer) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        data = await opened(alice)
        assert data["status"] == 200 and data["parts"] > 10 and len(data["tunnel"]) >= 43
        page = await page_of(alice, data)
        assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
        assert "window.__webappTunnel" in page and "https://webapp.tunnel.invalid" in page
        code, answer = await tunnel_call(
            alice, "webapp_tunnel_http", tunnel=data["tunnel"], answer=data["answer"], part=data["parts"] - 1
        )
        assert code == "TUNNEL_REFUSED", answer  # each part was fetched: the page's parts are gone


async def test_a_forged_a_spent_and_another_principals_ticket_and_an_unknown_tunnel_get_one_answer(
    server: RunningServer,
) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        ticket = await ticket_of(alice)
        async with connect(server, token=BOB, mode="legacy") as bob:
            theirs = await tunnel_call(bob, "webapp_tunnel_open", ticket=ticket)  # spends it, opens nothing for bob
        spent = await tunnel_call(alice, "webapp_tunnel_open", ticket=ticket)
        forged = await tunnel_call(alice, "webapp_tunnel_open", ticket="A" * 43)
        unknown = await tunnel_call(alice, "webapp_tunnel_http", tunnel="B" * 43, method="GET", query="")
        closed = await tunnel_call(alice, "webapp_tunnel_close", tunnel="C" * 43)
        answers = [theirs, spent, forged, unknown, closed]
        assert {code for code, _ in answers} == {"TUNNEL_UNKNOWN"}
        assert len({data["text"] for _, data in answers}) == 1  # nothing tells the causes apart


async def test_a_tunnel_answers_only_its_principal_in_its_mcp_session(server: RunningServer) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        data = await opened(alice)
        part = {"tunnel": data["tunnel"], "answer": data["answer"], "part": 1}
        async with connect(server, token=BOB, mode="legacy") as bob:
            code, _ = await tunnel_call(bob, "webapp_tunnel_http", **part)
        assert code == "TUNNEL_UNKNOWN"
        async with connect(server, token=ALICE, mode="legacy") as other_session:  # the model replaying a call, say
            code, _ = await tunnel_call(other_session, "webapp_tunnel_http", **part)
        assert code == "TUNNEL_UNKNOWN"
        code, _ = await tunnel_call(alice, "webapp_tunnel_http", **part)
        assert code == ""


async def test_only_the_rendered_pages_own_socket_requests_pass_and_a_closed_tunnel_is_gone(
    server: RunningServer,
) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        data = await opened(alice)
        page = await page_of(alice, data)
        client_id = re.search(r"client_id\W{1,16}([0-9a-f-]{36})", page)
        assert client_id is not None
        socket = f"client_id={client_id.group(1)}&EIO=4&transport=polling"
        tunnel = data["tunnel"]
        refused = {
            "another client": socket.replace(client_id.group(1), "0" * 8 + client_id.group(1)[8:]),
            "a websocket": socket.replace("polling", "websocket"),
            "a field NiceGUI never sends": socket + "&path=/mcp",
            "a forged session": socket + "&sid=forged",
        }
        for what, query in refused.items():
            code, _ = await tunnel_call(
                alice, "webapp_tunnel_http", tunnel=tunnel, method="GET", query=query, wait_ms=0
            )
            assert code == "TUNNEL_REFUSED", what
        code, body = await tunnel_call(
            alice, "webapp_tunnel_http", tunnel=tunnel, method="POST", query=socket, body="x" * 1_000_001
        )
        assert code == "TUNNEL_REFUSED" and "1000000" in body["text"]
        code, handshake = await tunnel_call(alice, "webapp_tunnel_http", tunnel=tunnel, method="GET", query=socket)
        assert code == "" and handshake["status"] == 200 and handshake["body"].startswith("0{")
        code, _ = await tunnel_call(alice, "webapp_tunnel_http", tunnel=tunnel, method="GET", query=socket)
        assert code == "TUNNEL_REFUSED"  # a second handshake while the session lives
        assert (await tunnel_call(alice, "webapp_tunnel_close", tunnel=tunnel))[0] == ""
        code, _ = await tunnel_call(alice, "webapp_tunnel_http", tunnel=tunnel, answer=data["answer"], part=1)
        assert code == "TUNNEL_UNKNOWN"


async def test_arguments_of_the_wrong_shape_are_refused_before_any_tunnel_is_looked_up(server: RunningServer) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        shapes: list[tuple[str, dict[str, Any]]] = [
            ("webapp_tunnel_open", {}),
            ("webapp_tunnel_open", {"ticket": "A" * 43, "tunnel": "B" * 43}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "method": "GET", "part": 1}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "part": 1}),  # a part, but of which answer
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "answer": 1, "method": "GET", "query": ""}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "method": "PUT", "query": ""}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "poll": True, "wait_ms": 60_000}),
            ("webapp_tunnel_http", {"tunnel": "B" * 43, "method": "GET", "path": "/mcp"}),
        ]
        for tool, arguments in shapes:
            result = await alice.call_tool(tool, arguments)
            assert result.is_error and "<validation_error" in texts(result)[0], (tool, arguments)


async def test_tunnel_calls_stay_out_of_the_call_log(server: RunningServer, folder: Path) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        await page_of(alice, await opened(alice))
        await alice.call_tool("warehouses", {})
    with sqlite3.connect(folder / "inventory.db") as db:
        tools = {tool for (tool,) in db.execute("SELECT tool FROM webapp_calls")}
    assert "warehouses" in tools and "inventory" in tools
    assert not any(tool.startswith("webapp_tunnel") for tool in tools)


async def test_a_posts_answer_leaves_the_parts_of_a_long_get_answer_to_fetch(server: RunningServer) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        socket = await socket_of(alice)
        async with asyncio.timeout(15):  # the view built on its tab: an update over the chunk comes
            while (got := (await socket.call(method="GET", query=socket.query, wait_ms=5000))[1])["parts"] == 1:
                pass
        ack = f'42["ack",{{"client_id":"{socket.client_id}","next_message_id":0}}]'
        code, posted = await socket.call(method="POST", query=socket.query, body=ack)  # answered meanwhile
        assert code == "" and posted["answer"] != got["answer"], posted
        parts = [await socket.call(answer=got["answer"], part=part) for part in range(1, got["parts"])]
        assert all(code == "" for code, _ in parts), parts
        update = (got["body"] + "".join(part["body"] for _, part in parts)).split("\x1e")
        assert any(packet.startswith('42["update",') and "BER" in packet for packet in update)
        assert all(json.loads(packet[2:]) for packet in update if packet.startswith("42"))


async def test_a_lost_poll_never_wedges_the_tunnel_the_get_sent_again_or_a_new_handshake_collects_it(
    server: RunningServer,
) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        socket = await socket_of(alice)
        ping = f'421["ack",{{"client_id":"{socket.client_id}","next_message_id":0}}]'  # acknowledged: "431[]"
        await socket.held_get()  # held at NiceGUI's socket app; its poll is lost, never sent
        assert (await socket.call(method="POST", query=socket.query, body=ping))[0] == ""
        await socket.received(socket.query, "431[]")  # the page's GET, sent again, takes the held GET's answer

        await socket.held_get()
        assert (await socket.call(method="POST", query=socket.query, body=ping))[0] == ""
        query = await socket.handshake()  # the page's socket started over: the lost poll's session ended
        assert query != socket.query
        code, answered = await socket.call(method="POST", query=query, body=ping.replace("421", "422"))
        assert code == "", answered
        await socket.received(query, "432[]")


async def test_a_post_whose_event_names_another_nicegui_client_is_refused(server: RunningServer) -> None:
    async with connect(server, token=ALICE, mode="legacy") as alice:
        socket = await socket_of(alice)
        other = "0" * 8 + socket.client_id[8:]  # another tab's client, say
        click = '42["event",{{"client_id":"{}","id":1,"listener_id":"x","args":null}}]'
        code, refused = await socket.call(method="POST", query=socket.query, body=click.format(other))
        assert code == "TUNNEL_REFUSED" and "names another client_id" in refused["text"], refused
        code, _ = await socket.call(method="POST", query=socket.query, body=click.format(socket.client_id))
        assert code == ""
