"""Resource subscriptions of 2025 sessions (`resources/subscribe`): who hears `notifications/resources/updated`
for which URI, until it unsubscribes or its session ends."""

from __future__ import annotations

import logging
from collections import defaultdict

from mcp.server.session import ServerSession

__all__ = ["Subscriptions"]

log = logging.getLogger(__name__)


class Subscriptions:
    """The sessions subscribed to each URI (a session is told through its own standalone stream)."""

    def __init__(self) -> None:
        self._by_uri: defaultdict[str, dict[str, ServerSession]] = defaultdict(dict)

    def add(self, uri: str, session_id: str, session: ServerSession) -> None:
        self._by_uri[uri][session_id] = session

    def remove(self, uri: str, session_id: str) -> None:
        sessions = self._by_uri.get(uri)
        if sessions is not None:
            sessions.pop(session_id, None)
            if not sessions:
                del self._by_uri[uri]

    def forget(self, session_id: str) -> None:
        """A session ended: it is subscribed to nothing."""
        for uri in list(self._by_uri):
            self.remove(uri, session_id)

    def subscribed(self, uri: str) -> bool:
        return uri in self._by_uri

    async def updated(self, uri: str) -> None:
        """Tell every session subscribed to `uri` that it changed."""
        for session in list(self._by_uri.get(uri, {}).values()):
            try:
                await session.send_resource_updated(uri)
            except Exception as error:  # its connection is gone: the session's end forgets it
                log.debug("resource update not delivered to a session: %s", type(error).__name__)

    def __len__(self) -> int:
        return sum(len(sessions) for sessions in self._by_uri.values())
