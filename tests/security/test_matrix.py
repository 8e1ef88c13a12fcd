"""Host/Origin matrix against the real server: every hostile request is refused and runs nothing, every loopback
variant is served — on `/mcp` (POST, GET, DELETE), a page, a static file and NiceGUI's socket (polling, websocket).
`Origin: null` (a view page framed in an opaque-origin MCP Apps sandbox) and a host sandbox's origin (a page booted
directly by a ticket) pass only where apps.md §13 allows them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.e2e import RunningServer, run_server
from tests.support.security_app import COUNTS_PATH
from tests.support.security_embed import Embedded, null_request, open_embedded, sandbox_request
from tests.support.security_http import ROUTES, Outcome, call_count, open_session, raw_request, request

APP = "tests.support.security_app:build"


@dataclass(frozen=True)
class Variant:
    """`host` and `origin` are templates over `{port}` (the serving port) and `{other}` (another port)."""

    name: str
    host: str | None
    origin: str | None
    status: int = 200

    def headers(self, port: int) -> dict[str, str]:
        values = {"Host": self.host, "Origin": self.origin}
        return {k: v.format(port=port, other=port + 1) for k, v in values.items() if v is not None}

    def origin_for(self, port: int) -> str | None:
        return self.origin.format(port=port, other=port + 1) if self.origin is not None else None


HOSTILE = [
    Variant("foreign-host-with-port", "evil.example:{port}", None, 421),
    Variant("foreign-host", "evil.example", None, 421),
    Variant("loopback-host-other-port", "127.0.0.1:{other}", None, 421),
    Variant("missing-host", None, None, 400),
    Variant("null-origin", "127.0.0.1:{port}", "null", 403),
    Variant("localhost-origin-other-port", "127.0.0.1:{port}", "http://localhost:{other}", 403),
    Variant("foreign-origin", "localhost:{port}", "http://evil.example:{port}", 403),
    Variant("https-origin", "127.0.0.1:{port}", "https://127.0.0.1:{port}", 403),
]
LEGITIMATE = [
    Variant("ipv4-no-origin", "127.0.0.1:{port}", None),
    Variant("localhost-same-origin", "localhost:{port}", "http://localhost:{port}"),
    Variant("ipv6-same-origin", "[::1]:{port}", "http://[::1]:{port}"),
    Variant("ipv4-localhost-origin", "127.0.0.1:{port}", "http://localhost:{port}"),
]


@dataclass
class Served:
    server: RunningServer
    session_id: str

    @property
    def port(self) -> int:
        return self.server.port

    async def counts(self) -> dict[str, int]:
        async with httpx.AsyncClient() as client:
            response = await client.get(self.server.base_url + COUNTS_PATH)
            response.raise_for_status()
            return response.json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    import asyncio

    with run_server(app=APP, db=tmp_path_factory.mktemp("matrix") / "m.db") as server:
        yield Served(server, asyncio.run(open_session(server.port)))


async def send(route: str, variant: Variant, port: int, session_id: str) -> Outcome:
    if variant.host is None:
        return await raw_request(route, port, variant.origin_for(port), session_id)
    return await request(route, port, variant.headers(port), session_id)


# NiceGUI's static assets are served to any origin since apps.md §13 (the foreign-origin cases below).
HOSTILE_CASES = [(route, v) for v in HOSTILE for route in ROUTES if not (v.origin is not None and route == "static")]


@pytest.mark.parametrize(("route", "variant"), HOSTILE_CASES, ids=lambda x: x if isinstance(x, str) else x.name)
async def test_a_hostile_request_is_refused_and_runs_nothing(route: str, variant: Variant, served: Served) -> None:
    before = await served.counts()
    outcome = await send(route, variant, served.port, served.session_id)
    if route == "sio-websocket":
        assert outcome.status in ((400, 403) if variant.host is None else (403,)), outcome
    else:
        assert outcome.status == variant.status, outcome
    assert '"sid"' not in outcome.body and "render" not in outcome.body
    assert await served.counts() == before
    if route.startswith("mcp"):  # the session is untouched: its owner still calls the tool
        assert (await call_count(served.port, served.session_id)).status == 200


@pytest.mark.parametrize("variant", LEGITIMATE, ids=lambda v: v.name)
@pytest.mark.parametrize("route", ROUTES)
async def test_a_loopback_request_is_served(route: str, variant: Variant, served: Served) -> None:
    port = served.port
    headers = variant.headers(port)
    # GET takes the session's only stream and DELETE ends it: those use a session of their own.
    session_id = await open_session(port, headers) if route in ("mcp-get", "mcp-delete") else served.session_id
    before = await served.counts()
    outcome = await send(route, variant, port, session_id)
    after = await served.counts()
    if route == "sio-websocket":
        assert outcome.status == 101 and outcome.body.startswith("0{"), outcome
        return
    assert outcome.status == 200, outcome
    if route == "mcp-post":
        assert after["tool"] == before["tool"] + 1
    elif route == "mcp-get":
        assert outcome.body.startswith("text/event-stream")
    elif route == "mcp-delete":
        assert (await call_count(port, session_id, headers)).status == 404
    elif route == "page":
        assert after["page"] == before["page"] + 1
    elif route == "sio-polling":
        assert outcome.body.startswith("0{") and '"sid"' in outcome.body


# -- Origin: null (apps.md §13) ----------------------------------------------------------------------------------------
NULL_ACCEPTED = ["static", "embedded-polling", "embedded-websocket", "embedded-page-reconnect", "embedded-preflight"]
NULL_REFUSED = [
    "viewer",
    "page-key-without-embed",
    "page-bad-key-with-embed",
    "static-post",
    "foreign-client-polling",
    "foreign-client-websocket",
]


@pytest.fixture(scope="module")
def embedded(served: Served) -> Embedded:
    import asyncio

    return asyncio.run(open_embedded(served.server))


@pytest.mark.parametrize("case", NULL_ACCEPTED)
async def test_a_null_origin_reaches_static_assets_and_its_embedded_page(
    case: str, served: Served, embedded: Embedded
) -> None:
    outcome = await null_request(case, served.port, embedded)
    if case.endswith("websocket"):
        assert outcome.status == 101 and outcome.body.startswith("0{"), outcome
        return
    assert outcome.status == (204 if case == "embedded-preflight" else 200), outcome
    if case.endswith("polling"):
        assert outcome.body.startswith("0{") and '"sid"' in outcome.body
    else:  # served as a CDN serves it: to anyone, without credentials
        assert outcome.headers.get("access-control-allow-origin") == "*", outcome
        assert "access-control-allow-credentials" not in outcome.headers
    if case == "embedded-preflight":
        assert outcome.headers.get("access-control-allow-headers") == "nicegui-check"


@pytest.mark.parametrize("case", NULL_REFUSED)
async def test_a_null_origin_is_refused_everywhere_else_and_runs_nothing(
    case: str, served: Served, embedded: Embedded
) -> None:
    before = await served.counts()
    outcome = await null_request(case, served.port, embedded)
    assert outcome.status == 403, outcome
    assert '"sid"' not in outcome.body and "render" not in outcome.body
    assert await served.counts() == before


# -- a host sandbox's origin (apps.md §13, direct boot) ----------------------------------------------------------------
SANDBOX_ACCEPTED = ["static", "booted-polling", "booted-websocket"]
SANDBOX_REFUSED = ["boot-without-ticket", "embedded-polling", "embedded-websocket", "embedded-page", "viewer"]


@pytest.mark.parametrize("case", SANDBOX_ACCEPTED)
async def test_a_sandbox_origin_reaches_static_assets_and_the_socket_of_a_page_booted_by_a_ticket(
    case: str, served: Served, embedded: Embedded
) -> None:
    outcome = await sandbox_request(case, served.port, embedded)
    if case.endswith("websocket"):
        assert outcome.status == 101 and outcome.body.startswith("0{"), outcome
        return
    assert outcome.status == 200, outcome
    if case.endswith("polling"):
        assert outcome.body.startswith("0{") and '"sid"' in outcome.body
    else:
        assert outcome.headers.get("access-control-allow-origin") == "*", outcome
        assert "access-control-allow-credentials" not in outcome.headers


@pytest.mark.parametrize("case", SANDBOX_REFUSED)
async def test_a_sandbox_origin_without_a_ticket_is_refused_and_runs_nothing(
    case: str, served: Served, embedded: Embedded
) -> None:
    before = await served.counts()
    outcome = await sandbox_request(case, served.port, embedded)
    assert outcome.status == 403, outcome
    assert '"sid"' not in outcome.body and "render" not in outcome.body
    assert await served.counts() == before


async def test_a_sandbox_origin_with_an_unknown_ticket_gets_a_page_that_says_so(
    served: Served, embedded: Embedded
) -> None:
    before = await served.counts()
    outcome = await sandbox_request("boot-bad-ticket", served.port, embedded)
    assert outcome.status == 404 and "not valid" in outcome.body, outcome
    assert outcome.headers.get("access-control-allow-origin") == "*"  # readable by the shell, which shows the card
    assert await served.counts() == before
