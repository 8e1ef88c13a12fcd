"""Access tokens from the issuer: JWTs checked against its keys (RFC 9068, RFC 8707 audience), opaque tokens by
introspection (RFC 7662) when the issuer offers it and credentials are configured.

A check answers `Verified` (principal `{iss}#{sub}`, scopes, the SDK's `AccessToken`) or `Rejected` with a reason
that is safe to log: it never contains the token.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
from mcp.server.auth.provider import AccessToken

from webapp.auth.issuer import DISCOVERY_TIMEOUT, Issuer

__all__ = ["ALGORITHMS", "KEY_REREAD_INTERVAL", "LEEWAY", "Rejected", "TokenCheck", "Verified", "principal_of"]

ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")
"""Signatures accepted on access tokens: asymmetric only (never `none`, never HMAC)."""
LEEWAY = 60
"""Seconds of clock skew allowed on `exp` and `nbf`."""
KEY_REREAD_INTERVAL = 60.0
"""At most one re-read of the issuer's keys per this many seconds, for tokens signed with an unknown key."""
MAX_TOKEN = 8192
log = logging.getLogger(__name__)


def principal_of(issuer: str, subject: str) -> str:
    """The principal a signed-in person or agent is known by: `{iss}#{sub}`."""
    return f"{issuer}#{subject}"


@dataclass(frozen=True, slots=True)
class Verified:
    principal: str
    owner: str
    """What a legacy MCP session is bound to: the SDK's owner (client id, issuer, subject)."""
    scopes: frozenset[str]
    access_token: AccessToken


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: str


class TokenCheck:
    """Checks access tokens for one resource (the canonical `/mcp` URL) against one issuer; also an SDK
    `TokenVerifier` (`verify_token`)."""

    def __init__(
        self,
        issuer: Issuer,
        keys: dict[str, Any],
        resource: str,
        *,
        client: tuple[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.resource = resource
        self._client = client if issuer.introspection_endpoint else None
        self._clock = clock
        self._keys = _key_set(keys)
        self._last_reread: float | None = None  # the start-up read does not count
        self._reread_lock = asyncio.Lock()

    async def verify_token(self, token: str) -> AccessToken | None:
        checked = await self.check(token)
        return checked.access_token if isinstance(checked, Verified) else None

    async def check(self, token: str) -> Verified | Rejected:
        if len(token) > MAX_TOKEN:
            return Rejected(f"the token is longer than {MAX_TOKEN} characters")
        if token.count(".") != 2:
            if self._client is None:
                return Rejected("the token is not a JWT and no introspection is configured")
            return await self._introspect(token)
        claims = await self.claims(token, self.resource)
        return claims if isinstance(claims, Rejected) else self._verified(token, claims)

    async def claims(self, token: str, audience: str) -> dict[str, Any] | Rejected:
        """The claims of a JWT signed by the issuer for `audience` (an access token, or an ID token for a client)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return Rejected("the token is not a well-formed JWT")
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in ALGORITHMS:
            return Rejected(f"the token's algorithm {str(algorithm)[:20]!r} is not one of {', '.join(ALGORITHMS)}")
        found = await self._key(kid if isinstance(kid, str) else None)
        if found is None:
            return Rejected(f"the token is signed with a key the issuer does not list (kid {str(kid)[:40]!r})")
        key, declared = found
        if declared is not None and declared != algorithm:
            return Rejected(f"the token's algorithm {algorithm!r} is not its key's ({declared!r})")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=audience,
                issuer=self.issuer.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud", "sub"], "strict_aud": False},
            )
        except jwt.PyJWTError as error:
            return Rejected(f"the token was refused: {error}")
        return claims

    def _verified(self, token: str, claims: dict[str, Any]) -> Verified | Rejected:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            return Rejected("the token names no subject")
        raw_scope = claims.get("scope", "")
        scopes = frozenset(raw_scope.split()) if isinstance(raw_scope, str) else frozenset[str]()
        client_id = str(claims.get("client_id") or claims.get("azp") or "")
        exp = claims.get("exp")
        access = AccessToken(
            token=token,
            client_id=client_id,
            scopes=sorted(scopes),
            expires_at=int(exp) if isinstance(exp, int | float) else None,
            resource=self.resource,
            subject=subject,
            claims={"iss": self.issuer.issuer, "sub": subject, "client_id": client_id},
        )
        owner = f"{client_id} {principal_of(self.issuer.issuer, subject)}"
        return Verified(principal_of(self.issuer.issuer, subject), owner, scopes, access)

    async def _key(self, kid: str | None) -> tuple[Any, str | None] | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        if kid in self._keys:
            return self._keys[kid]
        async with self._reread_lock:
            if kid in self._keys:
                return self._keys[kid]
            now = self._clock()
            if self._last_reread is not None and now - self._last_reread < KEY_REREAD_INTERVAL:
                return None
            self._last_reread = now
            try:
                self._keys = _key_set(await self.issuer.read_keys(DISCOVERY_TIMEOUT))
            except (httpx.HTTPError, ValueError) as error:  # fail closed; the keys we had stay valid
                log.warning("could not re-read the issuer's keys: %s", type(error).__name__)
                return None
            return self._keys.get(kid)

    async def _introspect(self, token: str) -> Verified | Rejected:
        assert self._client is not None and self.issuer.introspection_endpoint is not None
        try:
            async with httpx.AsyncClient(timeout=DISCOVERY_TIMEOUT, auth=self._client) as http:
                answer = await http.post(
                    self.issuer.introspection_endpoint, data={"token": token, "token_type_hint": "access_token"}
                )
            answer.raise_for_status()
            claims = answer.json()
        except (httpx.HTTPError, ValueError) as error:
            return Rejected(f"the issuer's introspection failed ({type(error).__name__})")
        if not isinstance(claims, dict) or claims.get("active") is not True:
            return Rejected("the issuer says the token is not active")
        claims = dict(claims)
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.resource not in audiences:
            return Rejected("the token was issued for another resource")
        if claims.get("iss", self.issuer.issuer) != self.issuer.issuer:
            return Rejected("the token was issued by another issuer")
        exp = claims.get("exp")
        if isinstance(exp, int | float) and exp + LEEWAY < time.time():
            return Rejected("the token has expired")
        return self._verified(token, claims)


def _key_set(document: dict[str, Any]) -> dict[str, tuple[Any, str | None]]:
    """kid → (public key, its declared `alg`) of each signing key in a JWKS (other uses, secrets and unknown types
    are left out; the algorithm allow-list and the key's type decide which algorithms can verify with it)."""
    keys: dict[str, tuple[Any, str | None]] = {}
    for entry in document.get("keys", []):
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError:
            continue
        declared = entry.get("alg")
        keys[str(entry.get("kid", ""))] = (key.key, declared if isinstance(declared, str) else None)
    return keys
