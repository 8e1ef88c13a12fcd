"""`PageHost`: the `Host` of one embedded tab. Requests go server → page → shell → host and answers come back the same
way, correlated by id; every request is gated on the host's capabilities and bounded in time.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
from collections.abc import Mapping
from typing import Any, Literal, cast

from nicegui import Client, background_tasks
from nicegui.events import GenericEventArguments

from webapp.apps.host import DisplayMode, HostError, HostEvent, HostHandler

__all__ = ["EVENT", "PageHost"]

EVENT = "webapp-host"
"""The NiceGUI event the page's head script emits for every message from the shell."""
log = logging.getLogger(__name__)
_CAPABILITY = {
    "send_message": "message",
    "update_model_context": "updateModelContext",
    "open_link": "openLinks",
    "call_tool": "serverTools",
}
_EVENTS: frozenset[str] = frozenset({"tool_input", "tool_result", "context_changed", "teardown"})
_INTRODUCTION = 5.0  # seconds a view's build waits for the host's introduction (it comes one round trip after connect)


class PageHost:
    """The host around one embedded NiceGUI client; `receive` is the handler of the page's `webapp-host` events."""

    def __init__(self, client: Client, *, timeout: float, base_url: str = "") -> None:
        self._client = client
        self._timeout = timeout
        self._base_url = base_url.rstrip("/")  # where a root-relative link of the view points (the public origin)
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._handlers: dict[str, list[HostHandler]] = {}
        self._ready = asyncio.Event()
        self._gone = False
        self.info: Mapping[str, Any] = {}
        self.capabilities: Mapping[str, Any] = {}
        self.context: Mapping[str, Any] = {}
        self.tool_input: Mapping[str, Any] | None = None
        self.tool_result: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        return str(self.info.get("name") or "this host")

    @property
    def theme(self) -> Literal["light", "dark"]:
        return "dark" if self.context.get("theme") == "dark" else "light"

    async def ready(self) -> bool:
        try:
            async with asyncio.timeout(min(self._timeout, _INTRODUCTION)):
                await self._ready.wait()
        except TimeoutError:
            return False
        return True

    def supports(self, request: str) -> bool:
        if request == "request_display_mode":
            return bool(self.context.get("availableDisplayModes"))
        capability = _CAPABILITY.get(request)
        return capability is not None and self.capabilities.get(capability) is not None

    def on(self, event: HostEvent, handler: HostHandler) -> None:
        if event not in _EVENTS:
            raise ValueError(f"unknown host event {event!r}; use one of {sorted(_EVENTS)}")
        self._handlers.setdefault(event, []).append(handler)

    # -- requests -----------------------------------------------------------------------------------------------
    async def send_message(self, text: str) -> None:
        await self._request("send_message", "ui/message", {"role": "user", "content": [_text(text)]})

    async def update_model_context(self, text: str | None = None, structured: Mapping[str, Any] | None = None) -> None:
        params: dict[str, Any] = {}
        if text is not None:
            params["content"] = [_text(text)]
        if structured is not None:
            params["structuredContent"] = dict(structured)
        await self._request("update_model_context", "ui/update-model-context", params)

    async def open_link(self, url: str) -> None:
        if url.startswith("/") and not url.startswith("//"):  # the host would resolve it against its own origin
            url = self._base_url + url
        result = await self._request("open_link", "ui/open-link", {"url": url})
        if result.get("isError"):
            raise HostError("HOST_ERROR", f"{self.name} did not open the link.")

    async def request_display_mode(self, mode: DisplayMode) -> DisplayMode:
        await self._wait_ready("request_display_mode")
        if mode not in self.context.get("availableDisplayModes", ()):
            raise HostError("NOT_SUPPORTED", f"The display mode {mode!r} is not supported by this host ({self.name}).")
        result = await self._request("request_display_mode", "ui/request-display-mode", {"mode": mode})
        return cast(DisplayMode, result.get("mode", mode))

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        return await self._request("call_tool", "tools/call", {"name": name, "arguments": dict(arguments or {})})

    async def _wait_ready(self, request: str) -> None:
        if self._gone:
            raise HostError("GONE", f"{request}: the host has closed this view's frame.")
        try:
            async with asyncio.timeout(self._timeout):
                await self._ready.wait()
        except TimeoutError:
            raise HostError("TIMEOUT", f"{request}: the host did not start within {self._timeout:g} s.") from None

    async def _request(self, request: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self._wait_ready(request)
        if request != "request_display_mode" and not self.supports(request):
            raise HostError("NOT_SUPPORTED", f"{request} is not supported by this host ({self.name}).")
        request_id = next(self._ids)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        try:
            self._client.run_javascript(
                f"window.__webappHost.request({request_id}, {json.dumps(method)}, {json.dumps(params)})"
            )
            async with asyncio.timeout(self._timeout):
                message: Mapping[str, Any] = await answer
        except TimeoutError:
            raise HostError("TIMEOUT", f"{request}: {self.name} did not answer within {self._timeout:g} s.") from None
        finally:
            self._waiting.pop(request_id, None)
        error = message.get("error")
        if error is not None:
            text = error.get("message") if isinstance(error, dict) else None
            raise HostError("HOST_ERROR", f"{request}: {self.name} refused: {text or 'no reason given'}")
        result = message.get("result")
        return cast(dict[str, Any], result) if isinstance(result, dict) else {}

    # -- messages from the page ---------------------------------------------------------------------------------
    def receive(self, event: GenericEventArguments) -> None:
        message = event.args
        if not isinstance(message, dict):
            return
        message = cast(dict[str, Any], message)
        kind = message.get("t")
        if kind == "init":
            self.info = _mapping(message.get("hostInfo"))
            self.capabilities = _mapping(message.get("hostCapabilities"))
            self.context = _mapping(message.get("hostContext"))
            self.tool_input = message.get("toolInput") or None
            self.tool_result = message.get("toolResult") or None
            self._ready.set()
        elif kind == "res":
            answer = self._waiting.get(message.get("id", 0))
            if answer is not None and not answer.done():
                answer.set_result(message)
        elif kind == "evt" and message.get("name") in _EVENTS:
            self._event(str(message["name"]), _mapping(message.get("params")))

    def _event(self, name: str, params: Mapping[str, Any]) -> None:
        if name == "context_changed":
            self.context = {**self.context, **params}
        elif name == "tool_input":
            self.tool_input = params
        elif name == "tool_result":
            self.tool_result = params
        elif name == "teardown":
            self._gone = True
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_result({"error": {"message": "the frame was torn down"}})
        for handler in list(self._handlers.get(name, ())):
            try:
                with self._client:
                    result = handler(params)
                if inspect.isawaitable(result):
                    background_tasks.create(_logged(result, name), name=f"host-{name}")
            except Exception:
                log.exception("a host %s handler failed", name)


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _mapping(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


async def _logged(awaitable: Any, name: str) -> None:
    try:
        await awaitable
    except Exception:
        log.exception("a host %s handler failed", name)
