"""`--db`: a SQLite file path or a Postgres URL; anything else, or a server that cannot be reached, is refused at
start with a clear error (and creates nothing). The inventory server runs on Postgres like on SQLite. The framework's
own connections find a dead link within seconds (TCP keepalive, `tcp_user_timeout`, `statement_timeout`; SQLite's busy
timeout) on the real sockets."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from tests.support.e2e import mcp_client, run_server
from tests.support.postgres import PostgresServer
from webapp import open_database
from webapp.bridge.store import ViewStore
from webapp.core.settings import SettingsError, parse_command_line
from webapp.core.sql import (
    KEEPALIVE,
    STATEMENT_TIMEOUT,
    TCP_USER_TIMEOUT_MS,
    DatabaseTargetError,
    database_kind,
    shown_target,
)


@pytest.mark.parametrize("target", ["app.db", "data/app.db", ":memory:", "C:\\data\\app.db", Path("postgresql:x")])
def test_file_paths_are_sqlite(target: str | Path) -> None:
    assert database_kind(target) == "sqlite"


def test_postgres_urls_are_postgres_and_keep_their_text_in_the_settings() -> None:
    url = "postgresql://app:secret@db.example:5432/inventory"
    assert database_kind(url) == database_kind("postgres://db.example/inventory") == "postgres"
    assert parse_command_line(["--db", url], {}).db == url
    assert parse_command_line([], {"WEBAPP_DB": "data/app.db"}).db == Path("data/app.db")
    assert shown_target(url) == "postgresql://app:…@db.example:5432/inventory"


@pytest.mark.parametrize("target", ["postgresql:inventory", "mysql://app:secret@host/db", "file:app.db", "sqlite://x"])
def test_other_urls_are_refused_naming_the_scheme_but_never_the_password(target: str) -> None:
    with pytest.raises(DatabaseTargetError, match="neither a file path nor a supported database URL"):
        database_kind(target)
    with pytest.raises(SettingsError, match=r"--db .*postgresql://user@host") as refused:
        parse_command_line(["--db", target], {})
    assert "secret" not in str(refused.value)


def test_a_server_with_an_unsupported_db_url_stops_at_once_and_creates_nothing(tmp_path: Path) -> None:
    with run_server(db="postgresql:inventory", cwd=tmp_path, wait=False) as refused:
        assert refused.process.wait(30) == 2
    assert "neither a file path nor a supported database URL" in refused.output
    assert "Traceback" not in refused.output
    assert list(tmp_path.iterdir()) == []


def test_a_server_whose_postgres_cannot_be_reached_says_so_without_the_password(tmp_path: Path) -> None:
    url = "postgresql://app:hunter2@127.0.0.1:1/inventory"
    with run_server(db=url, app="views.inventory:build", cwd=tmp_path, wait=False) as refused:
        assert refused.process.wait(30) == 2
    assert "cannot connect to the database postgresql://app:…@127.0.0.1:1/inventory" in refused.output
    assert "hunter2" not in refused.output and "Traceback" not in refused.output


async def test_the_inventory_server_keeps_its_stock_views_and_calls_in_postgres(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    with run_server(db=url, app="views.inventory:build", cwd=tmp_path) as server:
        async with mcp_client(server) as client:
            opened = await client.call_tool("inventory", {})
            listed = await client.call_tool("warehouses", {"action": "list"})
        assert not opened.is_error and not listed.is_error
    with closing(open_database(url)) as db:
        (views,) = db.execute("SELECT count(*) FROM webapp_views WHERE app = 'inventory'").fetchone()
        tools = [row[0] for row in db.execute("SELECT tool FROM webapp_calls ORDER BY seq").fetchall()]
        (warehouses,) = db.execute("SELECT count(*) FROM inventory_warehouses").fetchone()
    assert (views, tools, warehouses) == (1, ["inventory", "warehouses"], 3)


def test_a_transaction_whose_connection_broke_inside_fails_even_when_the_failed_statement_was_caught(
    postgres: PostgresServer,
) -> None:
    url = postgres.new_database()
    with closing(open_database(url)) as db, psycopg.connect(postgres.url(), autocommit=True) as admin:
        db.execute("CREATE TABLE booked (units BIGINT NOT NULL)")
        failed = pytest.raises(psycopg.OperationalError, match="before the transaction committed")
        with failed, db.transaction("test"):
            db.execute("INSERT INTO booked (units) VALUES (1)")
            (pid,) = db.execute("SELECT pg_backend_pid()").fetchone()
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
            with contextlib.suppress(psycopg.OperationalError):  # e.g. a notification read that may fail
                db.execute("SELECT 1")
            with pytest.raises(psycopg.OperationalError):  # never on a new connection outside the transaction
                db.execute("INSERT INTO booked (units) VALUES (2)")
        assert db.execute("SELECT count(*) FROM booked").fetchone() == (0,)


def test_a_broken_postgres_connection_fails_one_statement_and_is_made_anew_for_the_next(
    postgres: PostgresServer,
) -> None:
    url = postgres.new_database()
    with closing(open_database(url)) as db, psycopg.connect(postgres.url(), autocommit=True) as admin:
        (pid,) = db.execute("SELECT pg_backend_pid()").fetchone()
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))  # waits until that backend is gone
        with pytest.raises(psycopg.OperationalError):
            db.execute("SELECT 1")
        assert db.execute("SELECT 1").fetchone() == (1,)
        with db.transaction("test"):
            assert db.execute("SELECT pg_backend_pid()").fetchone() != (pid,)


async def test_a_framework_postgres_connection_has_keepalive_a_user_timeout_and_a_statement_timeout(
    postgres: PostgresServer,
) -> None:
    store = ViewStore(postgres.new_database())
    await store.open()
    try:
        conn = store._conn._conn  # pyright: ignore[reportPrivateUsage]  # the framework's own psycopg connection
        assert isinstance(conn, psycopg.Connection)
        with socket.socket(fileno=os.dup(conn.pgconn.socket)) as sock:  # the connection's own socket, read only
            options = {
                "SO_KEEPALIVE": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                "TCP_KEEPIDLE": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                "TCP_KEEPINTVL": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                "TCP_KEEPCNT": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
                "TCP_USER_TIMEOUT": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
            }
        shown = conn.execute("SHOW statement_timeout").fetchone()
    finally:
        await store.close()
    assert options == {
        "SO_KEEPALIVE": 1,
        "TCP_KEEPIDLE": KEEPALIVE["keepalives_idle"],
        "TCP_KEEPINTVL": KEEPALIVE["keepalives_interval"],
        "TCP_KEEPCNT": KEEPALIVE["keepalives_count"],
        "TCP_USER_TIMEOUT": TCP_USER_TIMEOUT_MS,
    }
    # a dead peer is found within a few seconds, well inside the heartbeat's TTL plus two looks (~4.5 s)
    assert KEEPALIVE["keepalives_idle"] + KEEPALIVE["keepalives_interval"] * KEEPALIVE["keepalives_count"] <= 4
    assert TCP_USER_TIMEOUT_MS <= 3000 and shown == (f"{STATEMENT_TIMEOUT:g}s",)


async def test_a_framework_sqlite_connection_waits_for_the_write_lock_less_than_the_heartbeats_ttl(
    tmp_path: Path,
) -> None:
    store = ViewStore(tmp_path / "app.db")
    await store.open()
    try:
        conn = store._conn._conn  # pyright: ignore[reportPrivateUsage]
        assert isinstance(conn, sqlite3.Connection)
        (busy,) = conn.execute("PRAGMA busy_timeout").fetchone()
    finally:
        await store.close()
    assert busy <= 2000
