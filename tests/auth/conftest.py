"""The authorization server shared by the sign-in tests (one per session), and a server that trusts it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.e2e import RunningServer, run_server
from tests.support.oidc import Provider, run_provider

STATIC = "carol-1d2e3f4a5b6c7d8e"


@pytest.fixture(scope="session")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    with run_provider(tmp_path_factory.mktemp("oidc")) as running:
        yield running


@pytest.fixture(scope="module")
def server(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    args = ["--auth-issuer", provider.issuer, "--token", f"carol={STATIC}"]
    with run_server(*args, app="tests.support.test_app:build", db=tmp_path_factory.mktemp("auth") / "s.db") as running:
        yield running
