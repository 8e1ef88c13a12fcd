"""What an author declares beside tools, through the official client in both protocol eras: prompts, resources and
templates, completion, logging to the client, subscriptions (the everything app, docs/examples/everything.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal

import mcp_types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated
from mcp_types.jsonrpc import INVALID_PARAMS

from tests.support.e2e import RunningServer, mcp_client, run_server

ERAS: list[Literal["auto", "legacy"]] = ["auto", "legacy"]  # 2026-07-28 (stateless), 2025-11-25 (sessions)
LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"]


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(app="docs.examples.everything:build", db=tmp_path_factory.mktemp("everything") / "e.db") as server:
        yield server


def _text(block: Any) -> str:
    assert isinstance(block, mcp_types.TextContent | mcp_types.TextResourceContents), block
    return block.text


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_are_listed_with_their_arguments_and_rendered_from_them(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    async with mcp_client(everything, mode=mode) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        with_arguments = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        embedded = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://x"})
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "a"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("no_such_prompt")
    assert all(prompt.description for prompt in prompts.values()), prompts
    arguments = prompts["test_prompt_with_arguments"].arguments or []
    assert [(a.name, a.description, a.required) for a in arguments] == [
        ("arg1", "First test argument", True),
        ("arg2", "Second test argument", True),
    ]
    assert prompts["test_simple_prompt"].arguments is None
    assert _text(with_arguments.messages[0].content) == "Prompt with arguments: arg1='a', arg2='b'"
    assert with_arguments.messages[0].role == "user"
    resource = embedded.messages[0].content
    assert isinstance(resource, mcp_types.EmbeddedResource) and resource.resource.uri == "test://x"
    assert refused.value.code == INVALID_PARAMS and "arg2" in refused.value.message
    assert unknown.value.code == INVALID_PARAMS and "no_such_prompt" in unknown.value.message


@pytest.mark.parametrize("mode", ERAS)
async def test_resources_and_templates_are_listed_and_read_as_text_bytes_or_json(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    async with mcp_client(everything, mode=mode) as client:
        listed = [resource.uri for resource in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        text = await client.read_resource("test://static-text")
        binary = (await client.read_resource("test://static-binary")).contents[0]
        data = await client.read_resource("test://template/42/data")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("test://nonexistent")
    assert listed == ["test://static-text", "test://static-binary", "test://watched-resource"]
    assert templates == ["test://template/{id}/data"]
    assert _text(text.contents[0]) == "This is the content of the static text resource."
    assert isinstance(binary, mcp_types.BlobResourceContents) and binary.mime_type == "image/png" and binary.blob
    assert _text(data.contents[0]) == '{"id": "42", "templateTest": true, "data": "Data for ID: 42"}'
    assert data.contents[0].mime_type == "application/json"
    assert (missing.value.code, missing.value.data) == (INVALID_PARAMS, {"uri": "test://nonexistent"})
    if mode == "auto":  # the 2026 caching hints: as declared, else the default
        assert (text.ttl_ms, text.cache_scope) == (60_000, "public")
        assert (data.ttl_ms, data.cache_scope) == (0, "private")


@pytest.mark.parametrize("mode", ERAS)
async def test_completion_offers_what_the_prompt_or_template_completes(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    prompt = mcp_types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    template = mcp_types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data")
    async with mcp_client(everything, mode=mode) as client:
        words = await client.complete(prompt, {"name": "arg1", "value": "par"})
        ids = await client.complete(template, {"name": "id", "value": "4"})
        nothing = await client.complete(prompt, {"name": "arg2", "value": "x"})
    assert words.completion.values == ["paris", "park", "party"] and words.completion.total == 3
    assert ids.completion.values == ["456"]
    assert nothing.completion.values == []


async def _logged(server: RunningServer, mode: Literal["auto", "legacy"], **client: Any) -> list[tuple[str, Any]]:
    messages: list[tuple[str, Any]] = []

    async def collect(params: mcp_types.LoggingMessageNotificationParams) -> None:
        messages.append((params.level, params.data))

    level = client.pop("set_level", None)
    async with mcp_client(server, mode=mode, logging_callback=collect, **client) as session:
        if level is not None:
            with pytest.warns(MCPDeprecationWarning):  # logging/setLevel is gone in 2026; a 2025 session still has it
                await session.set_logging_level(level)  # pyright: ignore[reportDeprecated]
        result = await session.call_tool("test_tool_with_logging", {})
    assert not result.is_error, result
    return messages


async def test_a_session_hears_the_log_messages_of_its_level_and_above(everything: RunningServer) -> None:
    assert await _logged(everything, "legacy", set_level="debug") == [("info", text) for text in LOGGED]
    assert await _logged(everything, "legacy") == [("info", text) for text in LOGGED]  # info until it sets one
    assert await _logged(everything, "legacy", set_level="warning") == []


async def test_a_2026_request_hears_log_messages_only_when_it_asks_for_a_level(everything: RunningServer) -> None:
    assert await _logged(everything, "auto", log_level="info") == [("info", text) for text in LOGGED]
    assert await _logged(everything, "auto", log_level="error") == []
    assert await _logged(everything, "auto") == []


async def test_a_subscribed_session_is_told_when_the_resource_changes(everything: RunningServer) -> None:
    updated: list[str] = []
    told = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            told.set()

    async with mcp_client(everything, mode="legacy", message_handler=on_message) as client:
        with pytest.warns(MCPDeprecationWarning):  # resources/subscribe is gone in 2026; a 2025 session still has it
            await client.subscribe_resource("test://watched-resource")  # pyright: ignore[reportDeprecated]
            with pytest.raises(MCPError) as unknown:
                await client.subscribe_resource("test://nonexistent")  # pyright: ignore[reportDeprecated]
        await client.call_tool("test_touch_watched_resource", {})
        await asyncio.wait_for(told.wait(), 5)
        with pytest.warns(MCPDeprecationWarning):
            await client.unsubscribe_resource("test://watched-resource")  # pyright: ignore[reportDeprecated]
        await client.call_tool("test_touch_watched_resource", {})
        await client.list_prompts()  # a notification, had one been sent, would be in before the answer
    assert updated == ["test://watched-resource"]
    assert (unknown.value.code, unknown.value.data) == (INVALID_PARAMS, {"uri": "test://nonexistent"})


async def test_a_2026_listener_hears_the_changes_it_asked_for_and_no_other(everything: RunningServer) -> None:
    async with (
        mcp_client(everything) as client,
        client.listen(
            prompts_list_changed=True, resource_subscriptions=["test://watched-resource", "test://nonexistent"]
        ) as subscription,
    ):
        await client.call_tool("test_trigger_tool_change", {})  # not asked for: not heard
        await client.call_tool("test_touch_watched_resource", {})
        await client.call_tool("test_trigger_prompt_change", {})
        heard = [await asyncio.wait_for(anext(subscription), 5) for _ in range(2)]
    assert subscription.honored.resource_subscriptions == ["test://watched-resource"]  # only what exists
    assert subscription.honored.tools_list_changed is None
    assert set(heard) == {ResourceUpdated("test://watched-resource"), PromptsListChanged()}  # (a change: ≤ 1/s)
