"""Generated raw requests to `/mcp` — well-formed and malformed JSON-RPC bodies of both protocol eras, batches, odd
ids and `_meta`, generated tool arguments, and random auth, session, protocol, method, content-type, Host and Origin
headers — against the in-process server with two principals. Every answer is below 500, carries no traceback and is
a JSON-RPC answer (tool calls: a result in the wire format); the view registry's invariants hold after each one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types
import pytest
import pytest_asyncio
from hypothesis import given

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_invariants import FuzzTally, RegistryChecker, jsonrpc_problems, result_problems
from tests.support.fuzz_requests import (
    Peers,
    RawRequest,
    call_in_session,
    jsonrpc_result,
    open_session,
    requests,
    send,
)
from tests.support.fuzz_server import InProcess, Tab, in_process_server
from tests.support.fuzz_strategies import fuzz_settings

ALICE, BOB = "alice-token-2f9c81d4e7a6", "bob-token-8e1a5c3f0b72"
EXAMPLES = 800
LIMIT = 64 * 1024
NOT_CALLED = {"counter_hang", "counter_trace"}  # one waits until cancelled, the other needs a browser's answer


@dataclass
class Target:
    server: InProcess
    http: httpx2.AsyncClient
    peers: Peers
    checker: RegistryChecker
    tab: Tab
    own_sessions: tuple[str, ...]


@pytest_asyncio.fixture(loop_scope="module")
async def target(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Target]:
    options: dict[str, Any] = {
        "token": [f"alice={ALICE}", f"bob={BOB}"],
        "max_request_body": LIMIT,
        "wait_for_live": 0.02,
        "reconnect_grace": 0.05,
        "call_timeout": 2.0,
        "browser_confirm": False,
    }
    folder = tmp_path_factory.mktemp("fuzz-rpc")
    async with in_process_server(folder, counter_app, **options) as server, server.http() as http:
        if True:
            alice, bob = await open_session(http, ALICE), await open_session(http, BOB)
            opened = jsonrpc_result(await call_in_session(http, ALICE, alice, "counter", {"title": "fuzz"}))
            assert opened is not None and opened["structuredContent"]["state"] == "pending", opened
            tab = await server.open_tab(opened["structuredContent"]["url"])
            await server.attached(tab)
            tools = {
                tool.name: tool.input_schema for tool in server.webapp.registry.tools() if tool.name not in NOT_CALLED
            }
            peers = Peers(tools, [ALICE, BOB], [alice, bob, "f" * 32], server.host, server.base_url)
            checker = RegistryChecker(server.bridge, server.webapp.settings.db)
            try:
                yield Target(server, http, peers, checker, tab, (alice, bob))
            finally:
                checker.close()
                await tab.closed()


def check(target: Target, request: RawRequest) -> tuple[str, list[str]]:
    headers = dict(request.headers)
    if request.method == "DELETE" and headers.get("Mcp-Session-Id") in target.own_sessions:
        headers["Mcp-Session-Id"] = "0" * 32  # keep the two sessions the other cases use
    response = target.server.run(send(target.http, RawRequest(request.method, headers, request.body)), 10.0)
    content_type = response.headers.get("content-type", "")
    problems = jsonrpc_problems(response.status_code, content_type, response.content)
    outcome = f"http {response.status_code}"
    if request.is_tool_call and response.status_code == 200:
        result = jsonrpc_result(response)
        if result is not None:
            called = mcp_types.CallToolResult.model_validate(result)
            problems += result_problems(called, crash_allowed="counter_explode" in request.label)
            outcome = f"http 200 {request.label} result"
    return outcome, problems


def test_generated_requests_never_get_a_5xx_or_a_traceback_and_keep_the_registry_sound(target: Target) -> None:
    tally = FuzzTally("raw /mcp requests")

    @fuzz_settings(EXAMPLES)
    @given(request=requests(target.peers))
    def case(request: RawRequest) -> None:
        try:
            outcome, problems = check(target, request)
        except TimeoutError:
            outcome, problems = "no answer", [f"no answer within 10 s to {request.method} {request.label}"]
        tally.add(outcome, crash=problems, invariants=target.checker.problems())

    case()
    alice = target.own_sessions[0]
    after = jsonrpc_result(target.server.run(call_in_session(target.http, ALICE, alice, "counter_increment", {})))
    assert after is not None and not after["isError"], after
    print(tally.report())
    assert tally.clean, tally.broken
    assert tally.cases >= EXAMPLES
    assert sum(count for outcome, count in tally.outcomes.items() if outcome.endswith(" result")) >= 50
