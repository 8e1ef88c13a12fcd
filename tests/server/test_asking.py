"""Tools and prompts that ask their client (elicitation, sampling, roots), through the official client in both
protocol eras: in a 2025 session the server asks during the call; in 2026 the call answers "input required" and
runs again with the answers (the everything app, docs/examples/everything.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import mcp_types
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import BaseModel

from tests.support.e2e import RunningServer, mcp_client, run_server, stdio_parameters
from webapp import CallContext, Tool, WebApp
from webapp.core.context import Caller
from webapp.core.settings import Settings

ERAS: list[Literal["auto", "legacy"]] = ["auto", "legacy"]  # 2026-07-28 (stateless), 2025-11-25 (sessions)
Action = Literal["accept", "decline", "cancel"]


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(app="docs.examples.everything:build", db=tmp_path_factory.mktemp("asking") / "a.db") as server:
        yield server


class Name(BaseModel):
    name: str


class Person:
    """A person at the client: answers each form with `content` (by the form's first field), records the questions."""

    def __init__(self, action: Action = "accept", **content: Any) -> None:
        self.action: Action = action
        self.content = content
        self.asked: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> Any:
        self.asked.append(params.message)
        if self.action != "accept":
            return mcp_types.ElicitResult(action=self.action)
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        fields = list(params.requested_schema["properties"])
        return mcp_types.ElicitResult(action="accept", content={name: self.content[name] for name in fields})


def _text(result: mcp_types.CallToolResult | mcp_types.TextResourceContents | Any) -> str:
    block = result.content[0] if isinstance(result, mcp_types.CallToolResult) else result
    assert isinstance(block, mcp_types.TextContent | mcp_types.TextResourceContents), result
    return block.text


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("action", "said"),
    [("accept", "Hello, Alice!"), ("decline", "No name (decline)."), ("cancel", "No name (cancel).")],
)
async def test_a_tool_asks_the_person_and_hears_accept_decline_or_cancel(
    everything: RunningServer, mode: Literal["auto", "legacy"], action: Action, said: str
) -> None:
    person = Person(action, name="Alice")
    async with mcp_client(everything, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("test_input_required_result_elicitation", {})
    assert (result.is_error, _text(result)) == (False, said)
    assert person.asked == ["What is your name?"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_asks_twice_and_a_prompt_asks_before_it_renders(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    person = Person(name="Alice", color="green", context="a test")
    async with mcp_client(everything, mode=mode, elicitation_callback=person) as client:
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
        prompt = await client.get_prompt("test_input_required_result_prompt")
    assert _text(rounds) == "Alice likes green."
    message = prompt.messages[0].content
    assert isinstance(message, mcp_types.TextContent) and message.text == "Use the following context: a test"
    assert person.asked == [
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
        "What context should the prompt use?",
    ]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_sends_the_person_to_a_url(everything: RunningServer, mode: Literal["auto", "legacy"]) -> None:
    sent: list[tuple[str, str | None]] = []

    async def person(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> Any:
        assert isinstance(params, mcp_types.ElicitRequestURLParams)
        sent.append((params.url, params.elicitation_id))
        return mcp_types.ElicitResult(action="accept")

    async with mcp_client(everything, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("test_url_elicitation", {})
    assert _text(result) == "URL elicitation: accept"
    [(url, elicitation_id)] = sent
    assert url == "https://example.com/sign-in"
    assert (elicitation_id is None) == (mode == "auto")  # required on the 2025 wire, gone from the 2026 one


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_samples_the_clients_model_and_lists_its_roots(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    async def sample(context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams) -> Any:
        content = params.messages[0].content
        assert isinstance(content, mcp_types.TextContent) and params.max_tokens == 100
        return mcp_types.CreateMessageResult(
            role="assistant", model="m", content=mcp_types.TextContent(type="text", text=f"{content.text} Paris.")
        )

    async def roots(context: ClientRequestContext) -> Any:
        return mcp_types.ListRootsResult(
            roots=[mcp_types.Root.model_validate({"uri": "file:///test/root", "name": "Test Root"})]
        )

    async with mcp_client(everything, mode=mode, sampling_callback=sample, list_roots_callback=roots) as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital?"})
        listed = await client.call_tool("test_input_required_result_list_roots", {})
    assert _text(sampled) == "LLM response: Capital? Paris."
    assert _text(listed) == "Client exposed 1 root(s)."


@pytest.mark.parametrize("mode", ERAS)
async def test_a_call_that_needs_an_undeclared_capability_is_refused_with_32021(
    everything: RunningServer, mode: Literal["auto", "legacy"]
) -> None:
    async with mcp_client(everything, mode=mode) as client:
        with pytest.raises(MCPError) as required:
            await client.call_tool("test_missing_capability", {})
        with pytest.raises(MCPError) as asked:
            await client.call_tool("test_input_required_result_elicitation", {})
    assert required.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert required.value.data == {"requiredCapabilities": {"sampling": {}}}
    assert asked.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert asked.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_a_2026_round_carries_sealed_state_and_a_tampered_one_is_refused(everything: RunningServer) -> None:
    answer: mcp_types.InputResponses = {"step1": mcp_types.ElicitResult(action="accept", content={"name": "Alice"})}
    async with mcp_client(everything, mode="auto", elicitation_callback=Person()) as client:
        tool = "test_input_required_result_multi_round"
        first = await client.session.call_tool(tool, {}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult) and first.request_state
        assert list(first.input_requests or {}) == ["step1"]
        assert "Alice" not in first.request_state  # sealed, not merely signed
        second = await client.session.call_tool(
            tool, {}, input_responses=answer, request_state=first.request_state, allow_input_required=True
        )
        assert isinstance(second, mcp_types.InputRequiredResult) and second.request_state
        assert list(second.input_requests or {}) == ["step2"]
        with pytest.raises(MCPError) as tampered:
            await client.session.call_tool(
                tool, {}, request_state=second.request_state + "-TAMPERED", allow_input_required=True
            )
        with pytest.raises(MCPError) as elsewhere:  # the state binds the call it was made for
            await client.session.call_tool(
                "test_input_required_result_elicitation", {}, request_state=second.request_state
            )
        color: mcp_types.InputResponses = {"step2": mcp_types.ElicitResult(action="accept", content={"color": "red"})}
        done = await client.session.call_tool(tool, {}, input_responses=color, request_state=second.request_state)
    assert _text(done) == "Alice likes red."
    assert tampered.value.code == INVALID_PARAMS and elsewhere.value.code == INVALID_PARAMS


async def test_a_call_made_outside_mcp_that_asks_answers_missing_capability(tmp_path: Path) -> None:
    async def asks(*, ctx: CallContext) -> str:
        return str(await ctx.elicit("What is your name?", Name))

    webapp = WebApp(Settings(db=tmp_path / "a.db"))
    webapp.add_tool(Tool("asks", description="Asks a name", handler=asks))
    result = await webapp.call_tool("asks", {}, Caller(principal=None, session_id=None, protocol="viewer"))
    assert result.is_error and "MISSING_CAPABILITY" in _text(result)
    assert webapp.calllog.records()[-1].tool == "asks"  # recorded like any other outcome


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_on_stdio_asks_the_person_too(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    person = Person(name="Ada")
    parameters = stdio_parameters(db=tmp_path / "stdio.db", app="docs.examples.everything:build")
    async with Client(parameters, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("test_input_required_result_elicitation", {})
    assert _text(result) == "Hello, Ada!" and person.asked == ["What is your name?"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_resource_may_ask_before_it_is_read(tmp_path: Path, mode: Literal["auto", "legacy"]) -> None:
    webapp = WebApp(Settings(db=tmp_path / "r.db"))

    @webapp.resource("test://greeting", description="Greets the person by name", mime_type="text/plain")
    async def greeting(*, ctx: CallContext) -> str:  # pyright: ignore[reportUnusedFunction]
        answer = await ctx.elicit("What is your name?", Name, key="name")
        return f"Hello, {answer.data.name}." if answer.action == "accept" else "Hello."

    person = Person(name="Grace")
    async with Client(webapp.mcp, mode=mode, elicitation_callback=person) as client:
        read = await client.read_resource("test://greeting")
    assert _text(read.contents[0]) == "Hello, Grace." and person.asked == ["What is your name?"]
