"""Pacing laws: how many graphemes per second a drain may reveal.

Two laws share one small interface (``new_track`` / ``on_arrival`` /
``first_frame_credit`` / ``rate``) so the scheduler stays a queue and a budget:

* :class:`SeedLaw` — the seed's (mosoo PR #450) ``clamp(pending / tau, 20,
  800)``, exactly.  Its steady lag is ``tau`` whatever the transport does, its
  speed decays within each batch, and a model faster than the ceiling
  outruns it.
* :class:`AdaptiveLaw` — the default: adaptive playout driven only by what the
  page sees, the arrival times and sizes of paced text.

Adaptive playout, per session (one :class:`Track` each):

* **Estimates**, online, updated once per delivery: the arrival rate ``r``
  (graphemes per ms, exponentially weighted over about a second of arrivals);
  the cadence — the typical gap between deliveries ``gap`` (an EWMA, outliers
  clipped), its mean deviation ``dev``, how far delivery sizes stray from
  ``r × gap`` (``jit``, in ms), and a recent-worst gap ``peak`` that decays
  back to ``gap``.  A gap far beyond the typical one is a *stall*: it counts
  for the rate (its text was generated meanwhile) but not for the cadence.
* **Play-out**: what is queued is spread over the time left until the next
  delivery is due (``last arrival + gap``) plus a short horizon ``H`` (a few
  ms more when the cadence is irregular)::

      rate = pending / (time until due + H)

  Between two deliveries this rate is *constant* — pending and the time left
  shrink together — so the speed does not pulse within a batch (the seed's
  ``pending / tau`` decays by e^(−gap/tau) there).  The queue is nearly empty
  when the next delivery lands, so the steady lag is about half a delivery
  interval plus ``H``: it tracks the transport (≈ 25 ms behind 40 ms batches,
  ≈ 160 ms behind 300 ms ones) instead of a constant.  When a delivery is
  late the horizon stretches with the delay, so the rest slows down gently
  instead of stopping dead.
* **Bounds**: the rate is raised so the oldest queued deliveries meet their
  deadline (arrival + ``max_lag_ms``, or automatic: one typical gap plus half
  the recent-worst one), and kept under a step ceiling that scales with ``r``
  (1.8 × r, at least the seed's 800/s-class step, 1.3 × r for models faster
  than that) — never a fixed ceiling a fast model can outrun, and never a jump
  after a stall: a backlog drains at the ceiling, in bounded steps, within
  a bounded time.  A low-pass filter (60 ms) keeps rate changes gradual.
* The first paced text of an idle session is owed one grapheme at once
  (:meth:`AdaptiveLaw.first_frame_credit`), so it shows on the very next frame.

Everything is O(1) per arrival and per drain (the deadline looks at a bounded
number of the oldest deliveries).  No clock is read here: times come in.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

__all__ = ["STEP_RATE", "AdaptiveLaw", "SeedLaw", "Track"]

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
_GAP_ALPHA = 0.25  # EWMA weight of one gap
_PEAK_DECAY_MS = 3000.0  # recent-worst gap decays back to typical over this
_STALL_FACTOR = 3.0  # gap > 3 × (typical + 2 dev) and > _STALL_MIN_MS: a stall
_STALL_MIN_MS = 250.0
_FIRST_RATE_CAP = 0.6  # first delivery's rate evidence, at most this × the step bound
_H_MIN_MS = 20.0  # horizon H = max(_H_MIN_MS, _H_GAP × gap, _H_DEV × (dev + jit))
_H_GAP = 0.1
_H_DEV = 0.5
_LATE_K = 1.0  # a late delivery stretches H by this × how late it is
_DL_GAP = 1.0  # automatic deadline = _DL_GAP × gap + _DL_PEAK × peak, at least _DL_MIN_MS
_DL_PEAK = 0.5
_DL_MIN_MS = 100.0
_CEIL_X = 1.8  # ceiling = min(max(_CEIL_X r, r + _CEIL_ADD), max(_CEIL_FAST r, step bound))
_CEIL_ADD = 0.1  # graphemes/ms
_CEIL_FAST = 1.3
_SMOOTH_MS = 60.0  # time constant of the play-out rate's low-pass filter
_DEADLINE_GROUPS = 16  # oldest deliveries the deadline looks at per drain


class SeedLaw:
    """The seed's law: ``clamp(pending / tau, min_rate, max_rate)`` on the total backlog."""

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


class Track:
    """One session's arrival estimates and play-out state (see the module docstring)."""

    __slots__ = ("last_arrival", "rate_n", "rate_t", "gap", "dev", "peak", "jit", "gaps_seen",
                 "out", "out_at", "arrived", "groups")

    def __init__(self) -> None:
        self.last_arrival: float | None = None
        self.rate_n = 0.0  # exponentially weighted graphemes ...
        self.rate_t = 0.0  # ... over exponentially weighted ms
        self.gap = _PRIOR_GAP_MS
        self.dev = 0.0
        self.peak = _PRIOR_GAP_MS
        self.jit = 0.0  # mean |size − r × gap| of a delivery, in ms at rate r
        self.gaps_seen = 0
        self.out: float | None = None  # filtered play-out rate, graphemes/ms
        self.out_at = 0.0
        self.arrived = 0  # paced graphemes ever queued for this session
        # [arrival ms, cumulative arrived, 1.0 if it ended a stall]
        self.groups: deque[list[float]] = deque()

    def arrival_rate(self) -> float:
        """Graphemes per ms (0 before the first delivery)."""
        return self.rate_n / self.rate_t if self.rate_t > 0 else 0.0


class AdaptiveLaw:
    """Adaptive playout (the default law).  ``max_lag_ms`` = None: automatic deadline."""

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
        last = tr.last_arrival
        tr.arrived += n
        if last is not None and now - last < _SAME_DELIVERY_MS:
            tr.rate_n += n
            tr.groups[-1][1] = tr.arrived
            return
        tr.groups.append([now, float(tr.arrived), 0.0])
        tr.last_arrival = now
        if last is None or now - last > _IDLE_MS:
            # First delivery of an answer: its size over the expected gap is
            # the only rate evidence there is; one big first delta says little.
            tr.rate_t = max(tr.gap, 1.0)
            tr.rate_n = min(float(n), _FIRST_RATE_CAP * self.max_step_rate * tr.rate_t)
            return
        g = now - last
        r_before = tr.arrival_rate()
        w = math.exp(-g / _RATE_TAU_MS)
        tr.rate_n = tr.rate_n * w + n
        tr.rate_t = tr.rate_t * w + g
        if tr.gaps_seen >= 2 and g > max(_STALL_MIN_MS, _STALL_FACTOR * (tr.gap + 2.0 * tr.dev)):
            # A stall: its text was generated meanwhile (so it counts for the
            # rate) but the gap says nothing about the transport's cadence,
            # and its backlog drains at the step ceiling, not by a deadline.
            tr.groups[-1][2] = 1.0
            return
        if r_before > 0:
            err = min(abs(n - r_before * g) / r_before, 3.0 * tr.gap)
            tr.jit += _GAP_ALPHA * (err - tr.jit)
        if tr.gaps_seen == 0:
            tr.gap, tr.dev, tr.peak = g, 0.25 * g, g
        else:
            clipped = min(g, 3.0 * tr.gap)
            tr.dev += _GAP_ALPHA * (abs(clipped - tr.gap) - tr.dev)
            tr.gap += _GAP_ALPHA * (clipped - tr.gap)
            decayed = tr.gap + (tr.peak - tr.gap) * math.exp(-g / _PEAK_DECAY_MS)
            tr.peak = max(decayed, clipped)
        tr.gaps_seen += 1

    # ----------------------------------------------------------------- rate

    def deadline_ms(self, tr: Track) -> float:
        """Most a grapheme may wait after arrival (outside stalls)."""
        if self.max_lag_ms is not None:
            return self.max_lag_ms
        return max(_DL_GAP * tr.gap + _DL_PEAK * tr.peak, _DL_MIN_MS)

    def rate(self, tr: Track, now: float, pending: int, total_pending: int) -> float:
        """Graphemes per second for a drain at ``now`` with ``pending`` queued."""
        if pending <= 0:
            return 0.0
        r = tr.arrival_rate()
        gap = tr.gap if self.max_lag_ms is None else min(tr.gap, self.max_lag_ms)
        horizon = max(_H_MIN_MS, _H_GAP * gap, _H_DEV * (tr.dev + tr.jit))
        last = tr.last_arrival if tr.last_arrival is not None else now
        due = last + gap - now
        if due < 0.0:
            horizon += _LATE_K * -due  # a late delivery: stretch the rest, do not stop dead
            due = 0.0
        target = pending / (due + horizon)
        ceiling = max(min(max(_CEIL_X * r, r + _CEIL_ADD),
                          max(_CEIL_FAST * r, self.max_step_rate)), self.min_rate)
        floor = self.min_rate
        target = min(max(target, floor), ceiling)
        if tr.out is None:
            out = target
        else:
            dt = max(0.0, now - tr.out_at)
            out = tr.out + (target - tr.out) * (1.0 - math.exp(-dt / _SMOOTH_MS))
        out = min(max(out, floor), ceiling)
        need = self._deadline_rate(tr, now, pending)
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
        deadline = self.deadline_ms(tr)
        need = 0.0
        for k, (t_arr, cum, stall) in enumerate(groups):
            if stall or k >= _DEADLINE_GROUPS:
                # Behind a stall's backlog nothing can be on time: the
                # deadline holds again once that backlog is out.
                return need
            need = max(need, (cum - delivered) / max(t_arr + deadline - now, 16.0))
        return need
