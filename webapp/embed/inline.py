"""One self-contained document from a view page rendered for the tunnelled mode: every asset on the virtual origin
arrives inline or as a `data:` URL (modules through the import map), each made once per URL and kept.
"""

from __future__ import annotations

import asyncio
import base64
import html as markup
import importlib
import json
import pkgutil
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin

from nicegui import __version__ as nicegui_version
from nicegui import dependencies, elements

from webapp.embed.specifiers import rewrite_specifiers

__all__ = ["VIRTUAL_ORIGIN", "Fetch", "PageInliner"]

VIRTUAL_ORIGIN = "https://webapp.tunnel.invalid"
"""The origin a tunnelled page is rendered for (`X-Forwarded-Prefix`): it never resolves, every byte is inlined."""
Fetch = Callable[[str], Awaitable[tuple[bytes, str]]]
"""GET a path on the origin (with its query): the body and its content type; raises unless the status is 200."""

T = TypeVar("T")
_ROOT = VIRTUAL_ORIGIN + "/"
_COMPONENTS = f"{_ROOT}_nicegui/{nicegui_version}/components/"
_ATTRS = r"""((?:[^>"']|"[^"]*"|'[^']*')*)"""
_ELEMENT = re.compile(rf"<!--.*?-->|<(script|style)\b{_ATTRS}>(.*?)</\1\s*>|<link\b{_ATTRS}>", re.S | re.I)
_ATTR = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?""")
_CLOSING = re.compile(r"</(script|style)", re.I)
_SHEET_PATH = re.compile(r'"(/[^"\s<>]+\.css)"')  # in webapp.server.stylesheet's script that writes the link
_HINTS = {"modulepreload", "preload", "prefetch", "icon"}  # links that only warm a cache or name a tab's icon
_IMPORT = re.compile(r"""@import\s+(?:url\(\s*(["']?)([^"')]*)\1\s*\)|(["'])([^"']*)\3)\s*([^;]*);""")
_LAYER = re.compile(r"layer(?:\(\s*([^)]*?)\s*\))?(?![\w-])\s*")
_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^"')\s]*))\s*\)""")
_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
_FAMILY = re.compile(r"""font-family\s*:\s*["']?([^"';}]+?)["']?\s*[;}]""")
_WEIGHT = re.compile(r"font-weight\s*:\s*(\d+)\s*;")
_RANGE = re.compile(r"unicode-range\s*:\s*([^;}]*)")
_CODE_POINTS = re.compile(r"U\+([0-9A-Fa-f?]+)(?:-([0-9A-Fa-f]+))?")


@dataclass(frozen=True, slots=True)
class _Module:
    data: str  # the module, its relative specifiers made absolute, as a data: URL
    imports: tuple[str, ...]  # its static specifiers (absolute URLs or bare names)


class PageInliner:
    """Inlines view pages rendered with `X-Forwarded-Prefix: VIRTUAL_ORIGIN`, keeping each inlined asset by URL.

    Classic scripts become inline text, or a `data:` source when `defer`/`async` (inline, they would run before the
    modules they follow); stylesheets, CSS `@import`s (as `@layer`/`@media` blocks) and `url()`s are inlined, without
    the font faces whose `unicode-range` misses Latin-1 or whose Material icon font is not in `icon_fonts`, and with
    one face per font. The import map gets a `data:` URL for every module that the page's modules and `components`
    (NiceGUI's by key: it imports them at run time) import statically, their relative specifiers made absolute.

    Left on the virtual origin, so they fail to load: ESM libraries none of those import (the library of an element
    first touched after the page was inlined), chunks imported only dynamically (ECharts GL), assets a module finds
    from `import.meta.url`, and images or links in the page's elements.
    """

    def __init__(
        self,
        fetch: Fetch,
        *,
        components: Callable[[], Mapping[str, Path]] | None = None,
        icon_fonts: Collection[str] = ("Material Icons",),
    ) -> None:
        self._fetch = fetch
        self._components = components or _registered_components
        self._icon_fonts = frozenset(icon_fonts)
        self._done: dict[str, Any] = {}  # "kind URL" -> the inlined asset
        self._pending: dict[str, asyncio.Future[Any]] = {}

    async def inline(self, html: str) -> str:
        """`html` as one document that loads nothing from the virtual origin (but for what the class names)."""
        found = list(_ELEMENT.finditer(html))
        components = [(_COMPONENTS + key, path) for key, path in self._components().items()]
        await asyncio.gather(*(self._module(url, path) for url, path in components))
        imports: dict[str, str] = {}
        roots = [url for url, _ in components]
        for match in (match for match in found if (match[1] or "").lower() == "script"):
            attrs = _attrs(match[2])
            if attrs.get("type") == "importmap":
                imports = json.loads(match[3]).get("imports", {})
            elif attrs.get("type") == "module":
                src = attrs.get("src")
                roots += (
                    (await self._module(urljoin(_ROOT, src))).imports if src else rewrite_specifiers(match[3], _ROOT)[1]
                )
        imports |= await self._graph(roots, imports)

        async def replace(match: re.Match[str]) -> str:
            if match[1] is None:
                return await self._link(match) if match[4] is not None else match[0]
            if match[1].lower() == "style":
                return f"{_tag('style', _attrs(match[2]))}{_closed(await self._css(match[3], _ROOT))}</style>"
            return await self._script(match[0], _attrs(match[2]), match[3], imports)

        return await _sub(found, html, replace)

    async def _script(self, original: str, attrs: dict[str, str | None], body: str, imports: dict[str, str]) -> str:
        kind, src = attrs.get("type"), attrs.get("src")
        if kind == "importmap":
            return f"{_tag('script', attrs)}{_closed(json.dumps({**json.loads(body), 'imports': imports}))}</script>"
        if src is not None and _virtual(url := urljoin(_ROOT, src)):
            if kind != "module" and "defer" not in attrs and "async" not in attrs:
                del attrs["src"]
                return f"{_tag('script', attrs)}{_closed((await self._body(url))[0].decode('utf-8'))}</script>"
            attrs["src"] = (
                (await self._module(url)).data if kind == "module" else await self._data(url, "text/javascript")
            )
            return f"{_tag('script', attrs)}</script>"
        if src is None and kind == "module":
            return f"{_tag('script', attrs)}{rewrite_specifiers(body, _ROOT)[0]}</script>"
        if src is None and "document.write(" in body and (path := _SHEET_PATH.search(body)):
            # The pages' stylesheet is linked by a script that takes the origin from the import map's `vue`: a data:
            # URL by now, so the sheet comes inline in the script's place.
            return f"<style data-webapp-styles>{_closed(await self._sheet(VIRTUAL_ORIGIN + path[1]))}</style>"
        return original

    async def _link(self, match: re.Match[str]) -> str:
        attrs = _attrs(match[4])
        rel, href = set((attrs.get("rel") or "").lower().split()), attrs.get("href")
        if href is None or not _virtual(url := urljoin(_ROOT, href)):
            return match[0]
        if "stylesheet" in rel:
            kept = {name: value for name, value in attrs.items() if name not in ("rel", "href", "type")}
            return f"{_tag('style', kept)}{_closed(await self._sheet(url))}</style>"
        if rel & _HINTS:
            return ""
        attrs["href"] = await self._data(url)
        return _tag("link", attrs)

    async def _graph(self, roots: list[str], imports: dict[str, str]) -> dict[str, str]:
        """Import-map entries (specifier -> data: URL) of every module on the virtual origin that `roots` reach."""
        entries: dict[str, str] = {}
        seen: set[str] = set()
        while roots:
            batch = [spec for spec in dict.fromkeys(roots) if spec not in seen]
            seen.update(batch)
            targets = [(spec, url) for spec in batch if _virtual(url := _resolve(spec, imports))]
            modules = await asyncio.gather(*(self._module(url) for _, url in targets))
            roots = []
            for (spec, _), module in zip(targets, modules, strict=True):
                entries[spec] = module.data
                roots += module.imports
        return entries

    async def _css(self, css: str, base: str) -> str:
        css = _one_face_per_font(_FACE.sub(lambda face: face[0] if self._keeps(face[0]) else "", css))

        async def imported(rule: re.Match[str]) -> str:
            url = urljoin(base, rule[2] if rule[2] is not None else rule[4])
            if not _virtual(url):
                return rule[0]
            sheet, layer = await self._sheet(url), _LAYER.match(rule[5])
            media = rule[5][layer.end() if layer else 0 :].strip()
            sheet = f"@media {media} {{\n{sheet}\n}}" if media else sheet
            return f"@layer{' ' + layer[1] if layer[1] else ''} {{\n{sheet}\n}}" if layer else sheet

        async def located(found: re.Match[str]) -> str:
            url = urljoin(base, next(group for group in found.groups() if group is not None))
            return f'url("{await self._data(url)}")' if _virtual(url) else found[0]

        css = await _sub(list(_IMPORT.finditer(css)), css, imported)
        return await _sub(list(_URL.finditer(css)), css, located)

    def _keeps(self, face: str) -> bool:
        family, ranges = _FAMILY.search(face), _RANGE.search(face)
        if family and family[1].startswith("Material ") and family[1] not in self._icon_fonts:
            return False
        return ranges is None or _covers_latin1(ranges[1])

    async def _module(self, url: str, file: Path | None = None) -> _Module:
        async def make() -> _Module:
            body = file.read_bytes() if file is not None else (await self._fetch(_path(url)))[0]
            code, imports = rewrite_specifiers(body.decode("utf-8"), url)
            return _Module(_data_url("text/javascript", code.encode("utf-8")), tuple(imports))

        return await self._once(f"module {url}", make)

    async def _sheet(self, url: str) -> str:
        async def make() -> str:
            return await self._css((await self._fetch(_path(url)))[0].decode("utf-8"), url)

        return await self._once(f"sheet {url}", make)

    async def _body(self, url: str) -> tuple[bytes, str]:
        return await self._once(f"body {url}", lambda: self._fetch(_path(url)))

    async def _data(self, url: str, mime: str | None = None) -> str:
        body, content_type = await self._body(url)
        return _data_url(mime or content_type.split(";")[0].strip() or "application/octet-stream", body)

    async def _once(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        """`make()`'s result, made once per key however many ask at once; a failure is not kept."""
        if key in self._done:
            return self._done[key]
        future = self._pending.get(key)
        if future is None:
            future = self._pending[key] = asyncio.ensure_future(make())
            future.add_done_callback(lambda done: self._settle(key, done))
        return await asyncio.shield(future)

    def _settle(self, key: str, done: asyncio.Future[Any]) -> None:
        del self._pending[key]
        if not done.cancelled() and done.exception() is None:
            self._done[key] = done.result()


def _registered_components() -> dict[str, Path]:
    """NiceGUI's components by key: those registered so far, NiceGUI's own without an ESM library among them (an
    element's component is registered when its module is first imported, which may come after the page is inlined)."""
    for module in pkgutil.iter_modules(elements.__path__):  # the packages are those with a library
        if not module.ispkg:
            importlib.import_module(f"{elements.__name__}.{module.name}")  # once; then found in sys.modules
    return {key: component.path for key, component in list(dependencies.js_components.items())}


def _resolve(spec: str, imports: dict[str, str]) -> str:
    """The URL an import map resolves `spec` to (a bare name it does not map: the name itself)."""
    if spec in imports:
        return imports[spec]
    prefix = max((key for key in imports if key.endswith("/") and spec.startswith(key)), key=len, default=None)
    return imports[prefix] + spec[len(prefix) :] if prefix is not None else spec


def _one_face_per_font(css: str) -> str:
    """Faces alike but for their weight (NiceGUI's Roboto: one variable font, six weights) as one face for the range of
    their weights, so the font's data: URL comes once."""
    weights: dict[str, list[int]] = {}
    for face in _FACE.findall(css):
        if weight := _WEIGHT.search(face):
            weights.setdefault(_WEIGHT.sub("font-weight: {};", face, 1), []).append(int(weight[1]))

    def merged(face: re.Match[str]) -> str:
        if not _WEIGHT.search(face[0]):
            return face[0]
        alike = _WEIGHT.sub("font-weight: {};", face[0], 1)
        if (found := weights.pop(alike, None)) is None:
            return ""  # written with the first of its kind
        return alike.replace("font-weight: {};", f"font-weight: {min(found)} {max(found)};") if found[1:] else face[0]

    return _FACE.sub(merged, css)


def _covers_latin1(ranges: str) -> bool:
    covered: set[int] = set()
    for low, high in _CODE_POINTS.findall(ranges):  # `U+0000-00FF`, `U+0131`, `U+04??`
        covered.update(range(int(low.replace("?", "0"), 16), min(int(high or low.replace("?", "F"), 16), 0xFF) + 1))
    return len(covered) == 0x100


async def _sub(found: list[re.Match[str]], text: str, replace: Callable[[re.Match[str]], Awaitable[str]]) -> str:
    """`text` with each match replaced by its awaited replacement (made concurrently)."""
    replacements = await asyncio.gather(*(replace(match) for match in found))
    parts: list[str] = []
    at = 0
    for match, replacement in zip(found, replacements, strict=True):
        parts += [text[at : match.start()], replacement]
        at = match.end()
    return "".join([*parts, text[at:]])


def _attrs(text: str) -> dict[str, str | None]:
    return {
        name.lower(): None if value == "" else markup.unescape(value[1:-1] if value[:1] in "\"'" else value)
        for name, value in _ATTR.findall(text)
    }


def _tag(name: str, attrs: dict[str, str | None]) -> str:
    written = (key if value is None else f'{key}="{markup.escape(value)}"' for key, value in attrs.items())
    return "<" + " ".join([name, *written]) + ">"


def _closed(text: str) -> str:
    """`text` to go between `<script>` or `<style>` tags: `</script` becomes `<\\/script` (the same in JS and CSS)."""
    return _CLOSING.sub(r"<\\/\1", text)


def _virtual(url: str) -> bool:
    return url.startswith(_ROOT)


def _path(url: str) -> str:
    return url[len(VIRTUAL_ORIGIN) :]


def _data_url(mime: str, body: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(body).decode('ascii')}"
