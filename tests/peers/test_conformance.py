"""The official MCP conformance suite (pinned `@modelcontextprotocol/conformance`) against the real server.

Only the scenarios that need no fixture tools of the suite's own are run. The pinned 0.1.16 does not offer
`server-session-lifecycle`, `server-stateless` or `http-header-validation`; the listing test below says so and fails
when an update brings them, so they get added here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.e2e import RunningServer, run_server
from tests.support.security_npm import run_npm_bin

SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection", "server-sse-multiple-streams")
NOT_OFFERED = ("server-session-lifecycle", "server-stateless", "http-header-validation")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(db=tmp_path_factory.mktemp("conformance") / "c.db") as running:
        yield running


def checks_of(output_dir: Path) -> list[dict[str, object]]:
    files = list(output_dir.rglob("checks.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes(scenario: str, server: RunningServer, tmp_path: Path) -> None:
    run = run_npm_bin("conformance", ["server", "--url", server.mcp_url, "--scenario", scenario, "-o", str(tmp_path)])
    checks = checks_of(tmp_path)
    failed = [check for check in checks if check["status"] != "SUCCESS"]
    assert run.returncode == 0 and checks and not failed, run.output
    assert not [line for line in server.lines if "Traceback" in line]


def test_the_pinned_suite_offers_our_scenarios_and_not_the_newer_ones() -> None:
    run = run_npm_bin("conformance", ["list", "--server"])
    offered = {line.strip()[2:].split(" ")[0] for line in run.stdout.splitlines() if line.strip().startswith("- ")}
    assert set(SCENARIOS) <= offered, run.output
    assert not set(NOT_OFFERED) & offered, "the suite now offers more scenarios: add them to SCENARIOS"
