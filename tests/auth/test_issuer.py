"""The issuer at start: unreachable, or naming another issuer, is a clear error and exit 2 (unreachable later:
`test_workers`). Legacy sessions stay their owner's."""

from __future__ import annotations

import pytest

from tests.auth.test_resource_server import LIST, post
from tests.support.e2e import RunningServer
from tests.support.inspector_web import free_port
from tests.support.oidc import Provider
from webapp.server.cli import main


def test_an_unreachable_issuer_stops_the_start_with_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    issuer = f"http://127.0.0.1:{free_port()}"
    assert main(["serve", "--auth-issuer", issuer, "--port", "0"]) == 2
    error = capsys.readouterr().err
    assert f"cannot read the metadata of the issuer {issuer!r}" in error and "--auth-issuer" in error


def test_an_issuer_whose_metadata_names_another_issuer_is_refused(
    provider: Provider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--auth-issuer", provider.issuer + "/", "--port", "0"]) == 2
    assert "must be identical" in capsys.readouterr().err


async def test_a_legacy_session_presented_with_another_principal_s_token_routes_nowhere(
    server: RunningServer, provider: Provider
) -> None:
    ann, bob = provider.mint(server.mcp_url, sub="ann"), provider.mint(server.mcp_url, sub="bob")
    opened = await post(server, LIST, ann)
    session = opened.headers["mcp-session-id"]
    ping = b'{"jsonrpc":"2.0","id":3,"method":"ping"}'
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    assert (await post(server, ping, bob, **headers)).status_code == 404
    assert (await post(server, ping, ann, **headers)).status_code == 200
    other_client = provider.mint(server.mcp_url, sub="ann", client_id="another-client")
    assert (await post(server, ping, other_client, **headers)).status_code == 404
    assert (await post(server, ping, ann, **headers)).status_code == 200  # the refused requests changed nothing
