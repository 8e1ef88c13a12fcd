"""The tunnelled page's inliner on hand-made assets on a fake origin (our own `Fetch` seam): the rewriting rules. The
real inventory page, inlined and run in Chromium with no request reaching the server, is `test_tunnel.py`'s.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
from pathlib import Path

import nicegui
import pytest
from nicegui import dependencies

from webapp.embed.inline import VIRTUAL_ORIGIN, Fetch, PageInliner

importlib.import_module("views.inventory")  # its components registered here, as in the server, where pages are inlined
V = VIRTUAL_ORIGIN
NG = f"/_nicegui/{nicegui.__version__}"
NICEGUI = Path(nicegui.__file__).parent
SOCKET = f"{V}/_nicegui_ws/"


class Origin:
    """A fake origin: path -> (body, content type), recording every fetch; anything else is a 404 (it raises)."""

    def __init__(self, files: dict[str, tuple[str | bytes, str]]) -> None:
        self.files = files
        self.fetched: list[str] = []

    async def __call__(self, path: str) -> tuple[bytes, str]:
        self.fetched.append(path)
        body, content_type = self.files[path]
        return body.encode() if isinstance(body, str) else body, content_type


def page(head: str = "", body: str = "", imports: dict[str, str] | None = None) -> str:
    importmap = json.dumps({"imports": imports or {}})
    return f'<html><head><script type="importmap">{importmap}</script>{head}</head><body>{body}</body></html>'


def import_map(document: str) -> dict[str, str]:
    found = re.search(r'<script type="importmap">(.*?)</script>', document, re.S)
    assert found is not None, document[:500]
    return json.loads(found[1])["imports"]


def decoded(data_url: str) -> str:
    assert data_url.startswith("data:"), data_url[:80]
    return base64.b64decode(data_url.split(",", 1)[1]).decode()


def inliner(origin: Fetch, components: dict[str, Path] | None = None) -> PageInliner:
    return PageInliner(origin, components=lambda: components or {})


JS = "text/javascript"
WIDGET = f"{V}{NG}/components/c0ffee/widget.js"
MODULES: dict[str, tuple[str | bytes, str]] = {
    f"{NG}/static/utils/util.js": ("export const util = 1;", JS),
    "/lib/index.js": ('export{b}from"./chunk.js";export const later=()=>import("../lazy.js");', JS),
    "/lib/chunk.js": ('import v from"/root/dep.js";import"./side.js";export const b=v;', JS),
    "/lib/side.js": ("globalThis.side = 1;", JS),
    "/root/dep.js": ("export default 2;", JS),
}


async def test_relative_specifiers_become_absolute_virtual_urls_and_every_module_reached_is_mapped(
    tmp_path: Path,
) -> None:
    widget = tmp_path / "widget.js"  # a component: read from its file, mapped at its URL (NiceGUI imports it by URL)
    widget.write_text('import { util } from "../../static/utils/util.js";\nexport default {};')
    origin = Origin(MODULES)
    document = await inliner(origin, {"c0ffee/widget.js": widget}).inline(
        page(body='<script type="module">import { b } from "lib";</script>', imports={"lib": f"{V}/lib/index.js"})
    )

    mapped = import_map(document)
    assert set(mapped) == {
        "lib",
        f"{V}/lib/chunk.js",
        f"{V}/lib/side.js",
        f"{V}/root/dep.js",
        WIDGET,
        f"{V}{NG}/static/utils/util.js",
    }
    assert all(url.startswith("data:text/javascript;base64,") for url in mapped.values())
    index = decoded(mapped["lib"])
    assert f'export{{b}}from"{V}/lib/chunk.js"' in index
    assert f'import("{V}/lazy.js")' in index  # made absolute, but only a static import is followed
    assert (
        decoded(mapped[f"{V}/lib/chunk.js"])
        == f'import v from"{V}/root/dep.js";import"{V}/lib/side.js";export const b=v;'
    )
    assert "/lazy.js" not in origin.fetched
    assert decoded(mapped[WIDGET]).startswith(f'import {{ util }} from "{V}{NG}/static/utils/util.js";')


async def test_strings_comments_regular_expressions_and_templates_that_look_like_imports_stay_as_they_are() -> None:
    tricky = (
        'const a = "./x.js"; // import y from "./y.js"\n'
        '/* export * from "./z.js" */ const r = /from"\\.\\/w.js"/g, q = `import("./t.js") ${"./u.js"}`;\n'
        'const e = shader.import("@export clay.skybox"), f = import("@export ecgl"), d = a / 2 / 3;\n'
        'if (a) /import"\\.\\/v.js"/.test(a);\n'
        'export { a } from "./real.js";'
    )
    files = {**MODULES, "/tricky.js": (tricky, JS), "/real.js": ("export const a = 1;", JS)}
    origin = Origin(files)
    document = await inliner(origin).inline(page(body=f'<script type="module" src="{V}/tricky.js"></script>'))

    src = re.search(r'<script type="module" src="([^"]+)">', document)
    assert src is not None
    assert decoded(src[1]) == tricky.replace('from "./real.js"', f'from "{V}/real.js"')
    assert set(import_map(document)) == {f"{V}/real.js"}


async def test_stylesheets_and_layered_imports_are_inlined_with_their_urls_as_data_urls() -> None:
    origin = Origin(
        {
            **MODULES,
            "/css/base.css": ('@import url("parts/more.css");\nbody { background: url(img/dot.png); }', "text/css"),
            "/css/parts/more.css": ("p { background: url('../img/dot.png') }", "text/css; charset=utf-8"),
            "/css/img/dot.png": (b"\x89PNG", "image/png"),
            "/sheet.css": ("a { color: red }", "text/css"),
        }
    )
    head = (
        f'<style>\n@layer base, quasar;\n@import url("{V}/css/base.css") layer(base);\nh1 {{ color: blue }}\n</style>'
        f'<link href="{V}/sheet.css" rel="stylesheet" media="screen">'
    )
    document = await inliner(origin).inline(page(head=head))

    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()
    more = f'p {{ background: url("{png}") }}'
    expected = f'@layer base {{\n{more}\nbody {{ background: url("{png}"); }}\n}}'
    assert f"<style>\n@layer base, quasar;\n{expected}\nh1 {{ color: blue }}\n</style>" in document
    assert '<style media="screen">a { color: red }</style>' in document
    assert origin.fetched.count("/css/img/dot.png") == 1  # one data: URL per asset, however often it is used
    assert "<link" not in document


async def test_only_latin_font_faces_and_the_material_icons_are_kept_each_font_once() -> None:
    latin = "unicode-range: U+0000-00FF, U+0131;"
    fonts = (
        '@font-face { font-family: "Material Icons"; src: url(f/icons.woff2) format("woff2"); }\n'
        '@font-face { font-family: "Material Symbols Sharp"; src: url(f/sharp.woff2) format("woff2"); }\n'
        '@font-face { font-family: "Roboto"; src: url(f/cyrillic.woff2); unicode-range: U+0400-045F, U+0490; }\n'
        f'@font-face {{ font-family: "Roboto"; font-weight: 100; src: url(f/latin.woff2); {latin} }}\n'
        f'@font-face {{ font-family: "Roboto"; font-weight: 900; src: url(f/latin.woff2); {latin} }}\n'
        f'@font-face {{ font-family: "Roboto"; font-weight: 400; src: url(f/latin.woff2); {latin} }}\n'
        '@font-face { font-family: "Roboto"; src: url(f/split.woff2); unicode-range: U+0000-007F, U+008?-00FF; }\n'
    )
    files = {**MODULES, "/fonts.css": (fonts, "text/css")}
    names = ("icons", "sharp", "cyrillic", "latin", "split")
    origin = Origin(files | {f"/f/{name}.woff2": (name.encode(), "font/woff2") for name in names})
    document = await inliner(origin).inline(page(head=f'<link rel="stylesheet" href="{V}/fonts.css">'))

    assert document.count("@font-face") == 3
    assert sorted(path for path in origin.fetched if path.startswith("/f/")) == [
        "/f/icons.woff2",
        "/f/latin.woff2",
        "/f/split.woff2",
    ]
    latin_data = "data:font/woff2;base64," + base64.b64encode(b"latin").decode()
    assert document.count(latin_data) == 1  # one variable font for every weight: one face for the range
    assert f'font-weight: 100 900; src: url("{latin_data}");' in document


async def test_a_classic_script_is_inlined_with_its_closing_tags_escaped_and_a_deferred_one_keeps_its_turn() -> None:
    files = {
        **MODULES,
        "/plain.js": ('document.title = "</script><script>alert(1)</SCRIPT>";', JS),
        "/late.js": ("window.late = true;", "application/javascript; charset=utf-8"),
    }
    body = f'<script src="{V}/plain.js"></script><script defer src="{V}/late.js"></script>'
    document = await inliner(Origin(files)).inline(page(body=body))

    assert '<script>document.title = "<\\/script><script>alert(1)<\\/SCRIPT>";</script>' in document
    late = re.search(r'<script defer src="(data:text/javascript;base64,[^"]+)"></script>', document)
    assert late is not None  # an inline script cannot be deferred: it would run before the modules it follows
    assert decoded(late[1]) == "window.late = true;"


async def test_a_second_page_fetches_nothing_that_was_inlined_before() -> None:
    files = {**MODULES, "/a.css": ("a { background: url(/p.png) }", "text/css"), "/p.png": (b"p", "image/png")}
    origin = Origin({**files, "/classic.js": ("var c;", JS)})
    pages = inliner(origin)
    html = page(
        head=f'<link rel="stylesheet" href="{V}/a.css">',
        body=f'<script type="module">import "lib";</script><script defer src="{V}/classic.js"></script>',
        imports={"lib": f"{V}/lib/index.js"},
    )
    first = await pages.inline(html)
    fetched = len(origin.fetched)

    assert await pages.inline(html) == first
    assert len(origin.fetched) == fetched
    assert sorted(origin.fetched) == sorted(set(origin.fetched))  # nor did the first fetch anything twice


async def test_an_asset_that_failed_to_arrive_is_asked_for_again_by_the_next_page() -> None:
    origin = Origin(dict(MODULES))
    pages = inliner(origin)
    html = page(head=f'<link rel="stylesheet" href="{V}/late.css">')
    with pytest.raises(KeyError):
        await pages.inline(html)
    origin.files["/late.css"] = ("a { color: red }", "text/css")

    assert "<style>a { color: red }</style>" in await pages.inline(html)
    assert origin.fetched == ["/late.css", "/late.css"]


async def test_urls_off_the_virtual_origin_and_data_urls_stay_as_they_are() -> None:
    imports = {"cdn": "https://cdn.example/lib.js", "inline": "data:text/javascript,export%20default%201"}
    head = (
        '<link rel="stylesheet" href="https://cdn.example/a.css"><style>b { background: url(data:image/png;base64,AA) }'
        " i { background: url(https://cdn.example/i.png) }</style>"
    )
    body = (
        '<script src="https://cdn.example/c.js"></script><script type="module">import "cdn"; import "inline";'
        ' import "https://cdn.example/m.js";</script><script>var x = "</a>";</script>'
    )
    origin = Origin(MODULES)
    document = await inliner(origin).inline(page(head, body, imports))

    without_map = re.compile(r'<script type="importmap">.*?</script>', re.S)
    assert without_map.sub("", document) == without_map.sub("", page(head, body, imports))
    assert import_map(document).items() >= imports.items()
    assert origin.fetched == []


async def test_by_default_every_registered_component_and_nicegui_s_own_not_yet_imported_ones_are_mapped() -> None:
    async def static(path: str) -> tuple[bytes, str]:  # components are read from their files, their imports fetched
        return (NICEGUI / "static" / path.removeprefix(f"{NG}/static/")).read_bytes(), JS

    mapped = import_map(await PageInliner(static).inline(page()))

    names = {component.path.name for component in dependencies.js_components.values()}
    assert {"select.js", "query.js", "table.js", "stock_table.js", "echart.js"} <= names  # NiceGUI imports most lazily
    assert {f"{V}{NG}/components/{key}" for key in dependencies.js_components} <= set(mapped)
    assert f"{V}{NG}/static/utils/dynamic_properties.js" in mapped
