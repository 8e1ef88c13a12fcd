"""People signed in to the pages through the real authorization server: the viewer lists the signed-in person's
calls only, a view page opens only for its own principal, framed pages attach by their key, sign-out is local, and
"try a tool" calls as the person with the scopes the issuer granted them."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import secrets
from collections.abc import Generator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.auth.test_resource_server import LIST, post
from tests.support.e2e import RunningServer, mcp_client_with_token
from tests.support.oidc import Provider, headless_login

VIEW_URL = re.compile(r"http://127\.0\.0\.1:\d+/counter\?key=[\w-]+")
WAIT = 10_000  # ms: the bound of every wait for the browser


async def open_view(server: RunningServer, provider: Provider, person: str) -> str:
    """The person's agent opens a counter view (a call recorded under `{iss}#{person}`); its URL."""
    async with mcp_client_with_token(server, provider.mint(server.mcp_url, sub=person)) as client:
        result = await client.call_tool("counter", {})
    found = VIEW_URL.search(str(result.content))
    assert found, result.content
    return found.group(0)


@contextlib.contextmanager
def sign_in(server: RunningServer, person: str) -> Generator[httpx.Client]:
    """A browser-like client signed in to the server's pages as `person` (headless login and consent)."""
    with httpx.Client(follow_redirects=False, timeout=10) as http:
        first = http.get(server.base_url + "/viewer")
        assert first.status_code == 303
        query = headless_login(http, first.headers["location"], server.base_url + "/auth/callback", person)
        back = http.get(server.base_url + "/auth/callback", params=query)
        assert (back.status_code, back.headers["location"]) == (303, "/viewer"), back.text
        cookie = back.headers["set-cookie"].lower()
        assert "webapp_person=" in cookie and "httponly" in cookie and "samesite=lax" in cookie
        yield http


def test_pages_without_a_client_say_which_options_enable_them(server: RunningServer) -> None:
    answer = httpx.get(server.base_url + "/viewer")
    assert answer.status_code == 401
    assert "--auth-client-id and --auth-client-secret" in answer.text


def test_an_unauthenticated_page_goes_straight_to_the_issuer(signed: RunningServer, provider: Provider) -> None:
    answer = httpx.get(signed.base_url + "/viewer?tool=counter")
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location.startswith(provider.issuer + "/auth?") and "code_challenge_method=S256" in location


async def test_a_view_page_opens_only_for_its_own_principal_and_framed_by_its_key(
    signed: RunningServer, provider: Provider
) -> None:
    url = await open_view(signed, provider, "erin")
    with sign_in(signed, "erin") as erin, sign_in(signed, "finn") as finn:
        assert erin.get(url).status_code == 200
        refused = finn.get(url)
        assert refused.status_code == 403 and "a view page opens only for the principal" in refused.text
    assert httpx.get(url, headers={"Sec-Fetch-Dest": "iframe"}).status_code == 200
    assert httpx.get(url).status_code == 303  # top level without a session: sign in first
    assert httpx.get(signed.base_url + "/viewer?key=x", headers={"Sec-Fetch-Dest": "iframe"}).status_code == 303


def test_sign_out_is_local_when_the_issuer_has_no_end_session_endpoint(signed: RunningServer) -> None:
    with sign_in(signed, "gus") as gus:
        out = gus.get(signed.base_url + "/auth/sign-out")
        assert out.status_code == 200 and "signed out" in out.text
        assert gus.get(signed.base_url + "/viewer").status_code == 303


def test_a_session_keeps_the_scopes_the_issuer_granted_and_never_a_token(signed: RunningServer) -> None:
    for person, granted in (("nora", "counter:write webapp"), ("reader-ned", "webapp")):
        with sign_in(signed, person) as http:
            body = http.cookies["webapp_person"].split(".")[0]
        session = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        assert (session["p"].endswith("#" + person), session["s"]) == (True, granted)
        assert set(session) == {"p", "s", "exp"}  # the access token of the sign-in is not kept


def test_an_issuer_that_refuses_the_scopes_asked_for_still_signs_the_person_in_without_them(
    signed: RunningServer, provider: Provider
) -> None:
    with httpx.Client(follow_redirects=False, timeout=10) as http:
        first = http.get(signed.base_url + "/viewer?tool=counter")
        asked = parse_qs(urlsplit(first.headers["location"]).query)
        assert asked["scope"][0].split() == ["openid", "webapp", "counter:write"]
        assert asked["resource"] == [signed.mcp_url]
        answer = {"error": "invalid_scope", "state": asked["state"][0], "iss": provider.issuer}
        refused = http.get(signed.base_url + "/auth/callback", params=answer)
        assert refused.status_code == 303 and "webapp_person" not in refused.headers.get("set-cookie", "")
        again = parse_qs(urlsplit(refused.headers["location"]).query)
        assert again["scope"] == ["openid"] and "resource" not in again and again["state"] != asked["state"]
        query = headless_login(http, refused.headers["location"], signed.base_url + "/auth/callback", "mona")
        back = http.get(signed.base_url + "/auth/callback", params=query)
        assert (back.status_code, back.headers["location"]) == (303, "/viewer?tool=counter"), back.text


def test_a_forged_or_stale_callback_changes_nothing(signed: RunningServer) -> None:
    answer = httpx.get(signed.base_url + "/auth/callback", params={"code": "x", "state": "y"})
    assert answer.status_code == 400
    assert "webapp_person" not in answer.headers.get("set-cookie", "")


@pytest.mark.asyncio(loop_scope="session")
async def test_a_person_signs_in_to_the_viewer_in_chromium_sees_only_their_own_calls_and_tries_tools_as_themselves(
    signed: RunningServer, provider: Provider, browser: Browser
) -> None:
    view_url = await open_view(signed, provider, "hana")
    await open_view(signed, provider, "ivan")
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(signed.base_url + "/viewer")
        await page.fill("input[name=login]", "hana")
        await page.fill("input[name=password]", "any")
        await page.click("button[type=submit]")
        await page.wait_for_url(re.compile(r".*/interaction/.*"), timeout=WAIT)
        if await page.locator("button[type=submit]").count():  # the consent form
            await page.click("button[type=submit]")
        await page.wait_for_url(signed.base_url + "/viewer", timeout=WAIT)
        rows = page.locator(".wv-call", has_text=f"{provider.issuer}#hana")
        await expect(rows).to_have_count(1, timeout=WAIT)
        assert await page.get_by_text(f"{provider.issuer}#ivan").count() == 0
        await (await context.new_page()).goto(view_url)  # her view page opens for her, and its tab goes live
        await page.bring_to_front()  # a tab in the background draws slowly
        # "try a tool" without a token for /mcp: the call is hers, with the scopes the issuer granted her
        await try_tool(page, "counter_reset", "Done")  # needs counter:write
        await expect(page.locator(".wv-try-result")).to_contain_text("count", timeout=WAIT)
        await expect(rows.filter(has_text="counter_reset")).to_have_count(1, timeout=WAIT)
        await expect(rows).to_have_count(2)
    finally:
        await context.close()


async def try_tool(page: Page, tool: str, status: str) -> None:
    """Call `tool` (without arguments) from the viewer's "try a tool" dialog; the call ends with `status`."""
    if not await page.locator(".wv-try").is_visible():
        await page.get_by_role("button", name="Try a tool").click(timeout=WAIT)
    option = page.get_by_role("option", name=tool, exact=True)
    for _ in range(5):  # a click while the dialog is still opening can be lost: open the menu again, bounded
        await page.locator(".wv-try-tool .q-field__control").click(timeout=WAIT)
        with contextlib.suppress(AssertionError):
            await expect(option).to_be_visible(timeout=2_000)
            break
    await option.click(timeout=WAIT)
    await page.get_by_role("button", name="Call").click(timeout=WAIT)
    await expect(page.locator(".wv-try-status")).to_have_text(status, timeout=WAIT)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_person_the_issuer_grants_no_write_scope_gets_the_scope_error_and_nothing_runs(
    signed: RunningServer, provider: Provider, browser: Browser
) -> None:
    with sign_in(signed, "reader-lou") as http:  # the test issuer grants "reader" accounts only `webapp`
        cookie = {"name": "webapp_person", "value": http.cookies["webapp_person"], "url": signed.base_url}
    context = await browser.new_context()
    try:
        await context.add_cookies([cookie])  # pyright: ignore[reportArgumentType]
        page = await context.new_page()
        await page.goto(signed.base_url + "/viewer")
        await try_tool(page, "counter_reset", "Error result")
        result = page.locator(".wv-try-result")
        await expect(result).to_contain_text("INSUFFICIENT_SCOPE", timeout=WAIT)
        await expect(result).to_contain_text("webapp counter:write")
        await page.reload()  # the list as the server has it: the refused call never ran, so it is not recorded
        await expect(page.get_by_text("No calls yet.")).to_be_visible(timeout=WAIT)
        assert await page.locator(".wv-call").count() == 0
    finally:
        await context.close()


async def test_an_opaque_token_is_checked_by_introspection_with_the_client_credentials(
    signed: RunningServer, provider: Provider
) -> None:
    callback = "http://127.0.0.1:33418/callback"
    registered = httpx.post(
        provider.issuer + "/reg",
        json={"redirect_uris": [callback], "client_name": "opaque", "token_endpoint_auth_method": "none"},
    ).json()
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "client_id": registered["client_id"],
        "response_type": "code",
        "redirect_uri": callback,
        "scope": "webapp",
        "resource": signed.mcp_url,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        answer = headless_login(browser, f"{provider.issuer}/auth?{urlencode(query)}", callback, "jude")
    token = httpx.post(
        provider.issuer + "/token",
        data={
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": callback,
            "code_verifier": verifier,
            "client_id": registered["client_id"],
            "resource": signed.mcp_url,
        },
    ).json()["access_token"]
    assert token.count(".") != 2  # opaque
    assert (await post(signed, LIST, token)).status_code == 200
    refused = await post(signed, LIST, token[::-1])
    assert refused.status_code == 401 and "not active" in refused.headers["www-authenticate"]
