"""Prompts of an MCP app: `@mcp_app_prompt` on a classmethod of the `@mcp_app` class, served as `<app>_<name>`.

A prompt routes to no view: it is the app's, not one view's, and reads what it needs through the class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from webapp.apps.definition import AppDefinitionError
from webapp.apps.naming import TOOL_NAME, check_claims, snake_case
from webapp.tools.prompts import Completer, Prompt

__all__ = ["PROMPT_MARK", "PromptMark", "app_prompts", "mcp_app_prompt"]

PROMPT_MARK = "__mcp_app_prompt__"
F = TypeVar("F")


@dataclass(frozen=True, slots=True)
class PromptMark:
    description: str
    name: str | None
    arguments: type[BaseModel] | None
    complete: Mapping[str, str]


def mcp_app_prompt(
    *,
    description: str,
    name: str | None = None,
    arguments: type[BaseModel] | None = None,
    complete: Mapping[str, str] | None = None,
) -> Callable[[F], F]:
    """Mark a classmethod of an `@mcp_app` class as the prompt `{app}_{name or snake_case(method)}`.

    The method is `(cls)` or `(cls, arguments: Model)` with `arguments=Model` (the client's strings validated into
    it), and may take a keyword `ctx`; it returns what a `webapp.Prompt`'s function returns (text, content blocks,
    messages). `complete` maps an argument's name to the name of a classmethod `(cls, value, context)` returning
    the values that complete it. Put `@mcp_app_prompt(...)` above `@classmethod`.
    """
    mark = PromptMark(description, name, arguments, dict(complete or {}))

    def decorate(method: F) -> F:
        function = method.__func__ if isinstance(method, classmethod) else method  # pyright: ignore[reportUnknownMemberType]
        setattr(function, PROMPT_MARK, mark)
        return method

    return decorate


def app_prompts(app: str, cls: type) -> list[Prompt]:
    """The prompts `cls` (the `@mcp_app` class of `app`) declares, checked (AppDefinitionError on a problem)."""
    marked: dict[str, tuple[object, PromptMark]] = {}
    for klass in reversed(cls.__mro__[:-1]):  # bases first; a subclass (one server's, with its services) binds them
        for attr, value in vars(klass).items():
            function = value.__func__ if isinstance(value, classmethod | staticmethod) else value
            mark = getattr(function, PROMPT_MARK, None)
            if isinstance(mark, PromptMark):
                marked[attr] = (value, mark)
    prompts: list[Prompt] = []
    for attr, (value, mark) in marked.items():
        where = f"@mcp_app_prompt on {cls.__name__}.{attr}"
        if not isinstance(value, classmethod):
            raise AppDefinitionError(f"{where}: a prompt routes to no view. Fix: make it a @classmethod.")
        name = f"{app}_{mark.name or snake_case(attr)}"
        if not TOOL_NAME.match(name) or not re.fullmatch(r"\S.*", mark.description):
            raise AppDefinitionError(f"{where}: the name {name!r} or the description is not valid. Fix: a name of "
                                     "lower-case letters, digits and _ (name='...'), and a description.")  # fmt: skip
        completers = {argument: _completer(cls, method, where) for argument, method in mark.complete.items()}
        try:
            prompt = Prompt(name, description=mark.description, handler=getattr(cls, attr), arguments=mark.arguments,
                            complete=completers)  # fmt: skip
        except ValueError as error:
            raise AppDefinitionError(f"{where}: {error}") from None
        prompts.append(prompt)
    check_claims((prompt.name, f"the prompt of {cls.__name__}") for prompt in prompts)
    return prompts


def _completer(cls: type, method: str, where: str) -> Completer:
    completer: Completer | None = getattr(cls, method, None)
    if not callable(completer):
        raise AppDefinitionError(f"{where}: complete names {method!r}, which is no classmethod of {cls.__name__}.")
    return completer
