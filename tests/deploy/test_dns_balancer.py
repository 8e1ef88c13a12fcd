"""The compose and Kubernetes balancer, `deploy/k8s/haproxy.cfg`, run on loopback: its server-template finds three
workers on 127.0.0.2–4 through a test name server (as Docker's DNS answers `worker`), checks them on /readyz, and
its dynamic cookie keeps a page on its worker whatever the client's address; a legacy MCP session sticks to one."""

from __future__ import annotations

import contextlib
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.dns import NameServer, name_server
from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.haproxy import free_port, run_dns_haproxy, servers_state
from tests.support.redis import RedisServer
from tests.support.views import COUNTER_APP, FAST, texts

ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
SERVICE = "worker"  # the compose service's name
COOKIE = "WEBAPP_WORKER"
_WAIT = 15.0  # seconds: the bound of every wait here
_MCP_POST = re.compile(r'"POST /mcp HTTP/1.1" 200')


@dataclass
class Balanced:
    base: str
    workers: dict[str, RunningServer]  # address → worker
    names: NameServer


def common_port() -> int:
    """A port free on each of the three addresses (the service's one port, as in compose)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((ADDRESSES[0], 0))
            port = int(probe.getsockname()[1])
        try:
            for address in ADDRESSES[1:]:
                with socket.socket() as other:
                    other.bind((address, port))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no port free on all of {ADDRESSES}")


def wait_until(condition: str, check: Callable[[], bool]) -> None:
    deadline, pause = time.monotonic() + _WAIT, 0.05
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {_WAIT} s: {condition}")
        time.sleep(pause)  # HAProxy resolves and checks once a second: look again shortly
        pause = min(pause * 2, 0.25)


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[Balanced]:
    if redis_server.process is None:  # an earlier test stopped it
        redis_server.start()
    folder: Path = tmp_path_factory.mktemp("dns-balanced")
    port, lb = common_port(), free_port()
    base = f"http://127.0.0.1:{lb}"
    db = folder / "shared.db"
    argv = ("--redis-url", redis_server.url, "--base-url", base, "--port", str(port), *FAST)
    with contextlib.ExitStack() as stack:
        names = stack.enter_context(name_server(SERVICE, ADDRESSES))
        stats = stack.enter_context(run_dns_haproxy(lb, workers=f"{SERVICE}:{port}", dns=names.port, folder=folder))
        workers: dict[str, RunningServer] = {}
        for number, address in enumerate(ADDRESSES, 1):  # the first makes the database's tables, then two at once
            start = run_server(
                *argv, "--host", address, "--worker-id", f"dns-w{number}", app=COUNTER_APP, db=db, wait=number == 1
            )
            workers[address] = stack.enter_context(start)
        for worker in workers.values():
            worker.wait_for_output("Uvicorn running on", _WAIT)
        wait_until(
            "HAProxy holds the three workers up in both backends",
            lambda: all(sorted(servers_state(stats, name).values()) == list(ADDRESSES) for name in ("pages", "mcp")),
        )
        yield Balanced(base, workers, names)


def served_by(balanced: Balanced, marker: str) -> str:
    """The address of the worker whose access log shows the request for `marker`."""
    found: list[str] = []

    def logged() -> bool:
        found[:] = [address for address, worker in balanced.workers.items() if marker in worker.output]
        return bool(found)

    wait_until(f"a worker logs {marker}", logged)
    assert len(found) == 1, found
    return found[0]


def get_page(balanced: Balanced, source: str, cookie: str | None = None) -> tuple[str, str | None]:
    """GET a page through the balancer from the client address `source` (with the stickiness cookie, if given):
    the worker that served it and the cookie the balancer set."""
    marker = f"/deploy-check/{uuid.uuid4().hex[:20]}"  # 32 hex digits would be masked as a session id
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=_WAIT) as client:
        answer = client.get(balanced.base + marker, headers=headers)
    assert answer.status_code < 500, answer.text
    return served_by(balanced, marker), answer.cookies.get(COOKIE)


def test_the_balancer_finds_the_workers_by_asking_the_name_server(balanced: Balanced) -> None:
    assert SERVICE in balanced.names.queries()  # the three servers came from DNS, not from the file


def test_a_dynamic_cookie_keeps_a_page_on_its_worker_from_any_client_address(balanced: Balanced) -> None:
    # Without the cookie, `balance source` picks the worker by the client's address: a few addresses reach all three
    cookies: dict[str, str] = {}
    by_source: dict[str, str] = {}
    for number in range(1, 41):
        source = f"127.0.1.{number}"
        worker, cookie = get_page(balanced, source)
        assert cookie is not None and re.fullmatch(r"[0-9a-f]{16}", cookie), cookie  # dynamic: a hash, not a name
        assert cookies.setdefault(worker, cookie) == cookie  # one cookie per worker, whoever asked
        by_source[source] = worker
        if len(cookies) == len(ADDRESSES):
            break
    assert sorted(cookies) == list(ADDRESSES)
    # With the cookie, every request reaches its worker, also from addresses whose hash picks another worker
    for worker, cookie in cookies.items():
        elsewhere = [source for source, picked in by_source.items() if picked != worker][:3]
        assert elsewhere
        for source in elsewhere:
            assert get_page(balanced, source, cookie) == (worker, None)  # kept there; no new cookie set


async def test_a_legacy_mcp_session_sticks_to_the_worker_that_opened_it(balanced: Balanced) -> None:
    def posts() -> list[int]:
        return [len(_MCP_POST.findall(worker.output)) for worker in balanced.workers.values()]

    before = posts()
    async with mcp_client(balanced.base + "/mcp", mode="legacy") as agent:
        for number in range(10):
            assert texts(await agent.call_tool("ping", {})) == ["pong"], number  # a 404 would raise here
    grown = sorted(after - earlier for after, earlier in zip(posts(), before, strict=True))
    assert grown[:2] == [0, 0] and grown[2] >= 10  # the whole session on one worker
