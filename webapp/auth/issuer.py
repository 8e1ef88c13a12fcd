"""The authorization server as this server knows it: its metadata (RFC 8414, else OIDC discovery) and its keys.

`discover` runs once at start and fails with a clear `SignInSetupError` when the issuer cannot be read; later key
reads (`Issuer.read_keys`) are bounded and only ever called by the token check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from webapp.core.settings import SettingsError

__all__ = ["DISCOVERY_TIMEOUT", "Issuer", "SignInSetupError", "discover"]

DISCOVERY_TIMEOUT = 5.0
_MAX_DOCUMENT = 256 * 1024


class SignInSetupError(SettingsError):
    """The issuer given with `--auth-issuer` cannot be used; the message says why and what to check."""


@dataclass(frozen=True, slots=True)
class Issuer:
    """The parts of an issuer's metadata this server uses."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    end_session_endpoint: str | None = None
    introspection_endpoint: str | None = None

    @classmethod
    def of(cls, issuer: str, metadata: dict[str, Any]) -> Issuer:
        """The issuer from its metadata document, which must name exactly `issuer` and the endpoints we need."""
        named = metadata.get("issuer")
        if named != issuer:
            raise SignInSetupError(
                f"the metadata of {issuer!r} names the issuer {named!r}; they must be identical (check --auth-issuer, "
                "a trailing slash included)"
            )
        missing = [key for key in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not metadata.get(key)]
        if missing:
            raise SignInSetupError(f"the metadata of {issuer!r} lacks {', '.join(missing)}; this server needs them")
        optional = {key: metadata.get(key) for key in ("end_session_endpoint", "introspection_endpoint")}
        return cls(
            issuer,
            str(metadata["authorization_endpoint"]),
            str(metadata["token_endpoint"]),
            str(metadata["jwks_uri"]),
            **{key: str(value) for key, value in optional.items() if isinstance(value, str) and value},
        )

    async def read_keys(self, timeout: float = DISCOVERY_TIMEOUT) -> dict[str, Any]:
        """The issuer's JWKS now (raises `httpx.HTTPError` or `ValueError` when it cannot be read)."""
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            return _json_object(await client.get(self.jwks_uri, headers={"Accept": "application/json"}))


def discover(issuer: str, timeout: float = DISCOVERY_TIMEOUT) -> tuple[Issuer, dict[str, Any]]:
    """The issuer's metadata and its JWKS, read now: RFC 8414 first, then OpenID Connect discovery."""
    problems: list[str] = []
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        for url in _metadata_urls(issuer):
            try:
                metadata = _json_object(client.get(url, headers={"Accept": "application/json"}))
            except (httpx.HTTPError, ValueError) as error:
                problems.append(f"{url}: {_reason(error)}")
                continue
            found = Issuer.of(issuer, metadata)
            try:
                keys = _json_object(client.get(found.jwks_uri, headers={"Accept": "application/json"}))
            except (httpx.HTTPError, ValueError) as error:
                raise SignInSetupError(
                    f"cannot read the keys of {issuer!r} at {found.jwks_uri}: {_reason(error)}"
                ) from None
            if not isinstance(keys.get("keys"), list):
                raise SignInSetupError(f"the JWKS at {found.jwks_uri} has no 'keys' list")
            return found, keys
    raise SignInSetupError(
        f"cannot read the metadata of the issuer {issuer!r} ({'; '.join(problems)}); check --auth-issuer and that the "
        "issuer is reachable from this server"
    )


def _metadata_urls(issuer: str) -> list[str]:
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _json_object(response: httpx.Response) -> dict[str, Any]:
    response.raise_for_status()
    if len(response.content) > _MAX_DOCUMENT:
        raise ValueError(f"the document is larger than {_MAX_DOCUMENT} bytes")
    document = json.loads(response.content)
    if not isinstance(document, dict):
        raise ValueError("the document is not a JSON object")
    return document  # pyright: ignore[reportUnknownVariableType]


def _reason(error: Exception) -> str:
    if isinstance(error, httpx.HTTPStatusError):
        return f"HTTP {error.response.status_code}"
    return str(error) or type(error).__name__
