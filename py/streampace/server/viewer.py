"""One WebSocket viewer: its feed, bounded outbound queue and sender task.

Where a viewer's next events come from — the snapshot's parts, the session log,
its own delivery buffer or the session's shared feed — is its ``ViewerFeed``
(session/viewer_feed.py: the typed states and their one table, shared with the
page's in-browser session).  This module is its I/O: every text the feed hands
on goes onto one bounded outbound queue drained by one sender task, so batches
and error replies keep their order; whenever the queue has drained, the sender
asks the feed for the next bounded piece (``pull``).  A stalled viewer
therefore costs at most one bounded queue: while its queue is over its limit the
feed takes no live events and replays them from the log later, and if it falls
so far behind that the log no longer holds its next event it is closed (4408)
and can resume from a snapshot.  A send that makes no progress for
``send_timeout_s`` closes it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from starlette.websockets import WebSocket, WebSocketState

from streampace.session.delivery import Batch, DeliveryBuffer, DeliveryConfig
from streampace.session.log import SessionLog
from streampace.session.outputs import Attach
from streampace.session.protocol import CloseCode, error_message
from streampace.session.viewer_feed import FeedState, ViewerFeed

from .loop_host import LoopHost
from .memory import note_freed

if TYPE_CHECKING:
    from streampace.session.shared_feed import SharedFeed

__all__ = ["Viewer", "ViewerSession"]

log = logging.getLogger("streampace.server")

PULL_EVENTS = 256  # events per log read while catching up
# A snapshot part: small, so a socket that stops reading holds little of it (the
# transport keeps the part being written, the queue at most one more).
SNAPSHOT_PART_BYTES = 64 * 1024
SLOW_REASON = "slow consumer: resume to continue"


class ViewerSession(Protocol):
    """What a viewer reads of its session (server/session.py)."""

    id: str
    log_name: str  # what logs call it (never the id: the id is the key)

    @property
    def log(self) -> SessionLog: ...

    @property
    def feed(self) -> SharedFeed: ...


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class Viewer:
    def __init__(
        self,
        websocket: WebSocket,
        delivery: DeliveryConfig,
        outbound_limit_bytes: int,
        on_send: Callable[[Batch], None] | None = None,
        send_timeout_s: float = 30.0,
    ) -> None:
        self.ws = websocket
        self.send_timeout_s = send_timeout_s
        self._send_since: float | None = None  # loop time the current send began
        self.delivery_config = delivery
        self.limit = outbound_limit_bytes
        self.on_send = on_send  # instrumentation hook (the load benchmark)
        self._loop = asyncio.get_running_loop()
        half = max(outbound_limit_bytes // 2, 1)
        self.delivery = ViewerFeed(self, LoopHost(self._loop), delivery,
                                   part_bytes=min(half, SNAPSHOT_PART_BYTES),
                                   pull_events=PULL_EVENTS, pull_bytes=half)
        self.session: ViewerSession | None = None
        self.close_code: CloseCode | None = None
        self._queue: deque[str] = deque()
        self._queued_bytes = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._sender = asyncio.create_task(self._send_loop())
        self._closer: asyncio.Future[None] | None = None
        self.closed = asyncio.Event()  # set once a close is asked for (the socket's reader ends)

    # -- the state (the feed's) -------------------------------------------------

    @property
    def state(self) -> FeedState:
        return self.delivery.state

    @property
    def closing(self) -> bool:
        return self.delivery.closing

    @property
    def cursor(self) -> int:
        """The highest seq handed on toward this viewer."""
        return self.delivery.cursor

    @property
    def buffer(self) -> DeliveryBuffer | None:
        return self.delivery.buffer

    @property
    def feed(self) -> SharedFeed | None:
        """The session's shared feed while this viewer is a member (SHARED)."""
        if self.delivery.state is not FeedState.SHARED or self.session is None:
            return None
        return self.session.feed

    # -- attaching and live delivery ----------------------------------------

    def attach(self, session: ViewerSession, out: Attach) -> None:
        """Deliver from seq ``out.after`` on (pulled from the log), or after a snapshot.

        The first message is always ``attached`` (``out.text``): the session's epoch
        (so a client can tell a restarted server from the one it left) and how
        delivery starts.  The snapshot's parts and the log after it are sent by the
        sender as the socket takes them.
        """
        if self.delivery.attach(session, out) in (FeedState.CLOSING, FeedState.CLOSED):
            return
        self.session = session
        self._wake.set()

    def leave_feed(self) -> None:
        self.delivery.leave()

    def on_append(self, events: list[dict[str, Any]], first_seq: int, through: int) -> None:
        """The session logged ``events`` as seqs first_seq..through."""
        if not self.delivery.takes_appends or self._stalled():
            return  # the shared feed delivers, or it is detached or closing
        self.delivery.on_append(events, first_seq, through)
        if self.delivery.catching_up:
            self._wake.set()  # the sender pulls from the log once the queue drains

    def check_stalled(self) -> None:
        """The hub's periodic look (server/hub.py): a stalled peer is closed and its
        queue released on time, not only when the next output arrives."""
        if not self.closing:
            self._stalled()

    def _stalled(self) -> bool:
        """A send that has not completed for send_timeout_s: the peer stopped reading."""
        since = self._send_since
        if since is None or self._loop.time() - since <= self.send_timeout_s:
            return False
        log.warning(
            "viewer of session %s took no data for %.0f s; closing with %d",
            getattr(self.session, "log_name", "?"), self.send_timeout_s,
            CloseCode.SLOW_CONSUMER,
        )
        self.close(CloseCode.SLOW_CONSUMER, SLOW_REASON)
        return True

    # -- the feed's outlet ----------------------------------------------------

    def send(self, text: str, batch: Batch | None) -> None:
        if batch is not None and self.on_send is not None:
            self.on_send(batch)
        self._put(text)

    def has_room(self) -> bool:
        return self._queued_bytes <= self.limit

    def fell_behind(self, cursor: int) -> None:
        if self.closing or self.session is None:
            return
        log.warning(
            "viewer of session %s fell behind the log (at %d, log starts at %d); closing with %d",
            self.session.log_name, cursor, self.session.log.first_seq, CloseCode.SLOW_CONSUMER,
        )
        self.close(CloseCode.SLOW_CONSUMER, SLOW_REASON)

    def send_text(self, text: str) -> None:
        """A reply (an ``error`` message), in order with the batches."""
        if not self.closing:
            self._put(text)

    def send_error(self, code: str, message: str) -> None:
        self.send_text(error_message(code, message))

    def _put(self, text: str) -> None:
        self._queue.append(text)
        self._queued_bytes += _size(text)
        self._idle.clear()
        self._wake.set()
        self._stalled()

    @property
    def queued_bytes(self) -> int:
        return self._queued_bytes

    async def _send_loop(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while not self.closing:
                    if self._queue:
                        text = self._queue[0]
                        self._send_since = self._loop.time()
                        await self.ws.send_text(text)
                        self._send_since = None
                        self._queue.popleft()
                        self._queued_bytes -= _size(text)
                    elif not self.delivery.pull():
                        break
                self._idle.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the peer went away mid-send
            log.debug("send failed: %r", exc)
            self.delivery.lost()
            self._drop_queue()

    def _drop_queue(self) -> None:
        if self._queued_bytes:
            note_freed(self._queued_bytes)  # large queues: glibc gets a trim soon
        self._queue.clear()
        self._queued_bytes = 0
        self._idle.set()

    def _caught_up(self) -> bool:
        return not self._queue and self.delivery.caught_up()

    # -- closing ------------------------------------------------------------

    def close(self, code: CloseCode, reason: str = "") -> None:
        """Close soon, dropping unsent data (the client can resume)."""
        if not self.delivery.close():
            return  # one closer
        self.close_code = code
        self._drop_queue()
        self.closed.set()
        self._closer = asyncio.ensure_future(self._close(code, reason))

    async def drain_and_close(self, code: CloseCode, reason: str, drain_s: float) -> None:
        """Deliver everything logged (bounded by ``drain_s``), then close."""
        deadline = time.monotonic() + drain_s
        while drain_s > 0 and not self.closing and not self._caught_up():
            self.delivery.flush()
            self._wake.set()
            await asyncio.sleep(0.01)
            if time.monotonic() > deadline:
                break
        self.close(code, reason)
        if self._closer is not None:
            await asyncio.shield(self._closer)

    async def _close(self, code: CloseCode, reason: str) -> None:
        await self._stop_sending()
        self._drop_queue()
        if self.ws.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(code, reason), 5)

    async def _stop_sending(self) -> None:
        """Leave the shared feed, close the buffer and wait for the sender task to end."""
        self.delivery.stop()
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._sender

    async def stop(self) -> None:
        """Release everything after the socket is gone."""
        await self._stop_sending()
        if self._closer is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._closer
        self._drop_queue()
