"""One WebSocket viewer: its delivery buffer, bounded outbound queue and sender task.

A viewer's position in its session is ``cursor``: the highest sequence number
handed to its delivery buffer.  While the viewer keeps up, live events go
straight into its buffer.  When its outbound queue is full (the socket is not
taking data) or it is replaying after a resume, it stops taking live events and
its sender task pulls from the session log instead, one bounded chunk at a
time, whenever the queue has drained.  So a stalled viewer costs at most one
bounded queue; if it falls so far behind that the log no longer holds its next
event it is disconnected (4408) and can resume from a snapshot.  Which of
these modes it is in is ``state`` (server/viewer_lifecycle.py: the typed
states and their one table), and the state alone gates what it does: it is a
member of the session's shared feed exactly while ``SHARED``.

All writes to a socket go through the queue and its single sender task, so
batches and error replies keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from starlette.websockets import WebSocket, WebSocketState

from streampace.lifecycle import Machine
from streampace.session.delivery import Batch, DeliveryBuffer, DeliveryConfig
from streampace.session.log import SessionLog
from streampace.session.outputs import Attach
from streampace.session.protocol import CloseCode, batch_message, error_message
from streampace.session.snapshot import iter_parts

from .loop_host import LoopHost
from .memory import note_freed
from .viewer_lifecycle import VIEWER_TABLE, ViewerEvent, ViewerState

if TYPE_CHECKING:
    from .fanout import SharedFeed

__all__ = [
    "Viewer",
    "ViewerSession",
]

log = logging.getLogger("streampace.server")


PULL_EVENTS = 256  # events per log read while catching up
# A snapshot part: small, so a socket that stops reading holds little of it (the
# transport keeps the part being written, the queue at most one more).
SNAPSHOT_PART_BYTES = 64 * 1024

_V, _E = ViewerState, ViewerEvent
_OWN = (_V.LIVE, _V.CATCHING_UP)  # delivering through its own buffer
_CLOSING = (_V.CLOSING, _V.CLOSED)


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
        self._machine: Machine[ViewerState, ViewerEvent] = Machine(
            "viewer", VIEWER_TABLE, ViewerState.DETACHED)
        self.buffer: DeliveryBuffer | None = None  # made on attach
        self.session: ViewerSession | None = None
        self.cursor = 0
        self.last_through = 0
        self.close_code: CloseCode | None = None
        self._queue: deque[str] = deque()
        self._queued_bytes = 0
        self._parts: Iterator[tuple[list[dict[str, Any]], bool]] | None = None  # a snapshot
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loop = asyncio.get_running_loop()
        self._host = LoopHost(self._loop)
        self._sender = asyncio.create_task(self._send_loop())
        self._closer: asyncio.Future[None] | None = None
        self.closed = asyncio.Event()  # set once a close is asked for (the socket's reader ends)

    # -- the state ------------------------------------------------------------

    @property
    def state(self) -> ViewerState:
        return self._machine.state

    @property
    def closing(self) -> bool:
        return self._machine.state in _CLOSING

    @property
    def feed(self) -> SharedFeed | None:
        """The session's shared feed while this viewer is a member (SHARED)."""
        if self._machine.state is not _V.SHARED or self.session is None:
            return None
        return self.session.feed

    def _move(self, event: ViewerEvent) -> ViewerState:
        """The one way to change state; feed membership follows SHARED."""
        before = self._machine.state
        after = self._machine.step(event)
        if self.session is not None and (before is _V.SHARED) != (after is _V.SHARED):
            members = self.session.feed.members
            if after is _V.SHARED:
                members.add(self)
            else:
                members.discard(self)
        return after

    # -- attaching and live delivery ----------------------------------------

    def attach(self, session: ViewerSession, out: Attach) -> None:
        """Deliver from seq ``out.after`` on (pulled from the log), or after a snapshot.

        The first message is always ``attached`` (``out.text``): the session's epoch
        (so a client can tell a restarted server from the one it left) and how
        delivery starts.
        """
        # A snapshot is sent by the sender, part by part as the socket takes them, and
        # the log after it: until then the viewer catches up like a replaying one.
        live = out.snapshot is None and out.after == session.log.head
        state = self._move(_E.ATTACH_LIVE if live else _E.ATTACH_BEHIND)
        if state in _CLOSING:
            return  # a resume that lands while the socket closes: nothing goes out
        self._put(out.text)
        self.session = session
        self.cursor = out.after
        self.last_through = out.after
        self.buffer = DeliveryBuffer(self._publish, self._host, self.delivery_config)
        if out.snapshot is not None:
            self._parts = iter_parts(out.snapshot,
                                     max(min(self.limit // 2, SNAPSHOT_PART_BYTES), 1))
        elif state is _V.LIVE:
            self._try_join()
        self._wake.set()

    # -- the session's shared feed (server/fanout.py) --------------------------

    def _try_join(self, head: int | None = None) -> bool:
        """Join the shared feed if nothing can be missed or repeated by doing so.

        ``head``: the seq the feed has enqueued through, when the log is already
        ahead of it (``on_append`` runs after the log took the new events and
        before the feed does, so the feed is at ``first_seq - 1`` there).
        """
        if not self._machine.accepts(_E.JOIN):
            return False  # only from its own buffer's modes (attached, not closing)
        session, buffer = self.session, self.buffer
        assert session is not None and buffer is not None
        at = session.log.head if head is None else head
        if (self.cursor != at or not session.feed.can_join()
                or self._queued_bytes > self.limit or self._parts is not None):
            return False
        if buffer.pending_events():
            buffer.flush()  # what this viewer batched itself goes out first
            if self.closing:
                return False  # that send found the peer stalled and closed it
        self._move(_E.JOIN)
        return True

    def leave_feed(self) -> None:
        self._move(_E.LEAVE)

    def take_shared(self, text: str, through: int, batch: Batch) -> None:
        """A batch of the shared feed (already encoded once for every member)."""
        if self._machine.state is not _V.SHARED:
            return
        self.cursor = max(self.cursor, through)
        self.last_through = through
        if self.on_send is not None:
            self.on_send(batch)
        self._put(text)
        if self._queued_bytes > self.limit and self._machine.state is _V.SHARED:
            # Too slow for live delivery: from here on it pulls from the log itself.
            self._move(_E.LEAVE)

    def on_append(self, events: list[dict[str, Any]], first_seq: int, through: int) -> None:
        """The session logged ``events`` as seqs first_seq..through."""
        if self._machine.state not in _OWN:
            return  # detached, closing, or a feed member (the feed delivers)
        if self._stalled():
            return
        assert self.session is not None and self.buffer is not None
        if (self.cursor == first_seq - 1 and self._queued_bytes <= self.limit
                and self._parts is None):
            if self._try_join(first_seq - 1):
                return  # the session's feed delivers these events
            self._move(_E.AT_HEAD)
            self.cursor = through
            self.buffer.enqueue(events, through=through)
        elif not self.session.log.covers(self.cursor):
            self._fell_behind()
        else:
            self._move(_E.BEHIND)
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
            getattr(self.session, "id", "?"), self.send_timeout_s, CloseCode.SLOW_CONSUMER,
        )
        self.close(CloseCode.SLOW_CONSUMER, "slow consumer: resume to continue")
        return True

    def _fell_behind(self) -> None:
        if self.closing or self.session is None:
            return
        log.warning(
            "viewer of session %s fell behind the log (at %d, log starts at %d); closing with %d",
            self.session.log_name, self.cursor, self.session.log.first_seq, CloseCode.SLOW_CONSUMER,
        )
        self.close(CloseCode.SLOW_CONSUMER, "slow consumer: resume to continue")

    def _pull(self) -> bool:
        """Move the next chunk of the log into the buffer; False when caught up."""
        if self._machine.state not in _OWN:
            return False  # a feed member gets the log's events from the feed
        assert self.session is not None and self.buffer is not None
        if self._parts is not None:
            self._send_part()
            return True
        log_ = self.session.log
        if self.cursor >= log_.head:
            self._move(_E.AT_HEAD)
            self._try_join()  # caught up: the shared feed serves it from here
            return False
        if not log_.covers(self.cursor):
            self._fell_behind()
            return False
        self._move(_E.BEHIND)
        events = log_.read(self.cursor, PULL_EVENTS, max(self.limit // 2, 1))
        self.cursor += len(events)
        self.buffer.enqueue(events, through=self.cursor)
        return True

    def _send_part(self) -> None:
        """The snapshot's next part (made now, so only what the queue holds is held)."""
        assert self._parts is not None
        part = next(self._parts, None)
        if part is None or part[1]:
            self._parts = None
        if part is not None:
            events, last = part
            if self.on_send is not None:
                self.on_send(Batch(events, self.cursor))
            self._put(batch_message(self.cursor, events, more=not last))

    def _publish(self, batch: Batch) -> bool:
        if self.closing:
            return True  # nobody will read it; do not make the buffer retry
        through = batch.through if batch.through is not None else self.last_through
        self.last_through = through
        if self.on_send is not None:
            self.on_send(batch)
        self._put(batch_message(through, batch.events))
        return True

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
                    elif not self._pull():
                        break
                self._idle.set()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the peer went away mid-send
            log.debug("send failed: %r", exc)
            self._move(_E.LOST)
            self._drop_queue()

    def _drop_queue(self) -> None:
        if self._queued_bytes:
            note_freed(self._queued_bytes)  # large queues: glibc gets a trim soon
        self._queue.clear()
        self._queued_bytes = 0
        self._parts = None
        self._idle.set()

    def _caught_up(self) -> bool:
        feed = self.feed
        return (
            not self._queue
            and self._parts is None
            and (self.buffer is None or self.buffer.pending_events() == 0)
            and (feed is None or feed.buffer.pending_events() == 0)
            and (self.session is None or self.cursor >= self.session.log.head)
        )

    # -- closing ------------------------------------------------------------

    def close(self, code: CloseCode, reason: str = "") -> None:
        """Close soon, dropping unsent data (the client can resume)."""
        before = self._machine.state
        self._move(_E.CLOSE)
        if before is _V.CLOSING:
            return  # one closer
        self.close_code = code
        self._drop_queue()
        if self.buffer is not None:
            self.buffer.close()
        self.closed.set()
        self._closer = asyncio.ensure_future(self._close(code, reason))

    async def drain_and_close(self, code: CloseCode, reason: str, drain_s: float) -> None:
        """Deliver everything logged (bounded by ``drain_s``), then close."""
        deadline = time.monotonic() + drain_s
        while drain_s > 0 and not self.closing and not self._caught_up():
            if self.buffer is not None:
                self.buffer.flush()
            feed = self.feed
            if feed is not None and not feed.buffer.closed:
                feed.buffer.flush()
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
        """Leave the feed, close the buffer and wait for the sender task to end."""
        self._move(_E.STOP)
        if self.buffer is not None and not self.buffer.closed:
            self.buffer.close()
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
