"""Every MCP feature an app author declares, named as the official conformance suite calls them.

Serve it with the checkout on `PYTHONPATH`: `python -m webapp serve --app docs.examples.everything:build`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Mapping, Sequence

import mcp_types
from mcp.server import CacheHint
from pydantic import BaseModel, Field

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


# --8<-- [end:add_tools]


# --8<-- [start:add_resources]
def add_resources(webapp: WebApp) -> None:
    """A text and a binary resource, a template with completion, one to subscribe to."""

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


def build(webapp: WebApp) -> None:
    """The app factory."""
    add_tools(webapp)
    add_resources(webapp)
    add_prompts(webapp)
