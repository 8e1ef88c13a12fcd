"""Sign-in: `/mcp` as an OAuth 2.1 resource server of one issuer, and people signed in to the pages (apps.md §15).

Imports only `webapp.core`; the server wires it in when `--auth-issuer` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from webapp.auth.issuer import Issuer, SignInSetupError, discover
from webapp.auth.pages import (
    CALLBACK_PATH,
    PERSON_SCOPE_KEY,
    SIGN_OUT_PATH,
    SIGNED_IN_SCOPE_KEY,
    PageSignIn,
    People,
    Person,
)
from webapp.auth.resource import ResourceServer, metadata_paths
from webapp.auth.tokens import ALGORITHMS, Rejected, TokenCheck, Verified, principal_of
from webapp.core.auth import TokenTable
from webapp.core.settings import Settings

__all__ = [
    "ALGORITHMS",
    "CALLBACK_PATH",
    "PERSON_SCOPE_KEY",
    "SIGNED_IN_SCOPE_KEY",
    "SIGN_OUT_PATH",
    "Issuer",
    "PageSignIn",
    "People",
    "Person",
    "Rejected",
    "ResourceServer",
    "SignInSetupError",
    "TokenCheck",
    "Verified",
    "discover",
    "metadata_paths",
    "principal_of",
    "resource_server",
]


def resource_server(
    settings: Settings,
    discovered: tuple[Issuer, dict[str, Any]],
    resource: str,
    scopes_of: Callable[[str], Sequence[str]],
    all_scopes: Callable[[], Sequence[str]],
) -> ResourceServer:
    """The resource server for the canonical `resource` URL, with the issuer and keys read at start."""
    issuer, keys = discovered
    client_id, secret = settings.auth_client_id, settings.auth_client_secret
    check = TokenCheck(issuer, keys, resource, client=(client_id, secret) if client_id and secret else None)
    return ResourceServer(
        check,
        TokenTable(settings.tokens),
        scope=settings.auth_scope,
        scopes_of=scopes_of,
        all_scopes=all_scopes,
        max_body=settings.max_request_body,
    )
