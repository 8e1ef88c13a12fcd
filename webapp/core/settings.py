"""Server settings: one pydantic model, read from `WEBAPP_<NAME>` environment variables and `webapp serve` flags.

Flags override the environment; every option has both forms (`--open-browser` / `WEBAPP_OPEN_BROWSER=1`).
"""

from __future__ import annotations

import argparse
import difflib
import ipaddress
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from webapp.core.redis_target import parse_redis_url
from webapp.core.security import normalize_origin
from webapp.core.sql import DatabaseTargetError, database_kind

__all__ = [
    "ENV_PREFIX",
    "Settings",
    "SettingsError",
    "allowed_hosts",
    "allowed_origins",
    "check_listen_address",
    "is_loopback",
    "parse_command_line",
]

ENV_PREFIX = "WEBAPP_"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_TOKEN = re.compile(r"^[^=\s]+=\S+$")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
log = logging.getLogger(__name__)


class SettingsError(ValueError):
    """A setting has a value the server refuses; the message says which and how to fix it."""


class Settings(BaseModel):
    """Every option of `webapp serve`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(default="127.0.0.1", description="Address to listen on.")
    port: int = Field(default=8080, ge=0, le=65535, description="Port to listen on; 0 picks any free port.")
    db: Path | str = Field(
        default=Path("inventory.db"),
        description="The app's database (inventory, views, call log): a SQLite file path, or a postgresql:// URL.",
    )
    app: str = Field(default="views.inventory:build", description="`module:attribute` of the app factory.")
    stdio: bool = Field(default=False, description="Serve MCP on stdin/stdout too (views stay on HTTP).")
    open_browser: bool = Field(default=False, description="Open newly created views in the local browser.")
    base_url: str | None = Field(default=None, description="URL prefix put into view links (behind a proxy).")
    token: list[str] = Field(default_factory=list, description="Bearer token for /mcp as PRINCIPAL=TOKEN; repeatable.")
    auth_issuer: str | None = Field(
        default=None,
        description="Sign-in: the OAuth 2.1 / OpenID Connect issuer (its exact issuer URL, https) whose access "
        "tokens /mcp accepts: tokens issued for the resource {base URL}/mcp (set --base-url behind a proxy). Its "
        "metadata and keys are read at start. Static --token values keep working beside it.",
    )
    auth_scope: str = Field(
        default="webapp", description="Sign-in: the scope every MCP call needs (actions may need one more)."
    )
    auth_client_id: str | None = Field(
        default=None,
        description="Sign-in: this server's client id at the issuer, for people signing in to the pages (callback "
        "{base URL}/auth/callback) and for token introspection.",
    )
    auth_client_secret: str | None = Field(
        default=None, description="Sign-in: the secret of --auth-client-id (prefer the environment variable)."
    )
    allowed_host: list[str] = Field(default_factory=list, description="Extra allowed Host header value; repeatable.")
    allowed_origin: list[str] = Field(default_factory=list, description="Extra allowed Origin; repeatable.")
    allow_remote: bool = Field(default=False, description="Allow listening on a non-loopback address.")
    ui_domain: str | None = Field(
        default=None,
        description="The `_meta.ui.domain` of the inline view resources (only for hosts that ask for one: a value "
        "a host does not expect makes it refuse the view).",
    )
    wait_for_live: float = Field(default=10.0, gt=0, description="Seconds a call waits for a pending view's tab.")
    reconnect_grace: float = Field(default=15.0, gt=0, description="Seconds a lost tab may take to reconnect.")
    pending_expiry: float = Field(default=600.0, gt=0, description="Seconds until a never-opened view expires.")
    closed_expiry: float = Field(default=1800.0, gt=0, description="Seconds from closed to expired.")
    call_timeout: float = Field(default=30.0, gt=0, description="Seconds a call may run inside a view.")
    tunnel_chunk: int = Field(
        default=120_000,
        ge=16_384,
        description="Largest tool result, in characters, of a view tunnelled through a host's MCP connection.",
    )
    view_coalesce: float = Field(
        default=0.1,
        ge=0,
        description="Seconds between two updates of a view that watches others' changes: a burst of changes reaches "
        "it as one update per interval with the newest state and every movement (the acting view's own change is "
        "never delayed); 0 sends every change at once.",
    )
    events_budget: float = Field(
        default=15_000,
        ge=0,
        description="With --redis-url: Redis deliveries a second the workers' frames of app events may cost together: "
        "a worker among N sends at most a frame per N²/budget s (0.67 s for 100, 1 ms for 4, at most 1 s), a burst's "
        "events together, an event after a quiet interval at once; 0 sends each loop turn's events at once.",
    )
    drain_timeout: float = Field(
        default=10.0, gt=0, description="Seconds a stopping server (SIGTERM) gives the calls in flight to end."
    )
    browser_confirm: bool = Field(default=True, description="Confirm each change with one browser round trip.")
    reopen: Literal["reuse", "new"] = Field(default="reuse", description="Opening again reuses or replaces the view.")
    max_views_per_caller: int = Field(
        default=20, ge=1, description="Open views per caller (principal, else MCP session); more get TOO_MANY_VIEWS."
    )
    session_idle_timeout: float = Field(default=1800.0, gt=0, description="Seconds until an idle MCP session ends.")
    max_request_body: int = Field(default=1 << 20, ge=1024, description="Largest /mcp request body in bytes (413).")
    call_log_size: int = Field(default=1000, ge=1, description="Calls kept in memory by the call log.")
    call_log_feed_size: int = Field(default=1000, ge=1, description="Records buffered per live call-log subscriber.")
    call_log_keep: int = Field(default=10_000, ge=1, description="Calls kept in the database.")
    call_log_max_age: float = Field(default=30 * 24 * 3600.0, gt=0, description="Seconds a call stays in the database.")
    redis_url: str | None = Field(
        default=None,
        description="Redis shared by several workers on one database: redis://host:port/db, rediss:// (TLS), unix://, "
        "redis+cluster://host:port[,host:port…] (Redis Cluster), redis+sentinel://[:SENTINELPW@]host:port[,…]/MASTER"
        "[/db][?password=…] (Sentinel; rediss+… for TLS); none: one process.",
    )
    request_state_key: str | None = Field(
        default=None,
        min_length=32,
        description="Secret (32 characters or more) sealing the state of MCP calls that ask their client over several "
        "rounds: the same on every worker, so required with --redis-url (prefer the environment variable).",
    )
    worker_id: str | None = Field(
        default=None, max_length=64, description="This worker's id among several (default: a random one)."
    )
    metrics: bool = Field(
        default=False,
        description="Serve /metrics on the serving port off loopback too (on loopback always), to allowed Hosts only: "
        "a scraper that uses the pod's address scrapes --metrics-port.",
    )
    metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Also serve /metrics, /healthz and /readyz on this separate port of the listening address, to "
        "any Host (0: any free port, printed at start).",
    )
    log_level: Literal["debug", "info", "warning", "error", "critical"] = Field(
        default="info", description="Log level of the server."
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines (and the URLs printed at start) as text, or as one JSON object per line for log "
        "shippers (time, level, logger, message, worker, a call's tool, outcome, duration, _call_id); secrets masked.",
    )

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower_case_level(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("db", mode="before")
    @classmethod
    def _db_is_a_path_or_a_postgres_url(cls, value: object) -> object:
        if not isinstance(value, str | Path):
            return value
        try:
            return value if database_kind(value) == "postgres" else Path(value)
        except DatabaseTargetError as error:
            raise ValueError(str(error)) from None

    @field_validator("redis_url")
    @classmethod
    def _redis_url_is_redis(cls, value: str | None) -> str | None:
        if value is not None:
            parse_redis_url(value)  # a RedisTargetError (a ValueError) names the accepted forms
        return value

    @field_validator(
        "metrics_port", "redis_url", "worker_id", "auth_issuer", "base_url", "request_state_key", mode="before"
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("worker_id")
    @classmethod
    def _worker_id_is_a_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value):
            raise ValueError(f"a worker id is letters, digits, '_', '.' or '-' (at most 64), got {value!r}")
        return value

    @field_validator("token")
    @classmethod
    def _tokens_are_pairs(cls, value: list[str]) -> list[str]:
        for item in value:
            if not _TOKEN.match(item):
                shown = item.split("=", 1)[0] + "=…" if "=" in item else "…"
                raise ValueError(f"a token must look like PRINCIPAL=TOKEN, got {shown!r}; fix --token")
            principal = item.split("=", 1)[0]
            if "#" in principal or "://" in principal:  # `{issuer}#{subject}` names the signed-in principals
                raise ValueError(f"a token's principal may not contain '#' or '://', got {principal!r}; fix --token")
        return value

    @field_validator("auth_issuer")
    @classmethod
    def _issuer_is_an_https_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        loopback = parts.hostname is not None and is_loopback(parts.hostname)
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise ValueError(f"the issuer must be an https:// URL (http only on loopback), got {value!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"the issuer URL has no query or fragment, got {value!r}")
        return value

    @field_validator("auth_scope")
    @classmethod
    def _scope_is_one_token(cls, value: str) -> str:
        if not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", value):
            raise ValueError(f"a scope is one word of visible characters without quotes or backslashes, got {value!r}")
        return value

    @field_validator("allowed_origin")
    @classmethod
    def _origins_are_origins(cls, value: list[str]) -> list[str]:
        for item in value:
            if normalize_origin(item) is None:
                raise ValueError(f"an allowed origin must look like 'http://host:port', got {item!r}")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--base-url must be an http(s) URL like 'https://host/prefix', got {value!r}")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _options_go_together(self) -> Settings:
        if self.redis_url and not self.request_state_key:
            raise ValueError("--redis-url needs --request-state-key (every worker the same secret, at least 32 bytes)")
        client = (self.auth_client_id or None, self.auth_client_secret or None)
        if any(client) and not self.auth_issuer:
            raise ValueError("--auth-client-id and --auth-client-secret need --auth-issuer")
        if any(client) and not all(client):
            raise ValueError("--auth-client-id and --auth-client-secret go together; give both")
        return self

    @property
    def tokens(self) -> dict[str, str]:  # bearer token → principal
        return {tok: principal for principal, tok in (item.split("=", 1) for item in self.token)}

    @classmethod
    def from_sources(cls, argv: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from the environment, overridden by the flags in `argv` (without the `serve` command)."""
        values = _from_environ(environ or {})
        parsed, unknown = _parser().parse_known_args(list(argv))
        if unknown:
            raise SettingsError(_unknown_argument(unknown[0]))
        values.update(vars(parsed))
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            raise SettingsError(_describe(error)) from None


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or address to listen on) is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.strip("[]") == "localhost"


def check_listen_address(settings: Settings) -> None:
    """Refuse a non-loopback listening address unless `--allow-remote` is set; warn when it is."""
    if is_loopback(settings.host):
        return
    if not settings.allow_remote:
        raise SettingsError(
            f"refusing to listen on the non-loopback address {settings.host!r}: anyone on the network could drive "
            "the views. Pass --allow-remote (and --token, --allowed-host) to do it anyway, or use --host 127.0.0.1."
        )
    log.warning("listening on %s: the server is reachable from the network", settings.host)


def allowed_hosts(settings: Settings, port: int) -> list[str]:
    """Host header values accepted on the serving `port`: the loopback names, the listening host, `--allowed-host`."""
    hosts = [urlsplit(origin).netloc for origin in _own_origins(settings, port)]
    for extra in settings.allowed_host:
        hosts.append(extra)
        if not re.search(r":\d+$", extra):  # a bare name: also accept it on the serving port
            hosts.append(f"{extra}:{port}")
    return list(dict.fromkeys(hosts))


def allowed_origins(settings: Settings, port: int) -> list[str]:
    """Origins accepted on the serving `port`: our own (loopback, listening host, base URL), `--allowed-origin`."""
    origins = _own_origins(settings, port) + [origin.rstrip("/") for origin in settings.allowed_origin]
    return list(dict.fromkeys(origins))


def _own_origins(settings: Settings, port: int) -> list[str]:
    origins = [f"http://{name}:{port}" for name in _LOOPBACK_NAMES]
    if not is_loopback(settings.host) and settings.host not in ("0.0.0.0", "::"):
        origins.append(f"http://{_bracket(settings.host)}:{port}")
    if settings.base_url:
        parts = urlsplit(settings.base_url)
        origins.append(f"{parts.scheme}://{parts.netloc}")
    return origins


def parse_command_line(argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """`webapp [serve] [options]` → Settings. `webapp` alone means `webapp serve`."""
    args = list(argv)
    if args and not args[0].startswith("-"):
        command = args.pop(0)
        if command != "serve":
            raise SettingsError(f"unknown command {command!r}; the only command is 'serve' (try 'webapp --help')")
    return Settings.from_sources(args, environ)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _from_environ(environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, info in Settings.model_fields.items():
        raw = environ.get(ENV_PREFIX + name.upper())
        if raw is None:
            continue
        if get_origin(info.annotation) is list:
            values[name] = [part for part in re.split(r"[,\s]+", raw) if part]
        elif info.annotation is bool:
            flag = raw.strip().lower()
            if flag not in _TRUE | _FALSE:
                raise SettingsError(
                    f"{ENV_PREFIX}{name.upper()} must be 1/0, true/false, yes/no or on/off, got {raw!r}"
                )
            values[name] = flag in _TRUE
        else:
            values[name] = raw
    return values


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="webapp serve",
        argument_default=argparse.SUPPRESS,
        allow_abbrev=False,  # a shortened or mistyped security option must never pass as another one
        description="Serve the web app and MCP at /mcp.",
    )
    for name, info in Settings.model_fields.items():
        flag = "--" + name.replace("_", "-")
        env = f"(env {ENV_PREFIX}{name.upper()})"
        helptext = f"{info.description} {env}"
        if info.annotation is bool:
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, help=helptext)
        elif get_origin(info.annotation) is list:
            parser.add_argument(flag, dest=name, action="append", metavar="VALUE", help=helptext)
        else:
            if get_origin(info.annotation) is Literal:  # validated by the model, which also accepts other cases
                helptext = f"{info.description} One of: {', '.join(get_args(info.annotation))}. {env}"
            parser.add_argument(flag, dest=name, metavar=name.upper(), help=helptext)
    return parser


def _unknown_argument(argument: str) -> str:
    if not argument.startswith("-"):
        return f"unexpected argument {argument!r}: options start with '--' (see 'webapp serve --help')"
    name = argument.split("=", 1)[0]
    known: list[str] = []
    for field, info in Settings.model_fields.items():
        flag = field.replace("_", "-")
        known += [f"--{flag}", f"--no-{flag}"] if info.annotation is bool else [f"--{flag}"]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else " (see 'webapp serve --help')"
    return f"unknown option {name!r}{hint}"


def _describe(error: ValidationError) -> str:
    lines: list[str] = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"])
        if not name:  # a rule across options: its message names them
            lines.append(str(problem["msg"]).removeprefix("Value error, "))
            continue
        lines.append(f"--{name.replace('_', '-')} / {ENV_PREFIX}{name.upper()}: {problem['msg']}")
    return "invalid settings: " + "; ".join(lines)
