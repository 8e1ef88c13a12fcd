"""A throwaway Postgres server for the tests: initialised and run as the `postgres` user (Postgres refuses root)
on a free loopback port, its data in a folder under /tmp that only lives for the test session; `stopped()` makes an
outage and a recovery on the same port."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

__all__ = ["PostgresServer", "start_postgres"]

_USER = "app"
_START_TIMEOUT = 30
_INITDB = ("--locale=C.UTF-8", "--no-sync", "--no-instructions")


def _bindir() -> Path:
    return Path(subprocess.run(["pg_config", "--bindir"], check=True, capture_output=True, text=True).stdout.strip())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_postgres(*command: str | Path) -> list[str]:
    """The command run as the `postgres` user when we are root (as on CI), else as ourselves."""
    args = [str(part) for part in command]
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@dataclass
class PostgresServer:
    """A running server; `new_database()` gives each test a database of its own."""

    folder: Path
    port: int
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    settings: tuple[str, ...] = ()
    """More server settings (`name=value`), e.g. a benchmark's `shared_preload_libraries=pg_stat_statements`."""

    @property
    def options(self) -> str:
        """The server's options (`pg_ctl start -o`): its port, its socket folder, no durability."""
        return (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off -c synchronous_commit=off"
            " -c full_page_writes=off"
        ) + "".join(f" -c {setting}" for setting in self.settings)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{_USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """The URL of a new, empty database."""
        name = f"test_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def restart(self) -> None:
        """A fast restart (`pg_ctl restart -m fast`): every connection is cut, the server is back when this returns."""
        pg_ctl = _bindir() / "pg_ctl"
        subprocess.run(
            _as_postgres(pg_ctl, "-D", self.data, "-m", "fast", "-w", "-l", self.folder / "log", "restart"),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT + 5,
        )

    @contextlib.contextmanager
    def stopped(self) -> Generator[None]:
        """The server is down (a fast stop: every connection is cut) until the block ends, then back on its port."""
        pg_ctl = _bindir() / "pg_ctl"
        subprocess.run(
            _as_postgres(pg_ctl, "-D", self.data, "-m", "fast", "-w", "stop"),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
        try:
            yield
        finally:
            subprocess.run(
                _as_postgres(pg_ctl, "-D", self.data, "-w", "-o", self.options, "-l", self.folder / "log", "start"),
                check=True,
                capture_output=True,
                timeout=_START_TIMEOUT + 5,
            )

    def stop(self) -> None:
        pg_ctl = _bindir() / "pg_ctl"
        subprocess.run(
            _as_postgres(pg_ctl, "-D", self.data, "-m", "immediate", "-w", "stop"),
            check=False,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def start_postgres(*settings: str) -> PostgresServer:
    """initdb (trust auth for `app`, UTF-8, no fsync) and start a server on a free loopback port, socket in the
    data folder's parent, with `settings` (`name=value`) beside the defaults; waits until it accepts connections."""
    folder = Path(tempfile.mkdtemp(prefix="webapp-pg-", dir="/tmp"))  # pytest's own folders are mode 0700
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    server = PostgresServer(folder, _free_port(), settings=settings)
    bindir = _bindir()
    try:
        subprocess.run(
            _as_postgres(bindir / "initdb", "-D", server.data, "-A", "trust", "-U", _USER, "-E", "UTF8", *_INITDB),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
        subprocess.run(
            _as_postgres(
                bindir / "pg_ctl", "-D", server.data, "-w", "-o", server.options, "-l", folder / "log", "start"
            ),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT + 5,
        )
    except BaseException:
        server.stop()
        raise
    return server
