"""The guides' examples under docs/examples are valid apps: the checks the server runs at start pass for them."""

from __future__ import annotations

from docs.examples.invoices import INVOICES, SAMPLE, revenue
from docs.examples.note_view import NoteView
from tests.support.e2e import REPO
from webapp.apps.naming import collect_app
from webapp.testing import meta, texts


def test_the_inline_hosts_note_view_is_an_app_with_an_opening_tool_and_no_actions() -> None:
    app = collect_app(NoteView)
    assert (app.name, app.route, app.actions, app.has_observer) == ("note", "/note", (), False)
    assert app.tool_claims() == [("note", "the opening tool of app class NoteView")]


def test_the_presenters_guide_shows_what_its_presenter_answers() -> None:
    guide = (REPO / "docs" / "guides" / "presenters.md").read_text()
    shown = guide.split("````text\n", 1)[1].split("\n````", 1)[0]
    assert "\n".join(texts(INVOICES.make(SAMPLE).build())) == shown


def test_the_hand_built_response_has_its_four_blocks_in_the_formats_order() -> None:
    built = revenue()
    blocks = texts(built)
    assert [block.split("\n", 1)[0] for block in blocks[1:]] == [
        '<ui_passthrough type="echarts" title="Revenue" width="full">',
        "<domain_rules>",
        "<action_suggestions>",
    ]
    side = meta(built)
    assert side is not None and side.data == {"month": "2024-05", "amount_cents": 452000}
