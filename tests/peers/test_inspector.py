"""Smoke test with the MCP Inspector CLI (pinned `@modelcontextprotocol/inspector`): list and call tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e import RunningServer, run_server
from tests.support.security_npm import NpmRun, run_npm_bin

TOKEN = "inspector-token-5b0c2d7e9f"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server("--token", f"inspector={TOKEN}", db=tmp_path_factory.mktemp("inspector") / "i.db") as running:
        yield running


def inspector(server: RunningServer, tmp_path: Path, *args: str, token: str | None = TOKEN) -> NpmRun:
    auth = ["--header", f"Authorization: Bearer {token}"] if token is not None else []
    env = {"MCP_CATALOG_PATH": str(tmp_path / "catalog.json"), "HOME": str(tmp_path)}
    return run_npm_bin("inspector", ["--cli", server.mcp_url, "--transport", "http", *auth, *args], env=env)


def parsed(run: NpmRun) -> dict[str, Any]:
    assert run.returncode == 0, run.output
    return json.loads(run.stdout[run.stdout.index("{") :])


def test_the_inspector_lists_the_tools_with_their_schemas(server: RunningServer, tmp_path: Path) -> None:
    tools = {tool["name"]: tool for tool in parsed(inspector(server, tmp_path, "--method", "tools/list"))["tools"]}
    assert {"echo", "whoami", "boom"} <= set(tools)
    assert tools["echo"]["inputSchema"]["properties"] == {"text": {"type": "string"}}


def test_the_inspector_calls_a_tool_as_the_tokens_principal(server: RunningServer, tmp_path: Path) -> None:
    echoed = parsed(
        inspector(server, tmp_path, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
    )
    assert echoed["content"] == [{"type": "text", "text": "hi"}] and not echoed["isError"]
    who = parsed(inspector(server, tmp_path, "--method", "tools/call", "--tool-name", "whoami"))
    assert who["structuredContent"]["principal"] == "inspector"


def test_the_inspector_reports_a_tool_error_with_exit_code_5(server: RunningServer, tmp_path: Path) -> None:
    run = inspector(server, tmp_path, "--method", "tools/call", "--tool-name", "boom")
    assert run.returncode == 5, run.output
    assert "INTERNAL_ERROR" in run.stdout


def test_the_inspector_without_the_token_is_refused(server: RunningServer, tmp_path: Path) -> None:
    run = inspector(server, tmp_path, "--method", "tools/list", "--stored-auth-only", token=None)
    assert run.returncode == 3 and "auth_required" in run.output, run.output
