"""One action of a tool: its handler, input validation, calling convention and the implicit result wrapping."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from pydantic import BaseModel

from webapp.responses.builder import ErrorBuilder, ResponseBuilder, success
from webapp.responses.presenter import Presenter
from webapp.tools.schema import model_object_schema
from webapp.tools.validation import ArgumentValidator

__all__ = ["Action", "Handler", "declares", "handler_name", "make_action", "wrap_result"]

Handler = Callable[..., Any]
"""`handler(params, *, ctx=None, reserved={})`, sync or async; `params` only when the action has an input model."""


def declares(handler: Handler, name: str) -> bool:
    try:
        parameter = inspect.signature(handler).parameters.get(name)
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return parameter is not None and parameter.kind in kinds


def handler_name(handler: Handler) -> str:
    module = getattr(handler, "__module__", None) or "?"
    return f"{module}.{getattr(handler, '__qualname__', repr(handler))}"


@dataclass(frozen=True)
class Action:
    """One operation of a tool (a plain tool has exactly one, named after the tool)."""

    name: str
    handler: Handler
    input: type[BaseModel] | None
    returns: Presenter | None
    description: str
    destructive: bool
    label: str  # `tool/action`, or `tool` for a plain tool: used in envelopes
    schema: dict[str, Any] = field(repr=False)
    arguments: ArgumentValidator = field(repr=False)
    wants_ctx: bool = field(repr=False)
    wants_reserved: bool = field(repr=False)

    async def run(self, params: BaseModel | None, ctx: Any, reserved: dict[str, Any]) -> Any:
        kwargs: dict[str, Any] = {}
        if self.wants_ctx:
            kwargs["ctx"] = ctx
        if self.wants_reserved:
            kwargs["reserved"] = reserved
        value = self.handler(params, **kwargs) if self.input is not None else self.handler(**kwargs)
        return await value if inspect.isawaitable(value) else value


def wrap_result(
    value: Any, presenter: Presenter | None, ctx: Any, select: list[str] | None
) -> mcp_types.CallToolResult:
    """§9: a result passes, a builder is built, a Presenter presents, None is `OK`, anything else is `success`."""
    if isinstance(value, mcp_types.CallToolResult):
        return value
    if isinstance(value, ResponseBuilder | ErrorBuilder):
        return value.build()
    if presenter is not None:
        return presenter.make(value, ctx, select).build()
    return success(value)


def make_action(
    label: str,
    name: str,
    handler: Handler,
    input_model: type[BaseModel] | None,
    returns: Presenter | None,
    description: str,
    destructive: bool,
) -> Action:
    """An action with its object schema and validator; `label` is `tool/action` (or `tool` for a plain tool)."""
    schema = model_object_schema(input_model, f"Tool {label!r}")
    return Action(
        name=name,
        handler=handler,
        input=input_model,
        returns=returns,
        description=description,
        destructive=destructive,
        label=label,
        schema=schema,
        arguments=ArgumentValidator(input_model, schema),
        wants_ctx=declares(handler, "ctx"),
        wants_reserved=declares(handler, "reserved"),
    )
