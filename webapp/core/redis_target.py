"""What `--redis-url` names: one Redis (`redis://`, `rediss://`, `unix://`), a Redis Cluster (`redis+cluster://`) or a
master found through Sentinel (`redis+sentinel://`), parsed once with errors that state the rule and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NoReturn
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["RedisTarget", "RedisTargetError", "parse_redis_url"]

_PLAIN = ("redis", "rediss", "unix")
_FORMS = (
    "redis://[:PASSWORD@]host:port[/db], rediss://… (TLS), unix:///path/to.sock, "
    "redis+cluster://host:port[,host:port…], rediss+cluster://…, "
    "redis+sentinel://[:SENTINELPW@]host:port[,host:port…]/MASTER[/db][?password=…], rediss+sentinel://…"
)


class RedisTargetError(ValueError):
    """`--redis-url` is not one of the accepted forms."""


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """`kind` "plain": `url` as redis-py reads it; "cluster": seed `nodes`; "sentinel": the sentinels' `nodes`, the
    `master` name, `db`, the master's `password` and the sentinels' `sentinel_password`. `tls`: rediss+…"""

    kind: Literal["plain", "cluster", "sentinel"]
    url: str
    nodes: tuple[tuple[str, int], ...] = ()
    tls: bool = False
    username: str | None = None
    password: str | None = None
    master: str = ""
    db: int = 0
    sentinel_password: str | None = None
    ca_certs: str | None = None  # `?ssl_ca_certs=PATH`: the CA file a rediss+… connection trusts


def parse_redis_url(url: str) -> RedisTarget:
    """The target `url` names; RedisTargetError (with the URL shown without its password) otherwise."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _PLAIN:
        return RedisTarget("plain", url, tls=scheme == "rediss")
    base, _, engine = scheme.partition("+")
    if base not in ("redis", "rediss") or engine not in ("cluster", "sentinel"):
        _fail(url, f"the scheme {scheme or 'of a path'!r} is not one of them")
    tls = base == "rediss"
    nodes = _nodes(url, parts.netloc.rpartition("@")[2])
    user_part = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    username, _, password = user_part.partition(":")
    query = parse_qs(parts.query)
    ca_certs = query.get("ssl_ca_certs", [None])[0]
    if engine == "cluster":
        if parts.path not in ("", "/"):
            _fail(url, "Redis Cluster has one database only: drop the path")
        password = unquote(password) if user_part else None
        return RedisTarget("cluster", url, nodes, tls, unquote(username) or None, password, ca_certs=ca_certs)
    path = [segment for segment in parts.path.split("/") if segment]
    if not path or len(path) > 2:
        _fail(url, "a Sentinel URL names the master after the sentinels: …/MASTER or …/MASTER/db")
    db = path[1] if len(path) == 2 else "0"
    if not db.isdigit():
        _fail(url, f"the database after the master must be a number, not {db!r}")
    return RedisTarget(
        "sentinel",
        url,
        nodes,
        tls,
        password=query.get("password", [None])[0],
        master=unquote(path[0]),
        db=int(db),
        sentinel_password=unquote(password) if user_part else None,
        ca_certs=ca_certs,
    )


def _nodes(url: str, hosts: str) -> tuple[tuple[str, int], ...]:
    found: list[tuple[str, int]] = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            _fail(url, f"every node must be host:port, not {item.strip()!r}")
        found.append((host.strip("[]"), int(port)))
    return tuple(found)


def _fail(url: str, why: str) -> NoReturn:
    raise RedisTargetError(f"--redis-url {_shown(url)!r}: {why}. Use one of: {_FORMS}")


def _shown(url: str) -> str:
    """`url` without its passwords (the user part's and a `password=` query value)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, hosts = netloc.rpartition("@")
        name = user.partition(":")[0]
        netloc = f"{name}:***@{hosts}" if ":" in user else f"***@{hosts}"
    query = "&".join(
        f"{key}=***" if key == "password" else f"{key}={value}"
        for key, _, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    return parts._replace(netloc=netloc, query=query).geturl()
