"""Fixtures for server tests: a real uvicorn server on a free loopback port in a
background thread, real fake upstream HTTP servers, and a websockets client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import websockets
from ag_ui_validate.pytest_plugin import assert_valid_agui
from streampace.server import ServerConfig, build_server, parse_source
from streampace.server.sources.base import SourceOptions

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
WAIT_S = 60.0  # upper bound for any single wait; tests finish far sooner (a slow
# machine's long Redis run took over 20 s)


@dataclass
class RunningServer:
    url: str
    server: Any
    thread: threading.Thread

    @property
    def hub(self) -> Any:
        return self.server.hub

    def ws_url(self, session: str) -> str:
        return self.url.replace("http://", "ws://") + f"ws/sessions/{session}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "server thread did not stop"


def start_server(
    source: str = "demo",
    *,
    speed: float = 50.0,
    seed: int = 0,
    stall_timeout_s: float = 5.0,
    model: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    log_level: str = "warning",
    **config: Any,
) -> RunningServer:
    # Most tests name their sessions; the ones about admission say otherwise.
    config.setdefault("client_session_ids", True)
    cfg = ServerConfig(port=0, **config)
    src = parse_source(
        source,
        SourceOptions(speed=speed, seed=seed, model=model, stall_timeout_s=stall_timeout_s,
                      api_key_env=api_key_env),
    )
    urls: list[str] = []
    srv = build_server(cfg, src, log_level=log_level, on_ready=urls.append)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not urls:
        assert time.monotonic() < deadline, "server did not start"
        assert thread.is_alive(), "server thread died during startup"
        time.sleep(0.02)
    return RunningServer(urls[0], srv, thread)


STORES = ("memory", "redis")
# Modules whose tests run against both stores: `pytestmark = BOTH_STORES`.
BOTH_STORES = pytest.mark.usefixtures("store_kind")
TEST_LEASE_MS = 1_000  # short leases keep the lost-run tests quick


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return request.param


Serve = Callable[..., RunningServer]  # what `serve` yields: start_server's keywords


@pytest.fixture
def serve(request: pytest.FixtureRequest) -> Iterator[Serve]:
    started: list[RunningServer] = []
    callspec = getattr(request.node, "callspec", None)
    kind = callspec.params.get("store_kind", "memory") if callspec else "memory"
    store = request.getfixturevalue("redis_url") if kind == "redis" else "memory"

    def factory(source: str = "demo", **kwargs: Any) -> RunningServer:
        if store != "memory":
            kwargs.setdefault("store", store)
            kwargs.setdefault("lease_ms", TEST_LEASE_MS)
        s = start_server(source, **kwargs)
        started.append(s)
        return s

    yield factory
    for s in started:
        if s.thread.is_alive():
            s.stop()


# -- client helpers ----------------------------------------------------------


@dataclass
class Received:
    batches: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    attached: list[dict[str, Any]] = field(default_factory=list)  # protocol v2 hello
    times: list[float] = field(default_factory=list)  # monotonic receive time per batch

    @property
    def events(self) -> list[dict[str, Any]]:
        return [e for b in self.batches for e in b["events"]]

    @property
    def through(self) -> int:
        return self.batches[-1]["through"] if self.batches else 0

    def add(self, raw: str | bytes) -> dict[str, Any]:
        msg = json.loads(raw)
        if msg.get("type") == "attached":
            self.attached.append(msg)
        elif "type" in msg:
            self.errors.append(msg)
        else:
            assert set(msg) in ({"through", "events"}, {"through", "events", "more"}), msg
            assert msg["events"], "empty batch"
            if self.batches:
                assert msg["through"] >= self.batches[-1]["through"], "through went back"
            self.batches.append(msg)
            self.times.append(time.monotonic())
        return msg


def first_snapshot(received: Received) -> list[dict[str, Any]]:
    """The events of the first snapshot ``received`` got, its parts joined."""
    from streampace.session.snapshot import join_parts

    parts: list[list[dict[str, Any]]] = []
    for batch in received.batches:
        parts.append(batch["events"])
        if not batch.get("more"):
            return join_parts(parts)
    raise AssertionError("the snapshot's last part never came")


def snapshot_done(received: Received) -> bool:
    return any(not b.get("more") for b in received.batches)


async def recv_until(ws: Any, received: Received, pred: Callable[[Received], bool],
                     timeout: float = WAIT_S) -> Received:
    async with asyncio.timeout(timeout):
        while not pred(received):
            received.add(await ws.recv())
    return received


async def close_code(ws: Any, timeout_s: float = 10) -> int | None:
    """Read until the server closes the socket; the close code it sent (None: none)."""
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                await ws.recv()
    except websockets.ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None


def runs_ended(n: int) -> Callable[[Received], bool]:
    return lambda r: sum(1 for e in r.events if e["type"] in TERMINAL) >= n


def errors_at_least(n: int) -> Callable[[Received], bool]:
    return lambda r: len(r.errors) >= n


async def send(ws: Any, **msg: Any) -> None:
    await ws.send(json.dumps(msg))


async def watch_run(url: str, prompt: str = "hello", **run: Any) -> Received:
    """Connect, attach, start one run and collect it to its terminal event."""
    async with websockets.connect(url) as ws:
        await send(ws, type="resume", after=0)
        await send(ws, type="run", prompt=prompt, **run)
        return await recv_until(ws, Received(), runs_ended(1))


# -- conformance -------------------------------------------------------------

_OPEN = {
    "TEXT_MESSAGE_START": ("text", "messageId"),
    "REASONING_START": ("phase", "messageId"),
    "REASONING_MESSAGE_START": ("reasoning", "messageId"),
    "TOOL_CALL_START": ("tool", "toolCallId"),
    "STEP_STARTED": ("step", "stepName"),
}
_CLOSE = {
    "TEXT_MESSAGE_END": ("text", "messageId"),
    "REASONING_END": ("phase", "messageId"),
    "REASONING_MESSAGE_END": ("reasoning", "messageId"),
    "TOOL_CALL_END": ("tool", "toolCallId"),
    "STEP_FINISHED": ("step", "stepName"),
}
_INSIDE = {
    "TEXT_MESSAGE_CONTENT": ("text", "messageId"),
    "REASONING_MESSAGE_CONTENT": ("reasoning", "messageId"),
    "TOOL_CALL_ARGS": ("tool", "toolCallId"),
}


def check_nesting(events: list[dict[str, Any]], prompt: str | None = None) -> None:
    """Our explicit run rules, on top of the validator: RUN_STARTED first, one
    terminal last, START/CONTENT/END nested, the user echo inside the run."""
    assert events and events[0]["type"] == "RUN_STARTED", events[:1]
    assert events[-1]["type"] in TERMINAL, events[-1:]
    assert sum(e["type"] in TERMINAL for e in events) == 1
    assert sum(e["type"] == "RUN_STARTED" for e in events) == 1
    open_: set[tuple[str, str]] = set()
    for e in events:
        t = e["type"]
        if t in _OPEN:
            key = (_OPEN[t][0], e[_OPEN[t][1]])
            assert key not in open_, f"{t} reopened {key}"
            open_.add(key)
        elif t in _CLOSE:
            key = (_CLOSE[t][0], e[_CLOSE[t][1]])
            assert key in open_, f"{t} closes {key} which is not open"
            open_.remove(key)
        elif t in _INSIDE:
            key = (_INSIDE[t][0], e[_INSIDE[t][1]])
            assert key in open_, f"{t} outside its {key}"
    # Only a tool call cut off mid-arguments may stay open, and only before RUN_ERROR
    # (closing it would claim arguments that are not JSON; AG-UI AGUI204).
    debris = {k for k in open_ if k[0] == "tool"} if events[-1]["type"] == "RUN_ERROR" else set()
    assert not open_ - debris, f"left open at the end: {open_}"
    if prompt is not None:
        user = [e for e in events if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "user"]
        assert len(user) == 1, "exactly one user echo"
        mid = user[0]["messageId"]
        text = "".join(e["delta"] for e in events
                       if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == mid)
        assert text == prompt


def assert_conformant(events: list[dict[str, Any]], prompt: str | None = None) -> None:
    assert_valid_agui(events)
    check_nesting(events, prompt)


def split_runs(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    runs: list[list[dict[str, Any]]] = []
    for e in events:
        if e["type"] == "RUN_STARTED":
            runs.append([])
        if runs:
            runs[-1].append(e)
    return runs


# -- fake upstreams ----------------------------------------------------------


UpstreamScript = Callable[[BaseHTTPRequestHandler, Any], None]  # writes the response


class FakeUpstream:
    """A real HTTP server on loopback; ``script(handler, body)`` writes the response."""

    def __init__(self, script: UpstreamScript) -> None:
        self.requests: list[Any] = []
        self.release = threading.Event()  # lets stalling scripts end at teardown
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"null")
                upstream.requests.append({"path": self.path, "body": body,
                                          "headers": dict(self.headers)})
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    script(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


Upstream = Callable[[UpstreamScript], FakeUpstream]  # what `upstream` yields


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    made: list[FakeUpstream] = []

    def factory(script: UpstreamScript) -> FakeUpstream:
        u = FakeUpstream(script)
        made.append(u)
        return u

    yield factory
    for u in made:
        u.close()


def sse_headers(handler: BaseHTTPRequestHandler, status: int = 200,
                content_type: str = "text/event-stream") -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True


def write_raw(handler: BaseHTTPRequestHandler, data: bytes, pause_s: float = 0.0) -> None:
    handler.wfile.write(data)
    handler.wfile.flush()
    if pause_s:
        time.sleep(pause_s)


def sse_reply(*chunks: bytes | Callable[[Any], bytes],
              content_type: str = "text/event-stream") -> UpstreamScript:
    """A script that sends the SSE headers, then writes each chunk in turn (a
    callable chunk is made from the request body)."""

    def script(handler: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(handler, content_type=content_type)
        for chunk in chunks:
            write_raw(handler, chunk(body) if callable(chunk) else chunk)

    return script


def run_started_sse(body: Any) -> bytes:
    """RUN_STARTED for the run an AG-UI request body asks for, as one SSE event."""
    return sse_event({"type": "RUN_STARTED", "threadId": body["threadId"],
                      "runId": body["runId"]})


def sse_event(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


def write_jsonl(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                    encoding="utf-8")
    return path


# -- a real redis-server -----------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from .redis_harness import RedisProcess, redis_available

    if not redis_available():
        pytest.fail("redis-server is missing: scripts/setup installs it (Debian redis-server)")
    proc = RedisProcess(tmp_path_factory.mktemp("redis")).start()
    yield proc
    proc.stop()


@pytest.fixture
def redis_url(redis_server: Any) -> str:
    """The shared test Redis, emptied for this test."""
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()
    redis_server.command("FLUSHALL")
    return redis_server.url
