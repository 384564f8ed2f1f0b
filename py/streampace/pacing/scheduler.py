"""Paced frame scheduler: reveals streamed text at grapheme boundaries.

One FIFO queue holds the events of every session.  Each drain (an animation
frame, or the fallback timeout when frames stop, e.g. in a hidden tab) takes
the head session's contiguous run and hands at most one batch to ``apply``.
Paced text (assistant/reasoning content deltas) is revealed at a rate set by
the pacing law (:mod:`streampace.pacing.playout`): by default adaptive playout, which
learns each session's arrival rate and cadence from what is enqueued; with
``PacingConfig.seed()`` the seed's

    rate = clamp(pending / tau, min_rate, max_rate)   graphemes/s

The budget is rate × real elapsed time, its fraction carried to the next
drain.  Animation yields to event semantics: everything up to the
head session's last queued barrier (message/reasoning end, snapshots, run
end) goes out unpaced, and a backlog over ``overload_graphemes`` goes out at
once.  Cost per drain is O(events + graphemes delivered): text is segmented
once at enqueue, counters are kept incrementally and the queue is a list with
a head offset compacted in amortised O(1).

Beyond the seed: a provider delta may end inside a grapheme cluster.  Per open
message the last, still undelivered cluster is re-segmented together with the
next delta of that message, and a trailing cluster that could still grow
(:func:`streampace.pacing.graphemes.may_extend`) is held back until that next delta,
a barrier of the session, a flush, or ``holdback_ms``.  Text only ever moves
*earlier* (the completion of a cluster joins the event where the cluster
began), so no event overtakes another.  ``holdback_ms=0`` restores the seed's
plain per-event segmentation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from streampace.clock import FrameHost
from streampace.conversation.events import (
    BARRIER_TYPES,
    CLOSE,
    MESSAGE,
    PACED_CONTENT_TYPES,
    TEXT_MESSAGE_CHUNK,
    EventError,
    Stream,
    StreamTracker,
)

from .graphemes import Segmenter, default_segmenter, may_extend
from .playout import AdaptiveLaw, SeedLaw

__all__ = ["PacingConfig", "PacingScheduler"]


@dataclass(frozen=True)
class PacingConfig:
    """How text is paced.  The default law is adaptive playout
    (:mod:`streampace.pacing.playout`); :meth:`seed` is the seed's law exactly.

    ``max_lag_ms`` is the one knob of the adaptive law: the most any grapheme
    may wait after it arrived (outside stalls, which drain in bounded steps).
    None = automatic (a few of the transport's own delivery gaps).  Smaller:
    fresher text, less smoothing of the transport's batches.  ``tau_ms`` and
    ``max_rate`` belong to the seed law only; ``min_rate`` is both laws' floor.
    """

    law: str = "adaptive"  # "adaptive" | "seed"
    max_lag_ms: float | None = None  # adaptive law's knob; None = automatic
    tau_ms: float = 250
    min_rate: float = 20  # graphemes/s
    max_rate: float = 800  # graphemes/s
    overload_graphemes: int = 4096
    max_events_per_frame: int = 512
    fallback_ms: float = 50
    holdback_ms: float = 150  # 0 disables cross-delta cluster holdback

    @classmethod
    def seed(cls, **overrides: Any) -> PacingConfig:
        """The seed's law (mosoo PR #450): ``clamp(pending / 250 ms, 20, 800)``,
        its constants, with our cross-delta cluster holdback on."""
        return cls(**{"law": "seed", **overrides})

    def make_law(self) -> AdaptiveLaw | SeedLaw:
        if self.law == "seed":
            return SeedLaw(self.tau_ms, self.min_rate, self.max_rate)
        return AdaptiveLaw(self.max_lag_ms, self.min_rate)

    def __post_init__(self) -> None:
        if self.law not in ("adaptive", "seed"):
            raise ValueError("law must be 'adaptive' or 'seed'")
        if self.max_lag_ms is not None and not self.max_lag_ms > 0:
            raise ValueError("max_lag_ms must be > 0 (or None: automatic)")
        if not self.tau_ms > 0:
            raise ValueError("tau_ms must be > 0")
        if not 0 <= self.min_rate <= self.max_rate:
            raise ValueError("need 0 <= min_rate <= max_rate")
        if self.max_events_per_frame < 1:
            raise ValueError("max_events_per_frame must be >= 1")
        if self.overload_graphemes < 0 or self.fallback_ms < 0 or self.holdback_ms < 0:
            raise ValueError("overload_graphemes, fallback_ms and holdback_ms must be >= 0")




class _Entry:
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


class _Session:
    __slots__ = ("pending", "live", "barriers", "last_barrier_seq",
                 "last_entry", "held", "tracker", "track")

    def __init__(self, track: Any) -> None:
        self.track = track  # the pacing law's per-session estimates
        self.pending = 0  # paced graphemes queued, incl. held ones
        self.live = 0  # queued entries not yet fully delivered
        self.barriers = 0  # barriers queued
        self.last_barrier_seq = -1  # seq of the newest barrier (valid if barriers)
        self.last_entry: dict[Stream, _Entry] = {}  # per open message: its newest paced entry
        self.held: dict[Stream, _Entry] = {}
        self.tracker = StreamTracker()


class PacingScheduler:
    """See the module docstring.  ``apply(session_id, events) -> bool``.

    ``apply`` is called at most once per drain; returning False (or raising)
    rejects the batch: nothing is consumed and the same events are offered
    again on a later drain.  ``stats()`` counters: ``frames`` (drains run by a
    frame or the fallback timeout), ``applies`` (accepted batches),
    ``graphemes`` (paced graphemes delivered), ``flushes`` (flush_now calls
    that delivered something), ``overloads`` (drains that found the backlog
    over the limit), ``rejects`` (rejected batches).  Live values:
    ``pending`` (paced graphemes queued), ``queued_events``, ``held`` (clusters
    held back), and for a live chart the last drain's ``last_drain_at`` (ms,
    host clock), ``last_drain_graphemes``, ``last_drain_events``,
    ``last_drain_source`` ("frame" | "timeout" | "flush") and ``last_rate``
    (graphemes/s; None when the drain was an overload dump).  All values are
    JSON-safe.
    """

    def __init__(self, host: FrameHost, apply: Callable[[str, list[dict]], bool],
                 config: PacingConfig | None = None,
                 segmenter: Segmenter | None = None) -> None:
        self._host = host
        self._apply = apply
        self.config = config if config is not None else PacingConfig()
        self._law = self.config.make_law()
        self._split = (segmenter if segmenter is not None else default_segmenter()).split
        self._queue: list[_Entry] = []
        self._head = 0
        self._seq = 0
        self._sessions: dict[str, _Session] = {}
        self._pending = 0
        self._live = 0
        self._baseline: float | None = None
        self._carry = 0.0
        self._frame: Any = None
        self._timeout: Any = None
        self._holds: deque[tuple[float, _Entry]] = deque()
        self._hold_timer: Any = None
        self._hold_timer_at = 0.0
        self._in_apply = False
        self._stalled = False  # head waits on a held cluster; no drains are armed
        self._deferred_flush: list[str] = []
        self._stats: dict[str, Any] = {
            "frames": 0, "applies": 0, "graphemes": 0, "flushes": 0,
            "overloads": 0, "rejects": 0,
            "last_drain_at": None, "last_drain_graphemes": 0, "last_drain_events": 0,
            "last_drain_source": None, "last_rate": 0.0,
        }

    # ------------------------------------------------------------------ public

    def enqueue(self, session_id: str, events: Iterable[dict]) -> None:
        """Queue events (validated AG-UI dicts) behind everything already queued.

        The whole batch is checked first: a malformed item raises EventError
        and nothing from this call is queued.
        """
        batch = list(events)
        for i, ev in enumerate(batch):
            if not isinstance(ev, Mapping) or not isinstance(ev.get("type"), str):
                raise EventError(f"[{i}] event: must be an object with a string 'type'")
            if ev["type"] in PACED_CONTENT_TYPES and not isinstance(ev.get("delta", ""), str):
                raise EventError(f"[{i}] {ev['type']}.delta: must be a string")
        if not batch:
            return
        st = self._sessions.get(session_id)
        if st is None:
            st = self._sessions[session_id] = _Session(self._law.new_track())
        now = self._host.now()
        if self._live == 0:
            # idle -> active: elapsed time restarts now, so an idle gap is no burst
            self._baseline = now
            self._carry = self._law.first_frame_credit()
        before = st.pending
        for ev in batch:
            self._enqueue_one(session_id, st, ev if isinstance(ev, dict) else dict(ev), now)
        if st.pending > before:
            self._law.on_arrival(st.track, now, st.pending - before)
        self._arm()

    def flush_now(self, session_id: str) -> None:
        """Deliver all of one session's queued events unpaced (incl. held text).

        Normally one apply; more only if the session has more than
        ``max_events_per_frame`` events queued.  Other sessions stay queued.
        A rejection stops the flush; the rest stays queued in order.
        """
        if self._in_apply:
            self._deferred_flush.append(session_id)
            return
        st = self._sessions.get(session_id)
        if st is None or st.live == 0:
            return
        entries = [e for e in self._queue[self._head:] if not e.done and e.session == session_id]
        limit = self.config.max_events_per_frame
        delivered_any = False
        idx = 0
        while idx < len(entries):
            chunk: list[_Entry] = []
            while idx < len(entries) and len(chunk) < limit:
                e = entries[idx]
                idx += 1
                if not e.done:  # an apply may have flushed or cleared meanwhile
                    chunk.append(e)
            if not chunk:
                break
            plan = [(e, len(e.clusters) if e.clusters is not None else 0) for e in chunk]
            batch = [self._piece(e, e.pos, n) if e.clusters is not None else e.event
                     for e, n in plan]
            if not self._call_apply(session_id, batch, plan, "flush"):
                break
            delivered_any = True
        if delivered_any:
            self._stats["flushes"] += 1
        self._after_change()

    def clear(self, session_id: str | None = None) -> None:
        """Drop queued events: one session's, or everything (None)."""
        if session_id is None:
            for e in self._queue[self._head:]:
                e.done = True
            self._queue = []
            self._head = 0
            self._sessions.clear()
            self._pending = 0
            self._live = 0
            self._holds.clear()
            if self._hold_timer is not None:
                self._host.cancel_timeout(self._hold_timer)
                self._hold_timer = None
        else:
            st = self._sessions.pop(session_id, None)
            if st is None:
                return
            if st.live:
                for e in self._queue[self._head:]:
                    if not e.done and e.session == session_id:
                        e.done = True
                self._live -= st.live
                self._pending -= st.pending
            for e in st.held.values():
                e.hold_until = None
        self._after_change()

    def pending_graphemes(self, session_id: str | None = None) -> int:
        """Paced graphemes queued (held-back ones included)."""
        if session_id is None:
            return self._pending
        st = self._sessions.get(session_id)
        return st.pending if st is not None else 0

    def queued_events(self, session_id: str | None = None) -> int:
        if session_id is None:
            return self._live
        st = self._sessions.get(session_id)
        return st.live if st is not None else 0

    def graphemes_delivered(self) -> int:
        """Paced graphemes delivered so far (``stats()["graphemes"]``, without the copy)."""
        return self._stats["graphemes"]

    def stats(self) -> dict:
        out = dict(self._stats)
        out["pending"] = self._pending
        out["queued_events"] = self._live
        out["held"] = sum(len(st.held) for st in self._sessions.values())
        return out

    # ----------------------------------------------------------------- enqueue

    def _enqueue_one(self, sid: str, st: _Session, ev: dict, now: float) -> None:
        etype = ev["type"]
        # Which message a delta belongs to (chunk continuation included) and when a
        # message ends (its END, the next non-chunk event for a chunk stream, the
        # run's end) is the tracker's call, shared with every other consumer.
        step = st.tracker.step(ev)
        for stream in step.closed:
            self._end_stream(st, stream)
        stream = step.stream
        delta = ev.get("delta") if etype in PACED_CONTENT_TYPES else None
        paced = bool(delta) and stream is not None and not (
            stream.kind == MESSAGE and st.tracker.details(stream).get("role") == "user")
        if paced:
            self._enqueue_paced(sid, st, ev, stream, delta, now)  # type: ignore[arg-type]
        else:
            self._push(sid, st, _Entry(self._next_seq(), sid, ev, None,
                                       etype in BARRIER_TYPES, None, False))
        if step.phase == CLOSE and stream is not None:
            self._end_stream(st, stream)

    def _end_stream(self, st: _Session, stream: Stream) -> None:
        """A message ended: its last cluster cannot grow any more."""
        st.last_entry.pop(stream, None)
        self._release(st, stream)

    def _enqueue_paced(self, sid: str, st: _Session, ev: dict, key: Stream,
                       delta: str, now: float) -> None:
        hold_ms = self.config.holdback_ms
        clusters: list[str] | None = None
        changed = False
        prev = st.last_entry.get(key) if hold_ms > 0 else None
        if (prev is not None and not prev.done and prev.clusters is not None
                and prev.pos < len(prev.clusters) and not self._in_apply):
            # Carry the previous delta's undelivered last cluster into this
            # delta's segmentation; its completion moves to that earlier entry.
            tail = prev.clusters[-1]
            joined = self._split(tail + delta)
            if joined and joined[0].startswith(tail):
                if len(joined[0]) > len(tail):
                    prev.clusters[-1] = joined[0]
                    prev.changed = True
                    changed = True
                clusters = joined[1:]
        if prev is not None:
            self._release(st, key)
        if clusters is None:
            clusters = self._split(delta)
        if not clusters:
            # The whole delta completed the previous cluster.
            if prev is not None and may_extend(prev.clusters[-1]):
                self._hold(st, key, prev, now + hold_ms)
            return
        entry = _Entry(self._next_seq(), sid, ev, clusters, False, key, changed)
        self._push(sid, st, entry)
        n = len(clusters)
        st.pending += n
        self._pending += n
        if hold_ms > 0:
            st.last_entry[key] = entry
            if may_extend(clusters[-1]):
                self._hold(st, key, entry, now + hold_ms)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _push(self, sid: str, st: _Session, entry: _Entry) -> None:
        self._queue.append(entry)
        st.live += 1
        self._live += 1
        if entry.barrier:
            st.barriers += 1
            st.last_barrier_seq = entry.seq

    # ---------------------------------------------------------------- holdback

    def _hold(self, st: _Session, key: Stream, entry: _Entry, until: float) -> None:
        # No timer here: almost every delta ends in a held cluster, and a hold
        # only needs waking when the head of the queue waits on it (_arm).
        entry.hold_until = until
        st.held[key] = entry
        self._holds.append((until, entry))

    def _arm_hold_timer(self, until: float) -> None:
        if self._hold_timer is not None:
            if self._hold_timer_at <= until:
                return
            self._host.cancel_timeout(self._hold_timer)
        self._hold_timer_at = until
        self._hold_timer = self._host.request_timeout(
            self._on_hold_timer, max(0.0, until - self._host.now()))

    def _release(self, st: _Session, key: Stream) -> None:
        entry = st.held.pop(key, None)
        if entry is not None:
            entry.hold_until = None

    def _expire_holds(self, now: float) -> None:
        holds = self._holds
        while holds:
            until, entry = holds[0]
            if entry.hold_until == until and until > now:
                break
            holds.popleft()
            if entry.hold_until == until:
                st = self._sessions.get(entry.session)
                if st is not None and entry.key is not None:
                    self._release(st, entry.key)
                entry.hold_until = None

    def _on_hold_timer(self) -> None:
        self._hold_timer = None
        self._expire_holds(self._host.now())
        self._arm()

    # ------------------------------------------------------------------- drain

    def _head_entry(self) -> _Entry | None:
        q = self._queue
        i = self._head
        while i < len(q) and q[i].done:
            i += 1
        self._head = i
        if i > 1024 and i * 2 > len(q):
            del q[:i]
            self._head = 0
            i = 0
        return q[i] if i < len(q) else None

    def _blocked(self, e: _Entry) -> bool:
        """Head entry has only a held-back cluster left (nothing to do until release)."""
        if e.clusters is None or e.hold_until is None or len(e.clusters) - e.pos != 1:
            return False
        st = self._sessions[e.session]
        return not (st.barriers and e.seq <= st.last_barrier_seq)

    def _arm(self) -> None:
        if self._frame is not None or self._timeout is not None or self._live == 0:
            return
        head = self._head_entry()
        if head is None:
            return
        if self._blocked(head):
            self._stalled = True
            assert head.hold_until is not None
            self._arm_hold_timer(head.hold_until)
            return
        if self._stalled:
            # Like idle -> active: time spent waiting for a held cluster must
            # not turn into one big step when the wait ends; the held cluster
            # itself has waited long enough, so one grapheme is owed at once.
            self._stalled = False
            self._baseline = self._host.now()
            self._carry = max(self._carry, 1.0)
        self._frame = self._host.request_frame(self._on_frame)
        self._timeout = self._host.request_timeout(self._on_timeout, self.config.fallback_ms)

    def _on_frame(self) -> None:
        self._frame = None
        if self._timeout is not None:
            self._host.cancel_timeout(self._timeout)
            self._timeout = None
        self._tick("frame")

    def _on_timeout(self) -> None:
        self._timeout = None
        if self._frame is not None:
            self._host.cancel_frame(self._frame)
            self._frame = None
        self._tick("timeout")

    def _tick(self, source: str) -> None:
        try:
            self._drain(source)
        finally:
            self._arm()

    def _drain(self, source: str) -> None:
        cfg = self.config
        stats = self._stats
        stats["frames"] += 1
        now = self._host.now()
        self._expire_holds(now)
        head = self._head_entry()
        if head is None:
            self._go_idle()
            return
        sid = head.session
        st = self._sessions[sid]
        elapsed_s = max(0.0, now - self._baseline) / 1000.0 if self._baseline is not None else 0.0
        pending = self._pending
        unlimited = pending > cfg.overload_graphemes
        if unlimited:
            stats["overloads"] += 1
            emit, carry, rate = 0, 0.0, None  # unlimited (None keeps stats JSON-safe)
        elif pending == 0:
            emit, carry, rate = 0, 0.0, 0.0
        else:
            rate = self._law.rate(st.track, now, st.pending, pending)
            budget = self._carry + rate * elapsed_s
            emit = int(budget)
            carry = budget - emit
        barrier_seq = st.last_barrier_seq if st.barriers else -1

        batch: list[dict] = []
        plan: list[tuple[_Entry, int]] = []
        limit = cfg.max_events_per_frame
        q = self._queue
        i = self._head
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
            forced = e.seq <= barrier_seq  # a later barrier ends animation and holdback
            avail = remaining - 1 if (e.hold_until is not None and not forced) else remaining
            if forced or unlimited:
                take = avail
            else:
                take = min(avail, emit)
                emit -= take
            if take > 0:
                batch.append(self._piece(e, e.pos, e.pos + take))
                plan.append((e, e.pos + take))
            if take < remaining:
                break
            i += 1

        stats["last_rate"] = rate
        if not batch:
            self._baseline = now
            self._carry = carry
            self._record_drain(now, 0, 0, source)
            return
        if self._call_apply(sid, batch, plan, source):
            self._baseline = now
            self._carry = carry
        self._after_change()

    def _piece(self, e: _Entry, start: int, stop: int) -> dict:
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

    def _call_apply(self, sid: str, batch: list[dict], plan: list[tuple[_Entry, int]],
                    source: str) -> bool:
        stats = self._stats
        self._in_apply = True
        try:
            ok = self._apply(sid, batch)
        except BaseException:
            stats["rejects"] += 1
            raise
        finally:
            self._in_apply = False
        if ok is False:
            stats["rejects"] += 1
            self._run_deferred()
            return False
        delivered = 0
        for e, stop in plan:
            if e.done:  # cleared while apply ran
                continue
            st = self._sessions[e.session]
            if e.clusters is None:
                self._finish(st, e)
                continue
            k = stop - e.pos
            e.pos = stop
            delivered += k
            st.pending -= k
            self._pending -= k
            if stop >= len(e.clusters):
                self._finish(st, e)
        stats["applies"] += 1
        stats["graphemes"] += delivered
        self._record_drain(self._host.now(), delivered, len(batch), source)
        self._run_deferred()
        return True

    def _finish(self, st: _Session, e: _Entry) -> None:
        e.done = True
        st.live -= 1
        self._live -= 1
        if e.barrier:
            st.barriers -= 1
        if e.hold_until is not None:
            e.hold_until = None
            if e.key is not None and st.held.get(e.key) is e:
                del st.held[e.key]

    def _record_drain(self, now: float, graphemes: int, events: int, source: str) -> None:
        stats = self._stats
        stats["last_drain_at"] = now
        stats["last_drain_graphemes"] = graphemes
        stats["last_drain_events"] = events
        stats["last_drain_source"] = source

    def _run_deferred(self) -> None:
        while self._deferred_flush and not self._in_apply:
            self.flush_now(self._deferred_flush.pop(0))

    def _after_change(self) -> None:
        if self._live == 0:
            self._go_idle()
        else:
            self._arm()

    def _go_idle(self) -> None:
        self._baseline = None
        self._carry = 0.0
        self._stalled = False
        if self._frame is not None:
            self._host.cancel_frame(self._frame)
            self._frame = None
        if self._timeout is not None:
            self._host.cancel_timeout(self._timeout)
            self._timeout = None
        if self._head >= len(self._queue):
            self._queue = []
            self._head = 0
