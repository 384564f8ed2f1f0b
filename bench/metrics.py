"""What is on screen, what the trace says should be, and the figures comparing them.

Text is tracked per message id as a growing length (code points), so every
grapheme of the final text gets three times: generated (model), arrived
(browser socket) and visible (first paint showing it).  Only assistant and
reasoning text counts; user echoes and tool arguments are never paced by
anyone, so they would only dilute the figures.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import regex

_GRAPHEME = regex.compile(r"\X")
_TERMINAL = frozenset({"RUN_FINISHED", "RUN_ERROR"})
_COUNTED_ROLES = frozenset({"assistant", "reasoning"})
# Commits made because the stream said "stop animating" (or the pacer gave up):
# their size is a feature, not a jump, so they are left out of jump and jerk.
EXCLUDED_REASONS = frozenset({"barrier", "overload"})


class TextScreen:
    """Assistant/reasoning text per message id, and when each length was reached."""

    def __init__(self, keep_text: bool = True) -> None:
        self.keep_text = keep_text
        self.parts: dict[str, list[str]] = {}
        self.length: dict[str, int] = {}
        self.history: dict[str, list[tuple[float, int, int]]] = {}  # (t, length, commit no.)
        self.order: list[str] = []
        self._roles: dict[str, str] = {}
        self._last_chunk: str | None = None
        self._last_reasoning_chunk: str | None = None

    def text(self, mid: str) -> str:
        return "".join(self.parts.get(mid, ()))

    def _touch(self, mid: str) -> None:
        if mid not in self.length:
            self.length[mid] = 0
            self.parts[mid] = []
            self.history[mid] = []
            self.order.append(mid)

    def _append(self, mid: str, delta: str, changed: set[str]) -> None:
        if not delta:
            return
        self._touch(mid)
        if self.keep_text:
            self.parts[mid].append(delta)
        self.length[mid] += len(delta)
        changed.add(mid)

    def _replace(self, mid: str, content: str, changed: set[str]) -> None:
        self._touch(mid)
        self.parts[mid] = [content] if self.keep_text else []
        self.length[mid] = len(content)
        changed.add(mid)

    def apply(self, t: float, events: list[dict[str, Any]], commit_no: int = 0) -> set[str]:
        changed: set[str] = set()
        for ev in events:
            et = ev.get("type")
            if et == "TEXT_MESSAGE_START":
                self._roles[ev["messageId"]] = ev.get("role") or "assistant"
            elif et == "TEXT_MESSAGE_CONTENT":
                mid = ev["messageId"]
                if self._roles.get(mid, "assistant") != "user":
                    self._append(mid, ev.get("delta") or "", changed)
            elif et == "TEXT_MESSAGE_CHUNK":
                mid = ev.get("messageId") or self._last_chunk
                if mid is None:
                    continue
                self._last_chunk = mid
                if ev.get("role"):
                    self._roles[mid] = ev["role"]
                if self._roles.get(mid, "assistant") != "user":
                    self._append(mid, ev.get("delta") or "", changed)
            elif et == "REASONING_MESSAGE_CONTENT":
                self._append(ev["messageId"], ev.get("delta") or "", changed)
            elif et == "REASONING_MESSAGE_CHUNK":
                mid = ev.get("messageId") or self._last_reasoning_chunk
                if mid is not None:
                    self._last_reasoning_chunk = mid
                    self._append(mid, ev.get("delta") or "", changed)
            elif et == "MESSAGES_SNAPSHOT":
                for msg in ev.get("messages") or ():
                    if not isinstance(msg, dict):
                        continue
                    content = msg.get("content")
                    if msg.get("role") in _COUNTED_ROLES and isinstance(content, str):
                        mid = msg.get("id")
                        if isinstance(mid, str) and mid:
                            self._roles[mid] = msg["role"]
                            self._replace(mid, content, changed)
        for mid in changed:
            self.history[mid].append((t, self.length[mid], commit_no))
        return changed


@dataclass
class TraceTruth:
    """Per-grapheme ground truth of a trace, computed once and shared by all runs."""

    final: dict[str, str]
    boundaries: dict[str, frozenset[int]]
    mids: list[str]  # per grapheme, in arrival order
    ends: np.ndarray  # code-point end offset of each grapheme in its message
    arrival: np.ndarray  # ms
    generated: np.ndarray  # ms
    terminal_ms: float | None
    total: int = field(init=False)

    def __post_init__(self) -> None:
        self.total = len(self.ends)

    @property
    def oracle_delay_ms(self) -> float:
        if not self.total:
            return 0.0
        return float(np.max(self.arrival - self.generated))

    @property
    def oracle_lag_ms(self) -> np.ndarray:
        """Lag (arrival → shown) of a display that shows grapheme i at gen_i + D."""
        return self.generated + self.oracle_delay_ms - self.arrival

    @classmethod
    def build(
        cls, model: list[tuple[float, dict[str, Any]]], arrivals: list[tuple[float, list[dict]]]
    ) -> TraceTruth:
        gen = TextScreen()
        for t, ev in model:
            gen.apply(t, [ev])
        arr = TextScreen()
        terminal = None
        for t, batch in arrivals:
            arr.apply(t, batch)
            if terminal is None and any(e.get("type") in _TERMINAL for e in batch):
                terminal = t
        final: dict[str, str] = {}
        bounds: dict[str, frozenset[int]] = {}
        rows: list[tuple[float, int, int, str, float]] = []
        for order, mid in enumerate(arr.order):
            text = arr.text(mid)
            final[mid] = text
            a_t, a_len = _monotone(arr.history[mid])
            g_t, g_len = _monotone(gen.history.get(mid, []))
            ends = []
            pos = 0
            for g in _GRAPHEME.findall(text):
                pos += len(g)
                ends.append(pos)
            bounds[mid] = frozenset([0, *ends])
            for end in ends:
                a = a_t[bisect.bisect_left(a_len, end)]
                gi = bisect.bisect_left(g_len, end)
                # Text only the snapshot carried (never streamed as deltas) has no
                # generation time of its own: treat it as generated on arrival.
                g = g_t[gi] if gi < len(g_t) else a
                rows.append((a, order, end, mid, min(g, a)))
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        return cls(
            final=final,
            boundaries=bounds,
            mids=[r[3] for r in rows],
            ends=np.array([r[2] for r in rows], dtype=np.int64),
            arrival=np.array([r[0] for r in rows], dtype=float),
            generated=np.array([r[4] for r in rows], dtype=float),
            terminal_ms=terminal,
        )


def _monotone(history: list[tuple[float, int, int]]) -> tuple[list[float], list[int]]:
    ts: list[float] = []
    lens: list[int] = []
    best = -1
    for t, n, _c in history:
        if n > best:
            best = n
            ts.append(t)
            lens.append(n)
    return ts, lens


class Recorder:
    """The display side of one run: receives the strategy's commits."""

    def __init__(self, truth: TraceTruth, period_ms: float) -> None:
        self.truth = truth
        self.period = period_ms
        self.screen = TextScreen()
        self.commits: list[tuple[float, str, int]] = []  # (t, reason, n events)
        self._visible: tuple[np.ndarray, np.ndarray] | None = None

    def commit(self, t: float, events: list[dict[str, Any]], reason: str) -> None:
        if not events:
            return
        self._visible = None
        if any(e.get("type") == "MESSAGES_SNAPSHOT" for e in events):
            # Catch-up text a snapshot restores is a barrier reveal for every
            # strategy, not a jump the pacer chose.
            reason = "barrier"
        self.commits.append((t, reason, len(events)))
        self.screen.apply(t, events, len(self.commits) - 1)

    def paint_time(self, t: float) -> float:
        """When a commit made at `t` is first on screen: the next vsync."""
        return math.ceil(t / self.period - 1e-9) * self.period

    def ticks(self, paint_times: np.ndarray) -> np.ndarray:
        """Frame index of each paint time."""
        return np.rint(np.asarray(paint_times) / self.period).astype(np.int64)

    def tick_range(self, lo: float, hi: float) -> tuple[int, int]:
        """First and last frame index inside [lo, hi] ms."""
        return int(math.ceil(lo / self.period)), int(math.floor(hi / self.period))


def _pct(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def compute_metrics(rec: Recorder) -> dict[str, Any]:
    """Every figure for one strategy × trace × refresh rate."""
    truth = rec.truth
    screen = rec.screen
    n = truth.total
    vis, reason_excluded = visible_times(rec)
    shown = ~np.isnan(vis)
    missing = int(n - shown.sum())
    a = truth.arrival
    out: dict[str, Any] = {"graphemes": n, "missing": missing}
    faithful = all(screen.text(mid) == text for mid, text in truth.final.items())
    out["faithful"] = faithful and missing == 0
    out["commits"] = len(rec.commits)
    if not n or not shown.any():
        return out
    v = vis[shown]
    lag = v - a[shown]
    out["ttft_visible_ms"] = float(np.min(v) - np.min(a))
    out["lag_p50_ms"] = _pct(lag, 50)
    out["lag_p95_ms"] = _pct(lag, 95)
    out["lag_max_ms"] = float(np.max(lag)) if missing == 0 else None
    out["lag_mean_ms"] = float(np.mean(lag))
    oracle = float(np.mean(truth.oracle_lag_ms))
    out["oracle_delay_ms"] = truth.oracle_delay_ms
    out["oracle_mean_lag_ms"] = oracle
    # The same oracle on this display: each grapheme visible at the first paint
    # at or after gen + D, like every strategy's commits.
    shown_at = np.ceil((truth.generated + truth.oracle_delay_ms) / rec.period - 1e-9) * rec.period
    out["oracle_grid_mean_lag_ms"] = float(np.mean(shown_at - a))
    out["lag_ratio"] = out["lag_mean_ms"] / oracle if oracle > 0 else None
    lo, hi = np.percentile(a, 10), np.percentile(a, 90)
    steady_g = shown & (a >= lo) & (a <= hi)
    out["lag_steady_mean_ms"] = (
        float(np.mean(vis[steady_g] - a[steady_g])) if steady_g.any() else None
    )

    # Longest freeze while pending: for each paint that revealed something, how
    # long the screen had been still while some revealed grapheme was waiting.
    order = np.argsort(v, kind="stable")
    vs, as_ = v[order], a[shown][order]
    freeze = 0.0
    prev_v = -math.inf
    i = 0
    while i < len(vs):
        j = i
        first_a = as_[i]
        while j < len(vs) and vs[j] == vs[i]:
            first_a = min(first_a, as_[j])
            j += 1
        freeze = max(freeze, vs[i] - max(prev_v, first_a))
        prev_v = vs[i]
        i = j
    out["longest_freeze_ms"] = float(freeze)

    ticks = rec.ticks(v)
    counted = ticks[~reason_excluded[shown]]
    if len(counted):
        per_tick = np.bincount(counted - counted.min())
        out["largest_reveal"] = int(per_tick.max())
    else:
        out["largest_reveal"] = 0
    k_lo, k_hi = rec.tick_range(lo, hi)
    if k_hi > k_lo:
        sel = counted[(counted >= k_lo) & (counted <= k_hi)]
        series = np.bincount(sel - k_lo, minlength=k_hi - k_lo + 1).astype(float)
        mean = series.mean()
        out["jerk_cv"] = float(series.std() / mean) if mean > 0 else None
    else:
        out["jerk_cv"] = None
    if truth.terminal_ms is not None and missing == 0:
        out["tail_ms"] = float(max(0.0, np.max(v) - truth.terminal_ms))
    else:
        out["tail_ms"] = None
    out["broken_reveals"] = _broken_frames(rec)
    span_s = (float(np.max(v)) - float(np.min(a))) / 1000.0
    out["commits_per_s"] = len(rec.commits) / span_s if span_s > 0 else None
    return out


def _monotone_full(
    history: list[tuple[float, int, int]],
) -> tuple[list[float], list[int], list[int]]:
    ts: list[float] = []
    lens: list[int] = []
    cs: list[int] = []
    best = -1
    for t, n, c in history:
        if n > best:
            best = n
            ts.append(t)
            lens.append(n)
            cs.append(c)
    return ts, lens, cs


def _broken_frames(rec: Recorder) -> int:
    """Paints where some message's visible text ends inside a grapheme cluster."""
    entries = [(mid, t, length) for mid, hist in rec.screen.history.items()
               for t, length, _c in hist]
    if not entries:
        return 0
    ticks = rec.ticks(np.array([rec.paint_time(t) for _m, t, _l in entries]))
    last: dict[tuple[int, str], int] = {}
    for (mid, _t, length), tick in zip(entries, ticks.tolist(), strict=True):
        last[(tick, mid)] = length  # history is in commit order: the paint shows the last
    bad = set()
    for (tick, mid), length in last.items():
        bounds = rec.truth.boundaries.get(mid)
        if bounds is not None and length not in bounds:
            bad.add(tick)
    return len(bad)


def visible_times(rec: Recorder) -> tuple[np.ndarray, np.ndarray]:
    """Per grapheme (truth order): first paint showing it (NaN = never), and
    whether the commit that revealed it was a barrier/overload flush."""
    if rec._visible is not None:
        return rec._visible
    truth = rec.truth
    hist = {mid: _monotone_full(rec.screen.history.get(mid, [])) for mid in truth.final}
    n = truth.total
    vis = np.full(n, np.nan)
    excluded = np.zeros(n, dtype=bool)
    commits = rec.commits
    for i in range(n):
        ts, lens, cs = hist[truth.mids[i]]
        j = bisect.bisect_left(lens, int(truth.ends[i]))
        if j < len(ts):
            vis[i] = rec.paint_time(ts[j])
            excluded[i] = commits[cs[j]][1] in EXCLUDED_REASONS
    rec._visible = (vis, excluded)
    return vis, excluded


def visible_series(rec: Recorder) -> tuple[np.ndarray, np.ndarray]:
    """(paint time ms, graphemes visible) for plotting."""
    vis, _ex = visible_times(rec)
    v = np.sort(vis[~np.isnan(vis)])
    return v, np.arange(1, len(v) + 1)


def lags(rec: Recorder) -> np.ndarray:
    vis, _ex = visible_times(rec)
    shown = ~np.isnan(vis)
    return vis[shown] - rec.truth.arrival[shown]


def reveals_per_frame(rec: Recorder, include_flushes: bool = False) -> np.ndarray:
    """Graphemes newly visible at each paint that showed any (for the histogram)."""
    vis, ex = visible_times(rec)
    keep = ~np.isnan(vis) if include_flushes else (~np.isnan(vis) & ~ex)
    ticks = rec.ticks(vis[keep])
    if not len(ticks):
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(ticks - ticks.min())
    return counts[counts > 0]


def largest_batch_graphemes(truth: TraceTruth) -> int:
    """Most graphemes completed by one socket arrival (arrivals at one instant merged)."""
    if not truth.total:
        return 0
    _vals, counts = np.unique(truth.arrival, return_counts=True)
    return int(counts.max())


def lag_growth_per_s(rec: Recorder) -> float | None:
    """Least-squares slope of lag against arrival time (ms of lag per s of stream)."""
    vis, _ex = visible_times(rec)
    shown = ~np.isnan(vis)
    a = rec.truth.arrival[shown]
    if len(a) < 2 or np.ptp(a) == 0:
        return None
    slope = np.polyfit(a / 1000.0, vis[shown] - a, 1)[0]
    return float(slope)
