"""The tutorial's task board works as the tutorial says: a real server, the official MCP client over HTTP, Chromium.

One server and one agent for the module; each test reads what it changes first, so their order does not matter.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, Page, expect

from docs.examples.taskboard.drive import open_board, plan_release, text_of
from docs.examples.taskboard.presenters import BOARD
from docs.examples.taskboard.tasks import COLUMNS, Task
from tests.support.e2e import RunningServer, run_server
from tests.views.inventory.support import held_client
from webapp.testing import texts

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the shared agent and tab live in the session loop

DOCS = Path(__file__).resolve().parents[2] / "docs"
APP = "docs.examples.taskboard:build"


# --8<-- [start:server]
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(app=APP, db=tmp_path_factory.mktemp("taskboard") / "board.db") as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def agent(server: RunningServer) -> AsyncIterator[Client]:
    async with held_client(server.mcp_url, mode="auto") as client:  # sessionless, as the tutorial's agent
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def tab(browser: Browser, agent: Client) -> AsyncIterator[Page]:
    """The board the tutorial's agent opens, shown in a tab (an action waits until its view's tab is live)."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(await open_board(agent))
        await expect(page.get_by_test_id("board-title")).to_have_text("Release 1.0")
        yield page
    finally:
        await context.close()


# --8<-- [end:server]
async def tasks(agent: Client) -> list[dict[str, object]]:
    return json.loads(text_of(await agent.call_tool("taskboard_summary", {})).split("\n<", 1)[0])


async def test_the_tutorials_commands_and_snippets_name_this_app_and_files_that_exist() -> None:
    tutorial = (DOCS / "tutorial.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", tutorial, flags=re.DOTALL)
    assert [line for block in blocks for line in block.splitlines()] == [
        f".venv/bin/python -m webapp serve --app {APP} --db board.db",  # the server these tests run
        ".venv/bin/python -m docs.examples.taskboard.drive http://127.0.0.1:8080/mcp",  # its functions, run here
        "PYTHONPATH=$PWD .venv/bin/pytest -q tests/docs/test_taskboard.py",  # this file
    ]
    snippets = re.findall(r'^--8<-- "([^"]+)"$', tutorial, flags=re.MULTILINE)
    assert len(snippets) == tutorial.count("--8<--") == 10
    for snippet in snippets:
        path, _, section = snippet.partition(":")
        source = (DOCS.parent / path).read_text()
        assert not section or (f"# --8<-- [start:{section}]" in source and f"# --8<-- [end:{section}]" in source)


async def test_the_tutorials_sample_answer_is_what_the_presenter_answers() -> None:
    tutorial = (DOCS / "tutorial.md").read_text()
    sample = tutorial.split("````text\n", 1)[1].split("\n````", 1)[0]
    answer = "\n".join(texts(BOARD.make([Task(id=1, title="Write the changelog", column="doing")]).build()))
    start = 0
    for part in sample.split("\n…\n"):
        found = answer.find(part, start)
        assert found >= 0, part
        start = found + len(part)
    assert answer.endswith(sample.rsplit("\n…\n", 1)[1])


async def test_the_board_has_an_opening_tool_an_update_tool_and_three_actions(agent: Client) -> None:
    names = {tool.name for tool in (await agent.list_tools()).tools}
    board = {"taskboard", "taskboard_update", "taskboard_add_task", "taskboard_move_task", "taskboard_summary"}
    assert board <= names
    assert {name for name in names if name.startswith("taskboard")} == board


async def test_the_tutorials_agent_plans_a_release_the_tab_shows_it_and_the_summary_charts_it(
    agent: Client, tab: Page
) -> None:
    before = await tasks(agent)
    answer = await plan_release(agent)
    data, *blocks = answer.split("\n<")
    board = json.loads(data)
    assert board[: len(before)] == before
    first, second, third = board[len(before) :]
    assert (first["title"], first["column"]) == ("Write the changelog", "doing")
    assert [(second["title"], second["column"]), (third["title"], third["column"])] == [
        ("Tag the release", "todo"),
        ("Announce it", "todo"),
    ]
    chart = next(block for block in blocks if block.startswith('ui_passthrough type="echarts"'))
    option = json.loads(chart.split("```echarts\n", 1)[1].split("\n```", 1)[0])
    assert option["xAxis"]["data"] == ["todo", "doing", "done"]
    assert option["series"][0]["data"] == [sum(task["column"] == name for task in board) for name in COLUMNS]
    assert "taskboard_move_task: Move a task to another column by its id." in answer
    await expect(tab.get_by_test_id("column-doing").get_by_test_id(f"task-{first['id']}")).to_be_visible()
    await expect(tab.get_by_test_id("column-todo").get_by_test_id(f"task-{second['id']}")).to_have_text(
        re.compile("Tag the release")
    )


# --8<-- [start:test]
async def test_moving_an_unknown_task_answers_not_found_and_changes_nothing(agent: Client, tab: Page) -> None:
    before = await tasks(agent)
    result = await agent.call_tool("taskboard_move_task", {"task_id": 999, "to": "done"})
    assert result.is_error
    assert '<tool_error code="NOT_FOUND"' in text_of(result)
    assert "<message>No task has the id 999.</message>" in text_of(result)
    assert await tasks(agent) == before


# --8<-- [end:test]
async def test_a_column_the_board_does_not_have_is_a_validation_error(agent: Client) -> None:
    before = await tasks(agent)
    result = await agent.call_tool("taskboard_add_task", {"title": "Ship", "column": "later"})
    assert result.is_error
    assert "<validation_error" in text_of(result) and "column" in text_of(result)
    assert await tasks(agent) == before


async def test_an_update_retitles_the_board_and_hides_the_done_column(agent: Client, tab: Page) -> None:
    added = await agent.call_tool("taskboard_add_task", {"title": "Archive the branch", "column": "done"})
    assert isinstance(added.structured_content, dict)
    done = int(added.structured_content["id"])
    await expect(tab.get_by_test_id("column-done").get_by_test_id(f"task-{done}")).to_be_visible()

    result = await agent.call_tool("taskboard_update", {"title": "Release 1.0 (this week)", "show_done": False})
    assert "The board now shows: show_done, title." in text_of(result)
    await expect(tab.get_by_test_id("board-title")).to_have_text("Release 1.0 (this week)")
    await expect(tab.get_by_test_id("column-done")).to_have_count(0)

    await agent.call_tool("taskboard_update", {"show_done": True})
    await expect(tab.get_by_test_id(f"task-{done}")).to_be_visible()
    await expect(tab.get_by_test_id("board-title")).to_have_text("Release 1.0 (this week)")


async def test_a_person_moves_a_task_in_the_tab_and_the_agent_reads_where_it_is(agent: Client, tab: Page) -> None:
    added = await agent.call_tool("taskboard_add_task", {"title": "Review the docs"})
    assert isinstance(added.structured_content, dict)
    task = int(added.structured_content["id"])
    await tab.get_by_test_id(f"task-{task}").get_by_test_id("move-on").click()
    await expect(tab.get_by_test_id("column-doing").get_by_test_id(f"task-{task}")).to_be_visible()
    assert {"id": task, "title": "Review the docs", "column": "doing"} in await tasks(agent)
