"""The pages' stylesheet: Tailwind's classes that the framework and the views use, compiled by `make` into
`static/dist/pages.css` (static/styles/pages.css), served at a content-addressed URL and linked from every page in
place of Tailwind's compiler, which would otherwise run in every tab on every change.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from nicegui import ui
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webapp.core.settings import SettingsError

__all__ = ["Stylesheet", "install_stylesheet"]

_BUILT = "dist/pages.css"
_PACKAGED = Path(__file__).resolve().parents[1] / "static"  # webapp/static, in a wheel
_CHECKOUT = Path(__file__).resolve().parents[2] / "static"
_ROUTES = "/_webapp/pages-"
_CACHE = "public, max-age=31536000, immutable"  # the URL changes with the content

# The link goes under the page's own URL prefix, the one NiceGUI put into its import map (`X-Forwarded-Prefix`,
# the root path, or the origin a directly booted page is given), so the sheet loads wherever NiceGUI's assets do.
# Written while the head is parsed, it blocks the first paint like NiceGUI's own stylesheets.
_LINK = """<script>(() => {
  const vue = JSON.parse(document.querySelector('script[type="importmap"]').textContent).imports.vue;
  const href = vue.slice(0, vue.indexOf("/_nicegui/")) + %s;
  document.write('<link rel="stylesheet" href="' + href + '" data-webapp-styles>');
})();</script>"""

# NiceGUI's page hides everything after its no-ES-modules notice with `#esm-fallback ~ *` until a module script
# removes the notice. Left in the sheet, that universal sibling rule makes the browser restyle every child of a
# list (and its subtree) when a child is inserted before them: the movement feed's new row restyled the whole feed.
# A module script runs once the page is parsed, after NiceGUI's own has removed the notice, before Vue mounts.
_DROP_FALLBACK_RULE = """<script type="module">
for (const sheet of document.styleSheets) {
  if (sheet.href) continue;
  const rules = [...sheet.cssRules];
  const index = rules.findIndex((rule) => rule.selectorText === "#esm-fallback ~ *");
  if (index >= 0) sheet.deleteRule(index);
}
</script>"""


@dataclass(frozen=True, slots=True)
class Stylesheet:
    """The built sheet's bytes and the path it is served at (`/_webapp/pages-<hash>.css`)."""

    css: bytes
    path: str

    @classmethod
    def load(cls) -> Stylesheet:
        """Read the built sheet; a SettingsError that says how to build it when it is missing."""
        folder = _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT
        built = folder / _BUILT
        if not built.is_file():
            raise SettingsError(
                f"the pages' stylesheet {_BUILT!r} is not built (looked in {built.parent}): run 'make run' from the "
                "checkout, which builds static/dist/ (Node 20 or newer) and starts the server"
            )
        css = built.read_bytes()
        return cls(css, f"{_ROUTES}{hashlib.sha256(css).hexdigest()[:16]}.css")

    def route(self) -> Route:
        """The GET route that serves the sheet, cached for good (a new build has a new path)."""

        async def endpoint(_: Request) -> Response:
            return Response(self.css, media_type="text/css", headers={"Cache-Control": _CACHE})

        return Route(self.path, endpoint=endpoint, methods=["GET", "HEAD"])

    def head_html(self) -> str:
        """The head markup that links the sheet under the page's URL prefix."""
        return _LINK % json.dumps(self.path)


def install_stylesheet(app: FastAPI) -> Stylesheet:
    """Serve the built sheet from `app` (a later install replaces the route) and link it from every page, once."""
    sheet = Stylesheet.load()
    routes = app.router.routes
    routes[:] = [route for route in routes if not (isinstance(route, Route) and route.path.startswith(_ROUTES))]
    routes.insert(0, sheet.route())
    if getattr(app.state, "webapp_stylesheet", None) != sheet.path:
        app.state.webapp_stylesheet = sheet.path
        ui.add_head_html(sheet.head_html(), shared=True)
        ui.add_body_html(_DROP_FALLBACK_RULE, shared=True)
    return sheet
