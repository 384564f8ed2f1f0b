"""The page's own Python per frame, without the machine's noise: replayed in the page.

    python -m bench.page_frames --trace bursty --runs 8
    python -m bench.page_frames --cpu 4 --variant a.py --variant b.py

`python -m bench --browser` times each animation frame's Python with the wall
clock while the trace plays in real time, so on a shared machine its p99 is
mostly the frames the OS or DevTools' throttling happened to pause (one run's
p99 on bursty ranged 0.8-5.9 ms at 1x, load 1-3, for the same code). Here the
booted embed replays the trace through a fresh `StreamView` of its own on a
detached element (never laid out), on a virtual 60 Hz clock (the same frames
every run), in the page's real Pyodide with the real DOM calls, `--runs` times;
a frame's figure is its least time over the runs: its own cost, the pauses
that hit it in some runs left out. The cyclic collector's pauses land on other
frames each run, so they are printed apart, per run: in frames and between
them. With `--variant` files (Python exec'd with `view`, `host` and
`collector` before each run, e.g. an option switched off), the variants' runs
alternate in one page, so the machine's load falls on each alike: an A/B of
one change. Figures are for comparing code; the bench's tables are the measure
of the page.

`--spacing frame` runs one replay frame per animation frame of the page instead
of all of them back to back, so JS, the page's tasks and its rendering run
between two of them, as in the page. The same frames then cost several times
more (bursty, 1x: p50 0.6 against 0.05 ms back to back; docs/browser.md,
"Per-frame figures"): what a frame pays in the page is mostly starting cold,
not the work the code does.

`--parts` also times the frame's parts in the page (live state, the DOM
commit, the Markdown parse and its DOM work, the text writes, the live region,
telemetry): each part's wall time summed over a run's frames, per frame with
work, the median over the runs, and its share of the frame. `--attached` puts
the replay's view in the page's document instead of a detached element, so a
text write pays what Blink does for a laid-out node (with `--spacing frame`,
the page lays it out between frames).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.engines import browser
from bench.frame_trace import _server
from bench.server_load import percentile
from bench.traces import build_trace
from bench.whole_frame import _READY_JS, BOOT_TIMEOUT_S, _wait, set_cpu

# Defines `_replay(arrivals_json, variant_source)` in the page's Python: the
# trace through a new StreamView on a virtual clock, each frame's ms (JSON).
REPLAY_PY = r"""
import gc as _gc
import json as _json
import js as _js
from streampace.browser.collector import FrameCollector as _FrameCollector
from streampace.browser.controller import StreamView as _StreamView
from streampace.browser.page_host import page_collector as _page_collector
from streampace.testing import ManualHost as _ManualHost

def _find_bridge():
    # The embed's own view holds the page's bridge (js_shim/bridge.js). Found
    # once: gc.get_objects() leaves out what a variant's gc.freeze() froze.
    for obj in _gc.get_objects():
        if isinstance(obj, _StreamView) and not obj.closed:
            return obj.bridge
    raise RuntimeError("no mounted view on the page")

_bridge = _find_bridge()

def _page_bridge():
    return _bridge

class _Socket:
    url = "ws://127.0.0.1/replay"
    sink = None
    def attach(self, sink): self.sink = sink
    def detach(self): self.sink = None
    def close(self, *args): self.sink = None
    def send(self, data): return True

# `--parts`: where a frame's time goes, each part's wall time summed over the
# run's frames (time.perf_counter, the page's coarse clock: a sum over hundreds
# of calls, not one call's figure). Parts nest as PART_ORDER shows them; a
# part re-entered inside itself counts once. The text writes are the Markdown
# view's (`_grow`): the plain-text format's go through the renderer's dispatch
# table, which holds its functions, not the class's attributes.
_PARTS = (
    ("live state", "streampace.conversation.live_state", "LiveState", "apply"),
    ("DOM commit", "streampace.browser.renderer", "DomRenderer", "_commit"),
    ("Markdown parse", "streampace.markdown.stream", "MarkdownStream", "feed"),
    ("Markdown DOM", "streampace.browser.markdown_dom", "MarkdownView", "apply"),
    ("text writes", "streampace.browser.markdown_dom", "MarkdownView", "_grow"),
    ("live region", "streampace.browser.announce", "LiveRegion", "after_commit"),
    ("telemetry", "streampace.browser.telemetry", "Telemetry", "sample"),
)

class _Parts:
    def __init__(self, in_frame):
        self.ms = {name: 0.0 for name, *_ in _PARTS}
        self._saved = []
        try:
            self._install(in_frame)
        except BaseException:
            self.remove()
            raise

    def _install(self, in_frame):
        import importlib as _importlib
        import time as _time
        clock = _time.perf_counter
        depth = dict.fromkeys(self.ms, 0)
        for name, module, cls_name, attr in _PARTS:
            cls = getattr(_importlib.import_module(module), cls_name)
            fn = cls.__dict__[attr]
            self._saved.append((cls, attr, fn))
            def timed(*args, _fn=fn, _name=name, **kwargs):
                if not in_frame[0] or depth[_name]:
                    return _fn(*args, **kwargs)
                depth[_name] += 1
                t0 = clock()
                try:
                    return _fn(*args, **kwargs)
                finally:
                    self.ms[_name] += (clock() - t0) * 1000.0
                    depth[_name] -= 1
            setattr(cls, attr, timed)

    def remove(self):
        # Also after a failed set-up: every class patched so far is restored.
        for cls, attr, fn in reversed(self._saved):
            setattr(cls, attr, fn)
        self._saved = []

class _Replay:
    # The trace through a new StreamView on a virtual clock, a frame per `step()`.

    def __init__(self, arrivals_json, variant_source, parts=False, attached=False):
        self.now = now = _js.performance.now
        self.arrivals = _json.loads(arrivals_json)
        self.host = host = _ManualHost()
        self.view = view = _StreamView(_page_bridge(), _js.document.createElement("div"),
                                       host=host, scroll=False, heading_base="off")
        self.attached = attached
        if attached:
            # In the page's document, laid out and painted between spaced frames:
            # a text write then pays Blink's own work on a laid-out node.
            _js.document.body.append(view.mount)
        # The page's policy on the replay's clock: where the page runs the cyclic
        # collector in timeouts after its frames (browser/collector.py), so does
        # the replay (the page's own timeouts cannot fire while it runs).
        self.threshold = _gc.get_threshold()
        self.collector = collector = (_FrameCollector(host) if _page_collector() is not None
                                      else None)
        if collector is not None:
            played = host.run_frame
            def run_frame():
                n = played()
                collector.after_frame()
                return n
            host.run_frame = run_frame
        # The collector's pauses: [ms in frames, ms elsewhere (messages, timers)];
        # in_frame is also what the parts' timers read.
        self.pause, self.gc_at, self.outside, self.in_frame = [0.0, 0.0], [0.0], [], [0]
        self.parts = _Parts(self.in_frame) if parts else None
        if variant_source:
            exec(variant_source, {"view": view, "host": host, "collector": collector})
        self.socket = _Socket()
        view.connect(self.socket)
        self.socket.sink("open", None)
        self.first = self.arrivals[0][0]
        self.end = self.arrivals[-1][0] - self.first + 2300.0
        self.t, self.k, self.out = 0.0, 0, []
        _gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase, _info):
        if phase == "start":
            self.gc_at[0] = self.now()
        else:
            took = self.now() - self.gc_at[0]  # read once: the total and the longest agree
            self.pause[1 - self.in_frame[0]] += took
            if not self.in_frame[0]:
                self.outside.append(took)

    def step(self):
        # Up to the next frame with work, which is timed; False once the trace is over.
        frame_ms = 1000 / 60
        while self.t < self.end:
            self.t += frame_ms
            arrivals = self.arrivals
            while self.k < len(arrivals) and arrivals[self.k][0] - self.first + 300.0 <= self.t:
                self.socket.sink("message", _json.dumps(
                    {"through": self.k + 1, "events": arrivals[self.k][1]}))
                self.k += 1
            self.host.run_until(self.t)
            if self.host.pending_frames:
                self.in_frame[0], before = 1, self.pause[0]
                t0 = self.now()
                self.host.run_frame()
                self.out.append([round(self.t), self.now() - t0, self.pause[0] - before])
                self.in_frame[0] = 0
                return True
        return False

    def finish(self):
        try:
            self.view.close()
            if self.attached:
                self.view.mount.remove()
        finally:
            _gc.callbacks.remove(self._on_gc)
            if self.parts is not None:
                self.parts.remove()
            if self.collector is not None:
                self.collector.stop()
            _gc.set_threshold(*self.threshold)
        return _json.dumps({"frames": self.out, "gc_outside_ms": self.pause[1],
                            "gc_outside_max_ms": max(self.outside, default=0.0),
                            "gc_outside_n": len(self.outside),
                            "objects": len(_gc.get_objects()),
                            "parts": self.parts.ms if self.parts is not None else None})

def _replay(arrivals_json, variant_source, parts=False, attached=False):
    # Every frame in one call: back to back, JS never runs between them.
    replay = _Replay(arrivals_json, variant_source, parts, attached)
    try:
        while replay.step():
            pass
    except BaseException:
        replay.finish()
        raise
    return replay.finish()
"""
_DEFINE_JS = ("const done = arguments[arguments.length - 1];"
              " window.streampace.runtime().then((py) => { py.runPython(arguments[0]);"
              " done(true); }, (err) => done(String(err)));")
# One frame per animation frame of the page (`--spacing frame`): JS, the page's
# tasks and its rendering run between two frames of the replay, as in the page.
_REPLAY_PACED_JS = (
    "const done = arguments[arguments.length - 1];"
    " window.streampace.runtime().then((py) => {"
    " let replay;"
    " try { replay = py.globals.get('_Replay')(arguments[0], arguments[1], arguments[2],"
    " arguments[3]); }"
    " catch (err) { done('error: ' + String(err)); return; }"
    " const tick = () => { try { if (replay.step()) { requestAnimationFrame(tick); return; }"
    " done(replay.finish()); } catch (err) { done('error: ' + String(err)); } };"
    " requestAnimationFrame(tick); });")
_REPLAY_JS = ("const done = arguments[arguments.length - 1];"
              " window.streampace.runtime().then((py) => {"
              " try { done(py.globals.get('_replay')(arguments[0], arguments[1], arguments[2],"
              " arguments[3])); }"
              " catch (err) { done('error: ' + String(err)); } });")


def quantile(values: list[float], q: float) -> float:
    """The nearest-rank `q` quantile (0–1) of `values`."""
    return percentile(sorted(values), q * 100.0)


def least_per_frame(runs: list[list[list[float]]]) -> tuple[list[int], list[float]]:
    """Each frame's least time over the runs (frames are the same virtual times)."""
    n = min(len(run) for run in runs)
    return ([int(runs[0][i][0]) for i in range(n)],
            [min(run[i][1] for run in runs) for i in range(n)])


def report(name: str, runs: list[list[list[float]]], slowest: int) -> list[str]:
    at, least = least_per_frame(runs)
    single = [round(quantile([f[1] for f in run], 0.99), 2) for run in runs]
    top = sorted(range(len(least)), key=lambda i: -least[i])[:slowest]
    return [f"{name}: {len(least)} frames; least over {len(runs)} runs: p50 "
            f"{quantile(least, 0.5):.2f}, p90 {quantile(least, 0.9):.2f}, p99 "
            f"{quantile(least, 0.99):.2f}, max {max(least):.2f}, mean "
            f"{sum(least) / len(least):.3f} ms; each run's own p99 {single}",
            "  slowest (virtual ms: ms): " + ", ".join(f"{at[i]}: {least[i]:.2f}" for i in top)]


# `--parts`' rows, in the order a frame runs them, indented as they nest: the
# commit holds the Markdown parse and its DOM work, which holds the text writes.
PART_ORDER = (("live state", 1), ("DOM commit", 1), ("Markdown parse", 2),
              ("Markdown DOM", 2), ("text writes", 3), ("live region", 1), ("telemetry", 1))


def parts_report(runs: list[dict[str, Any]]) -> list[str]:
    """Each part's ms per frame with work (the median over the runs) and its share
    of the frame's mean, from the replay's `parts` sums."""
    timed = [run for run in runs if run.get("parts") and run["frames"]]
    if not timed:
        return []

    def per_frame(value: Any) -> float:
        values = sorted(value(run) / len(run["frames"]) for run in timed)
        return percentile(values, 50)

    frame = per_frame(lambda run: sum(f[1] for f in run["frames"]))
    lines = [f"  parts, ms per frame with work (median of {len(timed)} runs): frame {frame:.3f}"]
    for name, depth in PART_ORDER:
        ms = per_frame(lambda run, name=name: run["parts"].get(name, 0.0))
        share = 100.0 * ms / frame if frame else 0.0
        lines.append(f"  {'  ' * depth}{name} {ms:.3f} ({share:.0f} %)")
    return lines


def gc_report(runs: list[dict[str, Any]]) -> str:
    """The cyclic collector's pauses per run: inside frames (the least-over-runs
    figures leave most of them out, as they land on other frames each run) and
    outside (socket messages, timers), and the objects left after each run."""
    inside = [[f[2] for f in run["frames"] if len(f) > 2 and f[2] > 0] for run in runs]
    return ("  gc in frames per run (pauses, max ms): "
            + ", ".join(f"{len(p)} {max(p, default=0):.2f}" for p in inside)
            + "; outside frames per run (pauses, max, total ms): "
            + ", ".join(f"{run.get('gc_outside_n', 0)} {run.get('gc_outside_max_ms', 0):.2f}"
                        f" {run['gc_outside_ms']:.1f}" for run in runs)
            + "; objects after each run: " + ", ".join(str(run["objects"]) for run in runs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.page_frames", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--cpu", type=float, default=1.0,
                    help="DevTools CPU throttling while replaying (4 = a mid-range phone)")
    ap.add_argument("--variant", action="append", default=[],
                    help="a Python file exec'd with `view`, `host` and `collector` (the "
                         "page's gc policy on the replay's host, or None) before each run "
                         "(repeat for an A/B; default: the code as it is)")
    ap.add_argument("--slowest", type=int, default=8)
    ap.add_argument("--parts", action="store_true",
                    help="also time the frame's parts (live state, commit, Markdown parse "
                         "and DOM, text writes, live region, telemetry) in the page")
    ap.add_argument("--attached", action="store_true",
                    help="the replay's view in the page's document (laid out and painted "
                         "between spaced frames) instead of a detached element")
    ap.add_argument("--spacing", choices=("none", "frame"), default="none",
                    help="none: the replay's frames back to back in one call (the code's "
                         "own cost); frame: one per animation frame of the page, as the "
                         "page runs them (JS, tasks and rendering in between)")
    args = ap.parse_args(argv)
    trace = build_trace(args.trace, seed=args.seed)
    arrivals = json.dumps([[t, batch] for t, batch in trace.arrivals])
    variants: dict[str, str] = {"as is": ""} if not args.variant else {
        name: Path(name).read_text(encoding="utf-8") for name in args.variant}
    runs: dict[str, list[Any]] = {name: [] for name in variants}
    with _server(trace) as server, browser("chromium", prefix="streampace-frames-") as driver:
        driver.set_script_timeout(600)  # --spacing frame: a run takes the trace's time
        driver.get(f"{server.base}/bench/embed")
        _wait(driver, _READY_JS, BOOT_TIMEOUT_S, "embed")
        ok = driver.execute_async_script(_DEFINE_JS, REPLAY_PY)
        if ok is not True:
            raise RuntimeError(f"could not set up the replay: {ok}")
        set_cpu(driver, args.cpu)
        try:
            for _ in range(args.runs):
                for name, source in variants.items():  # alternating: load falls alike
                    out = driver.execute_async_script(
                        _REPLAY_PACED_JS if args.spacing == "frame" else _REPLAY_JS,
                        arrivals, source, args.parts, args.attached)
                    if out.startswith("error"):
                        raise RuntimeError(f"{name}: {out}")
                    runs[name].append(json.loads(out))
        finally:
            set_cpu(driver, 1)
    print(f"trace {args.trace} (seed {args.seed}), --cpu {args.cpu:g}, replayed in the embed "
          f"on a virtual 60 Hz clock, {'an attached' if args.attached else 'a detached'} view, "
          f"frames spaced: {args.spacing}:")
    for name, done in runs.items():
        print("\n".join(report(name, [run["frames"] for run in done], args.slowest)))
        print(gc_report(done))
        for line in parts_report(done):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
