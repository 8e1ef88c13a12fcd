"""Sign-in with several workers behind one base URL: each reads the issuer's keys itself, so the same access token
is good on every worker, and a person's session cookie from one worker is good on the others; nothing secret goes
into Redis. A person signed in on one worker tries a tool on another, acting on their view whose tab is on the first.
When the issuer goes away, the keys each worker read keep working and a new key fails closed."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import redis
from playwright.async_api import Browser, expect

from tests.auth.test_pages import WAIT, open_view, sign_in, try_tool
from tests.auth.test_resource_server import LIST, post
from tests.support.cluster import start_worker
from tests.support.e2e import RunningServer
from tests.support.inspector_web import free_port
from tests.support.oidc import Provider, SigningKey, run_provider

APP = "tests.support.test_app:build"


async def test_tokens_and_page_sessions_are_good_on_every_worker_and_redis_holds_neither(
    redis_db: str, tmp_path: Path, browser: Browser
) -> None:
    with run_provider(tmp_path) as provider:  # its own: it goes away at the end
        await _two_workers(provider, redis_db, tmp_path, browser)


async def _two_workers(provider: Provider, redis_db: str, tmp_path: Path, browser: Browser) -> None:
    port = free_port()
    client_id, secret = provider.register(f"http://127.0.0.1:{port}/auth/callback")
    base = f"http://127.0.0.1:{port}"  # the balancer's address in front of both (here: w1's)
    args = ["--base-url", base, "--auth-issuer", provider.issuer, f"--auth-client-id={client_id}"]
    args += [f"--auth-client-secret={secret}"]  # both random base64url: "-" may come first
    db = tmp_path / "s.db"
    with contextlib.ExitStack() as stack:  # the two workers start side by side
        one, two = await asyncio.gather(
            start_worker(stack, "w1", redis_db, *args, "--port", str(port), db=db, app=APP),
            start_worker(stack, "w2", redis_db, *args, db=db, app=APP),
        )
        for worker in (one, two):  # each worker's own address (its banner shows the shared base URL)
            worker.base_url = worker.wait_for_output(r"Uvicorn running on (http://\S+)", 10).group(1)
        assert one.base_url == base and two.base_url != base
        token = provider.mint(base + "/mcp", sub="kim")  # one resource URL for every worker
        assert (await post(one, LIST, token)).status_code == 200
        assert (await post(two, LIST, token)).status_code == 200
        with sign_in(one, "kim") as person:
            cookie = person.cookies["webapp_person"]
            assert person.get(two.base_url + "/viewer").status_code == 200
        await _try_on_the_other_worker(browser, one, two, provider, cookie)
        stored = redis.Redis.from_url(redis_db)
        try:
            everything = b" ".join(bytes(key) + b"=" + repr(stored.dump(key)).encode() for key in stored.scan_iter())
        finally:
            stored.close()
        for secret_text in (token, cookie, secret):
            assert secret_text.encode()[:24] not in everything
        provider.process.terminate()  # the issuer goes away: the keys read before keep working, a new key fails
        provider.process.wait(10)
        stranger = provider.mint(base + "/mcp", key=SigningKey.new())
        for worker in (one, two):
            assert (await post(worker, LIST, token)).status_code == 200
            assert (await post(worker, LIST, stranger)).status_code == 401
            worker.wait_for_output("could not re-read the issuer's keys", 10)


async def _try_on_the_other_worker(
    browser: Browser, one: RunningServer, two: RunningServer, provider: Provider, cookie: str
) -> None:
    """Kim's view has its tab on w1; from w2's viewer, with the session w1 set, she resets its count as herself."""
    view_url = await open_view(one, provider, "kim")
    context = await browser.new_context()
    try:
        await context.add_cookies([{"name": "webapp_person", "value": cookie, "url": one.base_url}])
        view, page = await context.new_page(), await context.new_page()
        await asyncio.gather(view.goto(view_url), page.goto(two.base_url + "/viewer"))  # the tab on w1, viewer on w2
        await try_tool(page, "counter_reset", "Done")  # in process on w2, forwarded to the tab's worker
        rows = page.locator(".wv-call", has_text=f"{provider.issuer}#kim")
        await expect(rows.filter(has_text="counter_reset")).to_have_count(1, timeout=WAIT)
    finally:
        await context.close()
