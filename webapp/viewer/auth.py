"""Who looks at the viewer: everyone in local mode; with bearer tokens, the principal whose token was entered once.

The token is entered in the page (over NiceGUI's socket), exchanged for a one-time code, and the code for an
HttpOnly cookie by a plain navigation: no cross-origin-looking POST is needed (pages send `Origin: null` under
`Referrer-Policy: no-referrer`, which the Host/Origin guard refuses).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from nicegui import ui

from webapp.auth import Person
from webapp.calllog.memory import CallRecord
from webapp.core.auth import TokenTable

__all__ = ["COOKIE", "SESSION_LIFETIME", "Access", "ViewerSessions", "install_session_route", "login_form"]

COOKIE = "webapp_viewer"
SESSION_LIFETIME = 12 * 3600.0
"""Seconds a viewer session lasts."""
CODE_LIFETIME = 60.0
"""Seconds a one-time login code stays valid."""


@dataclass(frozen=True)
class Access:
    """Who looks: in local mode nobody in particular (sees all); with auth on, a principal and its token, or a
    person signed in at the issuer (who holds no token for `/mcp`, only the scopes granted at sign-in)."""

    principal: str | None = None
    token: str | None = None
    person: Person | None = None

    @property
    def is_local(self) -> bool:
        return self.principal is None

    def may_see(self, record: CallRecord) -> bool:
        return self.is_local or record.principal == self.principal


class ViewerSessions:
    """Viewer sessions (cookie id → access) and one-time login codes; all in memory, so a restart asks again."""

    def __init__(
        self,
        tokens: Mapping[str, str],
        *,
        lifetime: float = SESSION_LIFETIME,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`tokens` maps each bearer token to its principal (`Settings.tokens`); empty means local mode."""
        self._table = TokenTable(tokens)
        self._lifetime = lifetime
        self._clock = clock
        self._sessions: dict[str, tuple[Access, float]] = {}
        self._codes: dict[str, tuple[str, float]] = {}

    @property
    def enabled(self) -> bool:
        return bool(self._table)

    def principal_of(self, token: str) -> str | None:
        """The principal a bearer token names (compared in constant time against every configured token)."""
        return self._table.principal(token.encode()) if token else None

    def code_for(self, token: str) -> str | None:
        """For a valid token: a new session and a one-time code that `redeem` turns into its id; else None."""
        principal = self.principal_of(token)
        if principal is None:
            return None
        now = self._clock()
        self._sessions = {sid: entry for sid, entry in self._sessions.items() if entry[1] > now}
        self._codes = {code: entry for code, entry in self._codes.items() if entry[1] > now}
        session, code = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        self._sessions[session] = (Access(principal, token), now + self._lifetime)
        self._codes[code] = (session, now + CODE_LIFETIME)
        return code

    def redeem(self, code: str) -> str | None:
        """The session id for a one-time code (which is then spent), or None."""
        entry = self._codes.pop(code, None)
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    def access(self, session: str | None) -> Access | None:
        """Who holds viewer session `session`; in local mode everyone gets local access."""
        if not self.enabled:
            return Access()
        entry = self._sessions.get(session or "")
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    def end(self, session: str | None) -> None:
        self._sessions.pop(session or "", None)


def install_session_route(app: FastAPI, path: str, sessions: ViewerSessions) -> None:
    """`GET {path}/session?code=…&back=…`: spend a one-time code, set the session cookie, go back to the viewer."""

    async def session_route(request: Request) -> RedirectResponse:
        session = sessions.redeem(request.query_params.get("code", ""))
        if session is None:
            return RedirectResponse(f"{path}?login=failed", status_code=303)
        back = request.query_params.get("back", "")
        response = RedirectResponse(f"{path}?{back}" if back else path, status_code=303)
        secure = request.url.scheme == "https"
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path=path, secure=secure)
        return response

    route = f"{path}/session"
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != route]  # the latest wins
    app.add_api_route(route, session_route, methods=["GET"], include_in_schema=False)


def login_form(path: str, sessions: ViewerSessions, *, back: str, failed: bool) -> None:
    """The token prompt; a valid token continues to `{path}?{back}` with a session cookie."""
    with ui.element("div").classes("wv-login-shell"), ui.card().classes("wv-login"):
        ui.label("Call viewer").classes("wv-login-title")
        ui.label("This server requires a bearer token. Enter yours to see your calls.").classes("wv-muted")
        error = ui.label("That token is not valid.").classes("wv-login-error")
        error.set_visibility(failed)
        token = ui.input("Token", password=True).classes("w-full").props("outlined dense autofocus")
        token.props["name"] = "token"

        def submit() -> None:
            code = sessions.code_for(str(token.value or "").strip())
            if code is None:
                error.set_visibility(True)
                token.value = ""
                return
            ui.navigate.to(f"{path}/session?{urlencode({'code': code, 'back': back})}")

        token.on("keydown.enter", submit)
        ui.button("Show my calls", icon="login", on_click=submit).props("unelevated").classes("w-full")
