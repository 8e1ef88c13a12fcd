"""Plain tools: `Tool`, `ToolRegistry`, actions and their results, argument validation, input schemas; prompts and
resources an author declares beside them."""

from webapp.tools.action import Action, Handler, handler_name, make_action, wrap_result
from webapp.tools.prompts import Completer, Prompt, PromptRegistry
from webapp.tools.registry import RESULT_VIEW_URI, Tool, ToolLike, ToolRegistry, app_only, links_result_view
from webapp.tools.resources import Resource, ResourceNotFound, ResourceRegistry
from webapp.tools.schema import (
    SELECT_DESCRIPTION,
    SELECT_PROPERTY,
    action_union,
    model_object_schema,
    with_extra_properties,
)
from webapp.tools.validation import (
    DEFAULT_LIMITS,
    MISSING,
    ArgumentLimits,
    ArgumentValidator,
    InvalidArguments,
    limit_problems,
    reserved_problems,
    sent_text,
)

__all__ = [
    "DEFAULT_LIMITS",
    "MISSING",
    "RESULT_VIEW_URI",
    "SELECT_DESCRIPTION",
    "SELECT_PROPERTY",
    "Action",
    "ArgumentLimits",
    "ArgumentValidator",
    "Completer",
    "Handler",
    "InvalidArguments",
    "Prompt",
    "PromptRegistry",
    "Resource",
    "ResourceNotFound",
    "ResourceRegistry",
    "Tool",
    "ToolLike",
    "ToolRegistry",
    "action_union",
    "app_only",
    "handler_name",
    "limit_problems",
    "links_result_view",
    "make_action",
    "model_object_schema",
    "reserved_problems",
    "sent_text",
    "with_extra_properties",
    "wrap_result",
]
