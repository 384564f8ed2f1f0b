"""Boot benchmark: `python -m bench --boot` (or `python -m bench.boot`).

Navigation → ready in headless Debian Chromium, side by side in one run, for

1. `pyscript`  — a minimal stock PyScript page on the same vendored Pyodide
                 (ready = its Python script runs);
2. `pyodide`   — bare `loadPyodide` (ready = it resolved);
3. `embed`     — our tag (`js_shim/streampace.js`, ready = `streampace:ready`),
                 with a session stream whose run was requested before Python
                 booted, so text is waiting at ready;
4. `embed-nosnap` — the same tag with `data-snapshot="off"` (the ordinary boot);
5. `embed-nogzip` — the tag with the precompressed .gz/.br files switched off
                 (what a plain static server sends);
   `embed-gzip` — the tag with the .br files switched off (gzip only);
6. `demo`      — the demo page `index.html`, a PyScript page (ready = its
                 `streampace:ready`: PyScript ran its Python, the source is known);
7. `user`      — a user's PyScript page on our interpreter (`config` = a one-line
                 pyscript.toml naming js_shim/pyscript.js); ready = its Python
                 script runs, after `from streampace.browser.page import mount`
                 and mounting a view — the stock page's point plus our package;
8. `user-json` — the same page with its config as JSON (what PyScript's TOML
                 parser costs);
9. `user-noplugins` — the same page with PyScript's plugins other than `error`
                 turned off in its config (what loading them costs).

Served by the real `streampace serve` application (its static handler, cache
headers and CSP; the demo simulated model behind `/ws/sessions/{id}`), with the
bench pages added under `/bench-boot/`. Cold = a fresh browser profile; warm =
a reload in that profile, once our pages have kept their decoded copies of the
snapshot and the wasm in Cache Storage (js_shim/kept.js; at most 6 s). Rounds
interleave the pages; figures are medians; ratios are to `pyscript` in the same
run. Bytes are what the page transferred (Resource Timing `transferSize`, HTML
included, WebSocket not). Our boot is broken into phases from its `performance`
marks (`streampace:*`, js_shim/boot.js).

`--mbps 50` throttles the browser's network (Chrome DevTools network emulation,
20 ms RTT): on loopback compression cannot show what it saves.

Results: bench/results/boot.md and boot.json (boot-<N>mbps.* when throttled).
Figures, never assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import os
import platform
import socket
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.chromium import chromium as _chromium
from bench.threaded_server import ThreadedServer

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TIMEOUT_S = 120.0
PAGES = ("pyscript", "pyodide", "embed", "embed-nosnap", "embed-nogzip", "embed-gzip", "demo",
         "user", "user-json", "user-noplugins")
# Pages that boot through PyScript (their documents get PyScript's CSP).
PYSCRIPT_PAGES = ("pyscript", "demo", "user", "user-json", "user-noplugins")
# Pages served with the precompressed .gz/.br files switched off, or only the .br
# (same page as embed).
IDENTITY_PAGES = ("embed-nogzip",)
GZIP_PAGES = ("embed-gzip",)
BASELINE = "pyscript"

# ---------------------------------------------------------------- bench pages
# The CSP of `streampace serve` allows no inline script: page code is in files.
_RECORDER_JS = """
// Bench recorder: when the page's text first appears, relative to ready.
const B = (window.__boot = { firstTextAt: null, framesAfterReady: null, queuedAtReady: null });
const target = document.getElementById("answer");
if (target) {
  new MutationObserver(() => {
    if (B.firstTextAt === null && target.querySelector(".sp-text")
        && target.querySelector(".sp-text").textContent.length > 0) {
      B.firstTextAt = performance.now();
    }
  }).observe(target, { childList: true, subtree: true, characterData: true });
  let frames = 0;
  const tick = () => {
    const ready = performance.getEntriesByName("streampace:ready").length > 0;
    if (ready) {
      if (B.firstTextAt !== null && B.framesAfterReady === null) B.framesAfterReady = frames;
      frames += 1;
    }
    if (B.framesAfterReady === null) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
"""

_EMBED_RUN_JS = """
// Ask for a run at once: its first batches arrive while Python boots.
window.streampace.send({ type: "run", prompt: "Why pace streamed text?", scenario: "fast" });
const inst = window.streampace.instances[0];
document.addEventListener("streampace:ready", () => {
  window.__boot.snapshot = inst.stats().boot.snapshot;
});
"""

_PYODIDE_JS = """
const { loadPyodide } = await import("/vendor/pyodide/pyodide.mjs");
const py = await loadPyodide({ indexURL: "/vendor/pyodide/" });
py.runPython("1 + 1");
performance.mark("streampace:ready");
"""

_PYSCRIPT_TOML = 'name = "stock"\ninterpreter = "/vendor/pyodide/pyodide.mjs"\n'
_USER_TOML = 'interpreter = "/js_shim/pyscript.js"\n'
_USER_JSON = '{"interpreter": "/js_shim/pyscript.js"}\n'
_USER_NOPLUGINS_TOML = _USER_TOML + (
    'plugins = ["!deprecations-manager", "!donkey", "!py-editor", "!py-game", "!py-terminal"]\n')
# How our interpreter booted, for the summary (the module is imported once per page).
_PYINFO_JS = """
import { runtimeInfo } from "/js_shim/pyscript.js";
window.__pyinfo = runtimeInfo;
"""


def _html(title: str, head: str, body: str) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"{head}</head>\n<body>{body}</body></html>\n")


# PyScript loads its plugins once per interpreter type (py and mpy), each with that
# type's config: without this the MicroPython pass loads all of them anyway.
_MPY_NOPLUGINS = ('<mpy-config>{"plugins": ["!deprecations-manager", "!donkey", "!py-editor",'
                  ' "!py-game", "!py-terminal"]}</mpy-config>\n')


def _user_html(config: str) -> str:
    return _html("user PyScript page", (
        '<link rel="stylesheet" href="/vendor/pyscript/core.css">'
        '<script type="module" src="/js_shim/pyscript.js"></script>'
        '<script type="module" src="/bench-boot/pyinfo.js"></script>'), (
        '<div id="answer"></div>\n'
        + (_MPY_NOPLUGINS if "noplugins" in config else "")
        + f'<script type="py" config="/bench-boot/{config}">\n'
        "from js import performance\n"
        "from streampace.browser.page import mount\n"
        'view = mount("#answer")\n'
        'performance.mark("streampace:ready")\n</script>'))


def _embed_html(snapshot: bool) -> str:
    attr = "" if snapshot else ' data-snapshot="off"'
    return _html("embed", "", (
        '<div id="answer"></div>\n'
        '<script type="module" src="/bench-boot/recorder.js"></script>\n'
        # A session the server mints (it refuses ids a client makes up); the
        # warm reload resumes it, as the tag does by default (data-remember="tab").
        '<script type="module" src="/js_shim/streampace.js" data-stream="/ws/sessions/new" '
        f'data-target="#answer"{attr}></script>\n'
        '<script type="module" src="/bench-boot/embed-run.js"></script>'))


BENCH_FILES: dict[str, tuple[str, str]] = {
    "pyscript.html": ("text/html; charset=utf-8", _html(
        "stock PyScript",
        '<link rel="stylesheet" href="/vendor/pyscript/core.css">'
        '<script type="module" src="/vendor/pyscript/core.js"></script>',
        '<script type="py" config="/bench-boot/pyscript.toml">\n'
        'from js import performance\nperformance.mark("streampace:ready")\n</script>')),
    "pyscript.toml": ("text/plain; charset=utf-8", _PYSCRIPT_TOML),
    "pyodide.html": ("text/html; charset=utf-8", _html(
        "bare loadPyodide", '<script type="module" src="/bench-boot/pyodide.js"></script>', "")),
    "pyodide.js": ("text/javascript; charset=utf-8", _PYODIDE_JS),
    "user.html": ("text/html; charset=utf-8", _user_html("user.toml")),
    "user.toml": ("text/plain; charset=utf-8", _USER_TOML),
    "user-json.html": ("text/html; charset=utf-8", _user_html("user.json")),
    "user.json": ("application/json", _USER_JSON),
    "user-noplugins.html": ("text/html; charset=utf-8", _user_html("user-noplugins.toml")),
    "user-noplugins.toml": ("text/plain; charset=utf-8", _USER_NOPLUGINS_TOML),
    "pyinfo.js": ("text/javascript; charset=utf-8", _PYINFO_JS),
    "embed.html": ("text/html; charset=utf-8", _embed_html(True)),
    "embed-nosnap.html": ("text/html; charset=utf-8", _embed_html(False)),
    "recorder.js": ("text/javascript; charset=utf-8", _RECORDER_JS),
    "embed-run.js": ("text/javascript; charset=utf-8", _EMBED_RUN_JS),
}
PAGE_URLS = {
    "pyscript": "/bench-boot/pyscript.html",
    "pyodide": "/bench-boot/pyodide.html",
    "embed": "/bench-boot/embed.html",
    "embed-nosnap": "/bench-boot/embed-nosnap.html",
    "embed-nogzip": "/bench-boot/embed.html",
    "embed-gzip": "/bench-boot/embed.html",
    "demo": "/",
    "user": "/bench-boot/user.html",
    "user-json": "/bench-boot/user-json.html",
    "user-noplugins": "/bench-boot/user-noplugins.html",
}

# What a page reports once ready (all times ms since navigation start).
_COLLECT_JS = """
const mark = (n) => {
  const e = performance.getEntriesByName("streampace:" + n);
  return e.length ? e[0].startTime : null;
};
const res = performance.getEntriesByType("resource");
const nav = performance.getEntriesByType("navigation")[0];
const end = (suffix) => {
  const e = res.find((r) => r.name.split("?")[0].endsWith(suffix));
  return e ? e.responseEnd : null;
};
const marks = {};
for (const n of ["boot-start", "runtime-module", "snapshot-fetched", "wasm-instantiate",
                 "wasm-instantiated", "python-ready",
                 "package-ready", "interpreter-requested", "interpreter-returned",
                 "ready"]) marks[n] = mark(n);
const b = window.__boot || {};
return {
  ready: marks.ready, marks,
  // No resource entry for the wasm: it came from Cache Storage (js_shim/kept.js).
  wasmKept: performance.getEntriesByName("streampace:python-ready").length > 0
    && !res.some((r) => r.name.split("?")[0].endsWith("/pyodide.asm.wasm")),
  fetched: { wasm: end("/pyodide.asm.wasm"), stdlib: end("/python_stdlib.zip"),
             snapshot: end(".snap.gz") },
  // What each big file cost on the wire (bytes; 0 from the cache).
  wire: Object.fromEntries(["/pyodide.asm.wasm", "/python_stdlib.zip", ".snap.gz",
    "/pyodide.asm.mjs", "/streampace.zip"].map((s) => {
      const e = res.find((r) => r.name.split("?")[0].endsWith(s));
      return [s.split("/").pop(), e ? e.transferSize : null]; })),
  transferred: nav.transferSize + res.reduce((s, r) => s + r.transferSize, 0),
  decoded: nav.decodedBodySize + res.reduce((s, r) => s + r.decodedBodySize, 0),
  requests: res.length + 1,
  firstTextAt: b.firstTextAt ?? null, framesAfterReady: b.framesAfterReady ?? null,
  snapshot: b.snapshot ?? (window.__pyinfo ? window.__pyinfo.snapshot
    : window.streampaceDemo ? window.streampaceDemo.snapshot ?? null : null),
};
"""


# ---------------------------------------------------------------- server

class BootServer:
    """`streampace serve`'s application plus the bench pages, on a loopback port."""

    def __init__(self, precompressed: bool = True, brotli: bool = True,
                 root: Path = ROOT) -> None:
        self.precompressed = precompressed
        self.brotli = brotli
        self.root = root
        self.port = 0
        self._server: Any = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _app(self) -> Any:
        from starlette.responses import PlainTextResponse, Response
        from starlette.routing import Route
        from streampace.server import ServerConfig, parse_source
        from streampace.server.app import create_app
        from streampace.server.headers import content_security_policy
        from streampace.server.sources.base import SourceOptions

        config = ServerConfig(port=self.port, root=self.root)
        app = create_app(config, parse_source("demo", SourceOptions(speed=1.0, seed=1)))
        for route in app.router.routes:
            site = getattr(getattr(route, "endpoint", None), "__self__", None)
            if site is not None and hasattr(site, "precompressed"):
                site.precompressed, site.brotli = self.precompressed, self.brotli

        async def bench_file(request: Any) -> Response:
            entry = BENCH_FILES.get(request.path_params["name"])
            if entry is None:
                return PlainTextResponse("not found\n", status_code=404)
            media, text = entry
            headers = {"Cache-Control": "no-cache"}
            if '<script type="py"' in text:
                # The policy `streampace serve` gives a PyScript page (static.py).
                headers["Content-Security-Policy"] = content_security_policy(
                    request.headers.get("host"), pyscript=True)
            return Response(text, media_type=media, headers=headers)

        app.router.routes.insert(0, Route("/bench-boot/{name}", bench_file))
        return app

    def start(self) -> None:
        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_level="warning", lifespan="on",
                                ws_ping_interval=None)
        self._server = ThreadedServer(config, sockets=[sock])
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a fresh profile: its first load is a cold boot."""
    with _chromium(prefix="streampace-boot-", script_timeout_s=TIMEOUT_S) as driver:
        yield driver


def _wait_ready(driver: Any, page: str) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        done = driver.execute_script(
            "const r = performance.getEntriesByName('streampace:ready').length > 0;"
            "const b = window.__boot;"
            # The embed: also wait (bounded) for its first text, to time it.
            "return r && (!b || b.framesAfterReady !== null"
            " || performance.now() - performance.getEntriesByName('streampace:ready')[0].startTime"
            " > 3000);")
        if done:
            return driver.execute_script(_COLLECT_JS)
        time.sleep(0.03)
    raise TimeoutError(f"{page}: not ready after {TIMEOUT_S:.0f} s")


# A page of ours keeps decoded copies of the snapshot and the wasm in Cache
# Storage once it is idle after booting (js_shim/kept.js); a returning visitor
# finds them there. Before the warm reload the bench waits for them (marks
# `streampace:kept-*`), at most KEPT_WAIT_S: a reload at once would time a
# visitor who left within a second.
KEPT_WAIT_S = 6.0
_KEPT_JS = """
const has = (n) => performance.getEntriesByName("streampace:" + n).length > 0;
// Only a boot that downloaded its snapshot keeps copies.
if (!has("snapshot-fetched") || has("snapshot-cached")) return true;
return has("kept-snapshot") && has("kept-wasm");
"""


def _wait_kept(driver: Any) -> None:
    deadline = time.monotonic() + KEPT_WAIT_S
    while time.monotonic() < deadline and not driver.execute_script(_KEPT_JS):
        time.sleep(0.05)


def measure(server: BootServer, page: str, mbps: float | None = None) -> dict[str, Any]:
    """One cold load (fresh profile) and one warm reload of `page`; with `mbps`
    the browser's network is throttled to that download rate (and 20 ms RTT)."""
    url = server.base + PAGE_URLS[page]
    with chromium() as driver:
        if mbps:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
                "offline": False, "latency": 20,
                "downloadThroughput": mbps * 1e6 / 8, "uploadThroughput": mbps * 1e6 / 8})
        driver.get(url)
        cold = _wait_ready(driver, page)
        _wait_kept(driver)
        driver.refresh()
        warm = _wait_ready(driver, page)
    return {"cold": cold, "warm": warm}


# ---------------------------------------------------------------- summary
def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


PHASES = (
    ("page + shim module", None, "boot-start"),
    ("pyodide.mjs imported", "boot-start", "runtime-module"),
    ("snapshot fetched + gunzipped", "runtime-module", "snapshot-fetched"),
    ("wasm compile + Python start/restore", "runtime-module", "python-ready"),
    ("  snapshot in → wasm instantiate called", "snapshot-fetched", "wasm-instantiate"),
    ("  wasm instantiate (compile or code cache)", "wasm-instantiate", "wasm-instantiated"),
    ("  instantiated → Python restored", "wasm-instantiated", "python-ready"),
    ("our package (archive into place, after_restore, view)", "python-ready", "package-ready"),
    ("ready → first text on screen", "ready", "firstText"),
)
# PyScript pages: PyScript's own work and ours overlap (js_shim/pyscript.js
# starts our boot before PyScript's core is fetched).
PYSCRIPT_PHASES = (
    ("navigation → PyScript asks for the interpreter (core, config, plugins)", None,
     "interpreter-requested"),
    ("navigation → our Python ready (snapshot restored)", None, "python-ready"),
    ("PyScript waits for our boot", "interpreter-requested", "interpreter-returned"),
    ("interpreter → ready (PyScript's Python stdlib, the page's script)", "interpreter-returned",
     "ready"),
)
OUR_PAGES = ("embed", "embed-nosnap", "demo", "user")


def _phase(run: dict[str, Any], start: str | None, stop: str) -> float | None:
    marks = dict(run["marks"])
    marks["firstText"] = run.get("firstTextAt")
    a = 0.0 if start is None else marks.get(start)
    b = marks.get(stop)
    return None if a is None or b is None else b - a


WIRE_FILES = ("pyodide.asm.wasm", "python_stdlib.zip", ".snap.gz", "pyodide.asm.mjs",
              "streampace.zip")


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for page, rounds in runs.items():
        entry: dict[str, Any] = {}
        for kind in ("cold", "warm"):
            rs = [r[kind] for r in rounds]
            entry[kind] = {
                "ready_ms": _median([r["ready"] for r in rs]),
                "ready_all_ms": [round(r["ready"]) for r in rs if r["ready"] is not None],
                "transferred_bytes": _median([r["transferred"] for r in rs]),
                "wire_bytes": {name: _median([r.get("wire", {}).get(name) for r in rs])
                               for name in WIRE_FILES},
                "decoded_bytes": _median([r["decoded"] for r in rs]),
                "requests": _median([r["requests"] for r in rs]),
                "snapshot": [r.get("snapshot") for r in rs],
                "wasm_kept": [r.get("wasmKept") for r in rs],
                "frames_ready_to_text": _median([r.get("framesAfterReady") for r in rs]),
                "phases_ms": {name: _median([_phase(r, a, b) for r in rs])
                              for name, a, b in PHASES + PYSCRIPT_PHASES},
                "fetched_at_ms": {k: _median([r["fetched"][k] for r in rs])
                                  for k in ("wasm", "stdlib", "snapshot")},
            }
        out[page] = entry
    for page in out:
        for kind in ("cold", "warm"):
            base = out[BASELINE][kind]["ready_ms"] if BASELINE in out else None
            mine = out[page][kind]["ready_ms"]
            out[page][kind]["ratio_to_pyscript"] = (mine / base) if base and mine else None
            # The same, round by round (the pages of a round run one after the
            # other): less at the mercy of the machine's load drifting across the run.
            pairs = zip(runs[page], runs.get(BASELINE, []), strict=False)
            out[page][kind]["ratio_per_round"] = _median([
                mine_r[kind]["ready"] / base_r[kind]["ready"] for mine_r, base_r in pairs
                if mine_r[kind]["ready"] and base_r[kind]["ready"]])
    return out


def _f(v: float | None, digits: int = 0) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _mb(v: float | None) -> str:
    return "—" if v is None else f"{v / 1e6:.2f} MB"


LABELS = {
    "pyscript": "stock PyScript page (baseline)",
    "pyodide": "bare `loadPyodide`",
    "embed": "our embed tag (snapshot)",
    "embed-nosnap": "our embed tag, `data-snapshot=\"off\"`",
    "embed-nogzip": "our embed tag (snapshot), no precompressed .gz/.br",
    "embed-gzip": "our embed tag (snapshot), gzip but no .br",
    "demo": "demo page `index.html` (PyScript)",
    "user": "a user's PyScript page, our interpreter",
    "user-json": "the same, config as JSON",
    "user-noplugins": "the same, PyScript plugins off",
}


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# Boot benchmark (`python -m bench --boot`)",
        "",
        f"{meta['date']}, {meta['machine']}, load average at start {meta['load']}, "
        f"network {meta['network']}; "
        f"{meta['rounds']} rounds, medians; cold = fresh profile, warm = reload. "
        "Ratios are to the stock PyScript page in the same run: of the medians, and the "
        "median of each round's ratio (\"per round\").",
        "",
        "| page | cold ready ms | × PyScript | per round | warm ready ms | × PyScript "
        "| per round | first visit transferred | warm transferred |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for page in PAGES:
        if page not in summary:
            continue
        c, w = summary[page]["cold"], summary[page]["warm"]
        lines.append(
            f"| {LABELS[page]} | {_f(c['ready_ms'])} | {_f(c['ratio_to_pyscript'], 2)} | "
            f"{_f(c['ratio_per_round'], 2)} | "
            f"{_f(w['ready_ms'])} | {_f(w['ratio_to_pyscript'], 2)} | "
            f"{_f(w['ratio_per_round'], 2)} | "
            f"{_mb(c['transferred_bytes'])} | {_mb(w['transferred_bytes'])} |")
    def header(pages: tuple[str, ...]) -> list[str]:
        cols = [f"{page} {kind}" for page in pages for kind in ("cold", "warm")]
        return ["| phase | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]

    lines += ["", "Phases of our boot (ms, medians; marks from js_shim/boot.js):", "",
              *header(OUR_PAGES)]
    for name, _a, _b in PHASES:
        row = [name]
        for page in OUR_PAGES:
            for kind in ("cold", "warm"):
                row.append(_f(summary.get(page, {}).get(kind, {}).get("phases_ms", {}).get(name)))
        lines.append("| " + " | ".join(row) + " |")
    for what in ("snapshot", "wasm", "stdlib"):
        row = [f"{what} downloaded (since navigation)"]
        for page in OUR_PAGES:
            for kind in ("cold", "warm"):
                got = summary.get(page, {}).get(kind, {}).get("fetched_at_ms", {}).get(what)
                row.append(_f(got))
        lines.append("| " + " | ".join(row) + " |")
    ps_pages = tuple(p for p in PYSCRIPT_PAGES if p != BASELINE and p in summary)
    if ps_pages:
        lines += ["", "PyScript pages (ms, medians; marks from js_shim/pyscript.js and "
                  "js_shim/boot.js; the demo's ready waits for its session source too):", "",
                  *header(ps_pages)]
        for name, _a, _b in PYSCRIPT_PHASES:
            row = [name]
            for page in ps_pages:
                for kind in ("cold", "warm"):
                    row.append(_f(summary[page][kind]["phases_ms"].get(name)))
            lines.append("| " + " | ".join(row) + " |")
        snaps = {page: summary[page]["cold"]["snapshot"] + summary[page]["warm"]["snapshot"]
                 for page in ps_pages}
        lines += ["", "Snapshot used (cold then warm rounds): "
                  + "; ".join(f"{page} {flags}" for page, flags in snaps.items()) + "."]
    e = summary.get("embed", {})
    if e:
        lines += ["", "Embed, text that arrived during boot: animation frames from ready to "
                  f"its first text on screen, median cold {_f(e['cold']['frames_ready_to_text'])}, "
                  f"warm {_f(e['warm']['frames_ready_to_text'])}. Snapshot used per round: "
                  f"cold {e['cold']['snapshot']}, warm {e['warm']['snapshot']}."]
    kept = {page: summary[page]["warm"]["wasm_kept"] for page in OUR_PAGES if page in summary}
    if kept:
        lines += ["", "Warm, wasm from the copy kept in Cache Storage (per round): "
                  + "; ".join(f"{page} {flags}" for page, flags in kept.items()) + "."]
    lines += ["", "First visit, bytes on the wire of the big files (MB, medians):", "",
              "| page | " + " | ".join(WIRE_FILES) + " | all |",
              "|---" * (len(WIRE_FILES) + 2) + "|"]
    for page in PAGES:
        if page in summary:
            c = summary[page]["cold"]
            lines.append(f"| {page} | " + " | ".join(
                _f(None if c["wire_bytes"][n] is None else c["wire_bytes"][n] / 1e6, 2)
                for n in WIRE_FILES) + f" | {_mb(c['transferred_bytes'])} |")
    lines += ["", "All runs (ready ms):", ""]
    for page in PAGES:
        if page in summary:
            lines.append(f"- {page}: cold {summary[page]['cold']['ready_all_ms']}, "
                         f"warm {summary[page]['warm']['ready_all_ms']}")
    return "\n".join(lines) + "\n"


def _servers(root: Path) -> dict[str, BootServer]:
    """The page's server by page name (default ""), for a checkout at `root`."""
    server, identity = BootServer(root=root), BootServer(precompressed=False, root=root)
    gzip_only = BootServer(brotli=False, root=root)
    return {"": server, **dict.fromkeys(IDENTITY_PAGES, identity),
            **dict.fromkeys(GZIP_PAGES, gzip_only)}


def comparison(after: dict[str, Any], before: dict[str, Any],
               runs: dict[str, list[dict[str, Any]]],
               runs_before: dict[str, list[dict[str, Any]]]) -> str:
    """This checkout against `--compare`'s, page by page (medians, and the median of
    the round-by-round ratios: the two sides of a round ran one after the other)."""
    lines = ["| page | cold: before → after ms | after/before (per round) "
             "| warm: before → after ms | after/before (per round) "
             "| × PyScript warm: before → after |",
             "|---|---|---|---|---|---|"]
    for page in PAGES:
        if page not in after:
            continue
        row = [LABELS[page]]
        for kind in ("cold", "warm"):
            b, a = before[page][kind]["ready_ms"], after[page][kind]["ready_ms"]
            per_round = _median([x[kind]["ready"] / y[kind]["ready"]
                                 for x, y in zip(runs[page], runs_before[page], strict=False)
                                 if x[kind]["ready"] and y[kind]["ready"]])
            row += [f"{_f(b)} → {_f(a)}", f"{_f(a / b if a and b else None, 2)} "
                    f"({_f(per_round, 2)})"]
        row.append(f"{_f(before[page]['warm']['ratio_per_round'], 2)} → "
                   f"{_f(after[page]['warm']['ratio_per_round'], 2)}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def run(rounds: int, pages: list[str], out: Path, mbps: float | None = None,
        compare: Path | None = None) -> dict[str, Any]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    sides = {"after": _servers(ROOT)}
    if compare is not None:
        sides["before"] = _servers(compare)
    every = {id(each): each for servers in sides.values() for each in servers.values()}
    for each in every.values():
        each.start()
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        side: {p: [] for p in pages} for side in sides}
    try:
        for i in range(rounds):
            # Rotate the order each round so no page always goes first; with
            # --compare, each page runs on both sides, their order alternating.
            order = pages[i % len(pages):] + pages[:i % len(pages)]
            for page in order:
                turn = list(sides) if i % 2 == 0 else list(reversed(sides))
                for side in turn:
                    servers = sides[side]
                    runs[side][page].append(measure(servers.get(page, servers[""]), page, mbps))
                    c, w = runs[side][page][-1]["cold"], runs[side][page][-1]["warm"]
                    name = page if compare is None else f"{page} ({side})"
                    print(f"  round {i + 1} {name}: cold {_f(c['ready'])} ms, "
                          f"warm {_f(w['ready'])} ms", file=sys.stderr, flush=True)
    finally:
        for each in every.values():
            each.stop()
    summary = summarise(runs["after"])
    meta = {"date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load": _f(load, 1), "rounds": rounds,
            "network": f"throttled to {mbps:g} Mbit/s, 20 ms RTT" if mbps else "loopback"}
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(summary, meta)
    record: dict[str, Any] = {"meta": meta, "summary": summary, "runs": runs["after"]}
    if compare is not None:
        before = summarise(runs["before"])
        text += (f"\n## Against {compare} (`--compare`), the same rounds\n\n"
                 + comparison(summary, before, runs["after"], runs["before"])
                 + "\n### " + str(compare) + "\n\n"
                 + markdown(before, meta).split("\n", 2)[2])
        record.update(compare=str(compare), summary_before=before, runs_before=runs["before"])
    name = f"boot-{mbps:g}mbps" if mbps else "boot"
    (out / f"{name}.md").write_text(text, encoding="utf-8")
    import json

    (out / f"{name}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(text)
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench --boot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pages", default=",".join(PAGES), help=f"subset of {','.join(PAGES)}")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--mbps", type=float, help="throttle the browser's network (Mbit/s, 20 ms RTT)")
    ap.add_argument("--compare", type=Path, metavar="DIR",
                    help="also serve each page from another checkout with its runtime laid out "
                         "(e.g. main's), alternating with this one's in every round")
    args = ap.parse_args(argv)
    pages = args.pages.split(",")
    for p in pages:
        if p not in PAGES:
            ap.error(f"unknown page {p!r}")
    if args.compare is not None and not (args.compare / "vendor" / "runtime-config.mjs").is_file():
        ap.error(f"--compare {args.compare}: no laid-out runtime there (run scripts/setup_runtime)")
    run(args.rounds, pages, args.out, args.mbps, args.compare)
    return 0


if __name__ == "__main__":
    sys.exit(main())
