"""Signed cookies for people signed in to the pages: the session (who) and the pending sign-in (state, PKCE verifier,
nonce, where to go back), both HMAC-signed with a key derived from the client secret.

Every worker derives the same key, so a cookie set by one worker is good on all of them and nothing is shared
through Redis; changing the client secret signs everyone out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from http.cookies import SimpleCookie
from typing import Any

__all__ = ["SESSION_COOKIE", "SIGN_IN_COOKIE", "CookieSigner", "cookie_header", "read_cookie"]

SESSION_COOKIE = "webapp_person"
SIGN_IN_COOKIE = "webapp_sign_in"


class CookieSigner:
    """Seals small JSON documents with an expiry; `open` returns them only when the signature and expiry hold."""

    def __init__(self, secret: str, purpose: str, clock: Callable[[], float] = time.time) -> None:
        self._key = hmac.new(secret.encode(), f"webapp {purpose}".encode(), hashlib.sha256).digest()
        self._clock = clock

    def seal(self, document: Mapping[str, Any], lifetime: float) -> str:
        body = _b64(json.dumps({**document, "exp": int(self._clock() + lifetime)}, separators=(",", ":")).encode())
        return f"{body}.{_b64(self._mac(body))}"

    def open(self, sealed: str | None) -> dict[str, Any] | None:
        if not sealed or sealed.count(".") != 1:
            return None
        body, mac = sealed.split(".")
        try:
            if not hmac.compare_digest(_unb64(mac), self._mac(body)):
                return None
            document = json.loads(_unb64(body))
        except ValueError:
            return None
        if not isinstance(document, dict) or not isinstance(document.get("exp"), int):
            return None
        return document if document["exp"] > self._clock() else None  # pyright: ignore[reportUnknownVariableType]

    def _mac(self, body: str) -> bytes:
        return hmac.new(self._key, body.encode(), hashlib.sha256).digest()


def read_cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    """The value of cookie `name` in an ASGI request's headers."""
    for key, value in headers:
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header carries no session
                continue
            if name in jar:
                return jar[name].value
    return None


def cookie_header(name: str, value: str, *, path: str, max_age: int, secure: bool) -> tuple[bytes, bytes]:
    """A `Set-Cookie` header: HttpOnly, SameSite=Lax (the issuer's redirect back is a top-level GET), Secure on
    https; `max_age=0` clears it."""
    parts = [f"{name}={value}", f"Path={path}", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
    if secure:
        parts.append("Secure")
    return b"set-cookie", "; ".join(parts).encode("latin-1")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
