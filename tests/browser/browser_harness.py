"""Helpers for the browser tests (imported by conftest.py and the test modules).

Kept out of conftest.py so test modules never `from conftest import ...`
(several test directories have a conftest.py).
"""


from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/engines.py makes the drivers
    sys.path.insert(0, str(ROOT))

from bench.engines import ENGINES, engine_missing, new_driver  # noqa: E402

# The CSP `streampace serve` sends: only our own origin, plus compiling wasm.
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
BOOT_TIMEOUT_S = 90
SNAPSHOT_DIR = ROOT / "vendor" / "snapshot"



def runtime_missing() -> str | None:
    for path in ("vendor/pyodide/pyodide.mjs", "vendor/pyscript/core.js", "vendor/streampace.zip"):
        if not (ROOT / path).is_file():
            return f"{path} missing: run scripts/setup"
    return engine_missing("chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- scripted stream
class ScriptedSessions:
    """Sessions whose batches the test pushes (v1 batches; ids minted for
    /ws/sessions/new as in v3, with an `attached` message); can drop connections."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.batches: dict[str, list[tuple[int, list[tuple[int, dict]]]]] = {}
        self.seq: dict[str, int] = {}
        self.sockets: dict[str, set[Any]] = {}
        self.received: list[tuple[str, dict]] = []
        self.connects: dict[str, int] = {}
        # A misbehaving server: ignore `after` and replay everything on resume.
        self.replay_all: set[str] = set()
        # Ids minted for sockets to /ws/sessions/new (protocol v3), in order.
        self.minted: list[str] = []
        self._lock = threading.Lock()

    def _run(self, coro: Any) -> Any:
        if self.loop is None:
            return asyncio.run(coro)  # nobody connected yet: no sockets to write to
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def push(self, sid: str, events: list[dict]) -> int:
        """Log `events` as one batch and send it to attached viewers; returns through."""
        return self._run(self._push(sid, events))

    async def _push(self, sid: str, events: list[dict]) -> int:
        seq = self.seq.get(sid, 0)
        numbered = []
        for event in events:
            seq += 1
            numbered.append((seq, event))
        self.seq[sid] = seq
        self.batches.setdefault(sid, []).append((seq, numbered))
        text = json.dumps({"through": seq, "events": events})
        for ws in list(self.sockets.get(sid, ())):
            try:
                await ws.send_text(text)
            except Exception:
                self.sockets[sid].discard(ws)
        return seq

    def push_spaced(self, sid: str, batches: list[list[dict]], gap_ms: float) -> int:
        """Send several batches `gap_ms` apart (network timing, server side)."""
        return self._run(self._push_spaced(sid, batches, gap_ms))

    async def _push_spaced(self, sid: str, batches: list[list[dict]], gap_ms: float) -> int:
        through = 0
        for i, events in enumerate(batches):
            if i:
                await asyncio.sleep(gap_ms / 1000)
            through = await self._push(sid, events)
        return through

    def drop(self, sid: str) -> int:
        """Close every viewer of `sid` as a network failure would; returns how many."""
        return self._run(self._drop(sid))

    async def _drop(self, sid: str) -> int:
        viewers = list(self.sockets.get(sid, ()))
        self.sockets[sid] = set()
        for ws in viewers:
            with contextlib.suppress(Exception):
                await ws.close(code=1012)
        return len(viewers)

    def client_messages(self, sid: str, kind: str | None = None) -> list[dict]:
        with self._lock:
            return [m for s, m in self.received
                    if s == sid and (kind is None or m.get("type") == kind)]

    async def endpoint(self, websocket: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        self.loop = asyncio.get_running_loop()
        sid = websocket.path_params["sid"]
        attached: dict | None = None
        if sid == "new":  # mint an id as the real server does; the page follows it
            sid = secrets.token_urlsafe(16)
            with self._lock:
                self.minted.append(sid)
            attached = {"type": "attached", "protocol": 3, "sessionId": sid,
                        "epoch": "scripted", "after": 0}
        await websocket.accept()
        self.connects[sid] = self.connects.get(sid, 0) + 1
        try:
            while True:
                msg = json.loads(await websocket.receive_text())
                with self._lock:
                    self.received.append((sid, msg))
                if attached is not None and msg.get("type") in ("resume", "run"):
                    mode = "log" if msg["type"] == "resume" else "live"
                    await websocket.send_text(json.dumps({**attached, "mode": mode}))
                    attached = None
                if msg.get("type") == "resume":
                    after = 0 if sid in self.replay_all else int(msg.get("after", 0))
                    for through, numbered in self.batches.get(sid, []):
                        rest = [event for seq, event in numbered if seq > after]
                        if rest:
                            batch = {"through": through, "events": rest}
                            await websocket.send_text(json.dumps(batch))
                    self.sockets.setdefault(sid, set()).add(websocket)
        except WebSocketDisconnect:
            pass
        finally:
            self.sockets.get(sid, set()).discard(websocket)


class PageServer:
    def __init__(self, port: int, sessions: ScriptedSessions) -> None:
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"
        self.ws_origin = f"ws://127.0.0.1:{port}"
        self.sessions = sessions

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"


def build_app(sessions: ScriptedSessions, csp: str | None) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    class CSPMiddleware:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http" or csp is None:
                await self.app(scope, receive, send)
                return

            async def send_with_csp(message: Any) -> None:
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers", []))
                    headers.append((b"content-security-policy", csp.encode()))
                    headers.append((b"cache-control", b"no-cache"))
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_with_csp)

    async def no_stream(websocket: Any) -> None:
        # What a site without a streampace server answers a WebSocket upgrade to
        # an unknown path: HTTP 404 (the browser reports only a failed handshake).
        from starlette.responses import PlainTextResponse

        await websocket.send_denial_response(PlainTextResponse("no stream here\n", 404))

    return Starlette(
        routes=[
            WebSocketRoute("/ws/sessions/{sid}", sessions.endpoint),
            WebSocketRoute("/ws/missing/{sid}", no_stream),
            Mount("/", app=StaticFiles(directory=str(ROOT), html=True)),
        ],
        middleware=[Middleware(CSPMiddleware)],
    )


# ---------------------------------------------------------------- engines
# The browser tests run in Chromium; those marked `engines` also in Firefox ESR
# and WebKitGTK (Safari's engine): bench/engines.py makes the drivers.
WINDOW = (1200, 900)


def selected_engines() -> tuple[str, ...]:
    """STREAMPACE_ENGINES (comma-separated) or all three."""
    raw = os.environ.get("STREAMPACE_ENGINES", "")
    chosen = tuple(e.strip() for e in raw.split(",") if e.strip()) or ENGINES
    for engine in chosen:
        if engine not in ENGINES:
            raise ValueError(f"STREAMPACE_ENGINES: unknown engine {engine!r}")
    return chosen


# What Firefox and WebKit cannot report natively (Chromium's performance and
# browser logs): the page's console errors, uncaught errors and requested URLs
# (Resource Timing, plus WebSockets opened), kept in the page for the harness.
# Firefox runs it before the page's scripts (a BiDi preload script); WebKitGTK's
# WebDriver has none, so there it runs when driver.get() returns (after `load`:
# Pyodide boots later, so its requests and errors are seen).
PAGE_WATCH_JS = """() => {
  if (window.__spWatch) return;
  const w = window.__spWatch = {errors: [], sockets: [], seen: 0};
  const error = console.error.bind(console);
  console.error = (...args) => { w.errors.push(args.map(String).join(' ')); error(...args); };
  // The ResizeObserver loop notice is an error event the spec fires and Chromium
  // leaves out of its console log too: its notifications come next frame.
  window.addEventListener('error', (e) => {
    if (!String(e.message).startsWith('ResizeObserver loop')) w.errors.push(String(e.message));
  });
  window.addEventListener('unhandledrejection', (e) => w.errors.push(String(e.reason)));
  if (performance.setResourceTimingBufferSize) performance.setResourceTimingBufferSize(100000);
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(url, ...rest) { super(url, ...rest); w.sockets.push(this.url); }
  };
}"""


def engine_of(driver: Any) -> str:
    return str(getattr(driver, "streampace_engine", "chromium"))


def make_driver(engine: str = "chromium") -> Any:
    """A driver for `engine` (chromium, firefox or webkit), window 1200x900, that
    reports console errors and requested URLs (see PAGE_WATCH_JS)."""
    driver = new_driver(engine, WINDOW, chromium_logs=True, firefox_bidi=True)
    driver.set_script_timeout(BOOT_TIMEOUT_S)
    if engine == "firefox":
        driver.script.add_preload_script(PAGE_WATCH_JS)
    elif engine == "webkit":
        driver.streampace_after_load = {0: PAGE_WATCH_JS}
        navigate = driver.get

        def get_then_run_init_scripts(url: str) -> None:
            navigate(url)
            for source in list(driver.streampace_after_load.values()):
                driver.execute_script(f"({source})()")

        driver.get = get_then_run_init_scripts
    return driver


# WebKitGTK deletes the session of a page whose web process crashed or hung
# (this machine's kernel log has shown JavaScriptCore segfaulting in
# WebKitWebProcess); its WebDriver then answers every command with this message.
ENGINE_CRASH = "session deleted because of page crash or hang"


def renew_lost_webkit_session(driver: Any) -> bool:
    """Give `driver` a new WebKit session in place if WebKit deleted its last one
    (module fixtures hold the driver object, so it is kept). True if renewed."""
    from selenium.common.exceptions import InvalidSessionIdException

    try:
        driver.execute_script("return 1")
        return False
    except InvalidSessionIdException:
        pass
    driver.start_session(driver.streampace_capabilities)
    driver.set_window_size(*WINDOW)
    driver.set_script_timeout(BOOT_TIMEOUT_S)
    return True


# Whether a page's own scripts run after a test's init script: where not (WebKit),
# a test that must see the page before it ran skips that one check, naming this.
INIT_SCRIPTS_RUN_FIRST = {"chromium": True, "firefox": True, "webkit": False}


def add_init_script(driver: Any, function: str) -> Any:
    """Run the JS function expression `function` in every page `driver` loads from
    now on: before the page's scripts (Chromium: CDP; Firefox: a BiDi preload
    script), in WebKit when driver.get() returns (its WebDriver has neither)."""
    engine = engine_of(driver)
    if engine == "chromium":
        return driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                      {"source": f"({function})();"})["identifier"]
    if engine == "firefox":
        added = driver.script.add_preload_script(function)
        return added["script"] if isinstance(added, dict) else added
    handle = max(driver.streampace_after_load) + 1
    driver.streampace_after_load[handle] = function
    return handle


def remove_init_script(driver: Any, handle: Any) -> None:
    engine = engine_of(driver)
    if engine == "chromium":
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument",
                               {"identifier": handle})
    elif engine == "firefox":
        driver.script.remove_preload_script(script=handle)
    else:
        driver.streampace_after_load.pop(handle, None)


def wait_for(driver: Any, script: str, timeout: float = BOOT_TIMEOUT_S, *args: Any) -> Any:
    """Wait until the JS expression `script` (a function body's return) is truthy."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(script, *args)
    )


def requested_urls(driver: Any) -> list[str]:
    """Every URL the browser requested since the last call: Chromium's performance
    log; elsewhere the page's Resource Timing entries and WebSockets (PAGE_WATCH_JS)."""
    if engine_of(driver) != "chromium":
        return list(driver.execute_script(
            "const w = window.__spWatch; if (!w) return [];"
            "const names = performance.getEntriesByType('resource').map((e) => e.name);"
            "const fresh = names.slice(w.seen).concat(w.sockets.splice(0));"
            "w.seen = names.length; return fresh;"))
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
        elif message.get("method") == "Network.webSocketCreated":
            urls.append(message["params"]["url"])
    return urls


def console_errors(driver: Any) -> list[str]:
    """Console errors since the last call (Chromium's log; elsewhere PAGE_WATCH_JS's)."""
    if engine_of(driver) != "chromium":
        return list(driver.execute_script(
            "const w = window.__spWatch; return w ? w.errors.splice(0) : [];"))
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def tiny_wheel(path: Path) -> str:
    """A minimal pure-Python wheel, built here so the test needs no network."""
    import base64
    import hashlib
    import zipfile

    name = "sp_hello-1.0-py3-none-any.whl"
    files = {
        "sp_hello/__init__.py": b"def hi():\n    return 'hello from a local wheel'\n",
        "sp_hello-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sp-hello\nVersion: 1.0\n",
        "sp_hello-1.0.dist-info/WHEEL": (b"Wheel-Version: 1.0\nGenerator: test\n"
                                         b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    }
    record = []
    for arc, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arc},sha256={digest},{len(data)}")
    record.append("sp_hello-1.0.dist-info/RECORD,,")
    files["sp_hello-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    path.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path / name, "w") as zf:
        for arc, data in files.items():
            zf.writestr(arc, data)
    return name




@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[int]:
    """Serve an ASGI app on a free loopback port in a thread; yields the port."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", ws_ping_interval=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("page server did not start")
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError("server did not start listening")


@contextlib.contextmanager
def serving(cmd: list[str], port: int) -> Iterator[str]:
    """Run a server command (in the repository root) until the block ends; yields its origin."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


class SnapshotSwitch:
    """What the page gets for vendor/snapshot/*: the real files or a fault."""

    def __init__(self) -> None:
        self.mode = "real"
        # Content-Encoding of each snapshot sent ("" for none), for the tests.
        self.sent: list[str] = []

    async def handle(self, request: Any) -> Any:
        from starlette.responses import FileResponse, PlainTextResponse, Response

        name = request.path_params["name"]
        path = SNAPSHOT_DIR / name
        if self.mode == "missing" or not path.is_file() or "/" in name:
            return PlainTextResponse("not found\n", status_code=404)
        headers = {"Cache-Control": "no-store"}
        if name == "manifest.json":
            manifest = json.loads(path.read_text())
            if self.mode == "stale-zip":
                manifest["zipSha256"] = "0" * 64
            elif self.mode == "other-pyodide":
                manifest["pyodideVersion"] = "0.0.0"
            elif self.mode == "misplaced-heap":
                manifest["memoryAt"] += 16
            return Response(json.dumps(manifest), media_type="application/json", headers=headers)
        if self.mode == "corrupt":
            return Response(gzip.compress(os.urandom(1 << 16)), media_type="application/gzip",
                            headers=headers)
        accepts = request.headers.get("accept-encoding", "")
        brotli = path.with_name(path.name.removesuffix(".gz") + ".br")
        if self.mode == "brotli" and "br" in accepts and brotli.is_file():
            # What `streampace serve` does for a browser that takes brotli.
            self.sent.append("br")
            return FileResponse(brotli, media_type="application/octet-stream",
                                headers={**headers, "Content-Encoding": "br"})
        self.sent.append("")
        return FileResponse(path, media_type="application/gzip", headers=headers)


# What the page logs once when it boots Python the ordinary way (no usable snapshot).
FALLBACK_NOTE = "booting Python without the memory snapshot"


@contextlib.contextmanager
def switchable_snapshot_server(csp: str) -> Iterator[tuple[PageServer, SnapshotSwitch]]:
    """A scripted page server whose vendor/snapshot/* a test can break (the switch)."""
    import pytest
    from starlette.routing import Route

    if not (SNAPSHOT_DIR / "manifest.json").is_file():
        pytest.fail("vendor/snapshot/manifest.json missing: scripts/setup_runtime made no snapshot")
    switch = SnapshotSwitch()
    sessions = ScriptedSessions()
    app = build_app(sessions, csp)
    app.router.routes.insert(0, Route("/vendor/snapshot/{name}", switch.handle))
    with serve_app(app) as port:
        yield PageServer(port, sessions), switch
