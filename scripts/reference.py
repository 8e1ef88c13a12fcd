"""`make docs`: the generated parts of the reference — the command line options from the settings model, the error
codes from their registry and the wire format's examples from its test vectors — as Markdown the pages include.

Usage: `python scripts/reference.py DIR` writes `cli-options.md`, `error-codes.md` and `wire-examples.md` into DIR.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic_core import PydanticUndefined

from webapp.core.settings import ENV_PREFIX, Settings
from webapp.responses.codes import ERROR_CODES

__all__ = ["cli_options", "error_codes", "wire_examples", "write_reference"]

VECTORS = Path(__file__).parents[1] / "tests" / "data" / "wire-vectors.json"
_SOURCES = {
    "tools": "Calling a tool",
    "bridge": "Reaching a view",
    "server": "A stopping server",
    "tunnel": "A tunnelled view",
    "viewer": "The call viewer",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _prose(text: str) -> str:
    """A table cell of help text: its brackets are text (a URL form's `[/db][?password=…]` is no Markdown link)."""
    return _cell(text).replace("[", "\\[").replace("]", "\\]")


def _default(name: str) -> str:
    info = Settings.model_fields[name]
    value = info.get_default(call_default_factory=True) if info.default is PydanticUndefined else info.default
    if value is None or value == []:
        return "—"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def _flag(name: str) -> str:
    info = Settings.model_fields[name]
    flag = "--" + name.replace("_", "-")
    if info.annotation is bool:
        return f"`{flag}` / `--no-{flag[2:]}`"
    if get_origin(info.annotation) is list:
        return f"`{flag} VALUE` (repeatable)"
    return f"`{flag} {name.upper()}`"


def cli_options() -> str:
    """One table row per option of `webapp serve`: flag, environment variable, default, meaning."""
    rows = ["| Option | Environment variable | Default | Meaning |", "|---|---|---|---|"]
    for name, info in Settings.model_fields.items():
        meaning = info.description or ""
        if get_origin(info.annotation) is Literal:
            meaning += " One of: " + ", ".join(f"`{choice}`" for choice in get_args(info.annotation)) + "."
        env = f"`{ENV_PREFIX}{name.upper()}`"
        rows.append(f"| {_flag(name)} | {env} | {_default(name)} | {_prose(meaning)} |")
    return "\n".join(rows) + "\n"


def _template(text: str | None) -> str:
    return f"`{_cell(text)}`" if text else "—"


def error_codes() -> str:
    """One table per part of the framework: code, when, message and recovery (their `{fields}` filled per call)."""
    parts: list[str] = []
    for source, title in _SOURCES.items():
        entries = [entry for entry in ERROR_CODES.values() if entry.source == source]
        rows = [f"### {title}", "", "| Code | When | Message | Recovery |", "|---|---|---|---|"]
        for entry in entries:
            code = f"`{entry.code}`" + (f" ({entry.case})" if entry.case else "")
            rows.append(f"| {code} | {_cell(entry.when)} | {_template(entry.message)} | {_template(entry.recovery)} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def _fenced(text: str, lang: str = "text") -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text}\n{fence}"


def _one_key_a_line(value: dict[str, Any]) -> str:
    lines = [f"  {json.dumps(key)}: {json.dumps(item, ensure_ascii=False)}" for key, item in value.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def wire_examples(path: Path = VECTORS) -> str:
    """The first test vector of each input kind: what it shows, the call, and the exact blocks of its result."""
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    seen: set[str] = set()
    parts: list[str] = []
    for case in cases:
        kind = case["input"]["kind"]
        if kind in seen:
            continue
        seen.add(kind)
        expect = case["expect"]
        blocks = expect.get("content") or []
        shown = "\n\n".join(_fenced(block) for block in blocks) if blocks else "(no blocks)"
        parts.append(
            f"### `{kind}`: {case['id']}\n\n{_cell(case['about'])}\n\nInput:\n\n"
            f"{_fenced(_one_key_a_line(case['input']), 'json')}\n\n"
            f"Result (`isError`: {json.dumps(expect.get('isError'))}), block by block:\n\n{shown}\n"
        )
    return "\n".join(parts)


def write_reference(folder: Path) -> list[Path]:
    """Write the three generated parts into `folder` (created when missing); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in (
        ("cli-options.md", cli_options()),
        ("error-codes.md", error_codes()),
        ("wire-examples.md", wire_examples()),
    ):
        target = folder / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/reference.py DIR")
    for path in write_reference(Path(sys.argv[1])):
        print(f"wrote {path}")
