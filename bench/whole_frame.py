"""The whole frame, not only our Python: `python -m bench --browser [--cpu 4]`.

A probe script, put into every document before the page's own scripts (CDP
`Page.addScriptToEvaluateOnNewDocument`), records while a trace streams:

* Long Animation Frame entries (`PerformanceObserver` type
  `long-animation-frame`, frames > 50 ms): duration, time in scripts, time in
  style and layout (from `styleAndLayoutStart` to the frame's end), forced
  style/layout inside scripts;
* long tasks (> 50 ms);
* every frame's main-thread cost: from the frame's start (the timestamp
  `requestAnimationFrame` hands its callbacks) to a message posted from a
  frame callback, which runs once the frame's rendering steps (style, layout,
  paint) are done — script + style + layout + paint of that frame, whatever
  the page.

The same probe runs on three pages, each fed the same traces by the bench
server: the bench page (the project's `StreamView` alone), the demo
(`index.html`, two panes and the chart, its session socket pointed at the
bench server) and the embed (`js_shim/streampace.js` on a bare page).
`--cpu N` slows the renderer N times (CDP `Emulation.setCPUThrottlingRate`)
while a trace plays; boot is never throttled.

Early vs. late: frames while ≤ 10 % of the answer's text has arrived vs.
frames once ≥ 90 % has (the trace's own timeline, aligned on the moment the
page asked for the run); a frame's cost must not grow with what is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import numpy as np

from bench.report import fmt, md_table
from bench.traces import Trace

PAGES = ("bench", "demo", "embed")
EXTRA_PAGES = ("demo", "embed")  # pages that are not the bench harness page
LONG_FRAME_MS = 50.0
BOOT_TIMEOUT_S = 120.0
TAIL_MS = 400.0  # after the last arrival: the pacer's tail (a run end shows all at once)

PROBE_JS = r"""
(() => {
  const P = (window.__probe = { on: false, loaf: [], longtasks: [], frames: [], errors: [] });
  const observe = (type, keep) => {
    try {
      new PerformanceObserver((list) => {
        if (P.on) for (const e of list.getEntries()) keep(e);
      }).observe({ type, buffered: false });
    } catch (err) { P.errors.push(`${type}: ${err}`); }
  };
  observe("long-animation-frame", (e) => {
    let script = 0, forced = 0;
    for (const s of e.scripts || []) {
      script += s.duration;
      forced += s.forcedStyleAndLayoutDuration || 0;
    }
    const end = e.startTime + e.duration;
    const styleLayout = e.styleAndLayoutStart ? end - e.styleAndLayoutStart : 0;
    // The five longest scripts, named (what made the frame long): invoker, source,
    // duration, forced style/layout, start within the frame.
    const top = [...(e.scripts || [])].sort((a, b) => b.duration - a.duration).slice(0, 5)
      .map((s) => [s.invokerType, s.invoker, s.sourceFunctionName || "", s.duration,
                   s.forcedStyleAndLayoutDuration || 0, s.sourceURL || "",
                   s.sourceCharPosition ?? -1, s.startTime - e.startTime]);
    // Script time before the frame's rendering began (the rest of that stretch
    // went to no script of the page: the thread idle, or a task such as a GC).
    let before = 0;
    for (const s of e.scripts || []) if (e.renderStart && s.startTime < e.renderStart) {
      before += Math.min(s.duration, e.renderStart - s.startTime);
    }
    P.loaf.push([e.startTime, e.duration, script, styleLayout, forced,
                 e.blockingDuration || 0, e.renderStart || 0, top, before]);
  });
  observe("longtask", (e) => P.longtasks.push([e.startTime, e.duration]));
  // A message posted from a frame callback runs after that frame's rendering.
  const channel = new MessageChannel();
  const pending = [];
  channel.port1.onmessage = () => {
    const ts = pending.shift();
    if (ts !== undefined) P.frames.push([ts, performance.now() - ts]);
  };
  const tick = (ts) => {
    if (!P.on) return;
    pending.push(ts);
    channel.port2.postMessage(0);
    requestAnimationFrame(tick);
  };
  P.start = () => {
    P.loaf = []; P.longtasks = []; P.frames = [];
    P.on = true;
    P.startedAt = performance.now();
    performance.mark("probe:start");  // where a DevTools trace sees the start (frame_trace.py)
    requestAnimationFrame(tick);
    return P.startedAt;
  };
  P.stop = () => { P.on = false; };
})();
"""

EMBED_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>streampace bench: embed</title>
<link rel="stylesheet" href="/js_shim/streampace.css"></head>
<body><main style="max-width: 48rem; margin: 0 auto"><div id="answer"></div></main>
<script type="module" src="/js_shim/streampace.js" data-stream="/ws/sessions/new"
        data-target="#answer"></script>
</body></html>
"""

# The page is left idle this long after ready before the question (the bench's
# figures; bench/wasm_tiering.py tries others).
SETTLE_S = 0.3
_READY_JS = "return performance.getEntriesByName('streampace:ready').length > 0"
_DEMO_READY_JS = "return !!(window.streampaceDemo && window.streampaceDemo.ready)"
_ASK_JS = {
    # The demo: its form's Run button (the run goes out on its session socket).
    "demo": "window.__probe.start(); document.getElementById('run').click();",
    "embed": ("window.__probe.start();"
              " window.streampace.send({type: 'run', prompt: 'bench'});"),
}
# The page's own Python ms per animation frame with work (BrowserHost.frame_work_ms:
# every frame since the page loaded, one trace per load), from its stats().
# With the Python ms of the page's scroll followers so far (`followerMs`): their
# ResizeObserver and scroll callbacks run in the frame, outside frame_work_ms.
_PY_STATS = "return JSON.stringify({...s.frameWorkMs, followerMs: s.followerMs});"
_PY_JS = {
    "demo": "const s = window.streampaceDemo.stats(); " + _PY_STATS,
    "embed": "const s = window.streampace.stats(); " + _PY_STATS,
}
_COLLECT_JS = ("window.__probe.stop(); const P = window.__probe;"
               " return JSON.stringify({loaf: P.loaf, longtasks: P.longtasks,"
               " frames: P.frames, errors: P.errors, startedAt: P.startedAt});")


def install_probe(driver: Any) -> None:
    """The probe in every document this driver opens, before the page's scripts."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE_JS})


def set_cpu(driver: Any, rate: float) -> None:
    """Slow the renderer `rate` times (1 = not throttled)."""
    driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": float(rate)})


# A phone's screen as Chromium's device emulation draws it: a 390 × 844 CSS px
# viewport at 3 device pixels per CSS pixel (a mid-range phone's), the page's
# meta viewport honoured, touch input (so `hover: none` holds, as on a phone).
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}


def set_phone(driver: Any) -> None:
    """This tab laid out and drawn as on a phone (`PHONE`), from its next load on."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled",
                           {"enabled": True, "maxTouchPoints": 5})


def start_probe(driver: Any) -> float:
    return float(driver.execute_script("return window.__probe.start()"))


def collect_probe(driver: Any) -> dict[str, Any]:
    return dict(json.loads(driver.execute_script(_COLLECT_JS)))


# -------------------------------------------------------------- the server side

class SessionPlayer:
    """`/ws/sessions/new` for the demo and the embed: on the page's run request,
    plays the trace the harness chose (`current`) in real time, protocol v1."""

    def __init__(self, traces: dict[str, Trace], lead_ms: float) -> None:
        self.traces = traces
        self.lead_ms = lead_ms
        self.current: str | None = None

    async def serve(self, ws: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        await ws.accept()
        player: asyncio.Task[None] | None = None
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while True:
                text = await ws.receive_text()
                with contextlib.suppress(ValueError, AttributeError):
                    if json.loads(text).get("type") == "run" and player is None:
                        trace = self.traces.get(self.current or "")
                        if trace is not None:
                            player = asyncio.create_task(self._play(ws, trace))
        if player is not None:
            player.cancel()

    async def _play(self, ws: Any, trace: Trace) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            await send_arrivals(ws, trace, self.lead_ms)


async def send_arrivals(ws: Any, trace: Trace, lead_ms: float) -> None:
    """Send the trace's socket messages on a Starlette WebSocket at their recorded
    times, the first ``lead_ms`` from now, numbered as session batches."""
    loop = asyncio.get_running_loop()
    t0 = loop.time() + lead_ms / 1000.0
    first = trace.arrivals[0][0] if trace.arrivals else 0.0
    for k, (t, batch) in enumerate(trace.arrivals, 1):
        delay = t0 + (t - first) / 1000.0 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await ws.send_text(json.dumps({"through": k, "events": batch}, ensure_ascii=False))


def protocol_header(app: Any) -> Any:
    """Every HTTP answer says a streampace server is here (the demo's probe asks
    before it opens its session socket; plain static files would not)."""
    from streampace.session.protocol import PROTOCOL_VERSION

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_header(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [
                    *message.get("headers", []),
                    (b"x-streampace-protocol", str(PROTOCOL_VERSION).encode())]}
            await send(message)

        await app(scope, receive, send_with_header)

    return wrapped


# -------------------------------------------------------------- the page side

def _wait(driver: Any, script: str, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if driver.execute_script(script):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what}: not ready after {timeout_s:.0f} s")


def play_page(driver: Any, base: str, player: SessionPlayer, page: str, trace: Trace,
              cpu: float, around: Any = None, settle_s: float = SETTLE_S) -> dict[str, Any]:
    """Load the demo or the embed, let it boot, play `trace` into it (throttled by
    `cpu` while it streams) and return what the probe saw. `around`: a context
    manager entered once the page is ready, left once the trace has played
    (bench/frame_trace.py records a DevTools trace in it). `settle_s`: how long
    the page is left idle between ready and the question."""
    driver.get(f"{base}/" if page == "demo" else f"{base}/bench/embed")
    _wait(driver, _DEMO_READY_JS if page == "demo" else _READY_JS, BOOT_TIMEOUT_S, page)
    if page == "demo":  # the source is known once the demo's socket opened
        _wait(driver, "return window.streampaceDemo.mode === 'server'", 30.0, "demo source")
    time.sleep(settle_s)
    player.current = trace.name
    set_cpu(driver, cpu)
    try:
        with around if around is not None else contextlib.nullcontext():
            driver.execute_script(_ASK_JS[page])
            time.sleep((player.lead_ms + trace_duration_ms(trace) + TAIL_MS) / 1000.0)
        probe = collect_probe(driver)
        probe["py"] = json.loads(driver.execute_script(_PY_JS[page]))
        return probe
    finally:
        set_cpu(driver, 1)
        player.current = None


# -------------------------------------------------------------- figures

def trace_duration_ms(trace: Trace) -> float:
    return trace.arrivals[-1][0] - trace.arrivals[0][0] if trace.arrivals else 0.0


def _text_timeline(trace: Trace) -> tuple[list[float], list[int]]:
    """Arrival time (ms after the first message) and text arrived so far."""
    first = trace.arrivals[0][0] if trace.arrivals else 0.0
    times: list[float] = []
    sizes: list[int] = []
    total = 0
    for t, batch in trace.arrivals:
        total += sum(len(e.get("delta") or "") for e in batch
                     if e.get("type") == "TEXT_MESSAGE_CONTENT")
        times.append(t - first)
        sizes.append(total)
    return times, sizes


def frame_figures(probe: dict[str, Any], trace: Trace, lead_ms: float,
                  started_at: float | None = None) -> dict[str, Any]:
    """The whole frame while `trace` streamed: long frames, long tasks, frame cost
    (p50/p99) and its early/late means over the answer."""
    start = float(started_at if started_at is not None else probe["startedAt"]) + lead_ms
    end = start + trace_duration_ms(trace) + TAIL_MS
    loaf = [e for e in probe["loaf"] if start <= e[0] <= end]
    tasks = [d for s, d in probe["longtasks"] if start <= s <= end]
    frames = [(float(ts) - start, float(cost)) for ts, cost in probe["frames"]
              if start <= ts <= end]
    costs = [c for _t, c in frames]
    times, sizes = _text_timeline(trace)
    total = sizes[-1] if sizes else 0
    early: list[float] = []
    late: list[float] = []
    last_text = next((times[i] for i in range(len(sizes) - 1, -1, -1)
                      if i == 0 or sizes[i] != sizes[i - 1]), 0.0)
    for t, cost in frames:
        i = int(np.searchsorted(times, t, side="right")) - 1
        arrived = sizes[i] if i >= 0 else 0
        if 0 < arrived <= 0.1 * total:
            early.append(cost)
        elif total and arrived >= 0.9 * total and t <= last_text + 300.0:
            late.append(cost)
    worst = max(loaf, key=lambda e: e[1]) if loaf else None
    out: dict[str, Any] = {
        "loaf_n": len(loaf),
        "loaf_max_ms": worst[1] if worst else 0.0,
        "loaf_worst_script_ms": worst[2] if worst else None,
        "loaf_worst_style_layout_ms": worst[3] if worst else None,
        "loaf_worst_wait_ms": _waited_ms(worst) if worst else None,
        "loaf_script_ms": float(sum(e[2] for e in loaf)),
        "loaf_style_layout_ms": float(sum(e[3] for e in loaf)),
        "loaf_forced_ms": float(sum(e[4] for e in loaf)),
        "tasks_n": len(tasks),
        "tasks_max_ms": max(tasks) if tasks else 0.0,
        "frame_n": len(costs),
        "frame_p50_ms": float(np.percentile(costs, 50)) if costs else None,
        "frame_p99_ms": float(np.percentile(costs, 99)) if costs else None,
        "answer_chars": total,
        **_python_ms(probe.get("py")),
        "probe_errors": probe.get("errors") or [],
    }
    if len(early) >= 10 and len(late) >= 10 and total >= 20_000:
        # Means (what a frame costs on average) and medians (robust to the few
        # frames a busy shared machine stretches).
        out.update(frame_early_ms=float(np.mean(early)), frame_late_ms=float(np.mean(late)),
                   frame_late_early=float(np.mean(late) / np.mean(early)),
                   frame_late_early_p50=float(np.median(late) / np.median(early)),
                   frame_early_late_n=[len(early), len(late)])
    return out


def _waited_ms(loaf: list[Any]) -> float | None:
    """How long a long animation frame waited before its rendering began with no
    script of its running (a LoAF lists scripts of 5 ms or more): from its start
    to `renderStart`, less the script time in that stretch -- the main thread
    idle, or in tasks that run no script (a garbage collection, say). None for
    entries recorded without it."""
    if len(loaf) < 9 or not loaf[6]:
        return None
    return max(0.0, float(loaf[6]) - float(loaf[0]) - float(loaf[8]))


def long_frames(probe: dict[str, Any], trace: Trace, lead_ms: float,
                started_at: float | None = None) -> list[dict[str, Any]]:
    """Each long animation frame while `trace` streamed, for finding its cause:
    when (ms since the first message was due), how long, script vs. style and
    layout, and its longest scripts (invoker, source, ms)."""
    start = float(started_at if started_at is not None else probe["startedAt"]) + lead_ms
    end = start + trace_duration_ms(trace) + TAIL_MS
    out = []
    for e in probe["loaf"]:
        if not start <= e[0] <= end:
            continue
        scripts = [{"type": s[0], "invoker": s[1], "function": s[2], "ms": s[3],
                    "forced_ms": s[4], "url": s[5] if len(s) > 5 else "",
                    "char": s[6] if len(s) > 6 else -1, "at_ms": s[7] if len(s) > 7 else None}
                   for s in e[7]]
        out.append({"at_ms": e[0] - start, "ms": e[1], "script_ms": e[2],
                    "style_layout_ms": e[3], "forced_ms": e[4], "blocking_ms": e[5],
                    "waited_ms": _waited_ms(e), "scripts": scripts})
    return out


def long_frame_lines(frames: list[dict[str, Any]]) -> list[str]:
    """One line per long frame, then one per script in it."""
    lines = []
    for f in frames:
        waited = f.get("waited_ms")
        lines.append(f"    LoAF at {f['at_ms']:7.0f} ms: {f['ms']:5.0f} ms (script "
                     f"{f['script_ms']:.0f}, style+layout {f['style_layout_ms']:.0f}, forced "
                     f"{f['forced_ms']:.0f}" + (f", waited {waited:.0f}" if waited is not None
                                               else "") + ")")
        for s in f["scripts"]:
            url = s["url"].rsplit("/", 1)[-1]
            at = f"+{s['at_ms']:.0f}" if s["at_ms"] is not None else ""
            lines.append(f"      {s['ms']:5.0f} ms {at:>5s} {s['type']}: {s['invoker']}"
                         f" {s['function']} {url}:{s['char']}"
                         + (f" forced {s['forced_ms']:.0f}" if s["forced_ms"] else ""))
    return lines


def _python_ms(py: Any) -> dict[str, Any]:
    """The page's Python ms per frame (p50, p99), when the page said (demo, embed)."""
    if not isinstance(py, dict) or not py.get("n"):
        return {}
    follower = py.get("followerMs")
    return {"py_ms_p50": py.get("p50"), "py_ms_p99": py.get("p99"),
            # The followers' Python over the page's life (one answer per load),
            # per frame with work.
            "follower_ms_mean": (float(follower) / float(py["n"])
                                 if isinstance(follower, (int, float)) else None)}


FRAME_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("loaf_n", "LoAF > 50 ms", "int"),
    ("loaf_max_ms", "longest LoAF ms", "ms"),
    ("loaf_worst_script_ms", "its script ms", "ms"),
    ("loaf_worst_style_layout_ms", "its style+layout ms", "ms"),
    ("loaf_worst_wait_ms", "its wait ms", "ms"),
    ("loaf_script_ms", "all LoAF script ms", "ms"),
    ("loaf_style_layout_ms", "all LoAF style+layout ms", "ms"),
    ("tasks_n", "long tasks", "int"),
    ("tasks_max_ms", "longest task ms", "ms"),
    ("py_ms_p99", "Python ms/frame p99", "x"),
    ("follower_ms_mean", "follower Python ms/frame mean", "x"),
    ("frame_p50_ms", "frame ms p50", "x"),
    ("frame_p99_ms", "frame ms p99", "x"),
    ("frame_early_ms", "early frame ms", "x"),
    ("frame_late_ms", "late frame ms", "x"),
    ("frame_late_early", "late / early (means)", "x"),
    ("frame_late_early_p50", "late / early (p50s)", "x"),
)


def frame_markdown(rows: list[dict[str, Any]], cpu: float, phone: bool = False) -> str:
    """One table: page × trace (× strategy on the bench page)."""
    if not rows:
        return ""
    screen = (f" on a phone's screen (`--phone`: {PHONE['width']} × {PHONE['height']} CSS px "
              f"at {PHONE['deviceScaleFactor']}× device pixels, touch)" if phone else "")
    body = [[f"`{r['page']}`", f"`{r['trace']}`", f"`{r.get('strategy', 'streampace')}`",
             *(fmt(r.get(k), kind) for k, _t, kind in FRAME_COLUMNS)] for r in rows]
    return "\n".join([
        f"Whole frame at {cpu:g}× CPU (`--cpu {cpu:g}`; DevTools CPU throttling while the "
        f"trace plays){screen}: long animation frames and long tasks while the answer streams (the "
        "longest frame's wait = the time before its rendering began that none of its scripts "
        "took: the main thread idle or in tasks that run no script, such as a garbage "
        "collection); frame "
        "ms = one frame's main-thread cost, script + style + layout + paint (frame start → a "
        "message posted from a frame callback), p50/p99 while streaming; Python ms/frame = "
        "the page's own Python per animation frame with work (its stats(); the bench page: "
        "the harness's); early = frames "
        "while ≤ 10 % of the answer "
        "has arrived, late = once ≥ 90 % has (answers ≥ 20 000 characters). Pages: `bench` "
        "= the harness page (StreamView alone), `demo` = index.html (both panes, the chart), "
        "`embed` = the script tag on a bare page.", "",
        md_table(["page", "trace", "strategy", *(t for _k, t, _f in FRAME_COLUMNS)], body),
        ""])
