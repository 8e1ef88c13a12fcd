"""Another commit of this repository, ready to serve: a `git worktree` in a temporary folder, with a venv keyed by a
hash of its `pyproject.toml` and `node_modules` keyed by a hash of its `package-lock.json` (both kept under
`build/regress/` for the next run), and its browser bundles built."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Generator
from pathlib import Path

from tests.support.e2e import REPO, Checkout

__all__ = ["worktree"]

CACHE = REPO / "build" / "regress"


def _run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed in {cwd} ({done.returncode}):\n{done.stdout}{done.stderr}")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _venv(root: Path) -> Path:
    """A venv with the runtime packages `root/pyproject.toml` names (the code itself comes from `PYTHONPATH`)."""
    folder = CACHE / f"venv-{_digest(root / 'pyproject.toml')}"
    python = folder / "bin" / "python"
    if not (folder / ".ready").exists():
        shutil.rmtree(folder, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(folder)], REPO)
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        _run([str(python), "-m", "pip", "install", "-q", *project["dependencies"]], root)
        (folder / ".ready").touch()
    return python


def _node_modules(root: Path) -> Path:
    """The runtime npm packages of `root/package-lock.json`: this checkout's when the lock is the same."""
    lock = root / "package-lock.json"
    if _digest(lock) == _digest(REPO / "package-lock.json") and (REPO / "node_modules").is_dir():
        return REPO / "node_modules"
    folder = CACHE / f"node-{_digest(lock)}"
    if not (folder / ".ready").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(root / name, folder / name)
        _run(["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"], folder)
        (folder / ".ready").touch()
    return folder / "node_modules"


@contextlib.contextmanager
def worktree(ref: str) -> Generator[Checkout]:
    """Commit `ref` checked out and built, until the block ends (the worktree is removed then; the caches stay)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="webapp-regress-") as parent:
        root = Path(parent) / commit[:12]
        _run(["git", "worktree", "add", "--detach", str(root), commit], REPO)
        try:
            python = _venv(root)
            os.symlink(_node_modules(root), root / "node_modules")
            _run(["node", "static/build.mjs"], root)
            yield Checkout(root=root, python=python)
        finally:
            _run(["git", "worktree", "remove", "--force", str(root)], REPO)
