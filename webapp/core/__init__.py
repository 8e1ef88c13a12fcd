"""The bottom layer every other reads: settings, Host/Origin checks, bearer tokens, the call context, the SQL base."""

from webapp.core.auth import PRINCIPAL_SCOPE_KEY, BearerAuth, SessionOwners, TokenTable
from webapp.core.context import STDIO, CallContext, Caller, ProgressReporter, no_progress
from webapp.core.database import FrameworkTable, dump_json, load_json, upsert
from webapp.core.security import HostOriginGuard, HostPolicy, Refusal, normalize_origin
from webapp.core.settings import (
    ENV_PREFIX,
    Settings,
    SettingsError,
    allowed_hosts,
    allowed_origins,
    check_listen_address,
    is_loopback,
    parse_command_line,
)
from webapp.core.sql import (
    DATABASE_ERRORS,
    Database,
    DatabaseTargetError,
    Dialect,
    Rows,
    database_kind,
    open_database,
    shown_target,
)

__all__ = [
    "DATABASE_ERRORS",
    "ENV_PREFIX",
    "PRINCIPAL_SCOPE_KEY",
    "STDIO",
    "BearerAuth",
    "CallContext",
    "Caller",
    "Database",
    "DatabaseTargetError",
    "Dialect",
    "FrameworkTable",
    "HostOriginGuard",
    "HostPolicy",
    "ProgressReporter",
    "Refusal",
    "Rows",
    "SessionOwners",
    "Settings",
    "SettingsError",
    "TokenTable",
    "allowed_hosts",
    "allowed_origins",
    "check_listen_address",
    "database_kind",
    "dump_json",
    "is_loopback",
    "load_json",
    "no_progress",
    "normalize_origin",
    "open_database",
    "parse_command_line",
    "shown_target",
    "upsert",
]
