"""The packets of a tunnelled page's POST body, read by the very classes NiceGUI's socket server reads them with
(python-engineio's payload, python-socketio's packet, with the JSON module NiceGUI gave them), so the tunnel sees what
NiceGUI's handlers will see: which NiceGUI clients the body's events name."""

from __future__ import annotations

from engineio import packet as engineio_packet
from engineio.payload import Payload
from socketio import packet as socketio_packet

__all__ = ["named_clients"]

# the socket.io packets whose arguments reach NiceGUI's handlers, which find their client by the `client_id` in them
_DISPATCHED = frozenset(
    {socketio_packet.EVENT, socketio_packet.ACK, socketio_packet.BINARY_EVENT, socketio_packet.BINARY_ACK}
)


def named_clients(body: str) -> list[object]:
    """The `client_id` of every argument (an object) of the body's socket.io events and acknowledgements, in order;
    ValueError when the body is not a payload NiceGUI's socket server could read."""
    try:
        received = Payload(encoded_payload=body).packets
    except Exception as error:  # the server would refuse the body too (too many packets, a broken one)
        raise ValueError(f"not an engine.io payload ({type(error).__name__})") from None
    named: list[object] = []
    for message in received:
        if message.packet_type != engineio_packet.MESSAGE or not isinstance(message.data, str):
            continue  # a ping, a pong, a close, a binary attachment: no client in it
        try:
            decoded = socketio_packet.Packet(encoded_packet=message.data)
        except Exception as error:
            raise ValueError(f"not a socket.io packet ({type(error).__name__})") from None
        if decoded.packet_type in _DISPATCHED and isinstance(decoded.data, list):
            for argument in decoded.data:
                if isinstance(argument, dict) and "client_id" in argument:
                    named.append(argument["client_id"])
    return named
