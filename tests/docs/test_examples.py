"""The guides' examples under docs/examples are valid apps: the checks the server runs at start pass for them."""

from __future__ import annotations

from docs.examples.note_view import NoteView
from webapp.apps.naming import collect_app


def test_the_inline_hosts_note_view_is_an_app_with_an_opening_tool_and_no_actions() -> None:
    app = collect_app(NoteView)
    assert (app.name, app.route, app.actions, app.has_observer) == ("note", "/note", (), False)
    assert app.tool_claims() == [("note", "the opening tool of app class NoteView")]
