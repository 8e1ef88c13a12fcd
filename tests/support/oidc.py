"""A real authorization server on loopback (npm `oidc-provider` on the project's Node 22, `oidc_provider.mjs`) with
signing keys the tests know, so they can also mint tokens the server must refuse; and a headless login through its
development login and consent forms (what a person does in the browser).
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import subprocess
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from tests.support.e2e import REPO
from tests.support.inspector_web import free_port
from tests.support.security_npm import NODE_BIN, run_node_service

__all__ = ["Provider", "SigningKey", "headless_login", "run_provider"]

SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
SCOPES = "webapp counter:write inventory:write"
_START_TIMEOUT = 30.0


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: rsa.RSAPrivateKey

    @classmethod
    def new(cls, kid: str | None = None) -> SigningKey:
        return cls(kid or secrets.token_hex(6), rsa.generate_private_key(public_exponent=65537, key_size=2048))

    def jwk(self) -> dict[str, Any]:
        entry = json.loads(RSAAlgorithm.to_jwk(self.private))
        return {**entry, "kid": self.kid, "use": "sig", "alg": "RS256"}

    def public_pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


@dataclass
class Provider:
    process: subprocess.Popen[str]
    issuer: str
    key: SigningKey
    lines: list[str] = field(default_factory=lambda: [])

    def mint(
        self, resource: str, *, key: SigningKey | None = None, headers: Mapping[str, Any] | None = None, **claims: Any
    ) -> str:
        """An access token as the issuer would sign it (or with another `key`); `claims` override the defaults."""
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "sub": "mallory",
            "aud": resource,
            "iat": now,
            "exp": now + 300,
            "scope": SCOPES,
            "client_id": "test",
            **claims,
        }
        signer = key or self.key
        return jwt.encode(
            {k: v for k, v in payload.items() if v is not None},
            signer.private,
            algorithm="RS256",
            headers={"kid": signer.kid, "typ": "at+jwt", **(headers or {})},
        )

    def register(self, redirect_uri: str) -> tuple[str, str]:
        """A confidential web client registered now (DCR): its id and secret."""
        answer = httpx.post(
            self.issuer + "/reg",
            json={
                "redirect_uris": [redirect_uri],
                "application_type": "web",
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_basic",
            },
            timeout=10,
        )
        answer.raise_for_status()
        client = answer.json()
        return client["client_id"], client["client_secret"]


@contextlib.contextmanager
def run_provider(folder: Path, *, port: int | None = None, key: SigningKey | None = None) -> Generator[Provider]:
    """Start the authorization server on a free loopback port until the block ends."""
    node = NODE_BIN / "node"
    if not node.exists() or not (REPO / "node_modules" / "oidc-provider").exists():
        raise RuntimeError("oidc-provider or Node 22 is missing: run `make node_modules/.installed` (npm ci) first")
    key = key or SigningKey.new()
    port = port or free_port()
    config = folder / f"oidc-{port}.json"
    config.write_text(json.dumps({"port": port, "jwks": {"keys": [key.jwk()]}, "scope": SCOPES}))
    command = [str(node), str(SCRIPT), str(config)]
    with run_node_service(
        command, lambda line: line.startswith("ready "), "the authorization server", env={}, timeout=_START_TIMEOUT
    ) as service:
        yield Provider(service.process, f"http://127.0.0.1:{port}", key, service.lines)


def headless_login(http: httpx.Client, url: str, redirect_uri: str, user: str) -> dict[str, str]:
    """Follow an authorization URL through the development login and consent forms as `user` until the issuer
    redirects to `redirect_uri`; returns that redirect's query (`code`, `state`, `iss`)."""
    for _ in range(12):
        answer = http.get(url) if not url.startswith(redirect_uri) else None
        if answer is None:
            return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
        if answer.status_code in (302, 303):
            url = urljoin(url, answer.headers["location"])
            continue
        answer.raise_for_status()
        prompt = re.search(r'name="prompt" value="(\w+)"', answer.text)
        if prompt is None:
            raise AssertionError(f"no login or consent form at {url}: {answer.text[:300]}")
        form = {"prompt": prompt.group(1)}
        if prompt.group(1) == "login":
            form.update(login=user, password="any")
        posted = http.post(url, data=form)
        assert posted.status_code in (302, 303), posted.text[:300]
        url = urljoin(url, posted.headers["location"])
    raise AssertionError("the login did not end at the redirect URI")
