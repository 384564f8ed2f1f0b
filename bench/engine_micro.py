"""Micro-benchmark of the pacing engine in CPython: microseconds per drain.

Not a test: prints a table.  Run ``python3 bench/engine_micro.py`` (``--quick``
for fewer repetitions).

Setup per cell: one session whose queue holds Q events (one TEXT_MESSAGE_START
and Q-1 TEXT_MESSAGE_CONTENT events) carrying a backlog of G graphemes spread
evenly over the content events (if G < Q-1, the first G content events carry
one grapheme each and the rest are CUSTOM events).  Frames run at 60 Hz on a
ManualHost; each timed sample is one ``run_frame()``, i.e. one drain including
the (trivial) apply callback.  Overload is disabled for the paced rows so that
every drain really paces (~13 graphemes per frame at the 800/s cap); the cost
of a drain should not grow with G or Q.  Separate rows time the unpaced exits
(overload, barrier dump, flush_now) that deliver everything in one drain, per
grapheme.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from streampace.pacing.scheduler import PacingConfig, PacingScheduler  # noqa: E402
from streampace.testing import ManualHost  # noqa: E402

TEXT = "Streaming text, 漢字かな, emoji 👍🏽 and 👨‍👩‍👧 flags 🇯🇵. "


def graphemes(n: int, seg: Any) -> list[str]:
    unit = seg.split(TEXT)
    out = unit * (n // len(unit) + 1)
    return out[:n]


def build(g: int, q: int, seg: Any) -> list[dict]:
    events: list[dict] = [{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    slots = q - 1
    clusters = graphemes(g, seg)
    if g >= slots:
        per, extra = divmod(g, slots)
        pos = 0
        for i in range(slots):
            n = per + (1 if i < extra else 0)
            events.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                           "delta": "".join(clusters[pos:pos + n])})
            pos += n
    else:
        for c in clusters:
            events.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": c})
        events += [{"type": "CUSTOM", "name": "c", "value": i} for i in range(slots - g)]
    return events


def paced_cell(g: int, q: int, drains: int, config: PacingConfig) -> dict:
    host = ManualHost()
    sched = PacingScheduler(host, lambda s, e: True, config)
    seg_split = sched._split  # the same segmenter the scheduler uses
    events = build(g, q, type("S", (), {"split": staticmethod(seg_split)})())
    t0 = time.perf_counter_ns()
    sched.enqueue("s", events)
    enqueue_us = (time.perf_counter_ns() - t0) / 1000
    samples: list[float] = []
    delivered = 0
    events_out = 0
    gc.collect()
    for _ in range(drains):
        host.tick(1000 / 60)
        if not host.pending_frames:
            break
        t = time.perf_counter_ns()
        host.run_frame()
        samples.append((time.perf_counter_ns() - t) / 1000)
        delivered += sched.stats()["last_drain_graphemes"]
        events_out += sched.stats()["last_drain_events"]
    return {"enqueue_us": enqueue_us, "samples": samples, "delivered": delivered,
            "events": events_out}


def dump_cell(g: int, q: int, how: str) -> tuple[float, int, int]:
    host = ManualHost()
    sched = PacingScheduler(host, lambda s, e: True, PacingConfig())
    seg = type("S", (), {"split": staticmethod(sched._split)})()
    events = build(g, q, seg)
    if how == "barrier":
        events.append({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    sched.enqueue("s", events)
    gc.collect()
    t = time.perf_counter_ns()
    if how == "flush":
        sched.flush_now("s")
    else:
        host.frame(1000 / 60)
    us = (time.perf_counter_ns() - t) / 1000
    st = sched.stats()
    out = len(events) if how == "flush" else st["last_drain_events"]
    return us, st["graphemes"], out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer drains per cell")
    args = ap.parse_args(argv)
    drains = 100 if args.quick else 300
    backlogs = (10, 1_000, 100_000)
    queues = (10, 10_000)
    paced = PacingConfig(overload_graphemes=10**12)
    probe = PacingScheduler(ManualHost(), lambda s, e: True)
    seg_name = type(getattr(probe._split, "__self__", None)).__name__
    print(f"streampace engine micro-benchmark — CPython {sys.version.split()[0]}, "
          f"segmenter: {seg_name}")
    print()
    print("Paced drains at 60 Hz (overload disabled), per drain:")
    hdr = (f"{'backlog':>8} {'queue':>7} {'drains':>6} {'median µs':>10} {'p95 µs':>8} "
           f"{'max µs':>8} {'g/drain':>8} {'ev/drain':>8} {'enqueue ms':>10}")
    print(hdr)
    print("-" * len(hdr))
    for g in backlogs:
        for q in queues:
            for cfg_name, cfg in (("", paced),):
                r = paced_cell(g, q, drains, cfg)
                s = sorted(r["samples"])
                n = len(s)
                med = statistics.median(s) if s else float("nan")
                p95 = s[min(n - 1, int(n * 0.95))] if s else float("nan")
                mx = s[-1] if s else float("nan")
                per = r["delivered"] / n if n else 0
                evs = r["events"] / n if n else 0
                print(f"{g:>8} {q:>7} {n:>6} {med:>10.1f} {p95:>8.1f} {mx:>8.1f} "
                      f"{per:>8.1f} {evs:>8.1f} {r['enqueue_us'] / 1000:>10.2f}{cfg_name}")
    print()
    print("Unpaced exits (everything in one drain / one flush), default config:")
    hdr2 = (f"{'exit':>10} {'backlog':>8} {'queue':>7} {'µs':>10} {'graphemes':>10} "
            f"{'events':>7} {'µs/event':>9}")
    print(hdr2)
    print("-" * len(hdr2))
    for how in ("overload", "barrier", "flush"):
        for g, q in ((100_000, 10), (100_000, 10_000)):
            us, got, evs = dump_cell(g, q, "frame" if how == "overload" else how)
            print(f"{how:>10} {g:>8} {q:>7} {us:>10.0f} {got:>10} {evs:>7} "
                  f"{us / max(evs, 1):>9.2f}")
    print()
    print("(An unpaced drain delivers at most 512 events, the rest follow in later drains;"
          " flush_now\n delivers all, in applies of <= 512 events.  Whole events are passed"
          " through as-is,\n so their cost does not depend on their length.)")


if __name__ == "__main__":
    main()
