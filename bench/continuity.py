"""Continuity benchmark: `python -m bench.continuity` (headless Debian Chromium).

Three latencies a user waits through when something goes wrong, measured on the
real `streampace serve` application (bench/boot.py's ``BootServer``, the demo
model behind `/ws/sessions/{id}`) with our script tag:

1. `reload`    — a reload mid-answer: from `driver.refresh()` until the page
                 shows again at least the text it showed before (the tag
                 resumes its session; the text comes back as a snapshot);
2. `csp-wasm`  — a boot the page's policy forbids (no 'wasm-unsafe-eval'): from
                 navigation until the page says so (`.streampace-boot-failed`);
3. `no-server` — a view mounted on a socket nothing listens on: from `mount`
                 until its `streampace:error` (timed in the page).

Each round uses a fresh browser profile; figures are medians over rounds with
the min–max beside them. tests/browser checks the behaviour of the same cases
(test_continuity.py, test_connection_errors.py); this only times them.
Results: bench/results/continuity.md and continuity.json. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.boot import RESULTS, BootServer, chromium

__all__ = ["CASES", "main", "run"]

CASES = ("reload", "csp-wasm", "no-server")
TIMEOUT_S = 120.0
# The embed's own policy less 'wasm-unsafe-eval': Pyodide cannot start.
STRICT_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
              "img-src 'self' data:")
_EMBED_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>continuity bench</title></head>
<body><div id="answer"></div>
<script type="module" src="/js_shim/streampace.js" data-stream="/ws/sessions/new"
 data-target="#answer"></script>
</body></html>
"""
PAGES = {"embed.html": None, "strict.html": STRICT_CSP}
_READY = ("return !!(window.streampace && window.streampace.instances.length"
          " && window.streampace.instances[0].controller)")
# Characters the view shows (its timeline's text).
_SHOWN = "(document.querySelector('#answer .sp-timeline') || {textContent: ''}).textContent.length"
# The test page's mount (tests/browser/test_connection_errors.py), timed in the page.
_MOUNT = """
const [stream] = arguments;
const div = document.createElement("div");
document.body.append(div);
const rec = (window.__nosrv = {errorAt: null, t0: performance.now()});
div.addEventListener("streampace:error", (e) => {
  if (rec.errorAt === null) rec.errorAt = performance.now() - rec.t0;
});
window.streampace.mount({target: div, stream, format: "text"});
"""


class ContinuityServer(BootServer):
    """BootServer plus this bench's two pages (one under a policy that forbids wasm)."""

    def _app(self) -> Any:
        from starlette.responses import PlainTextResponse, Response
        from starlette.routing import Route
        from streampace.server.headers import content_security_policy

        app = super()._app()

        async def page(request: Any) -> Response:
            name = request.path_params["name"]
            if name not in PAGES:
                return PlainTextResponse("not found\n", status_code=404)
            # The embed: the server's policy, letting the page reach other loopback
            # ports (the dead one `no-server` mounts on), as tests/browser's page does.
            csp = PAGES[name] or content_security_policy(request.headers.get("host")).replace(
                "connect-src 'self'", "connect-src 'self' ws://127.0.0.1:*")
            headers = {"Cache-Control": "no-cache", "Content-Security-Policy": csp}
            return Response(_EMBED_HTML, media_type="text/html; charset=utf-8",
                            headers=headers)

        app.router.routes.insert(0, Route("/bench-continuity/{name}", page))
        return app


def _until(driver: Any, script: str, *args: Any, step_s: float = 0.01) -> float:
    """Seconds until ``script`` returns a true value (polled every ``step_s``)."""
    start = time.monotonic()
    while time.monotonic() - start < TIMEOUT_S:
        if driver.execute_script(script, *args):
            return time.monotonic() - start
        time.sleep(step_s)
    raise TimeoutError(f"not true after {TIMEOUT_S:.0f} s: {script[:60]}")


def measure_reload(server: BootServer) -> float:
    """ms from a reload mid-answer until what was shown is shown again."""
    with chromium() as driver:
        driver.get(server.base + "/bench-continuity/embed.html")
        _until(driver, _READY)
        driver.execute_script("window.streampace.send({type: 'run', prompt: "
                              "'Why pace streamed text? Explain it at length.'});")
        _until(driver, f"return {_SHOWN} >= 200;")  # mid-answer
        before = driver.execute_script(f"return {_SHOWN};")
        start = time.monotonic()
        driver.refresh()
        _until(driver, f"return {_SHOWN} >= arguments[0];", before)
        return (time.monotonic() - start) * 1000


def measure_boot_failure(server: BootServer) -> float:
    """ms from navigation until a page whose policy forbids wasm says the boot failed."""
    with chromium() as driver:
        start = time.monotonic()
        driver.get(server.base + "/bench-continuity/strict.html")
        _until(driver, "return !!document.querySelector('.streampace-boot-failed')")
        return (time.monotonic() - start) * 1000


def measure_no_server(server: BootServer) -> float:
    """ms from mounting a view on a dead port until its ``streampace:error``."""
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    with chromium() as driver:
        driver.get(server.base + "/bench-continuity/embed.html")
        _until(driver, _READY)
        driver.execute_script(_MOUNT, f"ws://127.0.0.1:{dead}/ws/sessions/nobody")
        _until(driver, "return window.__nosrv.errorAt !== null")
        return float(driver.execute_script("return window.__nosrv.errorAt"))


MEASURES = {"reload": measure_reload, "csp-wasm": measure_boot_failure,
            "no-server": measure_no_server}
LABELS = {
    "reload": "reload mid-answer: the conversation shown again after",
    "csp-wasm": "boot failure (no 'wasm-unsafe-eval') shown after navigation",
    "no-server": "no server: `streampace:error` after mount",
}


def markdown(figures: dict[str, list[float]], meta: dict[str, Any]) -> str:
    lines = ["# Continuity: what a user waits for when something goes wrong", "",
             f"{meta['date']}; {meta['machine']}; load {meta['load']}; "
             f"{meta['rounds']} rounds, headless Chromium, fresh profile each. "
             "`python -m bench.continuity`.", "",
             "| case | median (ms) | min–max (ms) |", "|---|---|---|"]
    for case, values in figures.items():
        lines.append(f"| {LABELS[case]} | {statistics.median(values):.0f} | "
                     f"{min(values):.0f}–{max(values):.0f} |")
    return "\n".join(lines) + "\n"


def run(rounds: int, cases: list[str], out: Path) -> dict[str, list[float]]:
    load = os.getloadavg()[0]
    server = ContinuityServer()
    server.start()
    figures: dict[str, list[float]] = {c: [] for c in cases}
    try:
        for i in range(rounds):
            for case in cases:
                figures[case].append(MEASURES[case](server))
                print(f"  round {i + 1} {case}: {figures[case][-1]:.0f} ms", file=sys.stderr,
                      flush=True)
    finally:
        server.stop()
    meta = {"date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load": f"{load:.1f}", "rounds": rounds}
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(figures, meta)
    (out / "continuity.md").write_text(text, encoding="utf-8")
    (out / "continuity.json").write_text(json.dumps({"meta": meta, "figures": figures},
                                                    indent=1), encoding="utf-8")
    print(text)
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.continuity", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES), help=f"subset of {','.join(CASES)}")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c!r}")
    run(args.rounds, cases, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
