"""The server's log lines: one line per finished call with its fields (a view's plumbing only at debug level),
secrets masked in the message, the exception text and, as JSON, in every field; and a `--log-format json` server
whose every line parses (on stdout and stderr, from the banner to the stop) and none carries the token, view handle
or attach key the test made."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from tests.support.apps import FunctionTool, add_tools, text
from tests.support.e2e import RunningServer, run_server
from tests.support.light_tab import LightTab
from tests.support.views import attach_key, connect, structured, texts
from webapp.calllog import Masker, note_routed_view
from webapp.core.context import CallContext, Caller
from webapp.core.settings import Settings
from webapp.server.composition import WebApp
from webapp.server.logs import CALLS_LOGGER, JsonLogFormatter, SecretLogFilter

LEGACY = Caller(principal=None, session_id="0123456789abcdef0123456789abcdef", protocol="2025-11-25")
HANDLE = "view-2b9e4c7a1d0f8e63"
SECRETS = ("token-5c2e9a7b3d1f6048", "attach-0f9b8d7c6e5a4b3c", HANDLE)
SESSION = "c0ffee00c0ffee00c0ffee00c0ffee00"  # as the SDK's session ids look (uuid4 hex)
TOKEN = "agent-3e8b1d6f0a9c7e24"
JSON_SERVER = ("--log-format", "json", "--worker-id", "w9", "--token", f"agent={TOKEN}", "--wait-for-live", "5")
LOG_APP = "tests.support.log_app:build"


@dataclass(frozen=True)
class AppOnlyTool(FunctionTool):
    """A tool only views may call (`_meta.ui.visibility: ["app"]`): a view's plumbing."""

    meta: dict[str, Any] = field(default_factory=lambda: {"ui": {"visibility": ["app"]}})


def call_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == CALLS_LOGGER]


async def test_each_finished_call_logs_one_line_with_its_tool_outcome_duration_call_id_worker_and_view(
    caplog: pytest.LogCaptureFixture,
) -> None:
    webapp = WebApp(Settings(port=0, worker_id="w7"))
    add_tools(webapp)

    async def routed(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        note_routed_view(HANDLE)  # as the bridge does for the view a call reaches
        return text("done")

    webapp.add_tool(FunctionTool("routed", "Reaches a view.", routed))
    caplog.set_level(logging.DEBUG, CALLS_LOGGER)
    await webapp.call_tool("echo", {"text": "hi", "_call_id": "c-1"}, LEGACY)
    await webapp.call_tool("boom", {}, LEGACY)
    await webapp.call_tool("routed", {"_call_id": "two words\n"}, LEGACY)
    waiting = asyncio.create_task(webapp.call_tool("wait_session_end", {"session_id": "never"}, LEGACY))
    await asyncio.sleep(0)  # let the call start
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    lines = call_lines(caplog)
    fields = [
        (line.levelno, line.__dict__["tool"], line.__dict__["outcome"], line.__dict__["call_id"], line.__dict__["view"])
        for line in lines
    ]
    assert fields == [
        (logging.INFO, "echo", "ok", "c-1", None),
        (logging.INFO, "boom", "INTERNAL_ERROR", None, None),
        (logging.INFO, "routed", "ok", "'two words\\n'", HANDLE[:6] + "…"),  # a caller's id stays one quoted word
        (logging.INFO, "wait_session_end", "cancelled", None, None),
    ]
    for line in lines:
        assert line.__dict__["worker"] == "w7" and line.__dict__["duration_ms"] >= 0
        assert line.__dict__["trace_id"] is None  # nothing traced here
    assert lines[0].getMessage().startswith("call echo ok ") and lines[0].getMessage().endswith(
        " call_id=c-1 worker=w7"
    )
    assert HANDLE not in caplog.text


async def test_a_views_plumbing_is_kept_out_of_the_call_log_and_logged_at_debug_level_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    webapp = WebApp(Settings(port=0))
    add_tools(webapp)

    async def fetch(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        return text("a chunk of the page")

    webapp.add_tool(AppOnlyTool("app_fetch", "A view's own call.", fetch))
    caplog.set_level(logging.DEBUG, CALLS_LOGGER)
    for _ in range(3):
        await webapp.call_tool("app_fetch", {}, LEGACY)
    assert [(line.levelno, line.__dict__["tool"]) for line in call_lines(caplog)] == [(logging.DEBUG, "app_fetch")] * 3
    assert webapp.calllog.records() == []


@contextlib.contextmanager
def captured(formatter: logging.Formatter, masker: Masker) -> Generator[tuple[logging.Logger, io.StringIO]]:
    """A logger whose lines go through the server's filter and `formatter` into a string."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretLogFilter(masker))
    handler.setFormatter(formatter)
    logger = logging.getLogger("tests.logs.captured")
    logger.addHandler(handler)
    logger.propagate, logger.level = False, logging.DEBUG
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = True, logging.NOTSET


def secret_masker() -> Masker:
    masker = Masker()
    for secret in SECRETS:
        masker.add(secret)
    return masker


def fail_with(logger: logging.Logger, message: str) -> None:
    try:
        raise RuntimeError(f"cannot use {' '.join(SECRETS)} in session {SESSION}")
    except RuntimeError:
        logger.exception(message, *SECRETS[:1])


def test_text_lines_mask_the_message_and_the_exception_text() -> None:
    with captured(logging.Formatter("%(levelname)s %(message)s"), secret_masker()) as (logger, stream):
        fail_with(logger, "failed with %s")
        logger.info("stack", stack_info=True)  # attach-0f9b8d7c6e5a4b3c: this source line shows in the stack
    written = stream.getvalue()
    assert "ERROR failed with token-…" in written and "RuntimeError: cannot use token-… attach… view-2…" in written
    assert "c0ffee…" in written and "stack" in written
    for secret in (*SECRETS, SESSION):
        assert secret not in written


def test_json_lines_mask_every_field_key_and_the_exception_text_but_keep_the_trace_id() -> None:
    masker = secret_masker()
    with captured(JsonLogFormatter(masker, worker="w7"), masker) as (logger, stream):
        fail_with(logger, "failed with %s")
        extra = {
            "plain": f"key {SECRETS[1]}",
            "nested": {SECRETS[2]: [SECRETS[0], 3, None, {"session": SESSION}]},
            "other": Path(f"/views/{SECRETS[2]}"),  # any object: its text, masked
            "trace_id": SESSION,  # 32 hex digits that are no session id
        }
        logger.warning("fields", extra=extra)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [list(line)[:5] for line in lines] == [["time", "level", "logger", "message", "worker"]] * 2
    failed, fields = lines
    assert failed["message"] == "failed with token-…" and failed["worker"] == "w7"
    assert failed["exc_info"].endswith("RuntimeError: cannot use token-… attach… view-2… in session c0ffee…")
    assert fields["plain"] == "key attach…" and fields["other"] == "/views/view-2…"
    assert fields["nested"] == {"view-2…": ["token-…", 3, None, {"session": "c0ffee…"}]}
    assert fields["trace_id"] == SESSION
    assert SESSION not in json.dumps({**fields, "trace_id": None})
    for secret in SECRETS:
        assert secret not in stream.getvalue()


@pytest.mark.parametrize("json_lines", [False, True])
def test_secrets_registered_after_start_are_masked_too(json_lines: bool) -> None:
    masker = Masker()  # a server without tokens starts with no secret at all
    formatter = JsonLogFormatter(masker) if json_lines else logging.Formatter("%(message)s")
    with captured(formatter, masker) as (logger, stream):
        masker.add(HANDLE)  # a view opened later
        logger.warning("opened %s", HANDLE, extra={"view": HANDLE})
    written = stream.getvalue()
    shown = json.loads(written)["view"] if json_lines else written
    assert "view-2…" in shown and HANDLE not in written


# -- end to end: a `--log-format json` server ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("json-logs") / "app.db"
    with run_server(*JSON_SERVER, app=LOG_APP, db=db) as running:
        yield running


def log_lines(server: RunningServer) -> list[dict[str, Any]]:
    """Every line the server wrote so far, parsed: its log lines and its banner, all JSON."""
    return [json.loads(line) for line in server.output.splitlines()]


def values(value: Any) -> Iterator[str]:
    """Every string in a parsed line, keys included."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from values(item)
    elif isinstance(value, list):
        for item in value:
            yield from values(item)
    elif isinstance(value, str):
        yield value


async def test_a_json_server_logs_parseable_lines_one_per_call_and_no_token_handle_or_attach_key(
    json_server: RunningServer,
) -> None:
    async with connect(json_server, token=TOKEN) as agent:
        opened = structured(await agent.call_tool("counter", {"title": "Logged"}))
        handle, key = str(opened["view"]), attach_key(str(opened["url"]))
        tab = LightTab(str(opened["url"]))
        await tab.open()
        try:
            bumped = await agent.call_tool("counter_increment", {"_view": handle, "_call_id": "c-json-1"})
        finally:
            await tab.close()
        leaked = await agent.call_tool("leak", {"text": f"{handle} {key} {TOKEN}"})
    assert structured(bumped) == {"count": 1}
    assert leaked.is_error and texts(leaked)[0].startswith('<tool_error code="INTERNAL_ERROR"')
    json_server.wait_for_output(r'"logger": "webapp.calls".*"tool": "leak"', timeout=10)
    lines = log_lines(json_server)
    for line in lines:
        assert {"time", "level", "logger", "message", "worker"} <= set(line), line
        for text_ in values(line):
            for secret in (handle, key, TOKEN):
                assert secret not in text_, line
    calls = [line for line in lines if line["logger"] == "webapp.calls"]
    [bump] = [line for line in calls if line["call_id"] == "c-json-1"]
    assert {name: bump[name] for name in ("level", "tool", "outcome", "worker", "view")} == {
        "level": "INFO",
        "tool": "counter_increment",
        "outcome": "ok",
        "worker": "w9",
        "view": handle[:6] + "…",
    }
    assert isinstance(bump["duration_ms"], float) and bump["duration_ms"] > 0
    assert [(line["tool"], line["outcome"]) for line in calls] == [
        ("counter", "ok"),
        ("counter_increment", "ok"),
        ("leak", "INTERNAL_ERROR"),
    ]
    [warned] = [line for line in lines if line["logger"] == "tests.leaky"]
    assert warned["leaked"] == f"{handle[:6]}… {key[:6]}… {TOKEN[:6]}…"
    [failed] = [line for line in lines if "exc_info" in line and "cannot use" in line["exc_info"]]
    assert failed["exc_info"].endswith(f"RuntimeError: cannot use {handle[:6]}… {key[:6]}… {TOKEN[:6]}…")


async def test_everything_a_json_server_writes_from_start_to_stop_parses_with_its_banner_as_one_object(
    tmp_path: Path,
) -> None:
    with run_server(*JSON_SERVER, "--metrics-port", "0", app=LOG_APP, db=tmp_path / "app.db") as running:
        async with connect(running, token=TOKEN) as agent:
            failed = await agent.call_tool("leak", {"text": "nothing secret"})  # a warning and a traceback
        assert failed.is_error
        running.wait_for_output(r'"logger": "webapp.calls".*"tool": "leak"', timeout=10)
        running.stop()
        stdout, stderr = running.written("stdout"), running.written("stderr")
    [banner] = [json.loads(line) for line in stdout]  # stdout carries the banner alone
    logged = [json.loads(line) for line in stderr]
    base = running.base_url
    assert {key: banner[key] for key in ("level", "logger", "message", "worker", "event", "url", "mcp")} == {
        "level": "INFO",
        "logger": "webapp.server.banner",
        "message": f"webapp serving on {base}",
        "worker": "w9",
        "event": "serving",
        "url": base,
        "mcp": f"{base}/mcp",
    }
    assert f"{base}/viewer" in banner["pages"] and all(page.startswith(f"{base}/") for page in banner["pages"])
    assert banner["stdio"] is False and banner["metrics"] == f"{base}/metrics"
    assert str(banner["metrics_port"]).startswith("http://127.0.0.1:") and "time" in banner
    for line in logged:
        assert {"time", "level", "logger", "message", "worker"} <= set(line), line
    assert any("Traceback" in line.get("exc_info", "") for line in logged)  # several lines of text, one JSON line
    assert any(line["message"].startswith("Finished server process") for line in logged)  # the stop is in it too
