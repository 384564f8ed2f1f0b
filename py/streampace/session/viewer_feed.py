"""Catching one viewer up and keeping it fed: a typed machine, sans-IO.

A viewer attaches at a position (``outputs.Attach``) and from there must get
every logged event once, in order: first the snapshot's parts when the log no
longer holds its position (``SNAPSHOT``), then the log from its cursor in
bounded chunks (``REPLAYING``), then live appends into its own delivery buffer
(``LIVE``) — or, once nothing can be missed or repeated by joining, the
session's shared feed (``SHARED``, session/shared_feed.py), which batches and
encodes once for every member.  A connection that stops taking data leaves the
shared feed and replays from the log once it drains; one whose next event the
log no longer holds is told so (``FeedOutlet.fell_behind``: the server closes
it with 4408 and it resumes from a snapshot).

``ViewerFeed`` decides; its driver does the I/O: the server's WebSocket viewer
(server/viewer.py: an outbound queue, a sender task that calls ``pull`` whenever
the queue drains) and the page's in-browser session (client/page_session.py: text
handed on at once, ``pull`` until caught up).  Both hand it an outlet for text
and say whether the connection has room; clock and timers come from the
injected host.  Every move is in ``FEED_TABLE`` and the state alone gates what
the feed does.  The diagram in docs/architecture.md is
``diagram(FEED_TABLE, FeedState.DETACHED)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from streampace.clock import TimerHost
from streampace.lifecycle import Machine, table

from .delivery import Batch, DeliveryBuffer, DeliveryConfig
from .log import SessionLog
from .outputs import Attach
from .protocol import batch_message
from .snapshot import iter_parts

if TYPE_CHECKING:
    from .shared_feed import SharedFeed

__all__ = ["FEED_TABLE", "FeedEvent", "FeedOutlet", "FeedSession", "FeedState", "ViewerFeed"]


class FeedState(Enum):
    DETACHED = "detached"  # no position yet: the connection has sent neither resume nor run
    SNAPSHOT = "snapshot"  # the snapshot's parts go out first, one per pull
    REPLAYING = "replaying"  # behind the head or its connection full: each pull reads the log
    LIVE = "live"  # at the log's head: appends go straight into its own buffer
    SHARED = "shared"  # a member of the session's shared feed
    CLOSING = "closing"  # a close was asked for: nothing more goes out
    CLOSED = "closed"  # its driver stopped for good (the peer is gone, or the connection done)


class FeedEvent(Enum):
    ATTACH_LIVE = "attach_live"  # attached at the log's head
    ATTACH_LOG = "attach_log"  # resumed from a seq the log still holds
    ATTACH_SNAPSHOT = "attach_snapshot"  # resumed past what the log holds: a snapshot first
    SNAPSHOT_SENT = "snapshot_sent"  # the snapshot's last part went out
    AT_HEAD = "at_head"  # its cursor is the log's head, its connection has room
    BEHIND = "behind"  # behind the head, or its connection over its limit
    JOIN = "join"  # joins the session's shared feed
    LEAVE = "leave"  # leaves the shared feed (connection full, log reloaded, detach)
    CLOSE = "close"  # a close is asked for (slow consumer, abuse, shutdown, a drain's end)
    LOST = "lost"  # a send failed: the peer went away
    STOP = "stop"  # the driver stopped for good


FEED_TABLE = table(FeedState, FeedEvent, """
DETACHED   ATTACH_LIVE      LIVE       attached at the log's head
DETACHED   ATTACH_LOG       REPLAYING  resumed from a seq the log holds: each pull replays a chunk
DETACHED   ATTACH_SNAPSHOT  SNAPSHOT   resumed past what the log holds: each pull sends a part of
                                       the snapshot, then the log after it is replayed
CLOSING    ATTACH_LIVE      CLOSING    a resume on a connection already closing: nothing goes out
CLOSING    ATTACH_LOG       CLOSING    a resume on a connection already closing: nothing goes out
CLOSING    ATTACH_SNAPSHOT  CLOSING    a resume on a connection already closing: nothing goes out
CLOSED     ATTACH_LIVE      CLOSED     a resume on a connection already closed: nothing goes out
CLOSED     ATTACH_LOG       CLOSED     a resume on a connection already closed: nothing goes out
CLOSED     ATTACH_SNAPSHOT  CLOSED     a resume on a connection already closed: nothing goes out
SNAPSHOT   SNAPSHOT_SENT    REPLAYING  the last part went out: the log after the snapshot follows
SNAPSHOT   BEHIND           SNAPSHOT   appends wait in the log until the snapshot is out (its parts
                                       and live events never interleave)
LIVE       AT_HEAD          LIVE       an append right after its cursor with room in its connection
REPLAYING  AT_HEAD          LIVE       a pull found the log exhausted
LIVE       BEHIND           REPLAYING  behind the head or its connection over its limit: it stops
                                       taking live events (a stalled connection costs one queue)
REPLAYING  BEHIND           REPLAYING  still behind the head: the next pull reads the next chunk
LIVE       JOIN             SHARED     at the head, nothing of its own pending, room in its
                                       connection: joining can neither skip nor repeat an event
REPLAYING  JOIN             SHARED     caught up, nothing of its own pending, room in its
                                       connection: joining can neither skip nor repeat an event
SHARED     LEAVE            REPLAYING  its connection went over its limit on a shared batch, or the
                                       log was reloaded: it pulls from the log itself
DETACHED   LEAVE            DETACHED   not a member of the shared feed: nothing to leave
SNAPSHOT   LEAVE            SNAPSHOT   not a member of the shared feed: nothing to leave
REPLAYING  LEAVE            REPLAYING  not a member of the shared feed: nothing to leave
LIVE       LEAVE            LIVE       not a member of the shared feed: nothing to leave
CLOSING    LEAVE            CLOSING    not a member of the shared feed: nothing to leave
CLOSED     LEAVE            CLOSED     not a member of the shared feed: nothing to leave
DETACHED   CLOSE            CLOSING    a close request (abuse, a message too big, an evicted
                                       session)
SNAPSHOT   CLOSE            CLOSING    a close request: the rest of the snapshot is dropped (the
                                       client can resume)
REPLAYING  CLOSE            CLOSING    a close request: unsent data is dropped (the client can
                                       resume)
LIVE       CLOSE            CLOSING    a close request: unsent data is dropped (the client can
                                       resume)
SHARED     CLOSE            CLOSING    a close request: it leaves the shared feed, unsent data is
                                       dropped
CLOSING    CLOSE            CLOSING    one closer: a second request changes nothing
CLOSED     CLOSE            CLOSING    its sender failed earlier: the connection itself still gets
                                       closed
DETACHED   LOST             CLOSED     a send (an error reply) failed: nothing more goes out
SNAPSHOT   LOST             CLOSED     a send failed: nothing more goes out
REPLAYING  LOST             CLOSED     a send failed: nothing more goes out
LIVE       LOST             CLOSED     a send failed: nothing more goes out
SHARED     LOST             CLOSED     a send failed: it leaves the shared feed, nothing more goes
                                       out
CLOSING    LOST             CLOSING    a send failed while its closer runs
CLOSED     LOST             CLOSED     already stopped
DETACHED   STOP             CLOSED     the driver stopped for good
SNAPSHOT   STOP             CLOSED     the driver stopped for good
REPLAYING  STOP             CLOSED     the driver stopped for good
LIVE       STOP             CLOSED     the driver stopped for good
SHARED     STOP             CLOSED     the driver stopped for good: it leaves the shared feed
CLOSING    STOP             CLOSED     the closer stopped the driver
CLOSED     STOP             CLOSED     already stopped
""")

_S, _E = FeedState, FeedEvent
_OWN = frozenset({_S.SNAPSHOT, _S.REPLAYING, _S.LIVE})  # fed through its own buffer or parts
_CLOSING = frozenset({_S.CLOSING, _S.CLOSED})

Part = tuple[list[dict[str, Any]], bool]  # a snapshot part's events, and whether it is the last


class FeedOutlet(Protocol):
    """The connection a feed writes to (its driver's I/O)."""

    def send(self, text: str, batch: Batch | None) -> None:
        """Put ``text`` on the connection, in order; ``batch``: the events it carries."""

    def has_room(self) -> bool:
        """The connection takes more now (the server: its queue is under its limit)."""

    def fell_behind(self, cursor: int) -> None:
        """The log no longer holds the event after ``cursor``: end the connection (it
        can resume from a snapshot)."""


class FeedSession(Protocol):
    """What a feed reads of its session: the log, and the shared feed if it has one."""

    @property
    def log(self) -> SessionLog: ...

    @property
    def feed(self) -> SharedFeed | None: ...


class ViewerFeed:
    """One viewer's position in its session and where its next events come from.

    ``part_bytes``: the size of a snapshot part (None: the whole snapshot as one
    batch); ``pull_events`` / ``pull_bytes``: the size of one chunk of the log.
    """

    def __init__(self, outlet: FeedOutlet, host: TimerHost, config: DeliveryConfig | None = None,
                 *, part_bytes: int | None, pull_events: int, pull_bytes: int) -> None:
        self.outlet = outlet
        self.host = host
        self.config = config
        self.part_bytes = part_bytes
        self.pull_events = pull_events
        self.pull_bytes = pull_bytes
        self.machine: Machine[FeedState, FeedEvent] = Machine(
            "viewer feed", FEED_TABLE, FeedState.DETACHED)
        self.session: FeedSession | None = None
        self.buffer: DeliveryBuffer | None = None  # made on attach
        self.cursor = 0  # the highest seq handed to its buffer (or, when shared, delivered)
        self.last_through = 0
        self._parts: Iterator[Part] = iter(())  # read only in SNAPSHOT

    @property
    def state(self) -> FeedState:
        return self.machine.state

    @property
    def closing(self) -> bool:
        return self.machine.state in _CLOSING

    @property
    def takes_appends(self) -> bool:
        """Appends reach it through ``on_append`` (not through the shared feed)."""
        return self.machine.state in _OWN

    @property
    def catching_up(self) -> bool:
        """A pull has something to do: a snapshot part or a chunk of the log."""
        return self.machine.state in (_S.SNAPSHOT, _S.REPLAYING)

    def _move(self, event: FeedEvent) -> FeedState:
        """The one way to change state; membership of the shared feed follows SHARED."""
        before = self.machine.state
        after = self.machine.step(event)
        if (before is _S.SHARED) != (after is _S.SHARED):
            shared = self.session.feed if self.session is not None else None
            if shared is not None:
                if after is _S.SHARED:
                    shared.members[self.outlet] = self
                else:
                    shared.members.pop(self.outlet, None)
        return after

    # -- attaching ------------------------------------------------------------

    def attach(self, session: FeedSession, out: Attach) -> FeedState:
        """Start at ``out.after``: send ``out.text`` (the ``attached`` message) first,
        then the snapshot if there is one, then the log after it."""
        if out.snapshot is not None:
            event = _E.ATTACH_SNAPSHOT
        else:
            event = _E.ATTACH_LIVE if out.after == session.log.head else _E.ATTACH_LOG
        state = self._move(event)
        if state in _CLOSING:
            return state  # a resume that lands while the connection closes
        self.outlet.send(out.text, None)
        self.session = session
        self.cursor = self.last_through = out.after
        self.buffer = DeliveryBuffer(self._publish, self.host, self.config)
        if out.snapshot is not None:
            snapshot = out.snapshot
            self._parts = (iter([(snapshot, True)]) if self.part_bytes is None
                           else iter_parts(snapshot, self.part_bytes))
        elif state is _S.LIVE:
            self._try_join()
        return self.machine.state

    # -- the shared feed ------------------------------------------------------

    def _try_join(self, head: int | None = None) -> bool:
        """Join the shared feed if nothing can be missed or repeated by doing so.

        ``head``: the seq the shared feed has enqueued through, when the log is
        already ahead of it (``on_append`` runs after the log took the new events
        and before the shared feed does, so it is at ``first_seq - 1`` there).
        """
        if not self.machine.accepts(_E.JOIN):
            return False  # only from LIVE or REPLAYING: never mid-snapshot, attached, open
        session, buffer = self.session, self.buffer
        assert session is not None and buffer is not None
        shared = session.feed
        at = session.log.head if head is None else head
        if (shared is None or self.cursor != at or not shared.can_join()
                or not self.outlet.has_room()):
            return False
        if buffer.pending_events():
            buffer.flush()  # what this viewer batched itself goes out first
            if self.closing:
                return False  # that send found the peer stalled and closed it
        self._move(_E.JOIN)
        return True

    def leave(self) -> None:
        """Leave the shared feed (a no-op when not a member)."""
        self._move(_E.LEAVE)

    def take_shared(self, text: str, through: int, batch: Batch) -> None:
        """A batch of the shared feed (already encoded once for every member)."""
        if self.machine.state is not _S.SHARED:
            return
        self.cursor = max(self.cursor, through)
        self.last_through = through
        self.outlet.send(text, batch)
        if self.machine.state is _S.SHARED and not self.outlet.has_room():
            # Too slow for live delivery: from here on it pulls from the log itself.
            self._move(_E.LEAVE)

    # -- the log --------------------------------------------------------------

    def on_append(self, events: list[dict[str, Any]], first_seq: int, through: int) -> None:
        """The session logged ``events`` as seqs first_seq..through."""
        state = self.machine.state
        if state not in _OWN:
            return  # detached, closing, or a shared-feed member (the shared feed delivers)
        assert self.session is not None and self.buffer is not None
        if state is not _S.SNAPSHOT and self.cursor == first_seq - 1 and self.outlet.has_room():
            if self._try_join(first_seq - 1):
                return  # the shared feed delivers these events
            self._move(_E.AT_HEAD)
            self.cursor = through
            self.buffer.enqueue(events, through=through)
        elif not self.session.log.covers(self.cursor):
            self.outlet.fell_behind(self.cursor)
        else:
            self._move(_E.BEHIND)  # a later pull reads them from the log

    def pull(self) -> bool:
        """Move the next bounded piece toward the connection (a snapshot part, or a
        chunk of the log into its buffer); False when there is nothing to pull."""
        state = self.machine.state
        if state is _S.SNAPSHOT:
            self._send_part()
            return True
        if state not in _OWN:
            return False  # a shared-feed member gets the log's events from the shared feed
        assert self.session is not None and self.buffer is not None
        log = self.session.log
        if self.cursor >= log.head:
            self._move(_E.AT_HEAD)
            self._try_join()  # caught up: the shared feed serves it from here
            return False
        if not log.covers(self.cursor):
            self.outlet.fell_behind(self.cursor)
            return False
        self._move(_E.BEHIND)
        events = log.read(self.cursor, self.pull_events, self.pull_bytes)
        self.cursor += len(events)
        self.buffer.enqueue(events, through=self.cursor)
        return True

    def _send_part(self) -> None:
        """The snapshot's next part (made now, so only what the connection holds is held)."""
        part = next(self._parts, None)
        if part is None or part[1]:
            self._parts = iter(())
            self._move(_E.SNAPSHOT_SENT)
        if part is not None:
            events, last = part
            self.outlet.send(batch_message(self.cursor, events, more=not last),
                             Batch(events, self.cursor))

    def _publish(self, batch: Batch) -> bool:
        """Its own buffer's batch."""
        if self.closing:
            return True  # nobody will read it; do not make the buffer retry
        through = batch.through if batch.through is not None else self.last_through
        self.last_through = through
        self.outlet.send(batch_message(through, batch.events), batch)
        return True

    # -- draining and ending --------------------------------------------------

    def caught_up(self) -> bool:
        """Everything logged has left the feed (its buffer, the shared feed's, the
        snapshot); the connection's own queue is its driver's."""
        if self.machine.state is _S.SNAPSHOT:
            return False
        shared = self.session.feed if self.session is not None else None
        return ((self.buffer is None or self.buffer.pending_events() == 0)
                and (self.machine.state is not _S.SHARED or shared is None
                     or shared.buffer.pending_events() == 0)
                and (self.session is None or self.cursor >= self.session.log.head))

    def flush(self) -> None:
        """Publish what its buffer, and the shared feed's while a member, hold."""
        if self.buffer is not None and not self.buffer.closed:
            self.buffer.flush()
        shared = self.session.feed if self.session is not None else None
        if self.machine.state is _S.SHARED and shared is not None and not shared.buffer.closed:
            shared.buffer.flush()

    def close(self) -> bool:
        """A close is asked for; False if one already was (one closer)."""
        before = self.machine.state
        self._move(_E.CLOSE)
        if before is _S.CLOSING:
            return False
        self._end()
        return True

    def lost(self) -> None:
        """A send failed: the peer went away."""
        self._move(_E.LOST)
        self._parts = iter(())

    def stop(self) -> None:
        """Stopped for good: leave the shared feed, close the buffer."""
        self._move(_E.STOP)
        self._end()

    def _end(self) -> None:
        self._parts = iter(())
        if self.buffer is not None and not self.buffer.closed:
            # What it still held is in the log and is replayed on resume.
            self.buffer.close()
