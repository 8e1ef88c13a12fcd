"""Module specifiers in JavaScript source: a small tokenizer, enough to tell the specifiers of `import`/`export … from`
and `import("…")` from look-alikes in strings, comments, regular expressions and template literals, and to make the
relative ones absolute (a module inlined as a `data:` URL has no base to resolve them against).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urljoin

__all__ = ["rewrite_specifiers"]

# A run is everything up to the next space, slash, quote, backtick, parenthesis or brace.
_TOKEN = re.compile(r"""\s+|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*'"""
                    r"""|[^\s/'"`(){}]+|[\s\S]""")  # fmt: skip
_REGEXP = re.compile(r"/(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/")
_TEMPLATE = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*(?:`|\$\{|\Z)")
_WORD = re.compile(r"(?:^|[^\w$.])([\w$]+)\Z")  # a run's last identifier, unless it is a property (`a.from`)
_KEYWORDS = "return typeof instanceof case do else in of new delete void throw yield await"
_BEFORE_REGEXP = frozenset(_KEYWORDS.split(" "))  # after these words a slash starts a regular expression, else divides
_CONTROL = {"if", "while", "for", "with"}  # after `if (…)` a slash starts a regular expression


def _specifiers(code: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, static) of each specifier's text: a string after `from` or `import`, or first in `import(`."""
    pos, last, before, kind, control, depth = 0, "", "", "(", False, 0  # kind "(": a regular expression may follow
    parens: list[bool] = []  # per open parenthesis: whether it follows if/while/for/with
    holes: list[int] = []  # the brace depth at each open `${` of a template literal
    while pos < len(code):
        char = code[pos]
        if char == "`" or (char == "}" and holes and holes[-1] == depth):
            if char == "}":
                holes.pop()
            rest = _TEMPLATE.match(code, pos + 1)
            assert rest is not None  # it may match nothing but the end
            pos, opened = rest.end(), rest[0].endswith("${")
            holes += [depth] if opened else []
            last, before, kind = "`", last, "(" if opened else "v"
            continue
        regexp = char == "/" and code[pos + 1 : pos + 2] not in "/*" and _regexp_may_follow(kind, last, control)
        if regexp and (found := _REGEXP.match(code, pos)):
            pos, last, before, kind = found.end(), "/re/", last, "v"
            continue
        token = _TOKEN.match(code, pos)
        assert token is not None  # `[\s\S]` matches any character
        text, pos = token[0], token.end()
        if text[0].isspace() or text[:2] in ("//", "/*"):
            continue
        if text[0] in "'\"" and len(text) > 1:
            if kind == "w" and _word(last) in ("from", "import"):
                yield token.start() + 1, pos - 1, True
            elif last == "(" and _word(before) == "import":
                yield token.start() + 1, pos - 1, False
            kind = "v"
        elif text in ("(", "{", "}", "/"):
            if text == "(":
                parens.append(kind == "w" and _word(last) in _CONTROL)
            depth += {"{": 1, "}": -1}.get(text, 0)
            kind = "("
        elif text == ")":
            control, kind = parens.pop() if parens else False, ")"
        else:
            kind = "w"
        last, before = text, last


def _regexp_may_follow(kind: str, last: str, control: bool) -> bool:
    if kind == "w":
        return _word(last) in _BEFORE_REGEXP if last[-1].isalnum() or last[-1] in "_$" else last[-1] != "]"
    return kind == "(" or (kind == ")" and control)


def _word(run: str) -> str | None:
    found = _WORD.search(run)
    return found[1] if found else None


def rewrite_specifiers(code: str, base: str) -> tuple[str, list[str]]:
    """`code` with its relative and root-relative specifiers made absolute against `base`, and its static imports."""
    parts: list[str] = []
    static: list[str] = []
    at = 0
    for start, end, is_static in _specifiers(code):
        spec = code[start:end]
        if spec.startswith(("./", "../")) or (spec.startswith("/") and not spec.startswith("//")):
            spec = urljoin(base, spec)
            parts += [code[at:start], spec]
            at = end
        static += [spec] if is_static else []
    return "".join([*parts, code[at:]]), static
