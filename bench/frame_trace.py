"""A DevTools trace of one page streaming one trace: what a frame's rendering costs.

    python -m bench.frame_trace --page demo --trace md_32k --cpu 4
    python -m bench.frame_trace --page embed --trace md_32k --cpu 4 --invalidations

Plays the trace into the demo or the embed exactly as `python -m bench --browser`
does (bench/whole_frame.py `play_page`, the same server and probe) while Chromium
records a trace (CDP `Tracing.start` on the page's own DevTools socket; the
categories DevTools' Performance panel records). Writes the trace as
`<out>/frame-trace-<page>-<trace>-cpu<N>.json.gz` (DevTools' Performance panel
opens it) and prints, per tenth of the answer's arrived text, the renderer main
thread's time per frame in each rendering step (style, layout, pre-paint,
paint, layerize, commit, scripts) with the steps' own counts (elements styled,
objects laid out, and with `--invalidations` what invalidated style and
layout), so what grows with the answer's length shows as a growing row.
Figures are for finding causes; the bench's tables are the measure.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gzip
import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.engines import browser
from bench.report import md_table
from bench.traces import Trace, build_trace
from bench.whole_frame import _text_timeline, install_probe, play_page, set_phone

CATEGORIES = (
    "devtools.timeline", "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame", "blink", "blink.user_timing",
    "v8.execute",
)
INVALIDATIONS = "disabled-by-default-devtools.timeline.invalidationTracking"
# The rendering steps of a frame, as the main thread's trace events name them.
# (Compositing inputs is a part of PrePaint, named apart: over md_32k it grew the most.)
STEPS = ("FireAnimationFrame", "FunctionCall", "EventDispatch", "TimerFire",
         "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit",
         "LocalFrameView::RunCompositingInputsLifecyclePhase",
         "ResizeObserverController::DeliverObservations", "ComputeIntersections",
         "HitTest", "ScrollLayer", "UpdateLayer", "MajorGC", "MinorGC")
# What the browser does after the scripts: style, layout, pre-paint, paint, layerize, commit.
RENDERING = ("UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit")
BINS = 10
MARK = "probe:start"  # whole_frame.PROBE_JS marks the probe's start


class DevToolsTracer:
    """Records a Chromium trace over the page's own DevTools socket (chromedriver
    keeps its own; CDP allows several clients), as a context manager."""

    def __init__(self, driver: Any, categories: tuple[str, ...]) -> None:
        self.driver = driver
        self.categories = categories
        self.events: list[dict[str, Any]] = []
        self._ws: Any = None
        self._id = 0

    def _page_socket(self) -> str:
        address = self.driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        with urllib.request.urlopen(f"http://{address}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        url = self.driver.current_url
        pages = [t for t in targets if t.get("type") == "page"]
        chosen = next((t for t in pages if t.get("url") == url), pages[0])
        return str(chosen["webSocketDebuggerUrl"])

    def _send(self, method: str, params: dict[str, Any]) -> int:
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        return self._id

    def _until(self, done: Any, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = json.loads(self._ws.recv())
            if message.get("method") == "Tracing.dataCollected":
                self.events.extend(message["params"]["value"])
            if done(message):
                return
        raise TimeoutError("the DevTools trace did not complete")

    def __enter__(self) -> DevToolsTracer:
        import websocket  # websocket-client (selenium's own dependency)

        self._ws = websocket.create_connection(self._page_socket(), timeout=120,
                                               suppress_origin=True)
        started = self._send("Tracing.start", {
            "transferMode": "ReportEvents",
            "traceConfig": {"recordMode": "recordAsMuchAsPossible",
                            "includedCategories": list(self.categories)}})
        self._until(lambda m: m.get("id") == started, 30.0)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._send("Tracing.end", {})
            self._until(lambda m: m.get("method") == "Tracing.tracingComplete", 300.0)
        finally:
            self._ws.close()


# -------------------------------------------------------------- the figures

def main_thread(events: list[dict[str, Any]]) -> tuple[int, int, float]:
    """(pid, tid, ts µs) of the page's main thread and of the probe's start mark."""
    mark = next(e for e in events if e.get("name") == MARK and e.get("ph") in ("R", "I", "b", "n"))
    return int(mark["pid"]), int(mark["tid"]), float(mark["ts"])


def arrived_bins(trace: Trace, start_us: float, lead_ms: float) -> Any:
    """A function: trace timestamp (µs) -> the tenth of the answer's text arrived
    by then (0..9), or None before the first text and after the last."""
    times, sizes = _text_timeline(trace)
    total = sizes[-1] if sizes else 0
    last_text = next((times[i] for i in range(len(sizes) - 1, -1, -1)
                      if i == 0 or sizes[i] != sizes[i - 1]), 0.0)
    origin = start_us + lead_ms * 1000.0

    def bin_of(ts: float) -> int | None:
        t = (ts - origin) / 1000.0
        i = int(np.searchsorted(times, t, side="right")) - 1
        if i < 0 or not total or sizes[i] == 0 or t > last_text + 300.0:
            return None
        return min(BINS - 1, int(BINS * sizes[i] / total - 1e-9))

    return bin_of


def nested_steps(events: list[dict[str, Any]], pid: Any, tid: Any) -> set[int]:
    """The ids of the thread's step events inside another event of the same step:
    Blink nests them (a Paint of the document holds a Paint of each scroller it
    paints; an event dispatched from a listener nests in its dispatch), and summed
    with their outer one they were counted twice (the demo's Paint on a phone at 4x
    CPU, the last tenth of md_32k: 5.2 ms a frame read as 9.6)."""
    by_name: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for e in events:
        if (e.get("pid") == pid and e.get("tid") == tid and e.get("ph") == "X"
                and e.get("name") in STEPS):
            by_name[e["name"]].append(e)
    nested: set[int] = set()
    for same in by_name.values():
        same.sort(key=lambda e: (float(e.get("ts", 0)), -float(e.get("dur", 0))))
        outer_end = -1.0
        for e in same:
            ts = float(e.get("ts", 0))
            if ts < outer_end:
                nested.add(id(e))
            else:
                outer_end = ts + float(e.get("dur", 0))
    return nested


def summarise(events: list[dict[str, Any]], trace: Trace, lead_ms: float) -> dict[str, Any]:
    """Per tenth of the arrived answer: frames, ms per frame of each step (an event
    nested in one of the same step counted once, with its outer one), and the
    steps' own counts; the invalidations seen late in the answer."""
    pid, tid, start = main_thread(events)
    bin_of = arrived_bins(trace, start, lead_ms)
    nested = nested_steps(events, pid, tid)
    frames = [0] * BINS
    ms: dict[str, list[float]] = collections.defaultdict(lambda: [0.0] * BINS)
    # Thread time (the trace's `tdur`): what the step cost the CPU, without the time
    # the thread waited (throttling's pauses, other processes on a loaded machine).
    cpu_ms: dict[str, list[float]] = collections.defaultdict(lambda: [0.0] * BINS)
    counts: dict[str, list[list[float]]] = collections.defaultdict(
        lambda: [[] for _ in range(BINS)])
    invalid: collections.Counter[tuple[str, str, str]] = collections.Counter()
    worst: dict[str, tuple[float, dict[str, Any]]] = {}
    for e in events:
        if e.get("pid") != pid or e.get("tid") != tid:
            continue
        b = bin_of(float(e.get("ts", 0)))
        if b is None:
            continue
        name = e.get("name", "")
        if name == "BeginMainThreadFrame":
            frames[b] += 1
        if e.get("ph") == "X" and name in STEPS and id(e) not in nested:
            dur = float(e.get("dur", 0)) / 1000.0
            ms[name][b] += dur
            cpu_ms[name][b] += float(e.get("tdur", 0)) / 1000.0
            if b >= BINS - 2 and dur > worst.get(name, (0.0, {}))[0]:
                worst[name] = (dur, e.get("args") or {})
        args = e.get("args") or {}
        data = args.get("beginData") or args.get("data") or {}
        if name == "UpdateLayoutTree" and "elementCount" in args:
            counts["elements styled"][b].append(float(args["elementCount"]))
        elif name == "UpdateLayoutTree" and "elementCount" in data:
            counts["elements styled"][b].append(float(data["elementCount"]))
        if name == "Layout" and "dirtyObjects" in data:
            counts["objects dirty"][b].append(float(data["dirtyObjects"]))
            counts["objects total"][b].append(float(data["totalObjects"]))
        if name == "PaintController::commitNewDisplayItems" and args:
            counts["display items painted"][b].append(
                float(args.get("current_display_list_size", 0)))
        if name.endswith("InvalidationTracking") and b >= BINS - 2:
            d = args.get("data") or {}
            invalid[(name, str(d.get("reason") or d.get("changedAttribute") or ""),
                     str(d.get("nodeName") or ""))] += 1
    return {"frames": frames, "ms": dict(ms), "cpu_ms": dict(cpu_ms), "counts": dict(counts),
            "invalidations_late": invalid.most_common(25),
            "worst_late": {k: {"ms": v[0], "args": v[1]} for k, v in worst.items()}}


def rendering_per_bin(s: dict[str, Any], key: str = "cpu_ms") -> list[float]:
    """Style + layout + pre-paint + paint + layerize + commit, per bin (all frames)."""
    return [sum(s[key].get(name, [0.0] * BINS)[i] for name in RENDERING) for i in range(BINS)]


def late_early(s: dict[str, Any], key: str = "cpu_ms") -> float | None:
    """Rendering cost per frame in the last tenth of the answer over the first's."""
    per_bin = rendering_per_bin(s, key)
    frames = s["frames"]
    if not (frames[0] and frames[-1] and per_bin[0]):
        return None
    return (per_bin[-1] / frames[-1]) / (per_bin[0] / frames[0])


def summary_markdown(s: dict[str, Any], title: str) -> str:
    frames = s["frames"]
    head = ["per frame, by tenth of the answer arrived", *(f"{10 * i}–{10 * i + 10} %"
                                                            for i in range(BINS))]
    rows = [["frames", *(str(n) for n in frames)]]
    for key, label in (("ms", "rendering ms (style … commit)"),
                       ("cpu_ms", "rendering CPU ms (thread time)")):
        rows.append([label, *(f"{v / n:.2f}" if n else "–"
                              for v, n in zip(rendering_per_bin(s, key), frames, strict=True))])
    script = s["cpu_ms"].get("FireAnimationFrame", [0.0] * BINS)
    rows.append(["frame callbacks CPU ms",
                 *(f"{v / n:.2f}" if n else "–" for v, n in zip(script, frames, strict=True))])
    for name, per_bin in sorted(s["ms"].items(), key=lambda kv: -kv[1][-1]):
        rows.append([f"{name} ms", *(f"{v / n:.2f}" if n else "–"
                                     for v, n in zip(per_bin, frames, strict=True))])
    for name, per_bin in s["counts"].items():
        rows.append([f"{name} (mean per event)",
                     *(f"{np.mean(v):.0f}" if v else "–" for v in per_bin)])
    ratio = late_early(s)
    lines = [f"### {title}", "", md_table(head, rows), "",
             "rendering CPU per frame, last tenth / first tenth: "
             + (f"{ratio:.2f}" if ratio is not None else "–"), ""]
    if s["invalidations_late"]:
        lines += ["Invalidations in the last fifth of the answer (event, reason, node):", ""]
        lines += [f"- {n} × {kind} {reason} {node}"
                  for (kind, reason, node), n in s["invalidations_late"]]
        lines.append("")
    return "\n".join(lines)


@contextlib.contextmanager
def _server(trace: Trace) -> Iterator[Any]:
    from bench.browser_bench import BenchServer

    server = BenchServer({trace.name: trace})
    server.start()
    try:
        yield server
    finally:
        server.stop()


_ADD_STYLE_JS = ("const s = document.createElement('style'); s.textContent = arguments[0];"
                 " document.head.append(s);")


@contextlib.contextmanager
def _styled(driver: Any, css: str, tracer: DevToolsTracer) -> Iterator[None]:
    """A style sheet of the experimenter's added to the booted page, then the trace."""
    if css:
        driver.execute_script(_ADD_STYLE_JS, css)
    with tracer:
        yield


def record(page: str, trace: Trace, cpu: float, invalidations: bool,
           css: str = "", phone: bool = False) -> list[dict[str, Any]]:
    categories = (*CATEGORIES, INVALIDATIONS) if invalidations else CATEGORIES
    with _server(trace) as server, browser("chromium", prefix="streampace-trace-") as driver:
        install_probe(driver)
        if phone:
            set_phone(driver)
        tracer = DevToolsTracer(driver, categories)
        play_page(driver, server.base, server.player, page, trace, cpu,
                  around=_styled(driver, css, tracer))
        return tracer.events


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.frame_trace", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="demo", choices=("demo", "embed"))
    ap.add_argument("--trace", default="md_32k")
    ap.add_argument("--cpu", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phone", action="store_true",
                    help="on a phone's screen (bench/whole_frame.py PHONE)")
    ap.add_argument("--invalidations", action="store_true",
                    help="also record what invalidated style and layout (slows the page)")
    ap.add_argument("--css", default="",
                    help="a style sheet added to the page before the run (to try a cause)")
    ap.add_argument("--out", type=Path, default=Path("/tmp"),
                    help="where the trace goes (default /tmp: traces are tens of MB)")
    args = ap.parse_args(argv)
    from bench.browser_bench import LEAD_MS

    trace = build_trace(args.trace, seed=args.seed)
    events = record(args.page, trace, args.cpu, args.invalidations, args.css, args.phone)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = ("-css" if args.css else "") + ("-phone" if args.phone else "")
    path = args.out / f"frame-trace-{args.page}-{args.trace}-cpu{args.cpu:g}{tag}.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)
    print(f"{len(events)} trace events -> {path}", file=sys.stderr)
    s = summarise(events, trace, LEAD_MS)
    screen = ", phone" if args.phone else ""
    print(summary_markdown(s, f"{args.page}, {args.trace}, {args.cpu:g}× CPU{screen}"))
    for name, w in sorted(s["worst_late"].items()):
        print(f"longest late {name}: {w['ms']:.1f} ms {json.dumps(w['args'])[:400]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
