"""`webapp [serve] [options]`: parse the settings, build the app with its `--app` factory and serve it."""

from __future__ import annotations

import importlib
import logging.config
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import cast

from webapp.auth import discover
from webapp.cluster import install_cluster
from webapp.core.settings import Settings, SettingsError, check_listen_address, parse_command_line
from webapp.core.sql import DatabaseTargetError
from webapp.server.composition import WebApp
from webapp.server.hosting import claim_stdio, serve
from webapp.server.logs import logging_config
from webapp.server.tracing import install_tracing
from webapp.viewer.install import install_viewer

__all__ = ["load_factory", "main"]


def load_factory(spec: str) -> Callable[[WebApp], object]:
    """The app factory named by `module:attribute`."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SettingsError(f"--app must look like 'module:attribute', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SettingsError(f"--app {spec!r}: cannot import module {module_name!r} ({error})") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise SettingsError(f"--app {spec!r}: module {module_name!r} has no callable {attribute!r}")
    return cast(Callable[[WebApp], object], factory)


def main(argv: Sequence[str] | None = None) -> int:
    """The `webapp` console script."""
    try:
        settings: Settings = parse_command_line(sys.argv[1:] if argv is None else argv, os.environ)
        issuer = discover(settings.auth_issuer) if settings.auth_issuer else None  # before anything else starts
        wire = claim_stdio() if settings.stdio else None
        webapp = WebApp(settings)
        webapp.issuer = issuer
        worker, masker = webapp.settings.worker_id, webapp.calllog.masker  # with --redis-url, WebApp made the id
        config = logging_config(settings.log_level, masker, log_format=settings.log_format, worker=worker)
        logging.config.dictConfig(config)
        install_tracing(os.environ, worker=worker, masker=masker)  # with webapp[otel] and OTEL_* variables asking
        check_listen_address(settings)
        install_viewer(webapp)  # first, so a factory that passes its views to install_viewer adds them
        load_factory(settings.app)(webapp)
        install_cluster(webapp)  # with --redis-url: one worker among several (after the apps added their bridges)
        serve(webapp, stdio=wire, log_config=config)
    except (SettingsError, DatabaseTargetError) as error:
        print(f"webapp: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the server drained and stopped; asyncio re-raises the signal as this
        return 128 + signal.SIGINT
    return 0
