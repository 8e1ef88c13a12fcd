"""Getting started's commands: each runs here against a real server, or names the test or make step that runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.support.e2e import REPO, RunningServer, child_env, run_server

PAGE = REPO / "docs" / "getting-started.md"
DEFAULT_URL = "http://127.0.0.1:8080"
RUN_HERE = {
    ".venv/bin/webapp serve --help",
    f"curl -s {DEFAULT_URL}/readyz",
    f".venv/bin/python -m docs.examples.first_call {DEFAULT_URL}/mcp",
}
RUN_ELSEWHERE = {
    "make run": "Makefile",  # its recipe is `webapp serve`, which the server below runs with the default app
    "make demo": "tests/views/inventory/test_demo.py",
    "make test": "Makefile",  # CI's `.ci/run` runs it
    "PYTHONPATH=$PWD .venv/bin/pytest -q -n 0 tests/docs": "tests/docs",  # this folder, inside `make test`
    f"claude mcp add --transport http webapp {DEFAULT_URL}/mcp": "",  # Claude Code's own command, not ours to run
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """`webapp serve` with its default app, as `make run` starts it."""
    with run_server(app="views.inventory:build", db=tmp_path_factory.mktemp("start") / "inventory.db") as running:
        yield running


def commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def run(command: str, server: RunningServer | None = None) -> str:
    """Run a command of the page as it is written, on this checkout's Python and `server`'s port."""
    programs = {".venv/bin/webapp": [sys.executable, "-m", "webapp"], ".venv/bin/python": [sys.executable]}
    words = command.replace(DEFAULT_URL, server.base_url).split() if server is not None else command.split()
    argv = [*programs.get(words[0], [words[0]]), *words[1:]]
    done = subprocess.run(argv, cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_command_on_the_page_runs_here_or_names_where_it_runs() -> None:
    assert set(commands()) == RUN_HERE | set(RUN_ELSEWHERE)
    for where in filter(None, RUN_ELSEWHERE.values()):
        assert (REPO / where).exists(), where
    assert re.search(r"^run: .*\n\t\$\(VENV\)/bin/webapp serve \$\(ARGS\)$", (REPO / "Makefile").read_text(), re.M)
    assert re.findall(r'^--8<-- "([^"]+)"$', PAGE.read_text(), flags=re.MULTILINE) == ["docs/examples/first_call.py"]


def test_serve_help_lists_the_options_the_page_names() -> None:
    shown = run(".venv/bin/webapp serve --help")
    for option in ("--port", "--db", "--app", "--stdio", "--allow-remote", "--token", "--allowed-host"):
        assert option in shown, option


def test_the_readiness_probe_answers_ready(server: RunningServer) -> None:
    answer = json.loads(run(f"curl -s {DEFAULT_URL}/readyz", server))
    assert answer["status"] == "ready" and answer["database"] == "up"


def test_the_first_call_lists_the_tools_the_warehouses_and_opens_the_inventory(server: RunningServer) -> None:
    lines = run(f".venv/bin/python -m docs.examples.first_call {DEFAULT_URL}/mcp", server).splitlines()
    tools, table, opened = lines[0], "\n".join(lines[1:-1]), lines[-1]
    assert {"inventory", "inventory_update", "inventory_adjust_stock", "warehouses"} <= set(
        tools.removeprefix("tools: ").split(", ")
    )
    assert '"code": "BER"' in table
    assert re.fullmatch(rf"open the view: {re.escape(server.base_url)}/inventory\?key=\S+", opened)
