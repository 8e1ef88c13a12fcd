"""Presenter: one entity's response — limit, schema, `_select`, redaction, embeds, UI, rules and suggestions."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from types import GenericAlias
from typing import Any

import mcp_types
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from webapp.responses import ui
from webapp.responses.builder import ResponseBuilder, Suggestion, side_door
from webapp.responses.fields import Censor, Redaction, float_free, parse_path, redact, select_keys
from webapp.responses.ui import UiBlock
from webapp.wire import plain, to_json

__all__ = [
    "Presenter",
    "PresenterSealedError",
    "PresenterValidationError",
    "RulesFn",
    "SuggestFn",
    "TruncateFn",
    "UiFn",
]

UiFn = Callable[[Any, Any], Iterable[UiBlock | None]]
"""`fn(item_or_items, ctx)` → UI blocks (`None` entries are dropped)."""
RulesFn = Callable[[Any, Any], Iterable[str | None]]
"""`fn(item_or_first_item, ctx)` → rule texts (`None` entries are dropped)."""
SuggestFn = Callable[[Any, Any], Iterable[Suggestion | None]]
"""`fn(item_or_first_item, ctx)` → suggestions (`None` entries are dropped)."""
TruncateFn = Callable[[int], UiBlock | None]
"""`fn(omitted)` → the UI block that says how many items the agent limit cut off."""


class PresenterValidationError(Exception):
    """The data given to `make()` does not fit the Presenter's schema (a bug in the handler, not the agent)."""

    def __init__(self, presenter: str, problems: Sequence[tuple[str, str]]) -> None:
        self.presenter = presenter
        self.problems = tuple(problems)
        lines = "\n".join(f"  • '{path}': {message}" for path, message in self.problems)
        super().__init__(f"[{presenter} Presenter] Validation failed:\n{lines}")


class PresenterSealedError(RuntimeError):
    """A configuration call on a Presenter that has already made a response."""


def _problems(errors: Iterable[ErrorDetails], skip: int) -> list[tuple[str, str]]:
    return [(".".join(str(part) for part in error["loc"][skip:]) or "(root)", error["msg"]) for error in errors]


def _attribute(item: Any, key: str) -> Any:
    if isinstance(item, dict):
        return item.get(key)
    return getattr(item, key, None)


class Presenter:
    """Defined once per entity, used by every tool that returns it; configuration is sealed by the first `make()`.

    Callbacks receive the validated data as JSON-ready values (dicts, lists, strings, numbers), before `_select`
    and redaction: UI, rules and suggestions see the whole, real object.
    """

    def __init__(self, name: str, schema: type[BaseModel] | None = None) -> None:
        self.name = name
        self.schema = schema
        self._sealed = False
        self._max: int | None = None
        self._on_truncate: TruncateFn | None = None
        self._static_rules: list[str] = []
        self._rules_fns: list[RulesFn] = []
        self._ui_fns: list[UiFn] = []
        self._collection_ui_fns: list[UiFn] = []
        self._suggest_fns: list[SuggestFn] = []
        self._redactions: list[Redaction] = []
        self._embeds: list[tuple[str, Presenter]] = []
        self._auto_rules = True

    def __repr__(self) -> str:
        schema = self.schema.__name__ if self.schema is not None else None
        return f"Presenter({self.name!r}, schema={schema})"

    # -- configuration -------------------------------------------------------------------------------------------

    def _configure(self) -> None:
        if self._sealed:
            raise PresenterSealedError(
                f'Presenter "{self.name}" is sealed after first .make() call. '
                "Configuration must be done before .make() is called."
            )

    def agent_limit(self, max_items: int, on_truncate: TruncateFn) -> Presenter:
        """Keep only the first `max_items` of a list; `on_truncate(omitted)` gives the first UI block."""
        self._configure()
        if max_items < 0:
            raise ValueError(f"Presenter {self.name!r}: the agent limit must be >= 0; got {max_items!r}.")
        self._max = max_items
        self._on_truncate = on_truncate
        return self

    def limit(self, max_items: int) -> Presenter:
        """`agent_limit` with the standard truncation summary."""

        def summary(omitted: int) -> UiBlock:
            return ui.summary(
                f"⚠️ Dataset truncated. {max_items} shown, {omitted} hidden. Use filters to narrow results."
            )

        return self.agent_limit(max_items, summary)

    def rules(self, rules: Sequence[str] | RulesFn) -> Presenter:
        """Domain rules: a static list, or `fn(item_or_first_item, ctx)` (not called for an empty list)."""
        self._configure()
        if callable(rules):
            self._rules_fns.append(rules)
        else:
            self._static_rules.extend(rules)
        return self

    def ui(self, fn: UiFn) -> Presenter:
        """UI blocks for a single item: `fn(item, ctx)`."""
        self._configure()
        self._ui_fns.append(fn)
        return self

    def collection_ui(self, fn: UiFn) -> Presenter:
        """UI blocks for a list (also an empty one): `fn(items, ctx)`."""
        self._configure()
        self._collection_ui_fns.append(fn)
        return self

    def suggest(self, fn: SuggestFn) -> Presenter:
        """Next actions: `fn(item_or_first_item, ctx)` (not called for an empty list)."""
        self._configure()
        self._suggest_fns.append(fn)
        return self

    def redact(self, paths: Iterable[str], censor: Censor = "[REDACTED]") -> Presenter:
        """Mask `paths` (`a.b`, `*.x`, `items[*].x`, `items[0].x`) in the data block only."""
        self._configure()
        if isinstance(paths, str):
            paths = [paths]
        self._redactions.extend(Redaction(path, parse_path(path), censor) for path in paths)
        return self

    def embed(self, key: str, child: Presenter) -> Presenter:
        """Present `item[key]` with `child` and append the child's blocks (except its data) as raw blocks."""
        self._configure()
        if child is self:
            raise ValueError(f"Presenter {self.name!r} cannot embed itself under {key!r}.")
        self._embeds.append((key, child))
        return self

    def auto_rules(self, enabled: bool = True) -> Presenter:
        """Whether each described top-level schema field adds the rule `{field}: {description}` (default on)."""
        self._configure()
        self._auto_rules = enabled
        return self

    def schema_keys(self) -> list[str]:
        """The top-level keys of the schema (the `_select` enum); empty without a schema."""
        return list(self.schema.model_fields) if self.schema is not None else []

    # -- making a response -----------------------------------------------------------------------------------------

    @cached_property
    def _many(self) -> TypeAdapter[list[Any]]:
        list_type: Any = GenericAlias(list, (self.schema if self.schema is not None else Any,))
        return TypeAdapter(list_type)

    @cached_property
    def _float_free(self) -> bool:
        """Whether the schema guarantees a float-free data block, so serializing it needs no scan for floats."""
        return self.schema is not None and float_free(self.schema)

    @cached_property
    def _field_rules(self) -> list[str]:
        if self.schema is None:
            return []
        fields = self.schema.model_fields.items()
        return [f"{name}: {field.description}" for name, field in fields if field.description]

    def _validate_one(self, data: Any) -> Any:
        if self.schema is None:
            return plain(data)
        try:
            model = self.schema.model_validate(data, from_attributes=True)
        except ValidationError as exc:
            raise PresenterValidationError(self.name, _problems(exc.errors(), 0)) from None
        return model.model_dump(mode="json", exclude_unset=True)

    def _validate_many(self, items: list[Any]) -> list[Any]:
        if self.schema is None:
            return [plain(item) for item in items]
        try:
            models = self._many.validate_python(items, from_attributes=True)
        except ValidationError as exc:
            errors = exc.errors()
            first = errors[0]["loc"][0]  # items are validated one by one: report the first failing item
            raise PresenterValidationError(
                self.name, _problems((e for e in errors if e["loc"][0] == first), 1)
            ) from None
        return self._many.dump_python(models, mode="json", exclude_unset=True)

    def make(self, data: Any, ctx: Any = None, select: Sequence[str] | None = None) -> ResponseBuilder:
        """Build the response for `data` (an item or a list); extend the builder or call `.build()`."""
        self._sealed = True
        truncated: UiBlock | None = None
        if isinstance(data, list | tuple):
            items: list[Any] = list(data)  # pyright: ignore[reportUnknownArgumentType]
            if self._max is not None and len(items) > self._max and self._on_truncate is not None:
                omitted = len(items) - self._max
                items = items[: self._max]
                truncated = self._on_truncate(omitted)
            return self._respond(self._validate_many(items), items, True, ctx, select, truncated)
        return self._respond(self._validate_one(data), [data], False, ctx, select, truncated)

    def _respond(
        self,
        value: Any,
        originals: list[Any],
        is_list: bool,
        ctx: Any,
        select: Sequence[str] | None,
        truncated: UiBlock | None,
    ) -> ResponseBuilder:
        keys = [] if select is None or isinstance(select, str) else list(select)  # a bare string is no key list
        shown = select_keys(value, keys, is_list=is_list) if keys else value
        shown = redact(shown, self._redactions, is_list=is_list)
        if self._float_free and all(isinstance(r.censor, str) for r in self._redactions):
            shown = to_json(shown, float_free=True)  # the data block's text; a callable censor may add floats
        builder = ResponseBuilder(shown)
        builder.ui_blocks([truncated])
        for text in self._embedded(originals, ctx):
            builder.raw_block(text)
        for fn in self._collection_ui_fns if is_list else self._ui_fns:
            builder.ui_blocks(fn(value, ctx))
        empty = is_list and not value
        first = value[0] if is_list and value else value
        if not (empty and self._rules_fns):
            if self._auto_rules:
                builder.rules(self._field_rules)
            builder.rules(self._static_rules)
            if not empty:
                for rules_fn in self._rules_fns:
                    builder.rules(rules_fn(first, ctx))
        if not empty:
            for suggest_fn in self._suggest_fns:
                builder.suggest(suggest_fn(first, ctx))
        return builder

    def _embedded(self, originals: list[Any], ctx: Any) -> list[str]:
        """The children's blocks: items outer, embeds inner; later items add no UI and no repeated block."""
        blocks: list[str] = []
        seen: set[str] = set()
        if not self._embeds:
            return blocks
        for index, item in enumerate(originals):
            for key, child in self._embeds:
                value = _attribute(item, key)
                if value is None:
                    continue
                result = child.make(value, ctx).build()
                texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)][1:]
                if index > 0:
                    door = side_door(result)
                    texts = texts[len(door.ui_blocks) if door is not None else 0 :]
                for text in texts:
                    if text not in seen:
                        seen.add(text)
                        blocks.append(text)
        return blocks
