"""A view that reaches the MCP Apps host it is shown in (the inline-hosts guide's example)."""

from __future__ import annotations

from nicegui import ui

from webapp import HostError, ViewContext, mcp_app

__all__ = ["NoteView"]


@mcp_app(description="Shows a note the assistant can be asked about.", route="/note")
class NoteView:
    def __init__(self, view: ViewContext[None]) -> None:
        self.host = view.host  # None unless shown inline in an MCP Apps host
        if self.host is not None:
            self.host.on("context_changed", lambda context: ui.notify(f"theme: {context.get('theme')}"))
            ui.button("Ask the assistant", on_click=self.ask)

    async def ask(self) -> None:
        assert self.host is not None
        try:
            await self.host.send_message("Summarise this note, please.")
            await self.host.update_model_context("The user is reading the note.")
        except HostError as error:  # e.g. "send_message is not supported by this host (MCP Inspector)."
            ui.notify(str(error), type="warning")
