"""Prompts (`prompts/list`, `prompts/get`): a name, a description, arguments from a pydantic model, and a function
that writes the messages; completion of their arguments (`completion/complete`)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import mcp_types
from pydantic import BaseModel, ValidationError

from webapp.tools.action import Handler, declares

__all__ = ["Completer", "Prompt", "PromptError", "PromptRegistry", "complete_with", "messages_of"]

Completer = Callable[[str, Mapping[str, str]], "Sequence[str] | Awaitable[Sequence[str]]"]
"""`completer(value, context)`: the values that complete an argument's `value` typed so far (`context`: the
arguments already given); sync or async. At most 100 are sent."""

_MAX_COMPLETIONS = 100  # what `completion/complete` carries at most


class PromptError(ValueError):
    """A `prompts/get` the prompt cannot answer (unknown name, invalid arguments): an invalid-params error."""


class Prompt:
    """A prompt: `handler(arguments, *, ctx=None)` (sync or async; `arguments` only with `arguments=`, a model the
    sent strings are validated into) returns text, a content block, a `PromptMessage`, a list of those, or a whole
    `GetPromptResult`. `complete` maps argument names to their `Completer`s."""

    def __init__(
        self,
        name: str,
        *,
        description: str,
        handler: Handler,
        arguments: type[BaseModel] | None = None,
        title: str | None = None,
        icons: Sequence[mcp_types.Icon] | None = None,
        complete: Mapping[str, Completer] | None = None,
    ) -> None:
        if not name or not description.strip():
            raise ValueError(f"A prompt needs a name and a description; got {name!r}, {description!r}.")
        fields = arguments.model_fields if arguments is not None else {}
        unknown = set(complete or {}) - set(fields)
        if unknown:
            raise ValueError(f"Prompt {name!r} completes {sorted(unknown)}, which are not among its arguments.")
        self.name = name
        self.description = description
        self.handler = handler
        self.arguments = arguments
        self.title = title
        self.icons = list(icons) if icons else None
        self.completers = dict(complete or {})
        self._wants_ctx = declares(handler, "ctx")

    def to_mcp(self) -> mcp_types.Prompt:
        fields = self.arguments.model_fields if self.arguments is not None else {}
        listed = [
            mcp_types.PromptArgument(name=name, description=field.description, required=field.is_required())
            for name, field in fields.items()
        ]
        return mcp_types.Prompt(
            name=self.name, title=self.title, description=self.description, arguments=listed or None, icons=self.icons
        )

    async def get(self, arguments: Mapping[str, str] | None, ctx: Any) -> mcp_types.GetPromptResult:
        kwargs: dict[str, Any] = {"ctx": ctx} if self._wants_ctx else {}
        if self.arguments is None:
            value = self.handler(**kwargs)
        else:
            try:
                params = self.arguments.model_validate(dict(arguments or {}))
            except ValidationError as error:
                problems = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors()
                )
                raise PromptError(f"Prompt {self.name!r}: invalid arguments ({problems}).") from None
            value = self.handler(params, **kwargs)
        value = await value if inspect.isawaitable(value) else value
        if isinstance(value, mcp_types.GetPromptResult):
            return value
        return mcp_types.GetPromptResult(description=self.description, messages=messages_of(value))


def messages_of(value: Any) -> list[mcp_types.PromptMessage]:
    """A prompt function's value as messages: text and content blocks become user messages."""
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    messages: list[mcp_types.PromptMessage] = []
    for item in items:
        if isinstance(item, mcp_types.PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(mcp_types.PromptMessage(role="user", content=mcp_types.TextContent(type="text", text=item)))
        else:
            messages.append(mcp_types.PromptMessage(role="user", content=item))
    return messages


async def complete_with(completer: Completer | None, value: str, context: Mapping[str, str]) -> mcp_types.Completion:
    """The `Completion` `completer` gives for `value` (none without a completer)."""
    if completer is None:
        return mcp_types.Completion(values=[])
    found = completer(value, context)
    values = [str(item) for item in (await found if inspect.isawaitable(found) else found)]
    return mcp_types.Completion(
        values=values[:_MAX_COMPLETIONS], total=len(values), has_more=len(values) > _MAX_COMPLETIONS
    )


class PromptRegistry:
    """The prompts of one server, by unique name."""

    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}

    def add(self, prompt: Prompt) -> Prompt:
        if prompt.name in self._prompts:
            raise ValueError(f"A prompt named {prompt.name!r} is already registered; prompt names must be unique.")
        self._prompts[prompt.name] = prompt
        return prompt

    def get(self, name: str) -> Prompt | None:
        return self._prompts.get(name)

    def prompts(self) -> list[Prompt]:
        return list(self._prompts.values())

    async def render(self, name: str, arguments: Mapping[str, str] | None, ctx: Any) -> mcp_types.GetPromptResult:
        prompt = self._prompts.get(name)
        if prompt is None:
            raise PromptError(f"No prompt is named {name!r}.")
        return await prompt.get(arguments, ctx)
