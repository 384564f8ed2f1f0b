"""uvicorn's WebSocket protocol, answering handshakes its parser refuses.

websockets' sans-I/O parser refuses a request line over 8 192 bytes (414) or
oversized headers (431) by queueing a response, but uvicorn (0.3x–0.5x) only
writes queued bytes after a parsed request, so the client waits forever.  This
subclass writes that response and closes the connection.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

__all__ = ["AnsweringWebSocketProtocol"]


class AnsweringWebSocketProtocol(WebSocketsSansIOProtocol):
    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if (
            not self.handshake_initiated
            and self.conn.handshake_exc is not None
            and not self.transport.is_closing()
        ):
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.handshake_complete = True
            self.close_sent = True
            self.transport.close()
