"""`/mcp` as an OAuth 2.1 resource server of a real authorization server (oidc-provider on loopback): discovery
metadata, challenges, the SDK's OAuth client end to end (registration, PKCE with `resource`, refresh, step-up), and
every kind of bad token refused with `invalid_token` before anything runs."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from typing import Any

import httpx
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from tests.auth.conftest import STATIC
from tests.support.e2e import RunningServer
from tests.support.oidc import Provider, SigningKey, headless_login
from tests.support.security_http import MCP_HEADERS

CALLBACK = "http://127.0.0.1:33418/callback"
LIST = (  # any request that passes: a legacy initialize
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
    b'"clientInfo":{"name":"t","version":"1"}}}'
)


def reset_call() -> bytes:
    return b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"counter_reset","arguments":{}}}'


def challenge(answer: httpx.Response) -> dict[str, str]:
    header = answer.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


async def post(server: RunningServer, body: bytes, token: str | None, **headers: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(server.mcp_url, content=body, headers={**MCP_HEADERS, **auth, **headers})


async def test_the_metadata_names_the_resource_the_issuer_and_the_scopes_at_both_well_known_urls(
    server: RunningServer, provider: Provider
) -> None:
    async with httpx.AsyncClient() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            document = (await http.get(server.base_url + path)).json()
            assert document["resource"] == server.mcp_url
            assert document["authorization_servers"] == [provider.issuer]
            assert document["bearer_methods_supported"] == ["header"]
            assert {"webapp", "counter:write"} <= set(document["scopes_supported"])
            assert "offline_access" not in document["scopes_supported"]


async def test_a_request_without_a_token_is_challenged_without_an_error(server: RunningServer) -> None:
    answer = await post(server, LIST, None)
    assert answer.status_code == 401
    fields = challenge(answer)
    assert "error" not in fields
    assert fields["resource_metadata"] == server.base_url + "/.well-known/oauth-protected-resource/mcp"
    assert fields["scope"] == "webapp"


async def test_a_static_token_keeps_working_beside_the_issuer(server: RunningServer) -> None:
    assert (await post(server, LIST, STATIC)).status_code == 200


async def test_a_token_without_the_tool_s_scope_gets_a_step_up_challenge_listing_every_scope(
    server: RunningServer, provider: Provider
) -> None:
    token = provider.mint(server.mcp_url, scope="webapp")
    assert (await post(server, LIST, token)).status_code == 200
    for headers in ({}, {"Mcp-Method": "tools/call", "Mcp-Name": "counter_reset"}):
        answer = await post(server, reset_call(), token, **headers)
        assert answer.status_code == 403
        fields = challenge(answer)
        assert (fields["error"], fields["scope"]) == ("insufficient_scope", "webapp counter:write")
    batch = b"[" + LIST + b"," + reset_call() + b"]"  # a batch is decided by every call in it
    assert (await post(server, batch, token)).status_code == 403
    assert (await post(server, LIST, provider.mint(server.mcp_url, scope="openid"))).status_code == 403


BAD_TOKENS: dict[str, Any] = {
    "expired": {"exp": int(time.time()) - 120},
    "not yet valid": {"nbf": int(time.time()) + 600},
    "wrong audience": {"aud": "http://127.0.0.1:1/mcp"},
    "wrong issuer": {"iss": "http://127.0.0.1:1"},
    "no subject": {"sub": None},
}


@pytest.mark.parametrize("case", [*BAD_TOKENS, "alg none", "hmac with the public key", "unknown kid", "garbage"])
async def test_a_bad_token_is_refused_as_invalid_and_only_the_reason_is_logged(
    server: RunningServer, provider: Provider, case: str
) -> None:
    if case in BAD_TOKENS:
        token = provider.mint(server.mcp_url, **BAD_TOKENS[case])
    elif case == "alg none":
        token = _forged({"iss": provider.issuer, "sub": "x", "aud": server.mcp_url, "exp": 2**31}, None)
    elif case == "hmac with the public key":
        claims = {"iss": provider.issuer, "sub": "x", "aud": server.mcp_url, "exp": 2**31}
        token = _forged(claims, provider.key)
    elif case == "unknown kid":
        token = provider.mint(server.mcp_url, key=SigningKey.new())
    else:
        token = "not-a-token-" + "x" * 40
    answer = await post(server, reset_call(), token)
    assert answer.status_code == 401
    assert challenge(answer)["error"] == "invalid_token"
    server.wait_for_output(r"refused a bearer token: ", 10)
    assert not any(token in line for line in server.lines)


async def test_a_token_in_the_query_string_or_a_huge_header_is_refused(
    server: RunningServer, provider: Provider
) -> None:
    token = provider.mint(server.mcp_url)
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(server.mcp_url + "?access_token=" + token, content=LIST, headers=MCP_HEADERS)
    assert (answer.status_code, challenge(answer)["error"]) == (401, "invalid_token")
    server.wait_for_output("refused a bearer token: a token in the query string is refused", 10)
    assert not any(token[-40:] in line for line in server.lines)
    huge = await post(server, LIST, "a." + "b" * 20_000 + ".c")
    assert huge.status_code in (401, 431)  # refused by us (longer than any token) or by the HTTP server
    if huge.status_code == 401:
        assert challenge(huge)["error"] == "invalid_token"


def _forged(claims: dict[str, Any], key: SigningKey | None) -> str:
    """`alg: none` without a key; else HS256 keyed with the issuer's public key (the algorithm-confusion attack)."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = {"alg": "HS256", "kid": key.kid, "typ": "JWT"} if key else {"alg": "none", "typ": "JWT"}
    signed = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    signature = hmac.new(key.public_pem(), signed.encode(), hashlib.sha256).digest() if key else b""
    return f"{signed}.{b64(signature)}"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_sdk_client_registers_signs_in_refreshes_and_steps_up_headlessly(
    server: RunningServer, provider: Provider
) -> None:
    pending: list[str] = []
    logins: list[str] = []
    browser = httpx.Client(follow_redirects=False, timeout=10)  # the person's browser: its own cookie jar

    async def redirect(url: str) -> None:
        logins.append(url)
        pending.append(url)

    async def callback() -> AuthorizationCodeResult:
        query = headless_login(browser, pending.pop(), CALLBACK, "dora")
        assert "code" in query, query
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    storage = MemoryStorage()
    oauth = OAuthClientProvider(
        server.mcp_url,
        OAuthClientMetadata(redirect_uris=[AnyUrl(CALLBACK)], client_name="webapp tests"),
        storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    with browser:
        async with (
            httpx2.AsyncClient(auth=oauth, timeout=20) as http,
            Client(streamable_http_client(server.mcp_url, http_client=http), mode="auto") as client,
        ):
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "counter_reset" in names and len(logins) == 1
            assert "resource=" in logins[0] and "code_challenge=" in logins[0]
            assert storage.client is not None and storage.tokens is not None and storage.tokens.refresh_token
            assert set((storage.tokens.scope or "").split()) >= {"webapp"}
            assert "counter:write" not in (storage.tokens.scope or "").split()
            first = storage.tokens.access_token
            oauth.context.token_expiry_time = time.time() - 1  # as if it had expired: the client refreshes
            await client.list_tools()
            assert storage.tokens.access_token != first and len(logins) == 1
            result = await client.call_tool("counter_reset", {})  # 403 insufficient_scope → step-up → retried
            assert len(logins) == 2 and "counter:write" in (storage.tokens.scope or "").split()
            assert "VIEW_NOT_OPEN" in str(result.content[0])
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert (claims["iss"], claims["sub"], claims["aud"]) == (provider.issuer, "dora", server.mcp_url)


def test_changing_inventory_stock_needs_the_inventory_write_scope() -> None:
    from views.inventory.page import InventoryView
    from webapp.apps.naming import collect_app

    scoped = {action.tool: action.scope for action in collect_app(InventoryView).actions if action.scope}
    assert scoped == {"inventory_adjust_stock": "inventory:write", "inventory_transfer_stock": "inventory:write"}


def test_an_action_scope_must_be_one_word() -> None:
    from webapp import mcp_app_action

    with pytest.raises(ValueError, match="one word"):
        mcp_app_action(description="x", scope="a b")
