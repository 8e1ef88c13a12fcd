"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in package.json): the everything app
(docs/examples/everything.py) meets every scored scenario of both revisions' requirements; the product, the inventory
app, passes each scenario that needs no fixture of the suite's own, at the revision whose requirement set runs it.

Left out although they pass: `tools-call-simple-text`, `tools-call-error` and
`input-required-result-ignore-extra-params` call fixture tools the product does not have, and its `UNKNOWN_TOOL`
answer (text, `isError`) happens to satisfy them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.e2e import REPO, RunningServer, run_server
from tests.support.security_npm import run_npm_bin

REQUIREMENTS = REPO / "node_modules" / "@modelcontextprotocol" / "conformance" / "requirements"
BOTH = (
    "tools-list",
    "prompts-list",
    "resources-list",
    "completion-complete",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
PASSING = {
    "2025-11-25": ("server-initialize", "server-session-lifecycle", "ping", "logging-set-level", *BOTH),
    "2026-07-28": (
        "http-header-validation",
        "sep-2164-resource-not-found",
        "caching",
        "input-required-result-unsupported-methods",
        *BOTH,
    ),
}


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("conformance") / "inventory.db"
    with run_server(app="views.inventory:build", db=db) as running:
        yield running


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("conformance") / "everything.db"
    with run_server(app="docs.examples.everything:build", db=db) as running:
        yield running


@pytest.mark.parametrize("revision", list(PASSING))
def test_the_everything_app_meets_every_scored_scenario_of_the_requirements(
    revision: str, everything: RunningServer, tmp_path: Path
) -> None:
    run = run_npm_bin(
        "conformance", ["server", "--url", everything.mcp_url, "--requirements", revision, "-o", str(tmp_path)]
    )
    scored, unscored = required_server_scenarios(revision)
    results = _results(tmp_path)
    failed = {name: checks for name, checks in results.items() if name in scored and checks}
    print(f"{revision}: not scored and failing:", sorted(name for name in unscored if results.get(name)))
    assert set(results) >= scored, sorted(scored - set(results))
    assert run.returncode == 0 and not failed, (failed, run.output[-2000:])


def _results(output_dir: Path) -> dict[str, list[str]]:
    """Each scenario run into `output_dir` (`server-<scenario>-<time>/checks.json`), with its checks that failed."""
    results: dict[str, list[str]] = {}
    for checks in output_dir.glob("server-*/checks.json"):
        name = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T.*$", "", checks.parent.name)
        bad = [
            str(check["id"]) for check in json.loads(checks.read_text()) if check["status"] in ("FAILURE", "WARNING")
        ]
        results[name] = bad
    return results


def checks_of(output_dir: Path) -> list[dict[str, object]]:
    files = list(output_dir.rglob("checks.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def required_server_scenarios(revision: str) -> tuple[set[str], set[str]]:
    """The pinned requirement file's server scenarios: those scored and those run but not scored."""
    requirements = yaml.safe_load((REQUIREMENTS / f"{revision}.yaml").read_text(encoding="utf-8"))
    unscored = {entry["scenario"] for entry in requirements.get("not_scored", []) if entry["leg"] == "server"}
    return set(requirements["server"]), unscored


@pytest.mark.parametrize(
    ("revision", "scenario"), [(revision, scenario) for revision, names in PASSING.items() for scenario in names]
)
def test_the_product_passes_the_conformance_scenario(
    revision: str, scenario: str, product: RunningServer, tmp_path: Path
) -> None:
    run = run_npm_bin(
        "conformance",
        ["server", "--url", product.mcp_url, "--scenario", scenario, "--spec-version", revision, "-o", str(tmp_path)],
    )
    checks = checks_of(tmp_path)
    passed = [check for check in checks if check["status"] == "SUCCESS"]
    failed = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert run.returncode == 0 and passed and not failed, run.output
    assert not [line for line in product.lines if "Traceback" in line]


@pytest.mark.parametrize("revision", PASSING)
def test_the_pinned_requirements_list_runs_our_scenarios_at_their_revision(revision: str) -> None:
    run = run_npm_bin("conformance", ["list", "--requirements", revision])
    assert run.returncode == 0, run.output
    scored: set[str] = set()
    unscored: set[str] = set()
    section = ""
    for line in run.stdout.splitlines():
        if line and not line.startswith(" "):
            section = line
        elif line.startswith("  - ") and section.startswith("Server scenarios"):
            scored.add(line.removeprefix("  - "))
        elif line.startswith("    - ") and line.endswith(" [server]"):
            unscored.add(line.removeprefix("    - ").removesuffix(" [server]"))
    assert (scored, unscored) == required_server_scenarios(revision), run.output
    assert set(PASSING[revision]) <= scored | unscored, "a scenario was renamed or moved: update PASSING"
