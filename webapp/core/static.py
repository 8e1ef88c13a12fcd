"""The browser files: `static/` of the checkout, or the copy a wheel carries as `webapp/static`, served at `/static`.

Only `make` builds the bundles in `static/dist/`; the server reads them and says what to run when they are missing.
"""

from __future__ import annotations

from pathlib import Path

from webapp.core.settings import SettingsError

__all__ = ["STATIC_URL", "VIEWER_BUNDLE", "bundle_url", "require_bundle", "static_dir"]

STATIC_URL = "/static"
VIEWER_BUNDLE = "dist/viewer.js"
"""The viewer's entry, relative to the static folder (and to STATIC_URL)."""

_PACKAGED = Path(__file__).resolve().parents[1] / "static"  # webapp/static, in a wheel (setup.py copies it there)
_CHECKOUT = Path(__file__).resolve().parents[2] / "static"


def static_dir() -> Path:
    """The folder served at STATIC_URL: the wheel's copy when installed, else the checkout's `static/`."""
    return _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT


def bundle_url(name: str) -> str:
    """The URL of the bundle `name`, versioned by its build time, so a browser never runs a stale copy."""
    path = static_dir() / name
    version = path.stat().st_mtime_ns if path.is_file() else 0
    return f"{STATIC_URL}/{name}?v={version}"


def require_bundle(name: str) -> Path:
    """The path of the built bundle `name` (e.g. VIEWER_BUNDLE); a SettingsError that says how to build it if absent."""
    path = static_dir() / name
    if not path.is_file():
        raise SettingsError(
            f"the browser bundle {name!r} is not built (looked in {path.parent}): run 'make run' from the checkout, "
            "which builds static/dist/ (Node 20 or newer) and starts the server"
        )
    return path
