"""Bearer auth for `/mcp` in process, with the official MCP client and the SDK's real session manager."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.security_mcp import GuardedMcp, guarded_mcp, initialize_body
from webapp.core.auth import PRINCIPAL_SCOPE_KEY, BearerAuth, SessionOwners, TokenTable

TOKENS = {"alice-token-0123456789": "alice", "bob-token-9876543210": "bob"}
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def open_session(mcp: GuardedMcp, token: str) -> str:
    """Open a legacy session with a raw initialize; returns its id."""
    async with mcp.http({"Authorization": f"Bearer {token}", **JSON_HEADERS}) as http:
        response = await http.post("/mcp", json=initialize_body())
        assert response.status_code == 200, response.text
        session_id = response.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
        assert (await http.post("/mcp", json=initialized, headers=headers)).status_code == 202
    return session_id


def call_body(request_id: int = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "tally", "arguments": {}}}


async def test_without_a_token_mcp_answers_401_with_a_bearer_challenge_and_runs_nothing() -> None:
    async with guarded_mcp(TOKENS) as mcp, mcp.http(JSON_HEADERS) as http:
        response = await http.post("/mcp", json=call_body())
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert mcp.tally.count == 0 and len(mcp.manager._server_instances) == 0  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    "authorization",
    ["Bearer wrong", "Bearer ", "Basic YWxpY2U6eA==", "alice-token-0123456789", "Bearer alice-token-012345678"],
)
async def test_a_wrong_or_malformed_token_gets_401_invalid_token(authorization: str) -> None:
    async with guarded_mcp(TOKENS) as mcp, mcp.http({"Authorization": authorization, **JSON_HEADERS}) as http:
        response = await http.post("/mcp", json=initialize_body())
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'
        assert "alice" not in response.text
        assert len(mcp.manager._server_instances) == 0  # pyright: ignore[reportPrivateUsage]


async def test_the_token_in_a_query_string_is_not_accepted() -> None:
    async with guarded_mcp(TOKENS) as mcp, mcp.http(JSON_HEADERS) as http:
        response = await http.post("/mcp?access_token=alice-token-0123456789", json=initialize_body())
        assert response.status_code == 401


async def test_the_official_client_with_a_token_reaches_the_tool_as_its_principal_in_both_protocols() -> None:
    async with guarded_mcp(TOKENS) as mcp:
        async with mcp.client("alice-token-0123456789", mode="legacy") as client:
            legacy = await client.call_tool("tally", {})
        async with mcp.client("bob-token-9876543210", mode="auto") as client:
            modern = await client.call_tool("tally", {})
            assert client.protocol_version == "2026-07-28"
    assert legacy.structured_content == {"count": 1, "principal": "alice", "length": 0}
    assert modern.structured_content == {"count": 2, "principal": "bob", "length": 0}


async def test_the_official_client_without_a_token_fails_to_connect() -> None:
    async with guarded_mcp(TOKENS) as mcp:
        with pytest.raises(ExceptionGroup) as caught:
            async with mcp.client(None) as client:
                await client.call_tool("tally", {})
        assert caught.group_contains(MCPError, match="error response")
        assert mcp.tally.count == 0


async def test_a_session_id_presented_with_another_principals_token_routes_nowhere() -> None:
    async with guarded_mcp(TOKENS) as mcp:
        session_id = await open_session(mcp, "alice-token-0123456789")
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25", **JSON_HEADERS}
        async with mcp.http({"Authorization": "Bearer bob-token-9876543210"}) as bob:
            post = await bob.post("/mcp", json=call_body(), headers=headers)
            get = await bob.get("/mcp", headers={**headers, "Accept": "text/event-stream"})
            delete = await bob.delete("/mcp", headers=headers)
        assert (post.status_code, get.status_code, delete.status_code) == (404, 404, 404)
        assert json.loads(post.text)["error"]["message"] == "Session not found"
        assert mcp.tally.count == 0
        async with mcp.http({"Authorization": "Bearer alice-token-0123456789"}) as alice:
            own = await alice.post("/mcp", json=call_body(), headers=headers)
        assert own.status_code == 200 and mcp.tally.principals == ["alice"]


async def test_the_answer_to_a_stolen_session_id_equals_the_answer_to_an_unknown_one() -> None:
    async with guarded_mcp(TOKENS) as mcp:
        session_id = await open_session(mcp, "alice-token-0123456789")
        async with mcp.http({"Authorization": "Bearer bob-token-9876543210", **JSON_HEADERS}) as bob:
            base = {"mcp-protocol-version": "2025-11-25"}
            stolen = await bob.post("/mcp", json=call_body(), headers={**base, "mcp-session-id": session_id})
            unknown = await bob.post("/mcp", json=call_body(), headers={**base, "mcp-session-id": "0" * 32})
        assert (stolen.status_code, stolen.text) == (unknown.status_code, unknown.text)


async def test_a_deleted_session_is_forgotten_and_its_id_then_answers_404() -> None:
    async with guarded_mcp(TOKENS) as mcp:
        session_id = await open_session(mcp, "alice-token-0123456789")
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25", **JSON_HEADERS}
        async with mcp.http({"Authorization": "Bearer alice-token-0123456789"}) as alice:
            assert (await alice.delete("/mcp", headers=headers)).status_code == 200
            assert len(mcp.auth.sessions) == 0
            assert (await alice.post("/mcp", json=call_body(), headers=headers)).status_code == 404


async def test_without_tokens_auth_is_off_and_no_principal_is_set() -> None:
    async with guarded_mcp({}) as mcp, mcp.client(None) as client:
        result = await client.call_tool("tally", {})
    assert result.structured_content == {"count": 1, "principal": None, "length": 0}


async def test_a_principal_smuggled_into_the_scope_by_an_outer_layer_is_dropped_when_auth_is_off() -> None:
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope.get(PRINCIPAL_SCOPE_KEY))

    scope = {"type": "http", "path": "/mcp", "headers": [], PRINCIPAL_SCOPE_KEY: "mallory"}
    await BearerAuth(app, {})(scope, None, None)  # type: ignore[arg-type]
    assert seen == [None]


async def test_a_body_over_the_limit_gets_413_before_a_session_is_created() -> None:
    async with guarded_mcp(TOKENS, max_body=4096) as mcp:
        async with mcp.http({"Authorization": "Bearer alice-token-0123456789", **JSON_HEADERS}) as http:
            body = initialize_body()
            body["params"]["padding"] = "x" * 5000
            response = await http.post("/mcp", json=body)
        assert response.status_code == 413
        assert len(mcp.manager._server_instances) == 0  # pyright: ignore[reportPrivateUsage]


async def test_a_post_that_is_not_json_gets_400_and_runs_nothing() -> None:
    async with guarded_mcp({}) as mcp, mcp.http({"Accept": "application/json, text/event-stream"}) as http:
        for protocol in ({}, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tally"}):
            for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
                headers = {"Content-Type": content_type, **protocol}
                response = await http.post("/mcp", content=json.dumps(call_body()), headers=headers)
                assert response.status_code == 400, (content_type, response.status_code)
        assert mcp.tally.count == 0


def test_token_lookup_finds_each_principal_and_nothing_else() -> None:
    table = TokenTable(TOKENS)
    assert table.principal(b"alice-token-0123456789") == "alice"
    assert table.principal(b"bob-token-9876543210") == "bob"
    assert table.principal(b"alice-token-012345678") is None
    assert table.principal(b"") is None
    assert not TokenTable({})


def test_an_empty_token_or_principal_is_refused() -> None:
    with pytest.raises(ValueError, match="--token"):
        TokenTable({"": "alice"})


def test_idle_session_owners_are_pruned_but_never_while_a_request_is_in_flight() -> None:
    now = [0.0]
    owners = SessionOwners(idle_timeout=10, clock=lambda: now[0])
    owners.opened("a", "alice")
    owners.opened("b", "bob")
    owners.enter("b")
    now[0] = 100.0
    owners.opened("c", "carol")
    assert (owners.owner("a"), owners.owner("b"), owners.owner("c")) == (None, "bob", "carol")
    owners.leave("b")
    now[0] = 200.0
    owners.opened("d", "dave")
    assert len(owners) == 1
