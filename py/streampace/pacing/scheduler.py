"""Paced frame scheduler: reveals streamed text at grapheme boundaries.

One FIFO queue (:mod:`streampace.pacing.queue`) holds the events of every
session.  Each drain — an animation frame, or the fallback timeout when frames
stop, e.g. in a hidden tab; which one is armed is the drive's machine
(:mod:`streampace.pacing.drive`) — takes the head session's contiguous run and
hands at most one batch to ``apply``.  Paced text (assistant/reasoning content
deltas) is revealed at a rate set by the pacing law
(:mod:`streampace.pacing.playout`): by default adaptive playout, which learns
each session's arrival rate, cadence and jitter from what is enqueued; with
``PacingConfig.seed()`` the seed's

    rate = clamp(pending / tau, min_rate, max_rate)   graphemes/s

and with ``PacingConfig.unpaced()`` (reduced motion) everything queued, still
one batch per frame.  The budget is rate × real elapsed time, its fraction
carried to the next drain.  Animation yields to event semantics — the seed's
exits, each of which delivers everything, held clusters included: everything
up to the head session's last queued barrier (message/reasoning end,
snapshots, run end) goes out unpaced; a backlog over ``overload_graphemes``
goes out at once; ``flush_now`` delivers a session's queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from streampace.clock import FrameHost
from streampace.conversation.events import PACED_CONTENT_TYPES, SOURCE_PAUSE_TYPES, EventError

from .config import PacingConfig
from .drive import Drive, DriveEvent, DriveState
from .graphemes import Segmenter, default_segmenter
from .queue import Entry, PacedQueue

__all__ = ["PacingConfig", "PacingScheduler"]


class PacingScheduler:
    """See the module docstring.  ``apply(session_id, events) -> bool``.

    ``apply`` is called at most once per drain; returning False (or raising)
    rejects the batch: nothing is consumed and the same events are offered
    again on a later drain.  ``stats()`` counters: ``frames`` (drains run by a
    frame or the fallback timeout), ``applies`` (accepted batches),
    ``graphemes`` (paced graphemes delivered), ``flushes`` (flush_now calls
    that delivered something), ``fallback_drains`` (drains the fallback
    timeout ran: frames had stopped), ``overloads`` (drains that found the backlog
    over the limit), ``rejects`` (rejected batches).  Live values:
    ``pending`` (paced graphemes queued), ``queued_events``, ``held`` (clusters
    held back), ``drive`` (the drive machine's state), and for a live chart the
    last drain's ``last_drain_at`` (ms, host clock), ``last_drain_graphemes``,
    ``last_drain_events``, ``last_drain_source`` ("frame" | "timeout" |
    "flush") and ``last_rate`` (graphemes/s; None when the drain was
    unlimited).  All values are JSON-safe.

    ``on_applied``, when set, is told the host time of each accepted batch
    (``last_drain_at``), in the drain that applied it: a view samples its
    figures there instead of asking the host for frames of its own.
    """

    def __init__(self, host: FrameHost, apply: Callable[[str, list[dict]], bool],
                 config: PacingConfig | None = None,
                 segmenter: Segmenter | None = None) -> None:
        self._host = host
        self._apply = apply
        self.config = config if config is not None else PacingConfig()
        self._law = self.config.make_law()
        self._split = (segmenter if segmenter is not None else default_segmenter()).split
        self._queue = PacedQueue(self._split, self.config.holdback_ms, self._law.new_track)
        # Late-bound, so a profiler may wrap _drain on the instance (bench --breakdown).
        self._drive = Drive(host, self.config.fallback_ms, lambda source: self._drain(source),
                            self._condition, self._expire_holds, self._settled)
        self._baseline: float | None = None
        self._carry = 0.0
        self._deferred_flush: list[str] = []
        self._stats: dict[str, Any] = {
            "frames": 0, "applies": 0, "graphemes": 0, "flushes": 0,
            "fallback_drains": 0, "overloads": 0, "rejects": 0,
            "last_drain_at": None, "last_drain_graphemes": 0, "last_drain_events": 0,
            "last_drain_source": None, "last_rate": 0.0,
        }
        self.on_applied: Callable[[float], None] | None = None

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
        q = self._queue
        st = q.session(session_id)
        now = self._host.now()
        if q.live == 0:
            # idle -> active: elapsed time restarts now, so an idle gap is no burst
            self._baseline = now
            self._carry = self._law.first_frame_credit()
        before = st.pending
        paused = False
        for ev in batch:
            q.add(session_id, st, ev if isinstance(ev, dict) else dict(ev), now)
            if ev["type"] in SOURCE_PAUSE_TYPES:
                paused = True
            elif ev["type"] in PACED_CONTENT_TYPES:
                paused = False
        if st.pending > before:
            self._law.on_arrival(st.track, now, st.pending - before)
        if paused:
            self._law.on_pause(st.track, now)
        self._drive.settle()

    def flush_now(self, session_id: str) -> None:
        """Deliver all of one session's queued events unpaced (incl. held text).

        Normally one apply; more only if the session has more than
        ``max_events_per_frame`` events queued.  Other sessions stay queued.
        A rejection stops the flush; the rest stays queued in order.  Asked
        for while an apply runs, it runs when that apply has returned.
        """
        if not self._drive.begin_flush():
            self._deferred_flush.append(session_id)
            return
        try:
            self._flush(session_id)
        finally:
            self._drive.done()

    def clear(self, session_id: str | None = None) -> None:
        """Drop queued events: one session's, or everything (None)."""
        self._queue.clear(session_id)
        self._drive.settle()

    def pending_graphemes(self, session_id: str | None = None) -> int:
        """Paced graphemes queued (held-back ones included)."""
        if session_id is None:
            return self._queue.pending
        st = self._queue.sessions.get(session_id)
        return st.pending if st is not None else 0

    def queued_events(self, session_id: str | None = None) -> int:
        if session_id is None:
            return self._queue.live
        st = self._queue.sessions.get(session_id)
        return st.live if st is not None else 0

    def graphemes_delivered(self) -> int:
        """Paced graphemes delivered so far (``stats()["graphemes"]``, without the copy)."""
        return int(self._stats["graphemes"])

    @property
    def drive_state(self) -> DriveState:
        return self._drive.state

    def stats(self) -> dict:
        out = dict(self._stats)
        out["pending"] = self._queue.pending
        out["queued_events"] = self._queue.live
        out["held"] = self._queue.held_count()
        out["drive"] = self._drive.state.value
        return out

    # ------------------------------------------------------------------- drive

    def _exit_all(self) -> bool:
        """An exit that delivers everything, held clusters included, is open."""
        return self._law.unlimited or self._queue.pending > self.config.overload_graphemes

    def _condition(self) -> tuple[DriveEvent, float | None]:
        head = self._queue.head_entry()
        if head is None:
            return DriveEvent.EMPTY, None
        if not self._exit_all() and self._queue.waits_on_hold(head):
            return DriveEvent.BLOCKED, head.hold_until
        return DriveEvent.WORK, None

    def _expire_holds(self) -> None:
        self._queue.expire_holds(self._host.now())

    def _settled(self, before: DriveState, after: DriveState) -> None:
        if after is DriveState.IDLE and self._queue.live == 0:
            self._baseline = None
            self._carry = 0.0
            self._queue.compact_if_empty()
        elif before is DriveState.HELD and after is DriveState.ARMED:
            # Like idle -> active: time spent waiting for a held cluster must
            # not turn into one big step when the wait ends; the held cluster
            # itself has waited long enough, so one grapheme is owed at once.
            self._baseline = self._host.now()
            self._carry = max(self._carry, 1.0)
        if not self._drive.busy:
            while self._deferred_flush and not self._drive.busy:
                self.flush_now(self._deferred_flush.pop(0))

    # ------------------------------------------------------------------- drain

    def _drain(self, source: str) -> None:
        cfg = self.config
        stats = self._stats
        stats["frames"] += 1
        if source == "timeout":
            stats["fallback_drains"] += 1
        now = self._host.now()
        q = self._queue
        q.expire_holds(now)
        head = q.head_entry()
        if head is None:
            return
        sid = head.session
        st = q.sessions[sid]
        elapsed_s = max(0.0, now - self._baseline) / 1000.0 if self._baseline is not None else 0.0
        pending = q.pending
        rate: float | None
        unlimited = self._exit_all()
        if unlimited and not self._law.unlimited:
            stats["overloads"] += 1
        if unlimited:
            emit, carry, rate = 0, 0.0, None  # None keeps stats JSON-safe
        elif pending == 0:
            emit, carry, rate = 0, 0.0, 0.0
        else:
            rate = self._law.rate(st.track, now, st.pending, pending)
            budget = self._carry + rate * elapsed_s
            emit = int(budget)
            carry = budget - emit
        batch, plan = q.plan(sid, emit, unlimited, cfg.max_events_per_frame)
        stats["last_rate"] = rate
        if not batch:
            self._baseline = now
            self._carry = carry
            self._record_drain(now, 0, 0, source)
            return
        if self._call_apply(sid, batch, plan, source):
            self._baseline = now
            self._carry = carry

    def _flush(self, session_id: str) -> None:
        q = self._queue
        entries = list(q.session_entries(session_id))
        limit = self.config.max_events_per_frame
        delivered_any = False
        idx = 0
        while idx < len(entries):
            chunk: list[Entry] = []
            while idx < len(entries) and len(chunk) < limit:
                e = entries[idx]
                idx += 1
                if not e.done:  # an apply may have cleared meanwhile
                    chunk.append(e)
            if not chunk:
                break
            plan = [(e, len(e.clusters) if e.clusters is not None else 0) for e in chunk]
            batch = [q.piece(e, e.pos, n) if e.clusters is not None else e.event
                     for e, n in plan]
            if not self._call_apply(session_id, batch, plan, "flush"):
                break
            delivered_any = True
        if delivered_any:
            self._stats["flushes"] += 1

    def _call_apply(self, sid: str, batch: list[dict], plan: list[tuple[Entry, int]],
                    source: str) -> bool:
        stats = self._stats
        q = self._queue
        q.joining = False
        try:
            ok = self._apply(sid, batch)
        except BaseException:
            stats["rejects"] += 1
            raise
        finally:
            q.joining = True
        if ok is False:
            stats["rejects"] += 1
            return False
        delivered = q.consume(plan)
        stats["applies"] += 1
        stats["graphemes"] += delivered
        now = self._host.now()
        self._record_drain(now, delivered, len(batch), source)
        if self.on_applied is not None:
            self.on_applied(now)
        return True

    def _record_drain(self, now: float, graphemes: int, events: int, source: str) -> None:
        stats = self._stats
        stats["last_drain_at"] = now
        stats["last_drain_graphemes"] = graphemes
        stats["last_drain_events"] = events
        stats["last_drain_source"] = source
