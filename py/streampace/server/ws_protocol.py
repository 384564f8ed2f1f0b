"""uvicorn's WebSocket protocol with the guards only the server can apply
(issue 18, issue 33 item 1).

- **Handshakes its parser refuses.**  websockets' sans-I/O parser refuses a
  request line over 8 192 bytes (414) or oversized headers (431) by queueing a
  response, but uvicorn (0.3x–0.5x) only writes queued bytes after a parsed
  request, so the client waited forever.  This protocol writes that response
  and closes the connection.
- **Control frames.**  Pings and pongs never reach the application, and uvicorn
  keeps reading while it answers them: one socket sending 125-byte pings and
  never reading queued a pong per ping (+343 MiB in 15 s).  Every control frame
  the peer sends is charged to a per-connection token bucket (bytes, with a
  per-frame minimum, so empty pings count too); past it the connection is closed
  with 1008.  While the transport's write buffer is over its high-water mark
  (the peer is not reading), pings get no pong: RFC 6455 5.5.3 lets an endpoint
  answer only the latest ping, and a peer that reads again gets its next one
  answered.
- **A peer that does not read.**  It cannot answer the keepalive ping, so it is
  closed (1011) within ``ws_ping_interval + ws_ping_timeout``, and the
  application is told at once (uvicorn did not tell it).  A close frame the
  peer does not take within ``LINGER_S`` (ours, for any reason) aborts the
  connection: ``transport.close()`` waits for the buffer to drain, which such a
  peer never lets happen.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode

from streampace.session.protocol import CloseCode

from .admission import TokenBucket
from .memory import note_freed

__all__ = ["AnsweringWebSocketProtocol", "CONTROL_FRAME_COST", "LINGER_S",
           "GUARDS_EXTENSION"]

CONTROL_FRAME_COST = 64  # bytes charged per control frame on top of its payload
GUARDS_EXTENSION = "streampace.guards"  # in the scope's extensions: this protocol serves it
LINGER_S = 5.0  # a connection we closed (or finished with) still open this long is cut


class AnsweringWebSocketProtocol(WebSocketsSansIOProtocol):
    # Set on the subclass ``transport.protocols`` makes; these defaults serve a bare use.
    control_burst_bytes: float = 16 * 1024
    control_bytes_per_s: float = 2 * 1024

    _budget: TokenBucket | None = None
    _cut_timer: asyncio.TimerHandle | None = None
    _lost = False

    # -- handshakes the parser refused ------------------------------------------------

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

    def handle_connect(self, event: object) -> None:
        super().handle_connect(event)  # type: ignore[arg-type]
        scope = getattr(self, "scope", None)
        if scope is not None:  # the app can tell it runs with these guards
            scope["extensions"][GUARDS_EXTENSION] = {}

    # -- control frames ------------------------------------------------------------------

    def handle_events(self) -> None:
        # websockets queues a pong for every ping as it parses a chunk, and the first
        # pong written sends them all: so the chunk's control frames are charged
        # together, before any is answered (else one 64 KiB read answered ~500).
        events = self.conn.events_received()
        cost = sum(CONTROL_FRAME_COST + len(event.data) for event in events
                   if isinstance(event, Frame) and event.opcode in (Opcode.PING, Opcode.PONG))
        if cost and not self._charge(cost):
            self._close_for_control_flood()
            return
        for event in events:
            self._dispatch(event)

    def _dispatch(self, event: object) -> None:
        if not isinstance(event, Frame):
            self.handle_connect(event)
        elif event.opcode is Opcode.CONT:
            self.handle_cont(event)
        elif event.opcode is Opcode.TEXT:
            self.handle_text(event)
        elif event.opcode is Opcode.BINARY:
            self.handle_bytes(event)
        elif event.opcode is Opcode.PING:
            self.handle_ping()
        elif event.opcode is Opcode.PONG:
            self.handle_pong(event)
        elif event.opcode is Opcode.CLOSE:
            self.handle_close(event)

    def _charge(self, cost: int) -> bool:
        now = self.loop.time()
        if self._budget is None:
            self._budget = TokenBucket(self.control_burst_bytes, self.control_bytes_per_s, now)
        return self._budget.take(cost, now)

    def handle_ping(self) -> None:
        if self.writable.is_set():
            super().handle_ping()  # writes the pongs websockets queued
        else:
            self.conn.data_to_send()  # the peer is not reading: no pong is queued for it

    def _close_for_control_flood(self) -> None:
        if self.transport.is_closing():
            return
        self.conn.data_to_send()  # pongs queued for this chunk are not sent
        if self.handshake_complete and not self.close_sent:
            self.conn.fail(CloseCode.POLICY, "too many control frames")
            self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.queue.put_nowait({"type": "websocket.disconnect", "code": CloseCode.POLICY})
        self.transport.close()
        self.cut_later()

    def keepalive_timeout(self) -> None:
        closing = self.close_sent or self.transport.is_closing()
        super().keepalive_timeout()
        if not closing:  # uvicorn sent 1011 but tells the application nothing
            self.queue.put_nowait({"type": "websocket.disconnect", "code": 1011})
            self.cut_later()

    # -- a peer that does not read ---------------------------------------------------------

    def cut_later(self) -> None:
        """Abort the connection if it is still open ``LINGER_S`` from now."""
        if self._cut_timer is None and not self._lost:
            self._cut_timer = self.loop.call_later(LINGER_S, self._cut)

    def _cut(self) -> None:
        self._cut_timer = None
        if self._lost:
            return
        note_freed(self.transport.get_write_buffer_size())
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if self._cut_timer is not None:
            self._cut_timer.cancel()
            self._cut_timer = None
        super().connection_lost(exc)
