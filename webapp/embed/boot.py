"""Direct boot (apps.md §13): `GET /_webapp/boot?ticket=…` spends a one-time ticket and answers the view's embedded
page with every URL absolute to the public origin, for a shell whose host blocks the nested frame to run in its own
frame with NiceGUI's client; a used, expired or unknown ticket gets a short page that says so.
"""

from __future__ import annotations

import html
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp

from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import ViewRecord
from webapp.embed.page import BOOT_PATH, Boot, EmbeddedMode
from webapp.embed.resource import public_origin
from webapp.embed.tickets import TicketStore

__all__ = ["BOOT_PATH", "DirectBoot", "Rendered"]

log = logging.getLogger(__name__)
_NO_STORE = {"Cache-Control": "no-store"}
_SPENT = {
    "used": "This live view link was already used.",
    "expired": "This live view link has expired.",
    "unknown": "This live view link is not valid.",
    "gone": "This view no longer exists.",
}
_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live view</title></head>
<body data-webapp-boot="{reason}"><p>{text} Ask the assistant to open the view again{link}.</p></body></html>"""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A view's page rendered for a boot: its HTML and the NiceGUI client the render made."""

    html: str
    client_id: str


class DirectBoot:
    """The boot route's endpoint: redeems the ticket, then renders the view's page as a nested frame would get it
    (`?key=…&embed=1`), through the whole app, with `X-Forwarded-Prefix` set to the public URL."""

    def __init__(
        self,
        bridge: Bridge,
        tickets: TicketStore,
        mode: EmbeddedMode,
        base_url: Callable[[], str],
        timeout: float,
        app: Callable[[], ASGIApp],
        counts: Counter[str] | None = None,
    ) -> None:
        self.counts: Counter[str] = Counter() if counts is None else counts
        """Boots by outcome: `ok`, `used`, `expired`, `unknown`, `gone` or `failed` (the server's metrics read it)."""
        self._app = app  # the whole app (NiceGUI's, with the server's middleware), for rendering in process
        self._bridge = bridge
        self._tickets = tickets
        self._mode = mode
        self._base_url = base_url
        self._timeout = timeout

    async def ticket(self, view: str, principal: str | None) -> str:
        return await self._tickets.make(view, principal)

    async def page(self, request: Request) -> Response:
        redeemed = await self._tickets.redeem(request.query_params.get("ticket", ""))
        view = await self._bridge.registry.lookup(redeemed.view) if redeemed.view is not None else None
        link = self._bridge.url(view, self._base_url()) if view is not None and view.is_open else None
        if redeemed.outcome != "ok":
            self.counts[redeemed.outcome] += 1
            return _spent(redeemed.outcome, link)
        if view is None or view.principal != redeemed.principal:
            self.counts["gone"] += 1
            return _spent("gone", None)
        # As a framed page's, the page shows a closed view again, and says so for a replaced or expired one.
        base = self._base_url().rstrip("/")
        rendered = await self.render(view, request.headers.get("host", ""), prefix=base, origin=public_origin(base))
        self.counts["failed" if rendered is None else "ok"] += 1
        if rendered is None:
            return Response("The view's page could not be rendered.", status_code=502, headers=_NO_STORE)
        return HTMLResponse(rendered.html, headers=_NO_STORE)

    async def render(
        self, view: ViewRecord, host: str, *, prefix: str, origin: str, tunnel: str | None = None
    ) -> Rendered | None:
        """The view's embedded page as a nested frame would get it, rendered through the whole app in process with
        every URL under `prefix` (the public URL, or a tunnel's virtual origin); None when the page fails."""
        nonce = self._mode.expect(Boot(view.handle, view.principal, origin, tunnel))
        route = self._bridge.apps[view.app].route
        headers = {
            "Host": host,
            "X-Forwarded-Prefix": prefix,  # NiceGUI puts it before every asset URL and into the socket's path
            "Sec-Fetch-Dest": "iframe",  # as a host's frame loads the page (pages served by key only as frames)
        }
        try:
            transport = httpx.ASGITransport(app=self._app())
            async with httpx.AsyncClient(transport=transport, base_url="http://boot", timeout=self._timeout) as client:
                page = await client.get(
                    route, params={"key": view.attach_key, "embed": "1", "boot": nonce}, headers=headers
                )
        finally:
            client_id = self._mode.forget(nonce)
        if page.status_code != 200 or client_id is None:
            log.warning("view %r: its page answered %s to a boot", view, page.status_code)
            return None
        return Rendered(page.text, client_id)


def _spent(reason: str, link: str | None) -> Response:
    anchor = f', or <a href="{html.escape(link)}" target="_blank">open the live view</a>' if link else ""
    body = _PAGE.format(reason=reason, text=_SPENT[reason], link=anchor)
    return HTMLResponse(body, status_code=410 if reason in ("used", "expired") else 404, headers=_NO_STORE)
