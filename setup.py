"""The wheel carries the browser files of `static/` (sources and the bundles `make` built) as `webapp/static`."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

STATIC = Path(__file__).resolve().parent / "static"


class BuildWithStatic(build_py):
    """`build_py`, then a copy of `static/` into the built `webapp` package (not in editable installs: they read the
    checkout's `static/`)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        if not (STATIC / "dist" / "viewer.js").is_file():
            raise SystemExit("static/dist has no built bundles: run 'make bundles' before building the package.")
        target = Path(self.build_lib) / "webapp" / "static"
        for path in sorted(STATIC.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                self.mkpath(str(target / path.relative_to(STATIC).parent))
                self.copy_file(str(path), str(target / path.relative_to(STATIC)), preserve_mode=False)


setup(cmdclass={"build_py": BuildWithStatic})
