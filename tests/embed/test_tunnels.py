"""`Tunnels` on their own: the binding checked before anything is passed on, one GET and one POST at a time, held GETs
resumed rather than cancelled, long answers in parts kept per answer, lost polls collected, idle tunnels closed. The
socket app here is a small ASGI app of the test's (NiceGUI's own runs in `test_tunnel.py`): it answers a handshake and
holds GETs until told to answer."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote

import pytest

from webapp.embed.answers import KEPT, split_parts
from webapp.embed.tunnel import MAX_PAYLOAD, Refused, Tunnel, Tunnels, UnknownTunnel

CLIENT = "c" * 32
HANDSHAKE = f"client_id={CLIENT}&EIO=4&transport=polling&t=abc"
POLLING = HANDSHAKE + "&sid=s1"


@dataclass
class SocketApp:
    """Answers a handshake with session `s1`; other GETs wait for `push`; POSTs answer `ok` after `post_delay`."""

    sessions: set[str] = field(default_factory=lambda: set[str]())
    pushed: asyncio.Queue[str] = field(default_factory=lambda: asyncio.Queue[str]())
    requests: list[tuple[str, str, bytes]] = field(default_factory=lambda: list[tuple[str, str, bytes]]())
    post_delay: float = 0.0
    fail: bool = False  # then every request raises, as a broken socket app would
    disconnected: list[str] = field(default_factory=lambda: list[str]())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.fail:
            raise RuntimeError("the socket app failed")
        body = (await receive())["body"]
        query = scope["query_string"].decode()
        self.requests.append((scope["method"], query, body))
        if scope["method"] == "POST":
            await asyncio.sleep(self.post_delay)
            text = "ok"
        elif "sid" not in parse_qs(query):
            self.sessions.add("s1")
            text = "0" + json.dumps({"sid": "s1", "pingInterval": 12000, "pingTimeout": 6000, "maxPayload": 1000000})
        else:
            text = await self.pushed.get()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": text.encode()})

    async def disconnect(self, sid: str) -> None:
        self.disconnected.append(sid)
        self.sessions.discard(sid)


@dataclass
class Clock:
    """The seconds a test says have passed."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def tunnels_of(
    app: SocketApp, *, chunk: int = 20_000, idle: float = 60.0, clock: Callable[[], float] = time.monotonic
) -> Tunnels:
    return Tunnels(
        app,
        chunk=chunk,
        host=lambda: "127.0.0.1:1",
        disconnect=app.disconnect,
        session_alive=lambda sid: sid in app.sessions,
        idle=idle,
        clock=clock,
    )


async def bound(tunnels: Tunnels) -> tuple[str, Tunnel]:
    tunnel_id, tunnel = await tunnels.mint("view-handle", "alice", "session-1")
    tunnels.bind_client(tunnel, CLIENT)
    return tunnel_id, tunnel


async def handshake(tunnels: Tunnels, tunnel: Tunnel) -> None:
    answer = await tunnels.request(tunnel, "GET", HANDSHAKE, "", 1000)
    assert answer.status == 200 and answer.body.startswith("0{") and tunnel.sid == "s1"


async def test_a_tunnel_is_found_only_by_its_id_its_principal_and_its_session() -> None:
    tunnels = tunnels_of(SocketApp())
    tunnel_id, tunnel = await bound(tunnels)
    assert len(tunnel_id) >= 43 and tunnel_id not in tunnel.digest  # 256 random bits, kept as a digest
    assert tunnels.find(tunnel_id, "alice", "session-1") is tunnel
    for wrong in [
        ("x" + tunnel_id[1:], "alice", "session-1"),
        (tunnel_id, "bob", "session-1"),
        (tunnel_id, None, None),
    ]:
        with pytest.raises(UnknownTunnel):
            tunnels.find(*wrong)
    with pytest.raises(UnknownTunnel):
        tunnels.find(tunnel_id, "alice", "session-2")  # another MCP session (a replay by the model, say)


async def test_every_query_out_of_place_is_refused_before_the_socket_app_sees_it() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    refused = {
        "another client": f"client_id={'d' * 32}&EIO=4&transport=polling",
        "a websocket": f"client_id={CLIENT}&EIO=4&transport=websocket",
        "engine.io 3": f"client_id={CLIENT}&EIO=3&transport=polling",
        "an unknown field": HANDSHAKE + "&path=/mcp",
        "a field twice": HANDSHAKE + f"&client_id={CLIENT}",
        "a sid never handed out": HANDSHAKE + "&sid=forged",
    }
    for what, query in refused.items():
        with pytest.raises(Refused):
            await tunnels.request(tunnel, "GET", query, "", 10)
        assert app.requests == [], what
    with pytest.raises(Refused):
        await tunnels.request(tunnel, "POST", HANDSHAKE, "40", 10)  # a handshake comes as a GET


async def test_a_new_handshake_comes_only_once_the_tunnels_session_closed() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    with pytest.raises(Refused):
        await tunnels.request(tunnel, "GET", HANDSHAKE, "", 10)  # its session is alive
    with pytest.raises(Refused):
        await tunnels.request(tunnel, "GET", HANDSHAKE + "&sid=s2", "", 10)
    app.sessions.clear()  # the session ended (a ping timeout, say): the page's socket may shake hands again
    await handshake(tunnels, tunnel)


async def test_one_held_get_and_one_post_at_a_time_and_a_held_get_is_resumed_not_cancelled() -> None:
    app = SocketApp(post_delay=0.2)
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    polling = POLLING
    waiting = await tunnels.request(tunnel, "GET", polling, "", 50)
    assert waiting.pending and waiting.status == 204
    again = await tunnels.request(tunnel, "GET", polling, "", 50)  # the GET sent again joins the held one
    assert again.pending
    posting = asyncio.create_task(tunnels.request(tunnel, "POST", polling, '42["event",{}]', 0))
    await asyncio.sleep(0.05)
    with pytest.raises(Refused):
        await tunnels.request(tunnel, "POST", polling, "3", 0)  # a second POST in flight
    assert (await posting).body == "ok"
    await app.pushed.put('42["update",{}]')
    answer = await tunnels.resume(tunnel, 1000)
    assert (answer.status, answer.body, answer.pending) == (200, '42["update",{}]', False)
    assert [method for method, _, _ in app.requests] == ["GET", "GET", "POST"]  # the held GET ran once
    with pytest.raises(Refused):
        await tunnels.resume(tunnel, 10)  # nothing held any more


async def test_a_body_over_engine_ios_max_payload_is_refused() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    with pytest.raises(Refused):
        await tunnels.request(tunnel, "POST", HANDSHAKE + "&sid=s1", "é" * (MAX_PAYLOAD // 2 + 1), 0)
    assert [method for method, _, _ in app.requests] == ["GET"]


async def test_a_long_answer_comes_in_parts_each_within_the_chunk_once_serialized() -> None:
    text = '42["update",{"rows":"\\u00e9\\"quoted\\"\\n"}]' * 3000
    parts = split_parts(text, 20_000)
    assert "".join(parts) == text and len(parts) > 5
    assert all(len(json.dumps({"body": part, "status": 200, "parts": len(parts)})) <= 20_000 for part in parts)
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    answer = tunnels.answer(tunnel, 200, text)
    assert answer.parts == len(parts) and tunnels.part(tunnel, answer.id, answer.parts - 1).body == parts[-1]
    for out_of_place in (0, answer.parts, -1):
        with pytest.raises(Refused, match=rf"answer {answer.id} has {answer.parts} parts.*part 0 came with the answer"):
            tunnels.part(tunnel, answer.id, out_of_place)


async def test_an_idle_tunnel_is_closed_with_its_engine_io_session_and_a_busy_one_is_kept() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app, idle=0.05)
    idle_id, idle = await bound(tunnels)
    await handshake(tunnels, idle)
    busy_id, busy = await tunnels.mint("other-view", "alice", "session-1")
    tunnels.bind_client(busy, CLIENT)
    busy.sid = "s1"
    await tunnels.request(busy, "GET", HANDSHAKE + "&sid=s1", "", 0)  # held at the socket app
    await asyncio.sleep(0.1)
    await tunnels.sweep()
    with pytest.raises(UnknownTunnel):
        tunnels.find(idle_id, "alice", "session-1")
    assert app.disconnected == ["s1"]
    assert tunnels.find(busy_id, "alice", "session-1") is busy
    await tunnels.close_all()
    assert len(tunnels) == 0


async def test_a_second_tunnel_to_a_view_closes_the_first() -> None:
    tunnels = tunnels_of(SocketApp())
    first, _ = await bound(tunnels)
    second, _ = await bound(tunnels)
    with pytest.raises(UnknownTunnel):
        tunnels.find(first, "alice", "session-1")
    assert tunnels.find(second, "alice", "session-1").view == "view-handle"


async def test_a_held_get_the_socket_app_fails_answers_500_and_frees_the_tunnel_for_the_next() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    app.fail = True
    answer = await tunnels.request(tunnel, "GET", HANDSHAKE + "&sid=s1", "", 1000)
    assert (answer.status, answer.pending) == (500, False) and tunnel.getting is None


async def test_a_posts_answer_leaves_the_parts_of_a_long_get_answer_to_fetch() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app, chunk=2048)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    update = '42["update",' + json.dumps({"rows": "é" * 6000}) + "]"
    await app.pushed.put(update)
    got = await tunnels.request(tunnel, "GET", POLLING, "", 1000)
    assert got.parts > 2
    posted = await tunnels.request(tunnel, "POST", POLLING, "3", 0)  # answered while the GET's parts wait
    assert (posted.body, posted.parts) == ("ok", 1) and posted.id != got.id
    parts = [tunnels.part(tunnel, got.id, part).body for part in range(1, got.parts)]
    assert got.body + "".join(parts) == update
    with pytest.raises(Refused, match=rf"Answer {got.id} has no parts to fetch"):
        tunnels.part(tunnel, got.id, 1)  # each part fetched: dropped


async def test_the_parts_of_the_newest_long_answers_are_kept_and_older_ones_dropped() -> None:
    tunnels = tunnels_of(SocketApp(), chunk=2048)
    _, tunnel = await bound(tunnels)
    answers = [tunnels.answer(tunnel, 200, str(n) * 5000) for n in range(KEPT + 1)]
    assert len({answer.id for answer in answers}) == KEPT + 1
    with pytest.raises(Refused, match=f"{KEPT} newer long answers came since"):
        tunnels.part(tunnel, answers[0].id, 1)
    assert all(tunnels.part(tunnel, answer.id, 1).body.startswith(answer.body[0]) for answer in answers[1:])
    short = tunnels.answer(tunnel, 200, "2")
    assert short.parts == 1 and short.id == answers[-1].id + 1
    with pytest.raises(Refused, match="it came whole"):
        tunnels.part(tunnel, short.id, 1)


async def test_a_get_sent_again_after_its_poll_was_lost_takes_the_held_gets_answer_once() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    assert (await tunnels.request(tunnel, "GET", POLLING, "", 0)).pending
    lost = asyncio.create_task(tunnels.resume(tunnel, 5000))  # a poll whose answer never reaches the page
    await app.pushed.put('42["update",{}]')
    assert tunnel.getting is not None
    await asyncio.wait({tunnel.getting})  # the held GET answered: nobody took its answer yet
    again = await tunnels.request(tunnel, "GET", POLLING, "", 1000)  # engine.io's GET, sent again by the page
    assert (again.status, again.body) == (200, '42["update",{}]')
    with pytest.raises(Refused, match="A newer call took this held GET's answer"):
        await lost  # the answer is given once, to the newest call
    assert [method for method, _, _ in app.requests] == ["GET", "GET"]  # the held GET ran once
    await app.pushed.put("2")
    assert (await tunnels.request(tunnel, "GET", POLLING, "", 1000)).body == "2"  # the tunnel goes on


async def test_a_handshake_after_a_lost_poll_ends_the_old_session_and_opens_a_new_one() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    assert (await tunnels.request(tunnel, "GET", POLLING, "", 0)).pending
    await app.pushed.put("2")
    assert tunnel.getting is not None
    await asyncio.wait({tunnel.getting})  # answered, never taken: the page's socket gave up on it and starts over
    await handshake(tunnels, tunnel)
    assert app.disconnected == ["s1"] and tunnel.getting is None
    assert (await tunnels.request(tunnel, "GET", POLLING, "", 0)).pending  # held again, at the socket app
    await handshake(tunnels, tunnel)  # also while the GET is still held there
    assert app.disconnected == ["s1", "s1"]


async def test_a_tunnel_that_only_sees_refused_calls_is_closed_once_idle() -> None:
    clock = Clock()
    app = SocketApp()
    tunnels = tunnels_of(app, clock=clock)
    tunnel_id, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    for now in (30.0, 59.0, 61.0):  # a page retrying what the tunnel refuses, every call found and refused
        clock.now = now
        with pytest.raises(Refused):
            await tunnels.request(tunnels.find(tunnel_id, "alice", "session-1"), "GET", HANDSHAKE, "", 0)
    await tunnels.sweep()
    with pytest.raises(UnknownTunnel):
        tunnels.find(tunnel_id, "alice", "session-1")
    assert app.disconnected == ["s1"]


async def test_a_post_whose_events_name_another_client_is_refused_before_the_socket_app_sees_it() -> None:
    app = SocketApp()
    tunnels = tunnels_of(app)
    _, tunnel = await bound(tunnels)
    await handshake(tunnels, tunnel)
    other = "d" * 32
    refused = {
        "an event": f'42["event",{{"client_id":"{other}","id":1,"type":"click","args":null}}]',
        "an event after a pong": f'3\x1e42["javascript_response",{{"request_id":"r","client_id":"{other}"}}]',
        "an event as a JSON string": "4" + json.dumps(f'2["ack",{{"client_id":"{other}","next_message_id":1}}]'),
        "an acknowledgement": f'431[{{"client_id":"{other}"}}]',
        "a binary event": f'451-["event",{{"client_id":"{other}"}},{{"_placeholder":true,"num":0}}]\x1ebAQID',
        "a handshake": f'420["handshake",{{"client_id":"{other}","tab_id":"t","document_id":"d"}}]',
        "an event in a namespace": f'42/other,["log",{{"client_id":"{other}","level":"info","message":"m"}}]',
        "an event naming its client and another": f'42["event",{{"client_id":"{CLIENT}"}},{{"client_id":"{other}"}}]',
        "a JSONP body": "d=" + quote(f'42["event",{{"client_id":"{other}"}}]'),
    }
    for what, body in refused.items():
        with pytest.raises(Refused, match="names another client_id"):
            await tunnels.request(tunnel, "POST", POLLING, body, 0)
        assert [method for method, _, _ in app.requests] == ["GET"], what
    with pytest.raises(Refused, match=r"not an engine\.io payload"):
        await tunnels.request(tunnel, "POST", POLLING, '42["event",{"client_id":', 0)  # what NiceGUI could not read
    own = f'3\x1e42["event",{{"client_id":"{CLIENT}","id":1}}]\x1e42["ack",{{"client_id":"{CLIENT}"}}]'
    assert (await tunnels.request(tunnel, "POST", POLLING, own, 0)).body == "ok"
