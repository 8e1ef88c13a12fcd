"""Component method calls for one tab, collected while a change is applied and sent with its element updates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from nicegui import json, ui
from nicegui.element import Element

__all__ = ["BrowserCalls", "Call", "Part", "call_text", "encode_arguments", "keep"]

Call = tuple[str, str, str]
"""A call made once for many views: the part of a view it goes to (its name, such as "table"), the method's name and
its arguments, encoded (`encode_arguments`); each view sends it to its own element (`BrowserCalls.encoded`)."""


def keep(element: Element, prop: str, value: str | int | tuple[Any, ...] | list[Any] | dict[str, Any]) -> None:
    """Set the server's copy of a prop (what a tab built later gets) without an update: the tab got the change
    through a call. Written past NiceGUI's observable props, whose change handlers ran for every write (more than
    the rest of the write in every watching view) and which put observable copies of lists and dicts: the value is
    kept as it is, immutable, or changed in place only by its owner, who sends the tab the changes."""
    dict.__setitem__(element.props, prop, value)


def encode_arguments(*args: Any) -> str:
    """A call's arguments as the JSON text `BrowserCalls.encoded` takes: encode them once for every view that sends
    the same call."""
    return json.dumps(args)


def call_text(element_id: int, name: str, arguments: str, *, at_frame: bool = False) -> str:
    """A call as `BrowserCalls` sends it: the element's id, the method's name (an identifier: its JSON text is itself
    in quotes), its encoded arguments (`encode_arguments`), and whether it waits for the tab's next frame."""
    return f'[{element_id},"{name}",{arguments},{"true" if at_frame else "false"}]'


class Part(Protocol):
    """A part of a view that the tab keeps up to date by calls (its server copy too)."""

    def resend(self, calls: BrowserCalls) -> None:
        """Send the tab this part's whole state as calls."""
        ...


class _GapSignal(ui.element, component="calls.js"):
    """Where a tab says it missed a batch of calls (`gap`): an element that is never updated, so its listener is not
    part of every message, as it would be on the calls element (a quarter of a change's message)."""


class BrowserCalls(ui.element, component="calls.js"):
    """What `Element.run_method` would send as one message per call, sent instead as an update of this invisible
    element: the tab runs the calls right after applying the update message they travel in, so a change costs one
    message (and the bridge confirms it with that message, not with a round trip behind it)."""

    def __init__(self, parts: Sequence[Part] = ()) -> None:
        """`parts`: what to send again whole when the tab missed a batch of calls (`resend`)."""
        super().__init__()
        self._update_method = "run"
        self._pending: list[str] = []  # each call as JSON text, collected since the element was last made a message
        self._out: list[str] = []  # the calls of the last message made, while its update may not have gone out
        self._batches = 0  # the batches made so far: the tab runs them in order and says when it missed one
        self._parts = tuple(parts)
        signal = _GapSignal().on("gap", self.resend, throttle=1.0)  # a tab that says so again and again: once a second
        keep(self, "signal", signal.id)

    def method(self, element: Element, name: str, *args: Any, at_frame: bool = False) -> None:
        """Call `name(*args)` on the element in the tab; `at_frame`: at its next animation frame, after the change's
        confirmation has been answered (drawing)."""
        self._pending.append(json.dumps([element.id, name, args, at_frame]))

    def encoded(self, element: Element, name: str, arguments: str, *, at_frame: bool = False) -> None:
        """`method` with its arguments already encoded (`encode_arguments`): a change sends the same arguments to
        every watching view, and encoding them once instead of once per view is most of what the call costs. `name`
        is a method's name (an identifier: its JSON text is itself in quotes)."""
        self._pending.append(call_text(element.id, name, arguments, at_frame=at_frame))

    def joined(self, text: str) -> None:
        """Calls already made into their text (`call_text`), joined by commas: made once for many views."""
        self._pending.append(text)

    def send(self) -> None:
        """Send the collected calls (nothing when there are none) with the tab's next update message; calls sent
        again before it goes out go with them."""
        if self._pending:
            if self.id not in self.client.outbox.updates:  # the last message made went out with its update
                self._out.clear()
            self.update()

    def _to_dict(self) -> dict[str, Any]:
        """The element as NiceGUI sends it, when it goes out: its calls are those collected until then, and those of
        a message made before whose update has not gone out (the outbox tries again after an error). They are JSON
        text: NiceGUI wraps a prop's lists and dicts in observables, socket.io walks them for binary data, and they
        outlive the change, which all cost more than the change itself in a server with many watching tabs."""
        if self._pending:
            if not self._out:  # a new batch (else the last one has not gone out: these join it)
                self._batches += 1
                keep(self, "batch", self._batches)
            self._out += self._pending
            self._pending.clear()
            keep(self, "calls", f"[{','.join(self._out)}]")
        return super()._to_dict()

    def resend(self) -> None:
        """The tab missed a batch: its socket lost messages on the way and NiceGUI replayed them after it reconnected,
        but a replayed update carries the element's props as they are now, the newest batch instead of the lost one.
        Every part sends its whole state again."""
        for part in self._parts:
            part.resend(self)
        self.send()
