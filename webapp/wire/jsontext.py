"""JSON as the wire writes it: 2-space indent, key order kept, raw non-ASCII, numbers as JavaScript prints them."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import orjson
from pydantic import BaseModel

__all__ = ["js_number", "js_scalar", "plain", "to_json"]

_INT64 = 2**63
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
# In orjson's compact output every float has a `.` or an exponent and follows `:`, `,` or `[` (unless it is the
# whole document); a match inside a string only costs the exact (slow) path, never a wrong number.
_FLOAT_TOKEN = re.compile(rb"[:,\[]-?\d+[.eE]")


def js_number(value: float | int) -> str:
    """Format a number like JavaScript's `Number.prototype.toString` (NaN and ±Infinity, which JSON lacks, → null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0.0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    power = point - 1
    exp_text = f"e{'+' if power >= 0 else '-'}{abs(power)}"
    head = digits[0] if count == 1 else digits[0] + "." + digits[1:]
    return sign + head + exp_text


def js_scalar(value: Any) -> str:
    """A scalar as the wire writes it inside markup: strings verbatim, everything else as JSON text."""
    if isinstance(value, str):
        return value
    return to_json(value)


def plain(value: Any) -> Any:
    """Dump models and dataclasses to JSON-compatible Python values (models in JSON mode, key order kept)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _fragments(value: Any) -> Any:
    """Replace the numbers orjson would print differently from JavaScript with pre-rendered fragments."""
    if isinstance(value, float):
        return orjson.Fragment(js_number(value))
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _fragments(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_fragments(item) for item in value]
    if isinstance(value, BaseModel) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return _fragments(plain(value))
    return value


def to_json(value: Any, *, float_free: bool = False) -> str:
    """Pretty JSON: 2-space indent, `": "` after keys, `[]`/`{}` for empty containers, JavaScript numbers.

    `float_free=True` is the caller's guarantee (e.g. from a schema) that `value` holds no float: the scan for
    one is skipped. The output is the same either way.
    """
    if not isinstance(value, float):
        # Fast path: values without floats or out-of-range integers print the same in orjson and JavaScript.
        try:
            if float_free:
                return orjson.dumps(value, option=_OPTIONS).decode()
            compact = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:  # models, integers beyond 64 bits, ...: the exact path decides
            pass
        else:
            if _FLOAT_TOKEN.search(compact) is None:
                return orjson.dumps(value, option=_OPTIONS).decode()
    return orjson.dumps(_fragments(value), option=_OPTIONS).decode()
