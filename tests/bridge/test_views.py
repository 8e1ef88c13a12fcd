"""The session bridge end to end with auth on: each test calls as its own principal, so views never mix.

A real server subprocess (counter test app), the official MCP client in both protocol modes, headless Chromium.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from mcp import Client
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, run_server
from tests.support.views import COUNTER_APP, FAST, attach_key, connect, not_open_text, structured, texts

PRINCIPALS = [f"p{n}" for n in range(1, 18)]


def token(principal: str) -> str:
    return f"tok-{principal}-4f1d9c2b7a"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    tokens = [arg for p in PRINCIPALS for arg in ("--token", f"{p}={token(p)}")]
    db: Path = tmp_path_factory.mktemp("bridge") / "views.db"
    with run_server(*FAST, "--call-timeout", "1", *tokens, app=COUNTER_APP, db=db) as running:
        yield running


@pytest.fixture(scope="module")
def secrets_seen() -> list[str]:
    """Every view handle and attach key the tests saw; none may appear in the server's output."""
    return []


async def open_counter(client: Client, seen: list[str], **arguments: object) -> dict[str, object]:
    data = structured(await client.call_tool("counter", dict(arguments)))
    seen += [str(data["view"]), attach_key(str(data["url"]))]
    return data


COUNT_CONFIRMATIONS = """() => {
    window.asked = 0;  // the bridge's confirmation requests: an update of its confirm element, or a JavaScript request
    window.socket.on("update", (message) => {
        for (const element of Object.values(message)) {
            if (element?.update_method === "confirm" && element.props?.ask) window.asked += 1;
        }
    });
    window.socket.on("run_javascript", (message) => { if (message.request_id) window.asked += 1; });
}"""

SUGGESTIONS = (
    "<action_suggestions>\n"
    "- counter_increment: Adds to the count.\n"
    "- counter_reset: Resets the count to zero.\n"
    "- counter_explode: Fails on purpose.\n"
    "- counter_hang: Waits until it is cancelled.\n"
    "- counter_count_to: Counts to n, reporting progress.\n"
    "- counter_peek: Returns the count and title without changing the view.\n"
    "- counter_double: Doubles the count.\n"
    "- counter_trace: Records entering and leaving, with a browser round trip in between.\n"
    "- counter_update: Applies new input to the 'counter' view that is already open, without rendering it again.\n"
    "</action_suggestions>"
)


@pytest.mark.parametrize(("mode", "principal"), [("auto", "p1"), ("legacy", "p2")])
async def test_an_opened_view_attaches_in_the_browser_and_its_tools_change_what_it_shows(
    server: RunningServer, page: Page, secrets_seen: list[str], mode: Literal["auto", "legacy"], principal: str
) -> None:
    async with connect(server, token=token(principal), mode=mode) as client:
        opened = await client.call_tool("counter", {"title": "Stock"})
        data = structured(opened)
        view, url = str(data["view"]), str(data["url"])
        secrets_seen += [view, attach_key(url)]
        assert data == {"app": "counter", "view": view, "state": "pending", "url": url, "reused": False}
        assert url.startswith(f"{server.base_url}/counter?key=")
        assert texts(opened)[1:] == [
            "<llm_directives>\n"
            f"- Give the user this URL to open the view: {url}\n"
            f'- Pass _view="{view}" to the counter tools when several counter views are open.\n'
            "</llm_directives>",
            SUGGESTIONS,
        ]

        await page.goto(url)
        await expect(page.get_by_test_id("title")).to_have_text("Stock")
        await expect(page.get_by_test_id("count")).to_have_text("0")

        incremented = await client.call_tool("counter_increment", {"by": 2})
        assert structured(incremented) == {"count": 2}
        assert texts(incremented) == ['{\n  "count": 2\n}']
        await expect(page.get_by_test_id("count")).to_have_text("2")

        updated = await client.call_tool("counter_update", {"title": "Renamed"})
        assert texts(updated) == ["Counter updated: title."] and not updated.is_error
        await expect(page.get_by_test_id("title")).to_have_text("Renamed")

        reset = await client.call_tool("counter_reset", {})
        assert texts(reset) == ["The 'counter_reset' action completed."]
        await expect(page.get_by_test_id("count")).to_have_text("0")

        doubled = await client.call_tool("counter_double", {"_view": view})
        assert structured(doubled) == {"count": 0, "title": "Renamed"}

        again = await client.call_tool("counter", {"title": "Again"})
        assert structured(again) == {"app": "counter", "view": view, "state": "live", "url": url, "reused": True}
        assert "Give the user this URL" not in texts(again)[1]
        await expect(page.get_by_test_id("title")).to_have_text("Again")


async def test_an_action_sent_before_the_tab_attaches_waits_for_it(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p3")) as client:
        data = await open_counter(client, secrets_seen, start=5)
        call = asyncio.create_task(client.call_tool("counter_increment", {}))
        await page.goto(str(data["url"]))
        assert structured(await call) == {"count": 6}
        await expect(page.get_by_test_id("count")).to_have_text("6")


async def test_the_tab_confirms_a_change_and_is_not_asked_after_a_call_that_changed_nothing(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p16")) as client:
        await page.goto(str((await open_counter(client, secrets_seen, start=3))["url"]))
        await expect(page.get_by_test_id("count")).to_have_text("3")
        await page.evaluate(COUNT_CONFIRMATIONS)
        assert structured(await client.call_tool("counter_peek", {})) == {"count": 3, "title": "Counter"}
        assert await page.evaluate("() => window.asked") == 0
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 4}
        assert await page.evaluate("() => window.asked") == 1
        await expect(page.get_by_test_id("count")).to_have_text("4")


async def test_a_failing_action_answers_internal_error_and_the_server_keeps_serving(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p4")) as client:
        await page.goto(str((await open_counter(client, secrets_seen))["url"]))
        failed = await client.call_tool("counter_explode", {})
        assert failed.is_error
        assert texts(failed) == [
            '<tool_error code="INTERNAL_ERROR" severity="error">\n'
            "<message>[counter_explode] exploded on purpose</message>\n"
            "<recovery>This may be a transient error. Retry the same call with identical parameters.</recovery>\n"
            "</tool_error>"
        ]
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 1}
        await expect(page.get_by_test_id("count")).to_have_text("1")


async def test_bad_arguments_answer_a_validation_error_and_change_nothing(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p5")) as client:
        await page.goto(str((await open_counter(client, secrets_seen, start=3))["url"]))
        await expect(page.get_by_test_id("count")).to_have_text("3")
        bad = await client.call_tool("counter_increment", {"by": 0, "color": "red"})
        assert bad.is_error
        text = texts(bad)[0]
        assert text.startswith('<validation_error action="counter_increment">\n<field name="by">')
        assert "Must be >= 1." in text and "Remove or correct unrecognized fields: 'color'." in text
        assert structured(await client.call_tool("counter_double", {})) == {"count": 6, "title": "Counter"}
        await expect(page.get_by_test_id("count")).to_have_text("6")


async def test_a_slow_action_times_out_is_cancelled_and_frees_the_view(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p6")) as client:
        await page.goto(str((await open_counter(client, secrets_seen))["url"]))
        slow = await client.call_tool("counter_hang", {})
        assert texts(slow) == [
            '<tool_error code="VIEW_TIMEOUT" severity="error">\n'
            "<message>The view 'counter' did not answer within 1 seconds; the action may not have run.</message>\n"
            "<recovery>Retry with the same _call_id.</recovery>\n"
            "</tool_error>"
        ]
        await expect(page.get_by_test_id("status")).to_have_text("cancelled")
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 1}


async def test_two_concurrent_actions_on_one_view_never_interleave(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p7")) as client:
        await page.goto(str((await open_counter(client, secrets_seen))["url"]))
        first, second = await asyncio.gather(
            client.call_tool("counter_trace", {}), client.call_tool("counter_trace", {})
        )
        traces = sorted([structured(first)["trace"], structured(second)["trace"]], key=len)
        assert traces == [["enter", "exit"], ["enter", "exit", "enter", "exit"]]


async def test_an_action_reports_progress_through_its_context(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    reported: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total, message))

    async with connect(server, token=token("p8"), mode="legacy") as client:
        await page.goto(str((await open_counter(client, secrets_seen))["url"]))
        done = await client.call_tool("counter_count_to", {"n": 3}, progress_callback=progress)
        assert texts(done) == ["counted to 3"]
        assert reported == [(1, 3, "counted 1"), (2, 3, "counted 2"), (3, 3, "counted 3")]
        await expect(page.get_by_test_id("status")).to_have_text("counted to 3")


async def test_a_second_tab_takes_the_view_over_and_a_late_close_of_the_first_keeps_it_bound(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p9")) as client:
        url = str((await open_counter(client, secrets_seen))["url"])
        await page.goto(url)
        await expect(page.get_by_test_id("count")).to_have_text("0")
        newer = await page.context.new_page()
        await newer.goto(url)
        await expect(page.get_by_text("This view is now shown in another tab.")).to_be_visible()
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 1}
        await expect(newer.get_by_test_id("count")).to_have_text("1")

        await page.close()
        assert texts(await client.call_tool("wait_deleted", {"key": attach_key(url)})) == ["1 deleted"]
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 2}
        await expect(newer.get_by_test_id("count")).to_have_text("2")


async def test_a_reload_keeps_the_binding_and_the_view_state(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p10"), mode="legacy") as client:
        url = str((await open_counter(client, secrets_seen, title="Kept"))["url"])
        await page.goto(url)
        assert structured(await client.call_tool("counter_increment", {"by": 4})) == {"count": 4}
        await page.get_by_test_id("bump").click()  # a person's change, saved by the view
        await expect(page.get_by_test_id("count")).to_have_text("5")

        await page.reload()
        await expect(page.get_by_test_id("count")).to_have_text("5")
        await expect(page.get_by_test_id("title")).to_have_text("Kept")
        assert texts(await client.call_tool("wait_deleted", {"key": attach_key(url)})) == ["1 deleted"]
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 6}
        await expect(page.get_by_test_id("count")).to_have_text("6")


async def test_a_closed_view_answers_view_closed(server: RunningServer, page: Page, secrets_seen: list[str]) -> None:
    async with connect(server, token=token("p11"), mode="legacy") as client:
        data = await open_counter(client, secrets_seen)
        url = str(data["url"])
        await page.goto(url)
        await expect(page.get_by_test_id("count")).to_have_text("0")
        await page.close()
        await client.call_tool("wait_deleted", {"key": attach_key(url)})
        closed_text = [
            '<tool_error code="VIEW_CLOSED" severity="error">\n'
            "<message>The view 'counter' was closed. Call the tool 'counter' to open it again.</message>\n"
            "</tool_error>"
        ]
        assert texts(await client.call_tool("counter_increment", {"_view": data["view"]})) == closed_text
        assert texts(await client.call_tool("counter_increment", {})) == closed_text  # routed by its session
        reopened = structured(await client.call_tool("counter", {}))
        assert reopened["view"] != data["view"] and reopened["reused"] is False
        secrets_seen += [str(reopened["view"]), attach_key(str(reopened["url"]))]


async def test_another_principal_never_reaches_a_view_even_with_its_id(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p12")) as owner, connect(server, token=token("p13")) as other:
        data = await open_counter(owner, secrets_seen)
        await page.goto(str(data["url"]))
        view = str(data["view"])
        unknown = texts(await other.call_tool("counter_increment", {"_view": view}))
        assert unknown == [
            '<tool_error code="VIEW_UNKNOWN" severity="error">\n'
            f"<message>No 'counter' view has the id '{view}'.</message>\n"
            "<recovery>Call 'counter' to open a view.</recovery>\n"
            "</tool_error>"
        ]
        never = texts(await other.call_tool("counter_increment", {"_view": "no-such-view"}))
        assert never == [unknown[0].replace(view, "no-such-view")]
        assert texts(await other.call_tool("counter_increment", {})) == [not_open_text("counter")]
        assert texts(await other.call_tool("counter", {"_view": view}))[0] == unknown[0]
        await expect(page.get_by_test_id("count")).to_have_text("0")


async def test_an_unknown_attach_key_shows_a_notice_page(server: RunningServer, page: Page) -> None:
    await page.goto(f"{server.base_url}/counter?key=not-a-key")
    await expect(page.get_by_text("This view link is unknown or has expired.", exact=False)).to_be_visible()
    assert page.url.endswith("/counter?key=not-a-key")


async def test_tools_list_shows_every_app_tool_with_the_reserved_view_property(server: RunningServer) -> None:
    async with connect(server, token=token("p14")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    counter_tools = [name for name in tools if name.startswith("counter")]
    assert counter_tools == [
        "counter",
        "counter_update",
        "counter_increment",
        "counter_reset",
        "counter_explode",
        "counter_hang",
        "counter_count_to",
        "counter_peek",
        "counter_double",
        "counter_trace",
    ]
    assert "notes_update" not in tools and "notes_append" in tools
    for name in [*counter_tools, "notes", "notes_append"]:
        schema = tools[name].input_schema
        assert schema["properties"]["_view"] == {
            "type": "string",
            "maxLength": 64,
            "description": "Id of the open view to act on, as returned by the opening tool. "
            "Needed only when several views are open.",
        }
        assert schema["additionalProperties"] is False and "_view" not in schema.get("required", [])
    assert tools["counter_update"].input_schema == tools["counter"].input_schema
    assert tools["counter_update"].description == (
        "Applies new input to the 'counter' view that is already open, without rendering it again. "
        "Call 'counter' first when it is not open."
    )
    assert tools["counter"].description == "Shows a counter with a title."
    opened_schema = tools["counter"].output_schema
    assert opened_schema is not None and set(opened_schema["properties"]) == {"app", "view", "state", "url", "reused"}
    double_schema = tools["counter_double"].output_schema
    assert double_schema is not None and set(double_schema["properties"]) == {"count", "title"}


async def test_opening_an_app_without_observer_again_rebuilds_its_view_with_the_new_input(
    server: RunningServer, page: Page, secrets_seen: list[str]
) -> None:
    async with connect(server, token=token("p15")) as client:
        first = structured(await client.call_tool("notes", {"text": "first"}))
        secrets_seen += [str(first["view"]), attach_key(str(first["url"]))]
        await page.goto(str(first["url"]))
        assert texts(await client.call_tool("notes_append", {"line": "more"})) == ["first | more"]
        await expect(page.get_by_test_id("note")).to_have_text("first | more")
        again = structured(await client.call_tool("notes", {"text": "second"}))
        assert (again["view"], again["reused"], again["state"]) == (first["view"], True, "live")
        await expect(page.get_by_test_id("note")).to_have_text("second")
        await page.reload()
        await expect(page.get_by_test_id("note")).to_have_text("second")


def test_handles_and_attach_keys_never_appear_in_the_server_output(
    server: RunningServer, secrets_seen: list[str]
) -> None:
    assert len(secrets_seen) >= 20
    output = server.output
    leaked = [secret[:6] + "…" for secret in secrets_seen if secret in output]
    assert leaked == []
