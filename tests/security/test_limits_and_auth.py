"""Auth, sessions and limits against the real server, with the official MCP client and raw HTTP.

The server runs with two principals' tokens and a small body limit; every refused request leaves the server serving.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.e2e import RunningServer, run_server
from tests.support.security_app import COUNTS_PATH
from tests.support.security_http import MCP_HEADERS, call_count, open_session

APP = "tests.support.security_app:build"
ALICE = "alice-7f3a9c1e5b2d4f60"
BOB = "bob-0e8d6c4a2b9f7e15"
LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    args = ["--token", f"alice={ALICE}", "--token", f"bob={BOB}", "--max-request-body", str(LIMIT)]
    with run_server(*args, app=APP, db=tmp_path_factory.mktemp("e2e") / "s.db") as running:
        yield running


@asynccontextmanager
async def client(
    server: RunningServer, token: str | None, mode: Literal["auto", "legacy"] = "legacy"
) -> AsyncGenerator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    http = httpx2.AsyncClient(headers=headers)
    async with http, Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode) as mcp:
        yield mcp


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def counts(server: RunningServer) -> dict[str, int]:
    async with httpx.AsyncClient() as http:
        return (await http.get(server.base_url + COUNTS_PATH)).json()


async def post_raw(server: RunningServer, body: bytes | str, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            server.mcp_url, content=body, headers={**MCP_HEADERS, **bearer(ALICE), **(headers or {})}
        )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_token_reaches_the_tools_as_its_own_principal(server: RunningServer, mode: Any) -> None:
    async with client(server, ALICE, mode) as alice, client(server, BOB, mode) as bob:
        mine = await alice.call_tool("whoami", {})
        theirs = await bob.call_tool("count", {})
    assert mine.structured_content is not None and mine.structured_content["principal"] == "alice"
    assert theirs.structured_content is not None and theirs.structured_content["principal"] == "bob"


async def test_the_official_client_without_a_token_is_refused_and_nothing_runs(server: RunningServer) -> None:
    before = await counts(server)
    with pytest.raises(ExceptionGroup) as caught:
        async with client(server, None) as anonymous:
            await anonymous.call_tool("count", {})
    assert caught.group_contains(MCPError)
    assert await counts(server) == before


async def test_without_a_token_the_answer_is_401_with_a_bearer_challenge(server: RunningServer) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"


async def test_a_session_opened_by_alice_routes_nowhere_for_bob(server: RunningServer) -> None:
    session_id = await open_session(server.port, bearer(ALICE))
    before = await counts(server)
    refused = await call_count(server.port, session_id, bearer(BOB))
    unknown = await call_count(server.port, "f" * 32, bearer(BOB))
    assert refused.status == 404 and (refused.status, refused.body) == (unknown.status, unknown.body)
    assert await counts(server) == before
    own = await call_count(server.port, session_id, bearer(ALICE))
    assert own.status == 200 and '"principal":"alice"' in own.body.replace(" ", "")


async def test_legacy_session_ids_are_128_bit_hex_and_never_repeat(server: RunningServer) -> None:
    ids = {await open_session(server.port, bearer(ALICE)) for _ in range(5)}
    assert len(ids) == 5 and all(re.fullmatch(r"[0-9a-f]{32}", sid) for sid in ids)


async def test_a_request_without_a_session_id_that_is_not_initialize_gets_400(server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {}}}
    before = await counts(server)
    response = await post_raw(server, json.dumps(body), {"MCP-Protocol-Version": "2025-11-25"})
    assert response.status_code == 400 and await counts(server) == before


async def test_a_body_over_the_limit_gets_413_and_the_server_keeps_serving(server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"padding": "x" * LIMIT}}
    response = await post_raw(server, json.dumps(body))
    assert response.status_code == 413
    async with client(server, ALICE) as alice:
        assert not (await alice.call_tool("echo", {"text": "still here"})).is_error


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "text/html"])
async def test_a_post_that_is_not_json_gets_400_and_runs_nothing(server: RunningServer, content_type: str) -> None:
    session_id = await open_session(server.port, bearer(ALICE))
    before = await counts(server)
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {}}}
    headers = {"Content-Type": content_type, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    response = await post_raw(server, json.dumps(body), headers)
    assert response.status_code == 400 and await counts(server) == before


@pytest.mark.parametrize(
    "body",
    [
        "{",
        "null",
        "[]",
        '{"jsonrpc": "2.0"}',
        '{"jsonrpc": "2.0", "id": 1, "method": 7}',
        "[" * 20_000 + "]" * 20_000,
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "x"}',
        '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
        "\xff\xfe garbage",
    ],
    ids=range(9),
)
@pytest.mark.parametrize("protocol", [{}, {"MCP-Protocol-Version": "2026-07-28"}], ids=["legacy", "modern"])
async def test_malformed_json_rpc_gets_400_and_never_a_traceback(
    server: RunningServer, body: str, protocol: dict[str, str]
) -> None:
    response = await post_raw(server, body.encode("utf-8", "surrogateescape"), protocol)
    assert response.status_code == 400, response.text
    assert "Traceback" not in response.text and "Traceback" not in server.output
    async with client(server, ALICE) as alice:
        assert not (await alice.call_tool("echo", {"text": "ok"})).is_error


async def test_large_and_odd_arguments_get_an_answer_and_the_server_keeps_serving(server: RunningServer) -> None:
    async with client(server, ALICE) as alice:
        big = await alice.call_tool("echo", {"text": "é" * 20_000})
        wrong_type = await alice.call_tool("echo", {"text": ["not", "a", "string"] * 1000})
        unknown = await alice.call_tool("no_such_tool", {"x": 1})
        fine = await alice.call_tool("echo", {"text": "ok"})
    assert big.content and wrong_type.content and unknown.is_error
    assert not fine.is_error


async def test_no_token_reaches_the_log(server: RunningServer) -> None:
    async with client(server, ALICE) as alice:
        await alice.call_tool("echo", {"text": "x"})
    async with httpx.AsyncClient() as http:
        await http.post(server.mcp_url, json={}, headers=bearer("wrong-token-should-not-be-logged"))
    assert ALICE not in server.output and BOB not in server.output
    assert "wrong-token-should-not-be-logged" not in server.output


async def test_pages_send_no_referrer(server: RunningServer) -> None:
    async with httpx.AsyncClient() as http:
        page = await http.get(server.base_url + "/counted?key=secret")
    assert page.status_code == 200 and page.headers["referrer-policy"] == "no-referrer"
