"""People signed in to the pages: OpenID Connect authorization code with PKCE against the issuer as a confidential
client, `/auth/callback`, `/auth/sign-out`, and the gate in front of every page (apps.md §15).

An unauthenticated page GET goes straight to the issuer; a view page opens only for its own principal; a page with
a view key but no session is served only as a frame (embedded views in MCP Apps hosts, where no cookie arrives). The
sign-in also asks for an access token to `/mcp` (RFC 8707), only to learn the scopes the issuer grants the person:
the session keeps those scopes, never the token.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from webapp.auth.cookies import SESSION_COOKIE, SIGN_IN_COOKIE, CookieSigner, cookie_header, read_cookie
from webapp.auth.issuer import DISCOVERY_TIMEOUT
from webapp.auth.tokens import Rejected, TokenCheck, principal_of

__all__ = [
    "CALLBACK_PATH",
    "PERSON_SCOPE_KEY",
    "SIGNED_IN_SCOPE_KEY",
    "SIGN_OUT_PATH",
    "PageSignIn",
    "People",
    "Person",
    "ViewOwner",
]

PERSON_SCOPE_KEY = "webapp.person"
"""ASGI scope key holding the signed-in person's principal (`{iss}#{sub}`) on page requests."""
SIGNED_IN_SCOPE_KEY = "webapp.signed_in"
"""ASGI scope key holding the signed-in `Person` (principal and granted scopes) on page requests."""
CALLBACK_PATH = "/auth/callback"
SIGN_OUT_PATH = "/auth/sign-out"
SESSION_LIFETIME = 12 * 3600
SIGN_IN_LIFETIME = 600
ViewOwner = Callable[[str, str], Awaitable[tuple[bool, str | None]]]
"""(page path, view key) → (whether the key names a view of that page, the principal it belongs to)."""
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Person:
    """A person signed in to the pages: their principal and the scopes the issuer granted them for `/mcp` at
    sign-in, the rights their own access token would carry."""

    principal: str
    scopes: frozenset[str]
    needs: Callable[[Sequence[str]], Sequence[str]] = field(compare=False, repr=False)
    """tool names → every scope a request calling them needs (the resource server's rule)."""

    def lacks(self, tool: str) -> list[str]:
        """Every scope a call of `tool` needs when this person does not hold them all; empty when they do."""
        needed = list(self.needs([tool]))
        return [] if set(needed) <= self.scopes else needed


class People:
    """Sign-in of people to the pages of one server (its public base URL) at one issuer."""

    def __init__(
        self,
        check: TokenCheck,
        base_url: str,
        client: tuple[str, str] | None,
        *,
        is_page: Callable[[str], bool],
        view_owner: ViewOwner,
        needs: Callable[[Sequence[str]], Sequence[str]],
        asks: Callable[[], Sequence[str]],
    ) -> None:
        """`needs` says which scopes a call of some tools needs, `asks` which scopes a sign-in asks the issuer for."""
        self.check = check
        self.issuer = check.issuer
        self.base_url = base_url.rstrip("/")
        self.client = client
        self.is_page = is_page
        self.view_owner = view_owner
        self.needs = needs
        self.asks = asks
        self.secure = self.base_url.startswith("https://")
        secret = client[1] if client else secrets.token_urlsafe(32)
        self._sessions = CookieSigner(secret, "page session")
        self._pending = CookieSigner(secret, "page sign-in")

    @property
    def redirect_uri(self) -> str:
        return self.base_url + CALLBACK_PATH

    def person(self, scope: Scope) -> str | None:
        signed_in = self.signed_in(scope)
        return signed_in.principal if signed_in else None

    def signed_in(self, scope: Scope) -> Person | None:
        """Who the request's session cookie names, with the scopes granted at sign-in (none in an older cookie)."""
        session = self._sessions.open(read_cookie(scope.get("headers", []), SESSION_COOKIE))
        principal = session.get("p") if session else None
        if session is None or not isinstance(principal, str):
            return None
        granted = session.get("s")
        scopes = frozenset(granted.split()) if isinstance(granted, str) else frozenset[str]()
        return Person(principal, scopes, self.needs)

    async def gate(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        path, query = scope.get("path", ""), parse_qs(scope.get("query_string", b"").decode("latin-1"))
        signed_in = self.signed_in(scope)
        person = signed_in.principal if signed_in else None
        key = (query.get("key") or [""])[0]
        if person is None:
            framed = _header(scope, b"sec-fetch-dest") == b"iframe"
            if framed and key and (await self.view_owner(path, key))[0]:  # an embedded view: its key is the capability
                await app(scope, receive, send)
            elif self.client is None:
                await _answer(send, 401, _NO_CLIENT.format(path=path, callback=self.redirect_uri))
            else:
                query_string = scope.get("query_string", b"").decode("latin-1")
                await self._sign_in(send, path + (f"?{query_string}" if query_string else ""))
            return
        if key:
            is_view, owner = await self.view_owner(path, key)
            if is_view and owner is not None and owner != person:
                await _answer(send, 403, _NOT_YOURS)
                return
        scope[PERSON_SCOPE_KEY] = person
        scope[SIGNED_IN_SCOPE_KEY] = signed_in
        await app(scope, receive, send)

    async def _sign_in(self, send: Send, target: str, *, plain: bool = False) -> None:
        """Off to the issuer, back at `target`; `plain` asks for `openid` only (no scopes, no resource for `/mcp`)."""
        assert self.client is not None
        state, nonce, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(24), secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        sealed = {"s": state, "n": nonce, "v": verifier, "t": target, **({"o": 1} if plain else {})}
        pending = self._pending.seal(sealed, SIGN_IN_LIFETIME)
        asked = {} if plain else {"scope": " ".join(["openid", *self.asks()]), "resource": self.check.resource}
        params = {
            "response_type": "code",
            "client_id": self.client[0],
            "redirect_uri": self.redirect_uri,
            "scope": "openid",
            **asked,
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        endpoint = self.issuer.authorization_endpoint
        location = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
        secure = self.secure
        cookie = cookie_header(SIGN_IN_COOKIE, pending, path=CALLBACK_PATH, max_age=SIGN_IN_LIFETIME, secure=secure)
        await _answer(send, 303, "", [(b"location", location.encode()), cookie])

    async def callback(self, scope: Scope, send: Send) -> None:
        query = {name: values[0] for name, values in parse_qs(scope.get("query_string", b"").decode()).items()}
        pending = self._pending.open(read_cookie(scope.get("headers", []), SIGN_IN_COOKIE))
        clear = cookie_header(SIGN_IN_COOKIE, "", path=CALLBACK_PATH, max_age=0, secure=self.secure)
        refused = query.get("error") in ("invalid_scope", "invalid_target")
        if refused and pending is not None and not pending.get("o") and self._is_answer_to(query, pending):
            # an issuer that will not grant the scopes or the resource asked for still signs the person in: to look
            log.info("the issuer answered %s to the scopes asked for: signing in without them", query["error"])
            await self._sign_in(send, str(pending.get("t") or "/"), plain=True)
            return
        problem = self._callback_problem(query, pending)
        if problem is not None or pending is None or self.client is None:
            await _answer(send, 400, f"The sign-in could not be completed: {problem}. Open the page again.", [clear])
            return
        person = await self._person_from_code(query["code"], pending)
        if isinstance(person, Rejected):
            log.info("a sign-in failed: %s", person.reason)
            await _answer(send, 400, f"The sign-in could not be completed: {person.reason}. Open the page again.")
            return
        principal, scopes = person
        session = self._sessions.seal({"p": principal, "s": " ".join(sorted(scopes))}, SESSION_LIFETIME)
        target = str(pending.get("t") or "/")
        target = target if target.startswith("/") and not target.startswith("//") else "/"
        cookie = cookie_header(SESSION_COOKIE, session, path="/", max_age=SESSION_LIFETIME, secure=self.secure)
        await _answer(send, 303, "", [(b"location", target.encode("latin-1")), cookie, clear])

    def _callback_problem(self, query: dict[str, str], pending: dict[str, Any] | None) -> str | None:
        if self.client is None:
            return "no client is configured (--auth-client-id, --auth-client-secret)"
        if pending is None or not secrets.compare_digest(str(pending.get("s", "")), query.get("state", "")):
            return "it does not match a sign-in started here (or it took longer than 10 minutes)"
        if "error" in query:
            return f"the issuer answered {query['error'][:60]!r}"
        if not self._is_answer_to(query, pending):
            return "the answer came from another issuer"
        return None if query.get("code") else "the issuer sent no code"

    def _is_answer_to(self, query: dict[str, str], pending: dict[str, Any]) -> bool:
        """Whether the issuer's answer is to the sign-in in `pending` (its state), from this issuer (RFC 9207)."""
        ours = secrets.compare_digest(str(pending.get("s", "")), query.get("state", ""))
        return ours and query.get("iss", self.issuer.issuer) == self.issuer.issuer

    async def _person_from_code(self, code: str, pending: dict[str, Any]) -> tuple[str, frozenset[str]] | Rejected:
        """The person's principal, and the scopes the issuer granted them for `/mcp` (none when it sent no access
        token for it: they can still sign in and look)."""
        assert self.client is not None
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": str(pending.get("v", "")),
            **({} if pending.get("o") else {"resource": self.check.resource}),
        }
        try:
            async with httpx.AsyncClient(timeout=DISCOVERY_TIMEOUT, auth=self.client) as http:
                answer = await http.post(self.issuer.token_endpoint, data=form)
            answer.raise_for_status()
            tokens = answer.json()
            id_token, access_token = tokens.get("id_token"), tokens.get("access_token")
        except (httpx.HTTPError, ValueError, AttributeError) as error:
            return Rejected(f"the issuer's token endpoint failed ({type(error).__name__})")
        if not isinstance(id_token, str):
            return Rejected("the issuer sent no ID token")
        claims = await self.check.claims(id_token, self.client[0])
        if isinstance(claims, Rejected):
            return claims
        if not secrets.compare_digest(str(claims.get("nonce", "")), str(pending.get("n", ""))):
            return Rejected("the ID token's nonce does not match")
        principal = principal_of(self.issuer.issuer, str(claims["sub"]))
        return principal, await self._granted(principal, access_token)

    async def _granted(self, principal: str, access_token: object) -> frozenset[str]:
        """The scopes of the sign-in's access token, checked as `/mcp` checks every token; only when it is the
        person's own (the token itself is dropped here)."""
        checked = await self.check.check(access_token) if isinstance(access_token, str) else Rejected("none sent")
        if isinstance(checked, Rejected) or checked.principal != principal:
            reason = checked.reason if isinstance(checked, Rejected) else "it names another subject"
            log.info("a sign-in got no access token for %s, so no scopes: %s", self.check.resource, reason)
            return frozenset()
        return checked.scopes

    async def sign_out(self, send: Send) -> None:
        clear = cookie_header(SESSION_COOKIE, "", path="/", max_age=0, secure=self.secure)
        end = self.issuer.end_session_endpoint
        if end and self.client is not None:
            location = end + ("&" if "?" in end else "?") + urlencode({"client_id": self.client[0]})
            await _answer(send, 303, "", [(b"location", location.encode()), clear])
        else:  # the issuer offers no sign-out: this server forgets the person
            await _answer(send, 200, "You are signed out of this server.", [clear])


class PageSignIn:
    """ASGI middleware: the sign-in routes and the gate in front of the pages; everything else passes untouched."""

    def __init__(self, app: ASGIApp, people: Callable[[], People | None]) -> None:
        self.app = app
        self.people = people

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.pop(PERSON_SCOPE_KEY, None)
        scope.pop(SIGNED_IN_SCOPE_KEY, None)
        people, path = self.people(), scope.get("path", "")
        if people is None:
            await self.app(scope, receive, send)
        elif path == CALLBACK_PATH:
            await people.callback(scope, send)
        elif path == SIGN_OUT_PATH:
            await people.sign_out(send)
        elif scope.get("method") in ("GET", "HEAD") and people.is_page(path):
            await people.gate(scope, receive, send, self.app)
        else:
            await self.app(scope, receive, send)


_NO_CLIENT = (
    "The page {path} needs a signed-in person, and this server has no client at its issuer for people to sign in "
    "with. Start it with --auth-client-id and --auth-client-secret (a confidential client of --auth-issuer whose "
    "redirect URI is {callback})."
)
_NOT_YOURS = (
    "This view belongs to another person: a view page opens only for the principal whose agent opened it. "
    "Ask your agent to open a view of your own."
)


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope.get("headers", []) if key == name), None)


async def _answer(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    extra = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    extra += [(b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": extra})
    await send({"type": "http.response.body", "body": body})
