"""Every MCP feature an app author declares, named as the official conformance suite calls them.

Serve it with the checkout on `PYTHONPATH`: `python -m webapp serve --app docs.examples.everything:build`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import mcp_types
from mcp.server import CacheHint
from mcp.server.mcpserver import Elicit, ListRoots, Sample
from pydantic import BaseModel, ConfigDict, Field, JsonValue
from typing_extensions import TypeAliasType

from webapp import CallContext, Tool, WebApp

__all__ = ["build"]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1×1 PNG, base64."""
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A silent WAV, base64."""
IDS = ("123", "456", "789")
"""The ids `test://template/{id}/data` completes."""


class PromptArguments(BaseModel):
    arg1: str = Field(description="First test argument")
    arg2: str = Field(description="Second test argument")


class ResourceArgument(BaseModel):
    resourceUri: str = Field(description="URI of the resource to embed")


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"$anchor": "addressDef"})
    street: str = ""
    city: str = ""


address = TypeAliasType("address", Address)
"""`Address` under the definition name `address` (a field of that name needs another name and an alias)."""
DIALECT = "https://json-schema.org/draft/2020-12/schema"
CONTACT_KEYWORDS: dict[str, Any] = {
    "$schema": DIALECT,
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}


class Contact(BaseModel):
    """The conformance suite's JSON Schema 2020-12 input (its tool `json_schema_2020_12_tool`)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=CONTACT_KEYWORDS)
    name: str = ""
    postal_address: address = Field(default_factory=Address, alias="address")
    contact_method: Literal["phone", "email"] | None = Field(None, alias="contactMethod")
    phone: str | None = None
    email: str | None = None


class Region(BaseModel):
    region: str = Field(description="The region, mirrored into the Mcp-Param-Region header",
                        json_schema_extra={"x-mcp-header": "Region"})  # fmt: skip


def _region(params: Region) -> str:
    return f"Region: {params.region}"


def _contact(contact: Contact) -> str:
    return f"Contact {contact.name or '(no name)'} by {contact.contact_method or 'any means'}"


def _text(text: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=text)


def _image() -> mcp_types.ImageContent:
    return mcp_types.ImageContent(type="image", data=PNG, mime_type="image/png")


def _contents(*blocks: mcp_types.ContentBlock) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(blocks))


def _starting(values: Sequence[str]) -> Callable[[str, Mapping[str, str]], list[str]]:
    """A completer: the values that start with what was typed."""

    def complete(value: str, context: Mapping[str, str]) -> list[str]:
        return [item for item in values if item.startswith(value)]

    return complete


def _returning(result: mcp_types.CallToolResult) -> Callable[[], mcp_types.CallToolResult]:
    return lambda: result


# --8<-- [start:add_tools]
def add_tools(webapp: WebApp) -> None:
    """Tools of every content type, one that logs, one that reports progress, one that fails."""
    audio = mcp_types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")
    embedded = mcp_types.EmbeddedResource(
        type="resource",
        resource=mcp_types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        ),
    )
    mixed = mcp_types.EmbeddedResource(
        type="resource",
        resource=mcp_types.TextResourceContents(
            uri="test://mixed-content-resource", mime_type="application/json", text='{"test": "data", "value": 123}'
        ),
    )
    simple = _contents(_text("This is a simple text response for testing."))
    contents: list[tuple[str, str, mcp_types.CallToolResult]] = [
        ("test_simple_text", "Returns simple text content", simple),
        ("test_image_content", "Returns image content", _contents(_image())),
        ("test_audio_content", "Returns audio content", _contents(audio)),
        ("test_embedded_resource", "Returns an embedded resource", _contents(embedded)),
        ("test_multiple_content_types", "Returns text, an image and a resource",
         _contents(_text("Multiple content types test:"), _image(), mixed)),
    ]  # fmt: skip
    for name, description, result in contents:
        webapp.add_tool(Tool(name, description=description, handler=_returning(result)))

    async def logging_tool(*, ctx: CallContext) -> str:
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.log("info", text)
            await asyncio.sleep(0.05)
        return "Tool with logging executed successfully"

    async def progress_tool(*, ctx: CallContext) -> str:
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100, f"Completed step {done} of 100")
            await asyncio.sleep(0.05)
        return "Progress tool finished"

    def failing_tool() -> str:
        raise RuntimeError("This tool intentionally returns an error for testing")

    webapp.add_tool(Tool("test_tool_with_logging", description="Logs three messages", handler=logging_tool))
    webapp.add_tool(Tool("test_logging_tool", description="Logs three messages", handler=logging_tool))
    webapp.add_tool(Tool("test_tool_with_progress", description="Reports progress 0, 50, 100", handler=progress_tool))
    webapp.add_tool(Tool("test_error_handling", description="Always fails", handler=failing_tool))
    webapp.add_tool(
        Tool("json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features", handler=_contact,
             input=Contact)
    )  # fmt: skip
    webapp.add_tool(
        Tool("test_x_mcp_header", description="Echoes its region, which clients also send as a header",
             handler=_region, input=Region)
    )  # fmt: skip


# --8<-- [end:add_tools]


# --8<-- [start:add_resources]
def add_resources(webapp: WebApp) -> None:
    """A text and a binary resource, a template with completion, one to subscribe to; tools that change the lists."""

    @webapp.resource(
        "test://static-text",
        name="static-text",
        description="A static text resource",
        mime_type="text/plain",
        cache=CacheHint(ttl_ms=60_000, scope="public"),
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @webapp.resource("test://static-binary", name="static-binary", description="A PNG image", mime_type="image/png")
    def static_binary() -> bytes:
        return base64.b64decode(PNG)

    @webapp.resource(
        "test://template/{id}/data",
        name="template",
        description="Data for an id",
        mime_type="application/json",
        complete={"id": _starting(IDS)},
    )
    def template(id: str) -> dict[str, object]:
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @webapp.resource("test://watched-resource", name="watched", description="A resource to subscribe to")
    def watched() -> str:
        return "Watched resource content"

    async def touch_watched() -> str:
        await webapp.notify_resource_updated("test://watched-resource")
        return "test://watched-resource changed"

    webapp.add_tool(
        Tool("test_touch_watched_resource", description="Changes the watched resource", handler=touch_watched)
    )

    async def tools_changed() -> str:
        await webapp.notify_tools_changed()
        return "The list of tools changed"

    async def prompts_changed() -> str:
        await webapp.notify_prompts_changed()
        return "The list of prompts changed"

    webapp.add_tool(Tool("test_trigger_tool_change", description="Says the tool list changed", handler=tools_changed))
    webapp.add_tool(
        Tool("test_trigger_prompt_change", description="Says the prompt list changed", handler=prompts_changed)
    )


# --8<-- [end:add_resources]


# --8<-- [start:add_prompts]
def add_prompts(webapp: WebApp) -> None:
    """A prompt without arguments, with arguments (completed), with an embedded resource, with an image."""

    @webapp.prompt(description="A simple prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @webapp.prompt(
        description="A prompt with required arguments",
        arguments=PromptArguments,
        complete={"arg1": _starting(("paris", "park", "party"))},
    )
    def test_prompt_with_arguments(arguments: PromptArguments) -> str:
        return f"Prompt with arguments: arg1='{arguments.arg1}', arg2='{arguments.arg2}'"

    @webapp.prompt(description="A prompt with an embedded resource", arguments=ResourceArgument)
    def test_prompt_with_embedded_resource(arguments: ResourceArgument) -> list[object]:
        contents = mcp_types.TextResourceContents(
            uri=arguments.resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            mcp_types.EmbeddedResource(type="resource", resource=contents),
            "Please process the embedded resource above.",
        ]

    @webapp.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[object]:
        return [_image(), "Please analyze the image above."]


# --8<-- [end:add_prompts]


class Prompt(BaseModel):
    prompt: str = Field(description="The prompt to send to the client's model")


class Message(BaseModel):
    message: str = Field(description="The message to show the user")


class UserInfo(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


class Defaults(BaseModel):
    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field(default="active", description="User status")
    verified: bool = Field(default=True, description="Verification status")


def _titled(*titles: str) -> list[JsonValue]:
    """Titled options: `value1` is the first title, and so on."""
    return [{"const": f"value{number}", "title": title} for number, title in enumerate(titles, 1)]


class Enums(BaseModel):
    """Every enum shape of an elicitation (SEP-1330): single and multiple choice, with titles or without."""

    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: str = Field(json_schema_extra={"oneOf": _titled("First Option", "Second Option", "Third Option")})
    legacyEnum: str = Field(
        json_schema_extra={"enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]}
    )
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: list[str] = Field(
        json_schema_extra={"items": {"anyOf": _titled("First Choice", "Second Choice", "Third Choice")}}
    )


class Name(BaseModel):
    name: str


class Color(BaseModel):
    color: str


class Confirm(BaseModel):
    ok: bool


class PromptContext(BaseModel):
    context: str


def _said(answer: Any) -> str:
    """An elicitation's outcome as the suite prints it: the action and the content."""
    content = answer.data.model_dump_json() if answer.action == "accept" else "{}"
    return f"action={answer.action}, content={content}"


def _sampled(result: mcp_types.CreateMessageResult) -> str:
    return result.content.text if isinstance(result.content, mcp_types.TextContent) else "(no text)"


def _ask(message: str) -> mcp_types.SamplingMessage:
    return mcp_types.SamplingMessage(role="user", content=_text(message))


def add_asking(webapp: WebApp) -> None:
    """Tools and a prompt that ask the client: elicitation (form, defaults, every enum shape), sampling, roots;
    in 2025 sessions the server asks during the call, in 2026 the call answers "input required" and runs again."""

    async def sampling(params: Prompt, *, ctx: CallContext) -> str:
        return f"LLM response: {_sampled(await ctx.sample(params.prompt, max_tokens=100))}"

    async def elicitation(params: Message, *, ctx: CallContext) -> str:
        return f"User response: {_said(await ctx.elicit(params.message, UserInfo))}"

    async def defaults(*, ctx: CallContext) -> str:
        answer = await ctx.elicit("Please provide user information", Defaults)
        return f"Elicitation completed: {_said(answer)}"

    async def enums(*, ctx: CallContext) -> str:
        answer = await ctx.elicit("Please select values using different enum schema types", Enums)
        return f"Elicitation completed: {_said(answer)}"

    def missing_capability(*, ctx: CallContext) -> str:
        ctx.require(sampling=True)
        return "Client declared sampling capability; proceeding."

    async def name(*, ctx: CallContext) -> str:
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"Hello, {answer.data.name}!" if answer.action == "accept" else f"No name ({answer.action})."

    async def capital(*, ctx: CallContext) -> str:
        answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"Model said: {_sampled(answer)}"

    async def roots(*, ctx: CallContext) -> str:
        return f"Client exposed {len((await ctx.list_roots(key='client_roots')).roots)} root(s)."

    async def confirm(*, ctx: CallContext) -> str:
        answer = await ctx.elicit("Please confirm", Confirm, key="confirm")
        return f"state-ok: confirmation received ({answer.action})"

    async def several(*, ctx: CallContext) -> str:
        await ctx.ask(
            user_name=Elicit("What is your name?", Name),
            greeting=Sample([_ask("Generate a greeting")], max_tokens=50),
            client_roots=ListRoots(),
        )
        return "All inputs received."

    async def rounds(*, ctx: CallContext) -> str:
        step1 = await ctx.elicit("Step 1: What is your name?", Name, key="step1")
        step2 = await ctx.elicit("Step 2: What is your favorite color?", Color, key="step2")
        if step1.action != "accept" or step2.action != "accept":
            return "Not told."
        return f"{step1.data.name} likes {step2.data.color}."

    async def visit(*, ctx: CallContext) -> str:
        answer = await ctx.elicit_url("Please sign in to the example service", "https://example.com/sign-in")
        return f"URL elicitation: {answer.action}"

    async def supported(*, ctx: CallContext) -> str:
        asks: dict[str, Any] = {}
        if ctx.supports(sampling=True):
            asks["sample"] = Sample([_ask("Say hello")], max_tokens=50)
        if ctx.supports(elicitation=True):
            asks["ask"] = Elicit("What is your name?", Name)
        await ctx.ask(**asks)
        return f"Asked for {', '.join(asks) or 'nothing'}."

    tools: list[tuple[str, str, Any, type[BaseModel] | None]] = [
        ("test_sampling", "Asks the client's model the prompt", sampling, Prompt),
        ("test_elicitation", "Asks the user for a username and an email", elicitation, Message),
        ("test_elicitation_sep1034_defaults", "Asks with a default for every field type", defaults, None),
        ("test_elicitation_sep1330_enums", "Asks with every enum shape", enums, None),
        ("test_missing_capability", "Needs the client's sampling capability", missing_capability, None),
        ("test_streaming_elicitation", "Asks the user's name", name, None),
        ("test_input_required_result_elicitation", "Asks the user's name", name, None),
        ("test_input_required_result_sampling", "Asks the client's model a question", capital, None),
        ("test_input_required_result_list_roots", "Asks the client's roots", roots, None),
        ("test_input_required_result_request_state", "Asks for a confirmation", confirm, None),
        ("test_input_required_result_tampered_state", "Asks for a confirmation", confirm, None),
        ("test_input_required_result_multiple_inputs", "Asks three things at once", several, None),
        ("test_input_required_result_multi_round", "Asks two things, one after the other", rounds, None),
        ("test_input_required_result_capabilities", "Asks only what the client supports", supported, None),
        ("test_url_elicitation", "Sends the person to a page to sign in", visit, None),
    ]
    for tool, description, handler, model in tools:
        webapp.add_tool(Tool(tool, description=description, handler=handler, input=model))

    @webapp.prompt(description="Asks for context first")
    async def test_input_required_result_prompt(*, ctx: CallContext) -> str:
        answer = await ctx.elicit("What context should the prompt use?", PromptContext, key="user_context")
        return f"Use the following context: {answer.data.context if answer.action == 'accept' else 'none'}"


def build(webapp: WebApp) -> None:
    """The app factory."""
    add_tools(webapp)
    add_resources(webapp)
    add_prompts(webapp)
    add_asking(webapp)
