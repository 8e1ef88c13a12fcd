"""Shared fixtures: a test server in a subprocess, a headless Chromium (Playwright) browser and page, and the app's
database on either engine (`database`: a SQLite file, or a database on a Postgres server started once per session),
and one Redis server per session (`redis_server`; `redis_db` empties it for a test).

Tests that use `browser` or `page` run in the session's event loop (the browser is session-scoped), so their
async fixtures must not be bound to a per-test loop. The run writes nothing into the checkout: no bytecode, no
hypothesis database, no pytest cache; a check at the end compares `git status` with the start and fails the run
on any difference.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from playwright.async_api import Browser, Page, async_playwright

from tests.support.e2e import REPO, RunningServer, run_server
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.redis import RedisServer, start_redis

sys.dont_write_bytecode = True  # test modules and (through the environment) every server subprocess
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
settings.register_profile("webapp", database=None)
settings.load_profile("webapp")
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="webapp-hypothesis-")  # its caches of constants and Unicode tables
set_hypothesis_home_dir(_HYPOTHESIS_HOME)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_BROWSER_FIXTURES = {"browser", "page"}
_MADE_BY_MAKE = (":(exclude).venv", ":(exclude)node_modules", ":(exclude)*.egg-info")
_CHECKOUT = pytest.StashKey[set[str] | None]()


def _checkout_state() -> set[str] | None:
    """`git status` of the checkout, ignored and untracked files included, less what `make` itself creates."""
    command = ["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", ".", *_MADE_BY_MAKE]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_CHECKOUT] = _checkout_state()


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)
    before, after = session.config.stash.get(_CHECKOUT, None), _checkout_state()
    if before is None or after is None:
        print("\ncheckout check: not a git checkout, nothing compared", file=sys.stderr)
        return
    if changed := sorted(before ^ after):
        listing = "\n  ".join(changed)
        print(
            f"\nThe test run changed the checkout (tests write only into their temporary folders):\n  {listing}",
            file=sys.stderr,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not set(getattr(item, "fixturenames", ())) & _BROWSER_FIXTURES:
            continue
        marker = item.get_closest_marker("asyncio")
        if marker is None or not (marker.kwargs.get("loop_scope") or marker.kwargs.get("scope")):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)  # closest marker wins


@pytest.fixture(scope="module")
def test_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The test app (`tests.support.apps`) served by `python -m webapp` on a free port, shared by a module."""
    with run_server(db=tmp_path_factory.mktemp("server") / "test.db") as running:
        yield running


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One Redis server for the session (no persistence); a test may stop it, and starts it again before it ends."""
    server = start_redis()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_db(redis_server: RedisServer) -> str:
    """The session's Redis, running and emptied for this test: its URL."""
    if redis_server.process is None:
        redis_server.start()
    redis_server.flush()
    return redis_server.url


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A new, empty database of the app: a SQLite file path, or a `postgresql://` URL."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("sqlite") / "app.db")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context()
    try:
        yield await context.new_page()
    finally:
        await context.close()
