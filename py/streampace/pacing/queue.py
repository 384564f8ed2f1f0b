"""`PacedQueue`: the scheduler's one FIFO of events, sliced at grapheme boundaries.

One list holds the events of every session in arrival order, with a head
offset compacted in amortised O(1).  Paced text (assistant and reasoning
content) is segmented once, on the way in, and carries a read position; every
other event is delivered whole.  Counters (pending graphemes, live entries,
barriers) are kept incrementally per session and overall, so a drain costs
O(events + graphemes delivered).

Cross-delta clusters (beyond the seed): per open message, the last still
undelivered cluster is segmented again together with that message's next
delta, so a cluster the provider split lands whole in the earlier event (text
only ever moves earlier: nothing overtakes anything).  A last cluster that
would still change visibly (:func:`~streampace.pacing.graphemes.shows_incomplete`:
half an emoji sequence or flag, a keycap base, conjoining Hangul, a consonant +
virama, a Prepend) is *held*: not delivered until the next delta, a barrier
of its session, a flush, an overload, or ``holdback_ms``.  Any other cluster
is delivered as soon as the budget allows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from streampace.conversation.events import (
    BARRIER_TYPES,
    CLOSE,
    MESSAGE,
    PACED_CONTENT_TYPES,
    TEXT_MESSAGE_CHUNK,
    Stream,
    StreamTracker,
)

from .graphemes import shows_incomplete

__all__ = ["Entry", "PacedQueue", "SessionQueue"]

# Compact the list once this many delivered entries precede the head (and they
# are more than half of it).
_COMPACT_AFTER = 1024


class Entry:
    """One queued event; paced ones carry their clusters and a read position."""

    __slots__ = ("seq", "session", "event", "clusters", "pos", "barrier", "done",
                 "hold_until", "key", "changed")

    def __init__(self, seq: int, session: str, event: dict, clusters: list[str] | None,
                 barrier: bool, key: Stream | None, changed: bool) -> None:
        self.seq = seq
        self.session = session
        self.event = event
        self.clusters = clusters  # None: delivered whole (structural, user echo)
        self.pos = 0
        self.barrier = barrier
        self.done = False
        self.hold_until: float | None = None  # last cluster held back until then
        self.key = key
        self.changed = changed  # clusters no longer spell event["delta"]

    @property
    def remaining(self) -> int:
        return len(self.clusters) - self.pos if self.clusters is not None else 0


class SessionQueue:
    """One session's counters and per-message state inside the queue."""

    __slots__ = ("pending", "live", "barriers", "last_barrier_seq", "last_entry", "held",
                 "tracker", "track")

    def __init__(self, track: Any) -> None:
        self.track = track  # the pacing law's per-session estimates
        self.pending = 0  # paced graphemes queued, incl. held ones
        self.live = 0  # queued entries not yet fully delivered
        self.barriers = 0  # barriers queued
        self.last_barrier_seq = -1  # seq of the newest barrier (valid if barriers)
        self.last_entry: dict[Stream, Entry] = {}  # per open message: its newest paced entry
        self.held: dict[Stream, Entry] = {}
        self.tracker = StreamTracker()

    def before_barrier(self, e: Entry) -> bool:
        """Is a barrier of this session queued behind ``e`` (so ``e`` goes out unpaced)?"""
        return self.barriers > 0 and e.seq <= self.last_barrier_seq


class PacedQueue:
    """The FIFO and its bookkeeping; the scheduler decides when and how much."""

    def __init__(self, split: Callable[[str], list[str]], holdback_ms: float,
                 new_track: Callable[[], Any]) -> None:
        self.split = split
        self.holdback_ms = holdback_ms
        self._new_track = new_track
        self.entries: list[Entry] = []
        self.head = 0
        self._seq = 0
        self.sessions: dict[str, SessionQueue] = {}
        self.pending = 0  # paced graphemes queued, all sessions
        self.live = 0  # entries not yet fully delivered, all sessions
        self._holds: deque[tuple[float, Entry]] = deque()
        # False while an apply runs: an entry being delivered is not re-segmented.
        self.joining = True

    # ------------------------------------------------------------------ enqueue

    def session(self, sid: str) -> SessionQueue:
        st = self.sessions.get(sid)
        if st is None:
            st = self.sessions[sid] = SessionQueue(self._new_track())
        return st

    def add(self, sid: str, st: SessionQueue, ev: dict, now: float) -> None:
        etype = ev["type"]
        # Which message a delta belongs to (chunk continuation included) and when
        # a message ends (its END, the next non-chunk event for a chunk stream,
        # the run's end) is the tracker's call, shared with every other consumer.
        step = st.tracker.step(ev)
        for closed in step.closed:
            self._end_stream(st, closed)
        stream = step.stream
        delta = ev.get("delta") if etype in PACED_CONTENT_TYPES else None
        paced = isinstance(delta, str) and bool(delta) and stream is not None and not (
            stream.kind == MESSAGE and st.tracker.details(stream).get("role") == "user")
        if paced and stream is not None and isinstance(delta, str):
            self._add_paced(sid, st, ev, stream, delta, now)
        else:
            self._push(st, Entry(self._next_seq(), sid, ev, None, etype in BARRIER_TYPES,
                                 None, False))
        if step.phase == CLOSE and stream is not None:
            self._end_stream(st, stream)

    def _end_stream(self, st: SessionQueue, stream: Stream) -> None:
        """A message ended: its last cluster cannot grow any more."""
        st.last_entry.pop(stream, None)
        self._release(st, stream)

    def _add_paced(self, sid: str, st: SessionQueue, ev: dict, key: Stream, delta: str,
                   now: float) -> None:
        hold_ms = self.holdback_ms
        clusters: list[str] | None = None
        changed = False
        prev = st.last_entry.get(key) if hold_ms > 0 else None
        shown_tail = ""  # the previous delta's last cluster, when already shown
        if prev is not None and prev.clusters and (prev.done or prev.pos >= len(prev.clusters)):
            shown_tail = prev.clusters[-1]
        if (prev is not None and not prev.done and prev.clusters is not None
                and prev.pos < len(prev.clusters) and self.joining):
            # Carry the previous delta's undelivered last cluster into this
            # delta's segmentation; its completion moves to that earlier entry.
            tail = prev.clusters[-1]
            joined = self.split(tail + delta)
            if joined and joined[0].startswith(tail):
                if len(joined[0]) > len(tail):
                    prev.clusters[-1] = joined[0]
                    prev.changed = True
                    changed = True
                clusters = joined[1:]
        if prev is not None:
            self._release(st, key)
        if clusters is None:
            clusters = self.split(delta)
        if not clusters:
            # The whole delta completed (part of) the previous cluster.
            if prev is not None and prev.clusters and shows_incomplete(prev.clusters[-1]):
                self._hold(st, key, prev, now + hold_ms)
            return
        entry = Entry(self._next_seq(), sid, ev, clusters, False, key, changed)
        self._push(st, entry)
        n = len(clusters)
        st.pending += n
        self.pending += n
        if hold_ms > 0:
            st.last_entry[key] = entry
            last = clusters[-1]
            if n == 1 and shown_tail and len(self.split(shown_tail + last)) == 1:
                # A lone continuation (a virama, VS16, ZWJ) of a cluster already
                # on screen: what the reader sees is the two together.
                last = shown_tail + last
            if shows_incomplete(last):
                self._hold(st, key, entry, now + hold_ms)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _push(self, st: SessionQueue, entry: Entry) -> None:
        self.entries.append(entry)
        st.live += 1
        self.live += 1
        if entry.barrier:
            st.barriers += 1
            st.last_barrier_seq = entry.seq

    # ---------------------------------------------------------------- holdback

    def _hold(self, st: SessionQueue, key: Stream, entry: Entry, until: float) -> None:
        # No timer here: a hold only needs waking when the head of the queue
        # waits on it (the scheduler's drive arms one then).
        entry.hold_until = until
        st.held[key] = entry
        self._holds.append((until, entry))

    def _release(self, st: SessionQueue, key: Stream) -> None:
        entry = st.held.pop(key, None)
        if entry is not None:
            entry.hold_until = None

    def expire_holds(self, now: float) -> None:
        holds = self._holds
        while holds:
            until, entry = holds[0]
            if entry.hold_until == until and until > now:
                break
            holds.popleft()
            if entry.hold_until == until:
                st = self.sessions.get(entry.session)
                if st is not None and entry.key is not None:
                    self._release(st, entry.key)
                entry.hold_until = None

    def held_count(self) -> int:
        return sum(len(st.held) for st in self.sessions.values())

    # ------------------------------------------------------------------- drain

    def head_entry(self) -> Entry | None:
        q = self.entries
        i = self.head
        while i < len(q) and q[i].done:
            i += 1
        self.head = i
        if i > _COMPACT_AFTER and i * 2 > len(q):
            del q[:i]
            self.head = 0
            i = 0
        return q[i] if i < len(q) else None

    def waits_on_hold(self, e: Entry) -> bool:
        """Has entry ``e`` only a held cluster left, with no barrier behind it?"""
        if e.clusters is None or e.hold_until is None or e.remaining != 1:
            return False
        return not self.sessions[e.session].before_barrier(e)

    def plan(self, sid: str, emit: int, unlimited: bool, limit: int
             ) -> tuple[list[dict], list[tuple[Entry, int]]]:
        """The head session's contiguous run: at most ``limit`` events and
        ``emit`` paced graphemes (all of them if ``unlimited``); everything up to
        the session's last queued barrier goes out unpaced.  Exits deliver held
        clusters too: a later barrier, an overload, an unpaced law."""
        st = self.sessions[sid]
        barrier_seq = st.last_barrier_seq if st.barriers else -1
        batch: list[dict] = []
        plan: list[tuple[Entry, int]] = []
        q = self.entries
        i = self.head
        n = len(q)
        while i < n and len(batch) < limit:
            e = q[i]
            if e.done:
                i += 1
                continue
            if e.session != sid:
                break
            clusters = e.clusters
            if clusters is None:
                batch.append(e.event)
                plan.append((e, 0))
                i += 1
                continue
            remaining = len(clusters) - e.pos
            forced = e.seq <= barrier_seq
            held = e.hold_until is not None and not (forced or unlimited)
            avail = remaining - 1 if held else remaining
            if forced or unlimited:
                take = avail
            else:
                take = min(avail, emit)
                emit -= take
            if take > 0:
                batch.append(self.piece(e, e.pos, e.pos + take))
                plan.append((e, e.pos + take))
            if take < remaining:
                break
            i += 1
        return batch, plan

    def session_entries(self, sid: str) -> Iterator[Entry]:
        return (e for e in self.entries[self.head:] if not e.done and e.session == sid)

    def piece(self, e: Entry, start: int, stop: int) -> dict:
        clusters = e.clusters
        assert clusters is not None
        if start == 0 and stop == len(clusters) and not e.changed:
            return e.event
        piece = dict(e.event)
        piece["delta"] = "".join(clusters[start:stop])
        if start > 0 and piece.get("type") == TEXT_MESSAGE_CHUNK:
            # A remainder carrying role/name would restart the message in a reducer.
            piece.pop("role", None)
            piece.pop("name", None)
        return piece

    def consume(self, plan: list[tuple[Entry, int]]) -> int:
        """An accepted batch: advance its entries; returns paced graphemes delivered."""
        delivered = 0
        for e, stop in plan:
            if e.done:  # cleared while apply ran
                continue
            st = self.sessions[e.session]
            if e.clusters is None:
                self._finish(st, e)
                continue
            k = stop - e.pos
            e.pos = stop
            delivered += k
            st.pending -= k
            self.pending -= k
            if stop >= len(e.clusters):
                self._finish(st, e)
        return delivered

    def _finish(self, st: SessionQueue, e: Entry) -> None:
        e.done = True
        st.live -= 1
        self.live -= 1
        if e.barrier:
            st.barriers -= 1
        if e.hold_until is not None:
            e.hold_until = None
            if e.key is not None and st.held.get(e.key) is e:
                del st.held[e.key]

    # ------------------------------------------------------------------- clear

    def clear(self, sid: str | None = None) -> None:
        """Drop queued events: one session's, or everything (None)."""
        if sid is None:
            for e in self.entries[self.head:]:
                e.done = True
            self.entries = []
            self.head = 0
            self.sessions.clear()
            self.pending = 0
            self.live = 0
            self._holds.clear()
            return
        st = self.sessions.pop(sid, None)
        if st is None:
            return
        if st.live:
            for e in self.session_entries(sid):
                e.done = True
            self.live -= st.live
            self.pending -= st.pending
        for e in st.held.values():
            e.hold_until = None

    def compact_if_empty(self) -> None:
        if self.head >= len(self.entries):
            self.entries = []
            self.head = 0
