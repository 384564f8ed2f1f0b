"""Pacing laws: how many graphemes per second a drain may reveal.

Three laws share one small interface (:class:`Law`: ``new_track`` /
``on_arrival`` / ``first_frame_credit`` / ``rate``) so the scheduler stays a
queue and a budget:

* :class:`SeedLaw` — the seed's (mosoo PR #450) ``clamp(pending / tau, 20,
  800)``, exactly.  Its steady lag is ``tau`` whatever the transport does, its
  speed decays within each batch, and a model faster than the ceiling
  outruns it.
* :class:`AdaptiveLaw` — the default: adaptive playout driven only by what the
  page sees, the arrival times and sizes of paced text (and a tool call's start).
* :class:`UnpacedLaw` — no animation (reduced motion): every drain shows all.

Adaptive playout, per session (one :class:`Track` each):

* **Deliveries**: arrivals less than 5 ms apart are one delivery (several socket
  messages released together); a delivery is learnt from once complete.
* **Spans**: how long the source took to produce a delivery's text — its gap
  to the previous delivery, but no more than its size takes at the source's
  rate (the source was idle for the rest: a slow token, a pause for a tool
  call or for thinking) and no less than the transport's own interval (the
  lower gaps).  The source's rate ``r`` is graphemes over spans (weighted over
  about a second; one delivery moves it at most twofold, so a stall's backlog
  landing at once does not read as a faster model, and the first evidence of
  an answer sets it at most to the step bound: two parts of one burst landing
  a few ms apart say nothing of how fast their text was produced).
* **Cadence and jitter**: the typical gap and span, their deviations, and a
  jitter *cushion*: the recent-worst span of a delivery that was late *and*
  carried the text it was late for (a transport that held text back), which
  decays over 3 s and is bounded by 600 ms.  A late delivery of ordinary size
  (the source paused) widens nothing.
* **Play-out**: what is queued is spread over the time left until the next
  delivery is due (last delivery + cushion) plus a short horizon ``H``::

      rate = pending / (time until due + H)

  Between two deliveries this rate is *constant* — pending and the time left
  shrink together — so the speed does not pulse within a batch (the seed's
  ``pending / tau`` decays by e^(−gap/tau) there).  The lag is about half the
  cushion plus ``H``: it tracks the transport (≈ 25 ms behind 40 ms batches,
  ≈ 75 ms behind 150 ms ones, ≈ nothing behind a provider that sends one
  character every 0.5 ms) and, through the cushion, its jitter: a link that
  delivers in bursts every few hundred ms is played out smoothly over them.
  When a delivery is late the horizon stretches with the delay, so the rest
  slows down instead of stopping dead.
* **Bounds**: the rate is raised so the oldest queued deliveries meet a
  deadline (arrival + ``max_lag_ms``, or automatic: the cushion plus half a
  span), and kept under a step ceiling that scales with ``r`` (1.8 × r or
  r + 250/s, at least the seed's 800/s-class step, 1.3 × r for models faster
  than that) — never a fixed ceiling a fast model can outrun, and never a jump
  after a stall: a backlog drains at the ceiling, in bounded steps, within a
  bounded time.  Until two gaps are learnt the ceiling is at least the step
  bound: one gap's rate evidence (a mobile radio's first small burst after a
  long wake) can be a fraction of the source's rate, and a ceiling scaled
  from it held the next bursts back.  A low-pass filter (60 ms) keeps rate changes gradual —
  except that over a session's first ten gaps it never holds the rate under
  the source's measured one while more is queued than that: the filter would
  start from the prior's guess and let a fast source's backlog build.
* **Slow sources** (under ``_SLOW_RATE``, 90 graphemes/s: a slow model's few
  graphemes every 150–400 ms): whatever is queued shows at least one
  grapheme per frame.  Where the source is under one grapheme per frame,
  every frame shows 0 or 1 whatever the timing, so showing a delivery as
  soon as it lands costs no evenness, where spreading it over the time until
  the next one costs half that time in lag.  A text-rich late delivery
  widens no cushion then: a slow model's hiccup is not a transport holding
  text back, and a wider cushion would only hold back what follows it
  (measured on the slow trace generated 0.6–1.6× as fast, seeds 1–4).
* **Announced pauses**: when a tool call starts (``on_pause``: the scheduler
  saw a ``SOURCE_PAUSE_TYPES`` event after the session's text), the source
  has said it stops writing for a while.  What is queued then is spread at a
  constant speed over ``_WIND_DOWN`` cushions from the announcement (at most
  ``_WIND_MAX_MS``), instead of running dry at full speed a cushion later and
  standing still for the whole tool call; the tool call shows, in order, once
  that text is out.  The automatic deadline yields to it (an explicit
  ``max_lag_ms`` does not).  The delivery that carried the announcement is
  no cadence sample: a delivery buffer flushes early for a tool call (8
  graphemes 33 ms after the previous batch), which read as a faster cadence
  and shortened the cushion of the text after the pause.  New text ends the
  wind-down.
* The first paced text of an idle session is owed one grapheme at once
  (:meth:`AdaptiveLaw.first_frame_credit`), so it shows on the very next frame.

Everything is O(1) per arrival and per drain (the deadline looks at a bounded
number of the oldest deliveries).  No clock is read here: times come in.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Protocol

__all__ = ["STEP_RATE", "AdaptiveLaw", "Law", "SeedLaw", "Track", "UnpacedLaw"]

# Step bound (graphemes/s) of the ceiling for models slower than it: the seed's
# 800/s class, so per-frame steps stay what readers know (≈ 14 at 60 Hz).
STEP_RATE = 840.0

# Arrivals closer than this are one delivery (a socket message split in
# several enqueue calls, or one batch carrying several deltas).
_SAME_DELIVERY_MS = 5.0
# An arrival after this much silence starts a new answer: the cadence learnt
# so far is kept (same transport), the silence itself is not a gap.
_IDLE_MS = 3000.0
_PRIOR_GAP_MS = 150.0  # before the first gap is seen (the seed server's batching)
_RATE_TAU_MS = 1000.0  # arrival-rate memory
_RATE_STEP = 2.0  # one delivery moves the rate at most this-fold
_SPAN_EARLY = 0.7  # the k-th span's weight is at least this / (k + 2): the prior fades fast
_FAST_PATH_GAPS = 2  # a server's first gaps (its fast path) are shorter than its cadence
_GAP_ALPHA = 0.25  # EWMA weight of one gap
_PEAK_DECAY_MS = 3000.0  # the jitter cushion decays back to the typical span over this
_PEAK_DEV = 2.0  # a span beyond typical + this × its deviation widens the cushion
_CUSHION_MAX_MS = 600.0
_STALL_FACTOR = 3.0  # gap > 3 × (typical + 2 dev) and > _STALL_MIN_MS: a stall or pause
_STALL_MIN_MS = 250.0
_H_MIN_MS = 2.0  # horizon H = max(_H_MIN_MS, _H_GAP × cushion, _H_DEV × (dev + jit))
_H_GAP = 0.2
_H_DEV = 0.5
_LATE_K = 1.0  # a late delivery stretches H by this × how late it is
_DL_SPAN = 0.5  # automatic deadline = cushion + _DL_SPAN × span, at least _DL_MIN_MS
_DL_MIN_MS = 100.0
_CEIL_X = 1.8  # ceiling = min(max(_CEIL_X r, r + _CEIL_ADD), max(_CEIL_FAST r, step bound))
_CEIL_ADD = 0.25  # graphemes/ms
_CEIL_FAST = 1.3
_SMOOTH_MS = 60.0  # time constant of the play-out rate's low-pass filter
_UNINFORMED_GAPS = 2  # while fewer gaps are learnt, the ceiling is at least the step bound
_WARM_GAPS = 10  # while fewer gaps are learnt, the filter never holds the rate under r
_DEADLINE_GROUPS = 16  # oldest deliveries the deadline looks at per drain
_SLOW_RATE = 0.09  # graphemes/ms: a source under this shows ≥ 1 grapheme per frame
_FASTER = 0.8  # this gap and the typical one under this × the span: a faster cadence
_FRAME_MAX_MS = 40.0  # drains further apart are no animation frames (a hidden tab's timer)
# An announced pause (a tool call): what is queued before it is spread, at a
# constant speed, over this many cushions from the announcement, at most
# _WIND_MAX_MS (the tool call itself shows once that text is out).
_WIND_DOWN = 5.0
_WIND_MAX_MS = 1000.0


class Law(Protocol):
    """What the scheduler asks of a pacing law (one track per session)."""

    unlimited: bool  # True: every drain may show all that is queued

    def new_track(self) -> Any: ...

    def on_arrival(self, track: Any, now: float, n: int) -> None: ...

    def first_frame_credit(self) -> float: ...

    def rate(self, track: Any, now: float, pending: int, total_pending: int) -> float: ...

    def on_pause(self, track: Any, now: float) -> None: ...


class UnpacedLaw:
    """No pacing (reduced motion): each drain shows everything queued."""

    unlimited = True

    def new_track(self) -> None:
        return None

    def on_arrival(self, track: Any, now: float, n: int) -> None:
        pass

    def first_frame_credit(self) -> float:
        return 0.0

    def rate(self, track: Any, now: float, pending: int, total_pending: int) -> float:
        return 0.0  # unused: the budget is unlimited

    def on_pause(self, track: Any, now: float) -> None:
        pass


class SeedLaw:
    """The seed's law: ``clamp(pending / tau, min_rate, max_rate)`` on the total backlog."""

    unlimited = False

    def __init__(self, tau_ms: float, min_rate: float, max_rate: float) -> None:
        self.tau_ms = tau_ms
        self.min_rate = min_rate
        self.max_rate = max_rate

    def new_track(self) -> None:
        return None

    def on_arrival(self, track: Any, now: float, n: int) -> None:
        pass

    def first_frame_credit(self) -> float:
        return 0.0  # the seed waits for budget to build up (≈ 3 frames at 20/s)

    def rate(self, track: Any, now: float, pending: int, total_pending: int) -> float:
        return min(max(total_pending * 1000.0 / self.tau_ms, self.min_rate), self.max_rate)

    def on_pause(self, track: Any, now: float) -> None:
        pass


class Track:
    """One session's arrival estimates and play-out state (see the module docstring)."""

    __slots__ = ("last_arrival", "prev_arrival", "open_n", "rate_n", "rate_t", "gap", "dev",
                 "floor", "span", "span_dev", "peak", "peak_at", "jit", "gaps_seen", "out",
                 "out_at", "arrived", "groups", "pause_at")

    def __init__(self) -> None:
        self.last_arrival: float | None = None  # the newest delivery (still growing)
        self.prev_arrival: float | None = None  # the one before it (None: first of an answer)
        self.open_n = 0  # graphemes of the newest delivery so far
        self.rate_n = 0.0  # exponentially weighted graphemes ...
        self.rate_t = 0.0  # ... over the exponentially weighted time that produced them
        self.gap = _PRIOR_GAP_MS  # typical gap between deliveries
        self.dev = 0.0  # its mean deviation
        self.floor = _PRIOR_GAP_MS  # the transport's own interval (the lower gaps)
        self.span = _PRIOR_GAP_MS  # typical time one delivery's text took to produce
        self.span_dev = 0.0
        self.peak = 0.0  # recent-worst span of a late, text-rich delivery (decays)
        self.peak_at = 0.0
        self.jit = 0.0  # mean |size − r × gap| of a delivery, in ms at rate r
        self.gaps_seen = 0
        self.out: float | None = None  # filtered play-out rate, graphemes/ms
        self.out_at = 0.0
        self.arrived = 0  # paced graphemes ever queued for this session
        # [arrival ms, cumulative arrived, 1.0 if it ended a stall]
        self.groups: deque[list[float]] = deque()
        self.pause_at: float | None = None  # the source announced a pause (a tool call)

    def arrival_rate(self) -> float:
        """Graphemes per ms while the source produces (0 before the first delivery)."""
        return self.rate_n / self.rate_t if self.rate_t > 0 else 0.0


class AdaptiveLaw:
    """Adaptive playout (the default law).  ``max_lag_ms`` = None: automatic cushion."""

    unlimited = False

    def __init__(self, max_lag_ms: float | None = None, min_rate: float = 20.0,
                 max_step_rate: float = STEP_RATE) -> None:
        self.max_lag_ms = max_lag_ms
        self.min_rate = min_rate / 1000.0  # graphemes per ms
        self.max_step_rate = max_step_rate / 1000.0

    def new_track(self) -> Track:
        return Track()

    def first_frame_credit(self) -> float:
        return 1.0  # the first text of an idle session shows on the very next frame

    # ------------------------------------------------------------- estimates

    def on_arrival(self, tr: Track, now: float, n: int) -> None:
        """``n`` paced graphemes were queued for this session at ``now``."""
        if n <= 0:
            return
        tr.arrived += n
        cut = tr.pause_at is not None
        tr.pause_at = None  # text again: the source has resumed
        last = tr.last_arrival
        if last is not None and now - last < _SAME_DELIVERY_MS:
            # The same delivery (several socket messages released together, or
            # one split over several calls): learnt from once it is complete.
            tr.open_n += n
            tr.groups[-1][1] = tr.arrived
            return
        if last is not None and not cut:
            self._learn(tr, last - tr.prev_arrival if tr.prev_arrival is not None else None,
                        tr.open_n)
        idle = last is None or now - last > _IDLE_MS
        stall = last is not None and not idle and tr.gaps_seen >= 2 and (
            now - last > self._stall_gap(tr))
        tr.groups.append([now, float(tr.arrived), 1.0 if stall else 0.0])
        tr.prev_arrival = None if idle else last
        tr.last_arrival = now
        tr.open_n = n

    def on_pause(self, tr: Track, now: float) -> None:
        """The source announced that its text pauses (a tool call starts)."""
        if tr.pause_at is None:
            tr.pause_at = now

    @staticmethod
    def _stall_gap(tr: Track) -> float:
        return max(_STALL_MIN_MS, _STALL_FACTOR * (tr.gap + 2.0 * tr.dev))

    def _learn(self, tr: Track, g: float | None, n: int) -> None:
        """Learn from a complete delivery of ``n`` graphemes, ``g`` ms after the
        previous one (None: the first of an answer)."""
        now = tr.last_arrival
        assert now is not None
        if g is None:
            # First delivery of an answer: no rate evidence yet (how long it
            # took to produce is unknown); the next delivery's gap brings it.
            tr.rate_n, tr.rate_t = 0.0, 0.0
            return
        r = tr.arrival_rate()
        # How long the source took to produce this delivery's text: the gap, but
        # no longer than its size takes at the source's rate (the source was
        # idle for the rest: a pause, thinking, a tool call), and never under
        # the transport's own interval.
        need = n / r if r > 0 else g
        stall = tr.gaps_seen >= 2 and g > self._stall_gap(tr)
        span = min(g, max(need, tr.span if stall else tr.floor))
        # One delivery's evidence moves the rate at most _RATE_STEP-fold; the
        # first (no rate yet) at most to the step bound: two parts of one burst
        # landing 5 ms apart say nothing of how fast their text was produced.
        produced = max(span, n / (_RATE_STEP * r) if r > 0 else n / self.max_step_rate)
        w = math.exp(-produced / _RATE_TAU_MS)
        tr.rate_n = tr.rate_n * w + n
        tr.rate_t = tr.rate_t * w + produced
        rich = span > tr.span + _PEAK_DEV * tr.span_dev
        if rich and not _is_slow(r):
            self._raise_peak(tr, now, span)  # late and carrying what it was late for
        if stall:
            # A gap far beyond the cadence.  After a pause of the source the
            # delivery is an ordinary one (paced like any other); after a stall
            # of the transport it carries what was produced meanwhile, drains
            # at the step ceiling rather than by a deadline, and widens the cushion.
            for grp in reversed(tr.groups):
                if grp[0] == now:
                    grp[2] = 1.0 if rich else 0.0
                    break
            return
        if r > 0:
            err = min(abs(n - r * g) / r, 3.0 * tr.gap)
            tr.jit += _GAP_ALPHA * (err - tr.jit)
        if tr.gaps_seen == 0:
            tr.gap, tr.dev = g, 0.25 * g
        else:
            clipped = min(g, 3.0 * tr.gap)
            tr.dev += _GAP_ALPHA * (abs(clipped - tr.gap) - tr.dev)
            tr.gap += _GAP_ALPHA * (clipped - tr.gap)
        tr.floor = _next_floor(tr.floor, g, tr.gap, tr.gaps_seen)
        faster = tr.span > span and (span >= g or max(g, tr.gap) < _FASTER * tr.span)
        a = max(_GAP_ALPHA, _span_weight(tr.gaps_seen, faster))
        tr.span_dev += a * (abs(span - tr.span) - tr.span_dev)
        tr.span += a * (min(span, 3.0 * tr.span) - tr.span)
        tr.gaps_seen += 1

    def _raise_peak(self, tr: Track, now: float, span: float) -> None:
        tr.peak = max(self._peak(tr, now), min(span, _CUSHION_MAX_MS))
        tr.peak_at = now

    @staticmethod
    def _peak(tr: Track, now: float) -> float:
        return tr.peak * math.exp(-(now - tr.peak_at) / _PEAK_DECAY_MS)

    # ----------------------------------------------------------------- rate

    def cushion_ms(self, tr: Track, now: float) -> float:
        """The time each delivery's text is spread over: its typical span, or
        longer while the transport has recently been late with text-rich
        deliveries (a jitter buffer's depth)."""
        c = max(tr.span, self._peak(tr, now))
        if self.max_lag_ms is not None:
            c = min(c, self.max_lag_ms)
        return c

    def deadline_ms(self, tr: Track, now: float | None = None) -> float:
        """Most a grapheme may wait after arrival (outside stalls)."""
        if self.max_lag_ms is not None:
            return self.max_lag_ms
        c = self.cushion_ms(tr, now) if now is not None else tr.span
        return max(c + _DL_SPAN * tr.span, _DL_MIN_MS)

    def rate(self, tr: Track, now: float, pending: int, total_pending: int) -> float:
        """Graphemes per second for a drain at ``now`` with ``pending`` queued."""
        if pending <= 0:
            return 0.0
        r = tr.arrival_rate()
        c = self.cushion_ms(tr, now)
        horizon = max(_H_MIN_MS, _H_GAP * c, _H_DEV * (tr.span_dev + tr.jit))
        last = tr.last_arrival if tr.last_arrival is not None else now
        pause_at = tr.pause_at
        if pause_at is not None:
            # The source said its text pauses (a tool call runs): wind down
            # over the pause rather than run dry at full speed and stand still.
            end = pause_at + min(_WIND_DOWN * c, _WIND_MAX_MS)
            target = pending / max(end - now, horizon)
        else:
            due = last + c - now
            if due < 0.0:
                horizon += _LATE_K * -due  # a late delivery: stretch the rest, do not stop dead
                due = 0.0
            target = pending / (due + horizon)
        if r > 0:
            ceiling = max(min(max(_CEIL_X * r, r + _CEIL_ADD),
                              max(_CEIL_FAST * r, self.max_step_rate)), self.min_rate)
        else:
            ceiling = self.max_step_rate  # no rate seen yet: the step bound
        if tr.gaps_seen < _UNINFORMED_GAPS:
            # One gap's evidence says little of the source's rate (a mobile
            # radio's first burst after a 700 ms wake: 82/s for a model at
            # 480/s); a ceiling scaled from it would hold back the next,
            # larger bursts for seconds.  The step bound keeps frames what
            # readers know meanwhile.
            ceiling = max(ceiling, self.max_step_rate)
        floor = max(self.min_rate, _frame_step_floor(tr, now, r))
        target = min(max(target, floor), ceiling)
        if tr.out is None:
            out = target
        else:
            dt = max(0.0, now - tr.out_at)
            out = tr.out + (target - tr.out) * (1.0 - math.exp(-dt / _SMOOTH_MS))
        if tr.gaps_seen < _WARM_GAPS and r > 0:
            # Learning the cadence: filtering up from the prior's first guess
            # would hold the play-out under the source's rate while its backlog
            # builds (a provider sending a character every 0.5 ms).
            out = max(out, min(target, r))
        out = min(max(out, floor), ceiling)
        # The automatic deadline yields to a wind-down (which ends by itself);
        # an explicit max_lag_ms does not.
        need = (0.0 if pause_at is not None and self.max_lag_ms is None
                else self._deadline_rate(tr, now, pending))
        if need > out:
            # An explicit max_lag_ms outranks the smoothness ceiling; the
            # automatic deadline works under it.
            out = need if self.max_lag_ms is not None else min(need, ceiling)
        tr.out = out
        tr.out_at = now
        return out * 1000.0

    def _deadline_rate(self, tr: Track, now: float, pending: int) -> float:
        """Rate at which the oldest queued deliveries make their deadlines."""
        groups = tr.groups
        delivered = tr.arrived - pending
        while groups and groups[0][1] <= delivered:
            groups.popleft()
        if not groups:
            return 0.0
        deadline = self.deadline_ms(tr, now)
        need = 0.0
        for k, (t_arr, cum, stall) in enumerate(groups):
            if stall or k >= _DEADLINE_GROUPS:
                # Behind a stall's backlog nothing can be on time: the
                # deadline holds again once that backlog is out.
                return need
            need = max(need, (cum - delivered) / max(t_arr + deadline - now, 16.0))
        return need


def _is_slow(r: float) -> bool:
    """A source known to produce under ``_SLOW_RATE`` (0: not known yet)."""
    return 0.0 < r < _SLOW_RATE


def _frame_step_floor(tr: Track, now: float, r: float) -> float:
    """One grapheme per frame (graphemes/ms) for a slow source, else 0.

    The frame is the time since this track's previous drain, when that drain
    was a frame ago (not the first drain after idle, nor a hidden tab's timer).
    """
    if not _is_slow(r) or tr.out is None:
        return 0.0
    dt = now - tr.out_at
    # A hair over one: the scheduler times the same frame from its own
    # baseline, and a float rounding to 0.9999999 of a grapheme would show
    # nothing this frame and two the next.
    return (1.0 + 1e-6) / dt if 0.0 < dt <= _FRAME_MAX_MS else 0.0


def _next_floor(floor: float, g: float, typical: float, k: int) -> float:
    """The transport's own interval after the ``k``-th gap (from 0), ``g`` ms.

    It follows the lower gaps — except a server's fast path: its first
    ``_FAST_PATH_GAPS`` gaps, shorter than its cadence, do not pull it under
    the prior, and the first gap after them sets it.  Pulled down to the fast
    path's ≈ 45 ms, the floor let the first ordinary 150 ms batches smaller
    than the rate says read as produced in ≈ 90 ms (their size at that rate):
    the cushion came out short and every batch ran dry ≈ 30 ms before the
    next for the first second (frames of 0–2 graphemes among 8–12: the fast
    trace's jerk CV 0.36 against the seed's 0.27, seed 4).  Longer first gaps
    (a mobile link's bursts) set it at once, as before.
    """
    if k == 0:
        return max(g, _PRIOR_GAP_MS)
    moved = floor + _GAP_ALPHA * (min(g, typical) - floor)
    if k < _FAST_PATH_GAPS:
        return max(moved, _PRIOR_GAP_MS)
    if k == _FAST_PATH_GAPS and floor <= _PRIOR_GAP_MS:
        return g  # the fast path held it at the prior: the cadence shows now
    return moved


def _span_weight(k: int, faster_cadence: bool) -> float:
    """Weight of the ``k``-th span (from 0) against the estimate so far.

    From the prior on, faster at first — but a transport's first
    ``_FAST_PATH_GAPS`` gaps (a server's fast path for the first deltas) are
    shorter than its cadence, so they fade the prior gently.  After them a
    span shorter than the estimate takes over quickly (40 ms batches are
    learnt within a few deliveries, not a dozen) when it is direct evidence
    of a faster cadence: it took its whole gap, or this gap and the typical
    one are both under ``_FASTER`` × the estimate (a batch smaller than usual
    reads as produced in less than its gap, yet the gaps say the cadence is
    short: batch40, seed 5).  Other spans keep the gentle fade: one cut short
    by the rate estimate, which the fast path's dense first deliveries inflate,
    while the gaps stay at the cadence (made quick, held clusters froze on
    cjk_emoji), and a slower cadence (learnt at the usual pace, fresher
    meanwhile).
    """
    if k < _FAST_PATH_GAPS or not faster_cadence:
        return _SPAN_EARLY / (k + 2)
    return _SPAN_EARLY / (k - _FAST_PATH_GAPS + 1)
