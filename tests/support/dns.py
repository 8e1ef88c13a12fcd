"""A test name server (dnslib, UDP on a loopback port): it answers one name with the given IPv4 addresses, as
Docker's DNS answers a compose service's name with its containers, and records what it was asked."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dnslib import QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSLogger, DNSServer

__all__ = ["NameServer", "name_server"]


@dataclass
class NameServer(BaseResolver):
    """Answers A queries for `name` with `addresses`, AAAA with none (IPv4 only), other types NOTIMP; any other
    name: NXDOMAIN."""

    name: str
    addresses: Sequence[str]
    asked: list[str] = field(default_factory=lambda: [])
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        reply = request.reply()
        question = request.q
        asked = str(question.qname).rstrip(".")
        with self._lock:
            self.asked.append(asked)
        if asked != self.name:
            reply.header.rcode = RCODE.NXDOMAIN
        elif question.qtype == QTYPE.A:
            for address in self.addresses:
                reply.add_answer(RR(question.qname, QTYPE.A, rdata=A(address), ttl=1))
        elif question.qtype != QTYPE.AAAA:  # AAAA: an empty answer, the name has IPv4 addresses only
            reply.header.rcode = RCODE.NOTIMP
        return reply

    def queries(self) -> list[str]:
        with self._lock:
            return list(self.asked)


def _silent(*_: object) -> None:
    """Its log lines: none (the recorded queries say what was asked)."""


@contextlib.contextmanager
def name_server(name: str, addresses: Sequence[str]) -> Generator[NameServer]:
    """A name server on 127.0.0.1 and a free UDP port (`.port`) until the block ends."""
    resolver = NameServer(name, addresses)
    quiet = DNSLogger(logf=_silent)
    server = DNSServer(resolver, port=0, address="127.0.0.1", logger=quiet)
    resolver.port = int(server.server.server_address[1])
    server.start_thread()
    try:
        yield resolver
    finally:
        server.stop()
        server.server.server_close()
