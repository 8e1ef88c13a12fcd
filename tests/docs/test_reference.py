"""The docs site's generated reference: built once, strictly, into a temporary folder; every option of the settings
model is on the command line page, every public name of `webapp` has an API entry, every framework error its row."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocstrings import Inventory

import webapp
from scripts.reference import write_reference
from tests.support.e2e import REPO
from webapp.core.settings import ENV_PREFIX, Settings
from webapp.responses.codes import ERROR_CODES


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site as `make docs` builds it (strict: a warning fails the build), its generated parts in a temp folder."""
    root = tmp_path_factory.mktemp("docs")
    generated = root / "generated"
    write_reference(generated)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_MKDOCS_2_WARNING", "1")
        patch.chdir(REPO)  # the snippets' base paths are relative to the working folder, as for `make docs`
        config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(root / "site"), strict=True)
        config.mdx_configs["pymdownx.snippets"]["base_path"] = [str(REPO), str(generated)]
        build(config)
    yield root / "site"


def _page(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def _text(html: str) -> str:
    """The text of an HTML fragment: tags dropped, entities decoded, white space joined."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_command_line_page_lists_every_option_of_the_settings_model(site: Path) -> None:
    rows = [_text(row) for row in _page(site, "reference/cli").split("<tr>")[2:]]  # after the header row
    assert len(rows) == len(Settings.model_fields)
    for row, (name, info) in zip(rows, Settings.model_fields.items(), strict=True):
        assert row.startswith("--" + name.replace("_", "-")), row
        assert f"{ENV_PREFIX}{name.upper()}" in row
        assert info.description and info.description.replace("`", "") in row


def test_every_public_name_of_webapp_has_an_entry_in_the_api_reference(site: Path) -> None:
    with (site / "objects.inv").open("rb") as file:
        inventory = Inventory.parse_sphinx(file)
    for name in webapp.__all__:
        assert f"webapp.{name}" in inventory, name
        assert inventory[f"webapp.{name}"].uri == f"reference/api/#webapp.{name}"


def test_the_error_page_has_a_row_for_every_registered_framework_error(site: Path) -> None:
    page = _page(site, "reference/errors")
    for entry in ERROR_CODES.values():
        row = f"<code>{entry.code}</code>" + (f" ({entry.case})" if entry.case else "")
        assert row in page, row
    assert page.count("<tr>") == len(ERROR_CODES) + 5  # one header row per part of the framework


def test_the_wire_page_shows_the_vectors_and_the_docstrings_of_webapp_wire(site: Path) -> None:
    page = _page(site, "reference/wire")
    assert "seed-example" in page
    for name in ("jsontext.to_json", "markup.fence", "markup.render_tool_error", "parse.parse_blocks"):
        assert f'id="webapp.wire.{name}"' in page, name
