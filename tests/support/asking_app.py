"""An MCP app whose action asks the person first (`--app tests.support.asking_app:build`): `titled_rename` elicits
the new title before it changes anything, so a call forwarded to the worker holding the tab asks through the calling
worker's client; `titled_stamp` logs to the client and changes the view's resource without asking."""

from __future__ import annotations

from typing import Any

from nicegui import ui
from pydantic import BaseModel

from webapp.apps.definition import ViewContext, mcp_app, mcp_app_action
from webapp.bridge.app_tools import install_apps
from webapp.core.context import CallContext
from webapp.core.sql import Database
from webapp.server.composition import WebApp

__all__ = ["TitledView", "build"]


class NewTitle(BaseModel):
    title: str


@mcp_app(description="Shows a title.", route="/titled")
class TitledView:
    def __init__(self, view: ViewContext[None]) -> None:
        self.view = view
        view.data.setdefault("title", "Untitled")
        self.label = ui.label(str(view.data["title"])).props("data-testid=title")

    @mcp_app_action(description="Asks the person for a new title, then shows it.")
    async def rename(self, *, ctx: CallContext) -> str:
        answer = await ctx.elicit("What should the title be?", NewTitle, key="title")
        if answer.action != "accept":
            return f"Kept the title ({answer.action})."
        self.view.data["title"] = self.label.text = answer.data.title
        return f"Renamed to {answer.data.title}."

    @mcp_app_action(description="Logs what it does, then stamps the title.")
    async def stamp(self, *, ctx: CallContext) -> str:
        await ctx.log("debug", "Looking at the title")
        await ctx.log("info", "Stamping the title")
        stamps = self.view.data["stamps"] = int(self.view.data.get("stamps", 0)) + 1
        self.view.data["title"] = self.label.text = f"Stamped {stamps}"
        return "Stamped."

    @classmethod
    def resource(cls, data: dict[str, Any], db: Database) -> dict[str, Any]:
        (views,) = db.execute("SELECT COUNT(*) FROM webapp_views").fetchone()  # read from the server's database
        return {"title": data.get("title"), "views": views}


def build(webapp: WebApp) -> None:
    install_apps(webapp, TitledView)
