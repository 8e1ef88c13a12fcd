"""The token check against the real issuer's keys (re-read on an unknown key at most once a minute, the start-up read
not counting), and the signed page cookies."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.support.oidc import Provider, SigningKey
from webapp.auth import Issuer, Rejected, TokenCheck, Verified, discover
from webapp.auth.cookies import CookieSigner, cookie_header

RESOURCE = "http://127.0.0.1:1/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclasses.dataclass(frozen=True, slots=True)
class CountingIssuer(Issuer):
    """The real issuer, its key reads counted."""

    reads: list[float] = dataclasses.field(default_factory=lambda: [])

    async def read_keys(self, timeout: float = 5.0) -> dict[str, Any]:
        self.reads.append(timeout)
        return await super(CountingIssuer, self).read_keys(timeout)


async def test_an_unknown_key_re_reads_the_issuer_s_keys_at_most_once_a_minute(provider: Provider) -> None:
    found, keys = discover(provider.issuer)
    issuer = CountingIssuer(**{field.name: getattr(found, field.name) for field in dataclasses.fields(found)})
    clock = Clock()
    check = TokenCheck(issuer, keys, RESOURCE, clock=clock)
    assert isinstance(await check.check(provider.mint(RESOURCE)), Verified) and issuer.reads == []
    for _ in range(3):  # within the minute after a re-read, unknown keys fail without asking the issuer again
        refused = await check.check(provider.mint(RESOURCE, key=SigningKey.new()))
        assert isinstance(refused, Rejected) and "does not list" in refused.reason
        clock.now += 20
    assert len(issuer.reads) == 1
    clock.now += 1
    assert isinstance(await check.check(provider.mint(RESOURCE, key=SigningKey.new())), Rejected)
    assert len(issuer.reads) == 2


async def test_the_first_unknown_key_after_start_is_re_read_at_once(provider: Provider) -> None:
    issuer, _ = discover(provider.issuer)
    check = TokenCheck(issuer, {"keys": []}, RESOURCE, clock=Clock())  # as if the issuer had rotated keys since
    verified = await check.check(provider.mint(RESOURCE, sub="lea"))
    assert isinstance(verified, Verified) and verified.principal == f"{provider.issuer}#lea"
    assert verified.scopes >= {"webapp"} and verified.access_token.subject == "lea"
    assert await check.verify_token("garbage") is None  # also the SDK's TokenVerifier


def test_a_sealed_cookie_opens_only_unchanged_unexpired_and_with_the_same_secret() -> None:
    clock = Clock()
    signer = CookieSigner("secret", "page session", clock)
    sealed = signer.seal({"p": "https://id.example#ann"}, 60)
    assert (signer.open(sealed) or {}).get("p") == "https://id.example#ann"
    assert CookieSigner("secret", "page session", clock).open(sealed) is not None  # another worker, same secret
    assert CookieSigner("other", "page session", clock).open(sealed) is None
    assert CookieSigner("secret", "page sign-in", clock).open(sealed) is None  # one purpose's cookie is not another's
    body, mac = sealed.split(".")
    assert signer.open(body[:-2] + "xx." + mac) is None and signer.open("garbage") is None
    clock.now += 61
    assert signer.open(sealed) is None


def test_a_cookie_is_http_only_same_site_lax_and_secure_on_https() -> None:
    name, value = cookie_header("webapp_person", "v", path="/", max_age=60, secure=True)
    assert name == b"set-cookie" and value == b"webapp_person=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure"
    assert b"Secure" not in cookie_header("webapp_person", "v", path="/", max_age=60, secure=False)[1]
