"""One WebSocket viewer: its delivery buffer, bounded outbound queue and sender task.

All writes to a socket go through the viewer's queue and its single sender
task, so batches and error replies keep their order.  The queue is bounded in
bytes: a viewer that stops reading is disconnected (4408) rather than letting
the server buffer without limit; it can reconnect and resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

from streampace.delivery import Batch, DeliveryBuffer, DeliveryConfig

__all__ = ["Viewer", "CLOSE_SLOW_CONSUMER", "CLOSE_GOING_AWAY"]

log = logging.getLogger("streampace.server")

CLOSE_GOING_AWAY = 1001
CLOSE_TOO_BIG = 1009
CLOSE_ABUSE = 4400
CLOSE_BAD_ORIGIN = 4403
CLOSE_SLOW_CONSUMER = 4408


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Viewer:
    def __init__(
        self,
        websocket: WebSocket,
        delivery: DeliveryConfig,
        outbound_limit_bytes: int,
        on_send: Callable[[Batch], None] | None = None,
    ) -> None:
        self.ws = websocket
        self.delivery_config = delivery
        self.limit = outbound_limit_bytes
        self.on_send = on_send  # instrumentation hook (the load benchmark)
        self.buffer: DeliveryBuffer | None = None
        self.session: Any = None  # the Session it is attached to
        self.closing = False
        self.close_code: int | None = None
        self._queue: deque[str] = deque()
        self._queued_bytes = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loop = asyncio.get_running_loop()
        self._sender = asyncio.create_task(self._send_loop())
        self._closer: asyncio.Task[None] | None = None

    # -- delivery -----------------------------------------------------------

    @property
    def attached(self) -> bool:
        return self.buffer is not None

    def attach(self, session: Any, events: list[dict[str, Any]], through: int) -> None:
        """Start delivering; ``events`` (possibly empty) are what precede live events."""
        self.session = session
        self.buffer = DeliveryBuffer(
            self._publish,
            lambda cb, ms: self._loop.call_later(ms / 1000, cb),
            lambda handle: handle.cancel(),
            self.delivery_config,
        )
        if events:
            self.buffer.enqueue(events, through=through)
        self.last_through = through

    def attach_snapshot(self, session: Any, events: list[dict[str, Any]], through: int) -> None:
        """Start with one snapshot batch, published as it is (never split or delayed)."""
        self.attach(session, [], through)
        self._publish(Batch(events, through))

    def deliver(self, events: list[dict[str, Any]], through: int) -> None:
        if self.buffer is not None and not self.closing:
            self.buffer.enqueue(events, through=through)

    def _publish(self, batch: Batch) -> bool:
        if self.closing:
            return True  # nobody will read it; do not make the buffer retry
        through = batch.through if batch.through is not None else self.last_through
        self.last_through = through
        if self.on_send is not None:
            self.on_send(batch)
        self._put(_dumps({"through": through, "events": batch.events}))
        return True

    def send_error(self, code: str, message: str) -> None:
        if not self.closing:
            self._put(_dumps({"type": "error", "code": code, "message": message}))

    def _put(self, text: str) -> None:
        size = len(text.encode("utf-8")) if not text.isascii() else len(text)
        self._queue.append(text)
        self._queued_bytes += size
        self._idle.clear()
        self._wake.set()
        if self._queued_bytes > self.limit:
            log.warning(
                "viewer of session %s is not reading (%d bytes unsent); closing it with %d",
                getattr(self.session, "id", "?"), self._queued_bytes, CLOSE_SLOW_CONSUMER,
            )
            self.close(CLOSE_SLOW_CONSUMER, "slow consumer: resume to continue")

    async def _send_loop(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    text = self._queue[0]
                    await self.ws.send_text(text)
                    self._queue.popleft()
                    self._queued_bytes -= len(text.encode("utf-8")) if not text.isascii() \
                        else len(text)
                self._idle.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the peer went away mid-send
            log.debug("send failed: %r", exc)
            self.closing = True
            self._drop_queue()

    def _drop_queue(self) -> None:
        self._queue.clear()
        self._queued_bytes = 0
        self._idle.set()

    @property
    def queued_bytes(self) -> int:
        return self._queued_bytes

    # -- closing ------------------------------------------------------------

    def close(self, code: int, reason: str = "") -> None:
        """Close soon, dropping unsent data (the client can resume)."""
        if self._closer is not None:
            return
        self.closing = True
        self.close_code = code
        self._drop_queue()
        if self.buffer is not None:
            self.buffer.close()
        self._closer = asyncio.ensure_future(self._close(code, reason, drain_s=0))

    async def drain_and_close(self, code: int, reason: str, drain_s: float) -> None:
        """Flush the delivery buffer, let the socket take it (bounded), then close."""
        if self._closer is None:
            if self.buffer is not None and not self.closing:
                self.buffer.flush()
            self.close_code = code
            self._closer = asyncio.ensure_future(self._close(code, reason, drain_s))
        await asyncio.shield(self._closer)

    async def _close(self, code: int, reason: str, drain_s: float) -> None:
        if drain_s > 0 and not self.closing:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), drain_s)
        self.closing = True
        if self.buffer is not None and not self.buffer.closed:
            self.buffer.close()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._sender
        self._drop_queue()
        if self.ws.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(code, reason), 5)

    async def stop(self) -> None:
        """Release everything after the socket is gone."""
        self.closing = True
        if self.buffer is not None and not self.buffer.closed:
            self.buffer.close()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._sender
        if self._closer is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._closer
        self._drop_queue()
