"""How hosting wires the guards: the SDK's own transport security is explicit and matches the Host/Origin guard."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from webapp.core.auth import BearerAuth
from webapp.core.security import HostOriginGuard, normalize_origin
from webapp.core.settings import Settings, SettingsError
from webapp.server.composition import WebApp
from webapp.server.hosting import host_policy, install


def installed(**options: Any) -> tuple[WebApp, FastAPI]:
    webapp = WebApp(Settings.model_validate({"port": 8123, **options}))
    app = FastAPI()
    install(webapp, app)
    return webapp, app


def test_the_sdk_transport_security_is_on_with_the_same_lists_as_the_guard() -> None:
    webapp, app = installed(allowed_host=["proxy.example"], allowed_origin=["https://proxy.example"])
    manager: StreamableHTTPSessionManager = app.state.webapp_session_manager
    security = manager.security_settings
    assert security is not None and security.enable_dns_rebinding_protection
    policy = host_policy(webapp)
    assert {host.lower() for host in security.allowed_hosts} == policy.hosts
    assert {normalize_origin(origin) for origin in security.allowed_origins} == policy.origins
    assert not any("*" in value for value in [*security.allowed_hosts, *security.allowed_origins])
    assert "127.0.0.1:8123" in policy.hosts and "http://localhost:8123" in policy.origins
    assert "proxy.example" in policy.hosts and "https://proxy.example:443" in policy.origins


def test_the_guard_wraps_bearer_auth_which_wraps_the_app() -> None:
    _, app = installed(token=["alice=secret-token"])
    names = [getattr(middleware.cls, "__name__", "") for middleware in app.user_middleware]
    assert names.index(HostOriginGuard.__name__) < names.index(BearerAuth.__name__)  # the first is the outermost


def test_the_request_body_limit_of_mcp_is_a_setting() -> None:
    _, app = installed(max_request_body=4096)
    assert app.state.webapp_session_manager.max_request_body_size == 4096
    assert Settings().max_request_body == 1 << 20


def test_an_allowed_origin_that_is_not_an_origin_is_refused_at_start() -> None:
    with pytest.raises(SettingsError, match="http://host:port"):
        Settings.from_sources(["--allowed-origin", "http://localhost:*"])
