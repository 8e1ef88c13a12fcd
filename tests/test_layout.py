"""The tree shows the architecture: small modules, and no module name that repeats its package's name."""

from __future__ import annotations

from pathlib import Path

from tests.support.e2e import REPO

PACKAGES = ("webapp", "views", "actions")
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(REPO)): n for path in _modules() if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_module_name_repeats_its_package_name() -> None:
    repeating = [
        str(path.relative_to(REPO))
        for path in _modules()
        if path.stem == path.parent.name or path.stem.startswith(path.parent.name.rstrip("s") + "_")
    ]
    assert repeating == []
