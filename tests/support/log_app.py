"""The counter app (`tests.support.test_app`) and `leak`, a tool that logs its text in a field of its own and then
raises with it: what a careless app does with a secret, for the log tests (`--app tests.support.log_app:build`)."""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict

from tests.support import test_app
from webapp.server.composition import WebApp
from webapp.tools.registry import Tool

__all__ = ["build"]

log = logging.getLogger("tests.leaky")


class Leak(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str


def leak(params: Leak) -> str:
    log.warning("about to fail", extra={"leaked": params.text, "nested": {params.text: [params.text]}})
    raise RuntimeError(f"cannot use {params.text}")


def build(webapp: WebApp) -> None:
    test_app.build(webapp)
    webapp.add_tool(Tool("leak", description="Logs its text, then fails with it.", handler=leak, input=Leak))
