"""What the slow frames do: the page's per-frame Python, profiled in CPython.

Not a test: prints a table.  ``python -m bench.frame_profile [--trace bursty]``.

Plays a bench trace on a virtual 60 Hz clock through the page's real Python —
`StreamView` (`SessionClient` → `PacingScheduler` → `DomRenderer` with Markdown,
the live region) — with a stand-in for `js` that answers every DOM call and
counts the crossings (attribute reads and writes, calls), each of which costs a
few microseconds in Pyodide, more at 4× CPU.  Per animation frame it records the
Python time, the crossings and the cyclic garbage collector's pauses, then shows
the slowest frames with their time split over named phases (scheduler drain,
live state, DOM commit, live region, telemetry) and the cProfile of the worst.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

_COUNT = [0]
# CPU time of this thread: a shared, loaded machine preempts us; wall time would
# charge those pauses to whatever frame they fell in.
_clock = time.thread_time if sys.platform != "emscripten" else time.perf_counter


class FakeJs:
    """Any JS value: every attribute read, write and call counts one crossing."""

    _VALUES: dict[str, Any] = {"length": 0, "childElementCount": 0, "hidden": False,
                               "lang": "en", "isConnected": True, "scrollHeight": 0,
                               "clientHeight": 0}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        _COUNT[0] += 1
        if name in self._VALUES:
            return self._VALUES[name]
        if name == "now":
            return lambda: time.perf_counter() * 1000.0
        if name in ("prefersReducedMotion", "hasSegmenter"):
            return lambda: False
        return FakeJs()

    def __setattr__(self, name: str, value: Any) -> None:
        _COUNT[0] += 1

    def __call__(self, *args: Any, **kwargs: Any) -> FakeJs:
        _COUNT[0] += 1
        return FakeJs()

    def __bool__(self) -> bool:
        return True


def _install_fake_js() -> None:
    import streampace.browser.announce as announce
    import streampace.browser.controller as controller
    import streampace.browser.ffi as ffi
    import streampace.browser.markdown_dom as markdown_dom
    import streampace.browser.renderer as renderer

    fake = FakeJs()
    for module in (ffi, announce, controller, markdown_dom, renderer):
        module.js = fake  # type: ignore[attr-defined]
        if hasattr(module, "create_proxy"):
            module.create_proxy = lambda fn: FakeJs()  # type: ignore[attr-defined]


class _Phases:
    """Time per named phase within the current frame (wrapped methods)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            c0 = _COUNT[0]
            t0 = _clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms[name] = self.ms.get(name, 0.0) + (_clock() - t0) * 1e3
                self.calls[name] = self.calls.get(name, 0) + _COUNT[0] - c0

        return timed


def play(trace_name: str, profile_worst: int, profile_frames: frozenset[int] = frozenset(),
         quiet: bool = False, arrivals: list[tuple[float, list[dict]]] | None = None,
         gc_policy: str = "page") -> list[dict[str, Any]]:
    _install_fake_js()
    from streampace.browser.collector import FrameCollector
    from streampace.browser.controller import StreamView
    from streampace.testing import ManualHost

    gc_ms: list[float] = []
    gc_t0 = [0.0]

    def gc_timer(phase: str, _info: dict) -> None:
        if phase == "start":
            gc_t0[0] = _clock()
        else:
            gc_ms.append((_clock() - gc_t0[0]) * 1e3)

    host = ManualHost()
    view = StreamView(FakeJs(), FakeJs(), host=host,  # type: ignore[arg-type]
                      scroll=False, heading_base="off")
    # "page": the page's collector policy (browser/collector.py), its steps in
    # timeouts after frames; "auto": the interpreter's automatic collector alone.
    collector = FrameCollector(host) if gc_policy == "page" else None
    phases = _Phases()
    sched, renderer = view.scheduler, view.renderer
    sched._drain = phases.wrap("drain", sched._drain)  # type: ignore[method-assign]
    renderer.state.apply = phases.wrap("live_state", renderer.state.apply)
    renderer._commit = phases.wrap("dom_commit", renderer._commit)
    if renderer.reader is not None:
        reader = renderer.reader
        reader.after_commit = phases.wrap("live_region", reader.after_commit)
    # In the drain that applied the batch (no chart listens here: controller.py).
    view.telemetry.sample = phases.wrap("telemetry", view.telemetry.sample)  # type: ignore[method-assign]
    # Markdown: the parse and the DOM work of its operations, as `--breakdown` splits them.
    from streampace.browser.markdown_dom import MarkdownView
    from streampace.markdown.stream import MarkdownStream

    saved = [(cls, name, getattr(cls, name)) for cls, name in (
        (MarkdownStream, "feed"), (MarkdownStream, "close"), (MarkdownView, "apply"))]
    for cls, name, fn in saved:
        setattr(cls, name, phases.wrap("md_dom" if name == "apply" else "md_parse", fn))

    class Socket:
        url = "ws://127.0.0.1/x"
        sink: Any = None

        def attach(self, sink: Any) -> None:
            self.sink = sink

        def detach(self) -> None:
            pass

        def close(self, *args: Any) -> None:
            pass

        def send(self, _data: str) -> bool:
            return True

    import json

    socket = Socket()
    view.connect(socket)
    socket.sink("open", None)
    if arrivals is None:
        from bench.traces import build_trace

        arrivals = build_trace(trace_name).arrivals
    first = arrivals[0][0]
    arrivals = [(t - first + 300.0, batch) for t, batch in arrivals]
    frame_ms = 1000 / 60
    rows: list[dict[str, Any]] = []
    gc.callbacks.append(gc_timer)
    k = 0
    profiles: dict[int, pstats.Stats] = {}
    t_virtual = 0.0
    end = arrivals[-1][0] + 2000.0
    while t_virtual < end:
        t_virtual += frame_ms
        while k < len(arrivals) and arrivals[k][0] <= t_virtual:
            socket.sink("message", json.dumps({"through": k + 1, "events": arrivals[k][1]}))
            k += 1
        host.run_until(t_virtual)
        if not host.pending_frames:
            continue
        phases.ms.clear()
        phases.calls.clear()
        gc_before = len(gc_ms)
        c0 = _COUNT[0]
        prof = cProfile.Profile() if len(rows) in profile_frames else None
        if prof is not None:
            prof.enable()
        t0 = _clock()
        host.run_frame()
        if collector is not None:
            collector.after_frame()  # as BrowserHost's frame_end_listeners, in the frame
        dt = (_clock() - t0) * 1e3
        if prof is not None:
            prof.disable()
            profiles[len(rows)] = pstats.Stats(prof)
        rows.append({"at": t_virtual, "ms": dt, "ffi": _COUNT[0] - c0, "phases": dict(phases.ms),
                     "phase_ffi": dict(phases.calls), "gc": sum(gc_ms[gc_before:]),
                     "graphemes": sched.stats()["last_drain_graphemes"]})
    gc.callbacks.remove(gc_timer)
    if collector is not None:
        collector.stop()
    for cls, name, fn in saved:
        setattr(cls, name, fn)
    if quiet:
        return rows
    _report(rows, gc_ms, gc_policy)
    for index, stats in profiles.items():
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats("cumulative").print_stats(25)
        print(f"--- frame {index} at {rows[index]['at']:.0f} ms, {rows[index]['ms']:.3f} ms")
        print(out.getvalue())
    if profile_worst and not profile_frames:
        worst = sorted(range(len(rows)), key=lambda i: -rows[i]["ms"])[:profile_worst]
        play(trace_name, 0, frozenset(worst), quiet=False, gc_policy=gc_policy)
    return rows


def _report(rows: list[dict[str, Any]], gc_ms: list[float], gc_policy: str) -> None:
    times = sorted(r["ms"] for r in rows)
    n = len(times)

    def q(f: float) -> float:
        return times[min(n - 1, round(f * (n - 1)))]

    ffi = sorted(r["ffi"] for r in rows)
    print(f"{n} frames with work: p50 {q(0.5):.3f} ms, p99 {q(0.99):.3f} ms, max {times[-1]:.3f}"
          f" ms; crossings p50 {ffi[n // 2]}, p99 {ffi[min(n - 1, round(0.99 * (n - 1)))]},"
          f" max {ffi[-1]}; gc pauses {len(gc_ms)} (max {max(gc_ms, default=0):.3f} ms),"
          f" {sum(1 for r in rows if r['gc'] > 0)} in frames (--gc {gc_policy})")
    names = ("drain", "live_state", "dom_commit", "md_parse", "md_dom", "live_region",
             "telemetry")
    mean = {p: sum(r["phases"].get(p, 0.0) for r in rows) / n for p in names}
    print("mean ms per frame: " + ", ".join(f"{p} {mean[p]:.3f}" for p in names))
    print()
    print(f"{'at ms':>8} {'ms':>7} {'ffi':>5} {'g':>4} {'gc ms':>6}  phases ms (crossings)")
    for r in sorted(rows, key=lambda r: -r["ms"])[:12]:
        parts = ", ".join(f"{p} {r['phases'].get(p, 0):.2f} ({r['phase_ffi'].get(p, 0)})"
                          for p in names if p in r["phases"])
        print(f"{r['at']:>8.0f} {r['ms']:>7.3f} {r['ffi']:>5} {r['graphemes']:>4} "
              f"{r['gc']:>6.2f}  {parts}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--profile", type=int, default=0,
                    help="cProfile the N slowest frames (a second play)")
    ap.add_argument("--gc", choices=("page", "auto"), default="page",
                    help="page: the page's FrameCollector (steps after frames); "
                         "auto: the automatic collector alone")
    args = ap.parse_args(argv)
    play(args.trace, args.profile, gc_policy=args.gc)


if __name__ == "__main__":
    main()
