"""The authorization server shared by the sign-in tests and the servers that trust it (one each per session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.e2e import RunningServer, run_server
from tests.support.inspector_web import free_port
from tests.support.oidc import Provider, run_provider

STATIC = "carol-1d2e3f4a5b6c7d8e"
APP = "tests.support.test_app:build"


@pytest.fixture(scope="session")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    with run_provider(tmp_path_factory.mktemp("oidc")) as running:
        yield running


@pytest.fixture(scope="session")
def server(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """Sign-in for /mcp only (no client for people), beside a static token."""
    args = ["--auth-issuer", provider.issuer, "--token", f"carol={STATIC}"]
    with run_server(*args, app=APP, db=tmp_path_factory.mktemp("auth") / "s.db") as running:
        yield running


@pytest.fixture(scope="session")
def signed(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """Sign-in for /mcp and for people, with a client registered at the issuer for the server's callback."""
    port = free_port()
    client_id, secret = provider.register(f"http://127.0.0.1:{port}/auth/callback")
    # the issuer's ids are random base64url and may start with "-", which only the `=` form passes as a value
    args = ["--port", str(port), "--auth-issuer", provider.issuer, f"--auth-client-id={client_id}"]
    env = {"WEBAPP_AUTH_CLIENT_SECRET": secret}
    with run_server(*args, app=APP, env=env, db=tmp_path_factory.mktemp("signed") / "s.db") as running:
        yield running
