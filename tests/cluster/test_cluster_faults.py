"""Network faults on a Redis Cluster: each of workers w1 and w2 reaches every node through fault proxies of its own
(redis-py's `address_remap` maps the nodes the Cluster names to them). A request delivered twice is run once; a
subscription whose connections are held without a FIN is noticed, made anew, and requests are answered again."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest_asyncio

from tests.cluster.conftest import Engines
from tests.support.fault_proxy import FaultProxy
from webapp.cluster import ClusterUnavailable, Engine, Inbox, Leases, OwnerGone
from webapp.core import ProgressReporter
from webapp.core.context import LogSender

TIMEOUT = 10.0


@dataclass
class Pair:
    one: Inbox
    two: Inbox
    proxies: dict[str, dict[int, FaultProxy]]  # each worker's, by the node's own port
    served: list[str]


@pytest_asyncio.fixture
async def pair(engines: Engines) -> AsyncIterator[Pair]:
    served: list[str] = []

    async def handle(
        body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
    ) -> dict[str, Any]:
        served.append(str(body.get("text")))
        return {"echo": body.get("text")}

    async def unused(
        body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
    ) -> dict[str, Any]:
        raise AssertionError("w1 is asked nothing")

    with contextlib.ExitStack() as stack:
        proxies = {
            worker: {node.port: stack.enter_context(FaultProxy(node.port)) for node in engines.cluster.nodes}
            for worker in ("w1", "w2")
        }
        made = [
            Engine(engines.cluster.url, connect_timeout=1, address_remap=_through(proxies[worker]))
            for worker in ("w1", "w2")
        ]
        one = Inbox(made[0], Leases(made[0].client, "w1"), unused)
        two = Inbox(made[1], Leases(made[1].client, "w2"), handle)
        for inbox in (one, two):
            await inbox.start()
        try:
            yield Pair(one, two, proxies, served)
        finally:
            for inbox in (one, two):
                await inbox.stop()
            for engine in made:
                await engine.aclose()


def _through(proxies: dict[int, FaultProxy]) -> Callable[[tuple[str, int]], tuple[str, int]]:
    """A node's address as the proxy in front of it."""

    def remap(address: tuple[str, int]) -> tuple[str, int]:
        host, port = address
        return ("127.0.0.1", proxies[port].port) if port in proxies else (host, port)

    return remap


async def _answered(pair: Pair, text: str, within: float) -> float:
    """Ask w2 until it answers (a call may fail quickly meanwhile, never hang); the seconds it took."""
    started = time.monotonic()
    while True:
        try:
            reply = await pair.one.request("w2", {"text": text}, TIMEOUT)
            assert reply == {"echo": text}
            return time.monotonic() - started
        except (ClusterUnavailable, OwnerGone):
            assert time.monotonic() - started < within, f"w2 did not answer within {within} s"
            await asyncio.sleep(0.1)


async def test_on_a_cluster_a_request_delivered_twice_is_run_once(pair: Pair) -> None:
    await _answered(pair, "warm", TIMEOUT)
    for proxy in pair.proxies["w1"].values():  # w1's SPUBLISH of the request reaches the inbox's node twice
        proxy.duplicate(b"wv:{w2}:inbox")
    assert await pair.one.request("w2", {"text": "once"}, TIMEOUT) == {"echo": "once"}
    assert sum(proxy.duplicates for proxy in pair.proxies["w1"].values()) == 1
    await _answered(pair, "after", TIMEOUT)  # the copy reached w2 before this (published before it)
    assert pair.served.count("once") == 1


async def test_on_a_cluster_a_deaf_subscription_is_made_anew_and_requests_are_answered_again(pair: Pair) -> None:
    await _answered(pair, "before", TIMEOUT)
    for proxy in pair.proxies["w2"].values():
        proxy.black_hole()  # every open connection of w2 held; new ones pass
    assert await _answered(pair, "after", 10.0) < 10.0
    assert pair.two.subscribed
