"""The ASGI mount: docs/examples/byo_agent.py imported and served as written, plus the
agent adapter's contract (what an agent may yield, how a run ends)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import uvicorn
import websockets
from ag_ui.core import EventType, TextMessageContentEvent, TextMessageStartEvent
from ag_ui.encoder import EventEncoder
from streampace.server import StreampaceApp
from streampace.server.agent_source import AgentSource
from streampace.server.mount import RunRequest
from websockets.typing import Origin

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "byo_agent.py"
WAIT_S = 20.0


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("byo_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Served:
    def __init__(self, app: Any, **options: Any) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.sock = sock
        self.port = sock.getsockname()[1]
        self.origin = Origin(f"http://127.0.0.1:{self.port}")
        options.setdefault("ws_per_message_deflate", False)
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning",
                                                    **options))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)

    def ws(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT_S)
        self.sock.close()
        assert not self.thread.is_alive(), "server did not stop"


@pytest.fixture
def example(runtime_laid_out: None) -> Iterator[tuple[ModuleType, Served]]:
    module = load_example()
    served = Served(module.app, **module.streampace.uvicorn_options())  # as its __main__ does
    try:
        yield module, served
    finally:
        if served.thread.is_alive():
            served.stop()


async def run_and_collect(url: str, origin: str, prompt: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    async with websockets.connect(url, origin=Origin(origin)) as ws:
        await ws.send(json.dumps({"type": "run", "prompt": prompt}))
        while not events or events[-1]["type"] not in ("RUN_FINISHED", "RUN_ERROR"):
            batch = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
            if batch.get("type") == "attached":  # protocol v2: the session's epoch first
                continue
            assert "events" in batch, batch
            events.extend(batch["events"])
    return events


def assistant_text(events: list[dict[str, Any]]) -> str:
    roles = {e["messageId"]: e["role"] for e in events if e["type"] == "TEXT_MESSAGE_START"}
    return "".join(e["delta"] for e in events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and roles[e["messageId"]] == "assistant")


def test_example_streams_its_own_agent_through_the_mounted_socket(example: Any) -> None:
    _, served = example
    prompt = "streams from my own agent 🙂"
    events = asyncio.run(run_and_collect(served.ws("/streampace/ws/sessions/new"),
                                         served.origin, prompt))
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert assistant_text(events) == "streams from my own agent 🙂 "
    # The user's message is echoed first, as for every source.
    assert events[2] == {"type": "TEXT_MESSAGE_CONTENT",
                         "messageId": f"{events[0]['runId']}-user", "delta": prompt}


def test_example_serves_its_page_and_the_tag_with_the_runtime(example: Any) -> None:
    _, served = example
    page = httpx.get(served.origin + "/")
    assert page.status_code == 200 and 'src="/streampace/js_shim/streampace.js"' in page.text
    shim = httpx.get(served.origin + "/streampace/js_shim/streampace.js")
    assert shim.status_code == 200
    assert shim.text == (ROOT / "js_shim" / "streampace.js").read_text(encoding="utf-8")
    archive = httpx.get(served.origin + "/streampace/vendor/streampace.zip")
    assert archive.status_code == 200 and archive.content[:2] == b"PK"
    assert httpx.get(served.origin + "/streampace/.git/config").status_code == 404


@pytest.mark.browser
def test_example_page_boots_the_mounted_tag_and_streams_the_agent(example: Any,
                                                                  driver: Any) -> None:
    from tests.browser.browser_harness import BOOT_TIMEOUT_S, requested_urls, wait_for

    _, served = example
    requested_urls(driver)
    driver.get(served.origin + "/")
    wait_for(driver, "return !!(window.streampace && window.streampace.instances.length"
                     " && window.streampace.instances[0].controller)", BOOT_TIMEOUT_S)
    driver.execute_script(
        "window.__errors = []; window.__ends = [];"
        "document.addEventListener('streampace:error', (e) => __errors.push(e.detail));"
        "document.addEventListener('streampace:run-end', (e) => __ends.push(e.detail));")
    shown_js = ("return [...document.querySelectorAll('#answer .sp-message .sp-text')]"
                ".map(n => n.textContent)")
    driver.find_element("css selector", "form button").click()
    wait_for(driver, "return window.__ends.length === 1", 60)
    # The user's prompt as text; the agent's answer as Markdown (a paragraph: its
    # trailing space is not shown).
    assert driver.execute_script(shown_js) == ["Hello from my own agent"] * 2
    # A second question: the agent uses messageId "a1" again (issue 23). Its answer
    # is a new message, the first stays, nothing is repeated, nothing fails.
    box = driver.find_element("css selector", "form input")
    box.clear()
    box.send_keys("and a second question")
    driver.find_element("css selector", "form button").click()
    wait_for(driver, "return window.__ends.length === 2", 60)
    assert driver.execute_script(shown_js) == [
        "Hello from my own agent", "Hello from my own agent",
        "and a second question", "and a second question"]
    assert driver.execute_script("return window.__ends.map((d) => d.status)") == [
        "finished", "finished"]
    assert driver.execute_script("return window.__errors") == []
    stats = driver.execute_script("return window.streampace.stats()")
    assert stats["errors"] == [] and stats["hostErrors"] == 0
    # Each visitor gets a conversation of their own: the server minted its id.
    url = stats["connection"]["url"]
    session = url.rsplit("/", 1)[1]
    assert url.startswith(served.origin.replace("http://", "ws://") + "/streampace/ws/sessions/")
    assert len(session) == 22 and session != "new"
    ws_origin = served.origin.replace("http://", "ws://")
    urls = requested_urls(driver)
    assert any(u.endswith("/streampace/vendor/pyodide/pyodide.asm.wasm") for u in urls)
    assert all(u.startswith((served.origin + "/", ws_origin + "/streampace/", "data:"))
               for u in urls), urls


def test_example_refuses_a_foreign_origin(example: Any) -> None:
    _, served = example

    async def attempt() -> int:
        async with websockets.connect(served.ws("/streampace/ws/sessions/x"),
                                      origin=Origin("http://evil.example")) as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), WAIT_S)
            assert closed.value.rcvd is not None
            return closed.value.rcvd.code

    assert asyncio.run(attempt()) == 4403


def test_runs_in_progress_end_at_the_host_lifespan_shutdown() -> None:
    """Entered inside the host's own lifespan: the run ends before that lifespan exits
    (not later, when the event loop is torn down and cancels whatever is left)."""
    import contextlib

    from starlette.applications import Starlette
    from starlette.routing import Mount

    started = threading.Event()
    order: list[str] = []

    async def slow(run: RunRequest) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
            started.set()
            await asyncio.sleep(WAIT_S * 10)
        finally:
            order.append("agent closed")

    sp = StreampaceApp(slow)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        order.append("host start")
        async with sp.lifespan(app):
            yield
        order.append("host stop")

    served = Served(Starlette(routes=[Mount("/sp", sp)], lifespan=lifespan))
    try:
        async def start_run() -> None:
            async with websockets.connect(served.ws("/sp/ws/sessions/new"),
                                          origin=served.origin) as ws:
                await ws.send(json.dumps({"type": "run", "prompt": "go"}))
                await asyncio.wait_for(ws.recv(), WAIT_S)

        asyncio.run(start_run())
        assert started.wait(WAIT_S)
        assert order == ["host start"]
    finally:
        served.stop()
    assert order == ["host start", "agent closed", "host stop"]
    assert sp.hub.shutting_down


async def run_on(served: Served, prompt: str, then: dict[str, Any] | None = None,
                 ) -> list[dict[str, Any]]:
    """Start a run on a served StreampaceApp; optionally send ``then`` after the first batch."""
    events: list[dict[str, Any]] = []
    async with websockets.connect(served.ws("/ws/sessions/new"), origin=served.origin) as ws:
        await ws.send(json.dumps({"type": "run", "prompt": prompt}))
        while not events or events[-1]["type"] not in ("RUN_FINISHED", "RUN_ERROR"):
            batch = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
            events.extend(batch.get("events", []))
            if then is not None:
                await ws.send(json.dumps(then))
                then = None
    return events


def test_served_directly_a_failing_or_invalid_agent_ends_the_run_with_run_error() -> None:
    async def crashing(run: RunRequest) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
        raise RuntimeError("secret detail")

    async def invalid(run: RunRequest) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"}

    for agent, code in ((crashing, "internal_error"), (invalid, "upstream_protocol_error")):
        served = Served(StreampaceApp(agent))  # the top-level app: answers lifespan itself
        try:
            tail = asyncio.run(run_on(served, "hi"))[-1]
        finally:
            served.stop()
        assert tail["type"] == "RUN_ERROR" and tail["code"] == code, tail
        assert "secret" not in json.dumps(tail)


def test_a_cancelled_run_closes_the_agent_generator() -> None:
    closed = threading.Event()

    async def agent(run: RunRequest) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
            await asyncio.sleep(WAIT_S * 10)
        finally:
            closed.set()

    served = Served(StreampaceApp(agent))
    try:
        tail = asyncio.run(run_on(served, "hi", then={"type": "cancel"}))[-1]
    finally:
        served.stop()
    assert tail["type"] == "RUN_ERROR" and tail["code"] == "cancelled", tail
    assert closed.is_set()


# ---------------------------------------------------------------- the agent adapter
def request(prompt: str = "hi") -> RunRequest:
    return RunRequest(thread_id="t1", run_id="r1", prompt=prompt)


async def drain(source: AgentSource) -> list[dict[str, Any]]:
    return [e async for group in source.stream(request()) for e in group]


def test_agent_may_yield_ag_ui_objects_and_encoded_sse_text() -> None:
    encoder = EventEncoder()

    async def agent(run: RunRequest) -> AsyncIterator[Any]:
        yield TextMessageStartEvent(type=EventType.TEXT_MESSAGE_START, message_id="m",
                                    role="assistant")
        yield encoder.encode(TextMessageContentEvent(type=EventType.TEXT_MESSAGE_CONTENT,
                                                     message_id="m", delta="sse "))
        yield '{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "json"}'
        yield {"type": "TEXT_MESSAGE_END", "messageId": "m"}

    events = asyncio.run(drain(AgentSource(agent)))
    assert events == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "sse "},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "json"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},  # added: none was yielded
    ]


def test_agent_own_run_end_is_kept_and_not_doubled() -> None:
    async def agent(run: RunRequest) -> AsyncIterator[dict[str, Any]]:
        yield {"type": "RUN_STARTED", "threadId": "t9", "runId": "r9"}
        yield {"type": "RUN_ERROR", "message": "no answer", "code": "refused"}

    events = asyncio.run(drain(AgentSource(agent)))
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]


def test_agent_yielding_something_else_is_a_protocol_error() -> None:
    from streampace.session.framing import UpstreamError

    async def agent(run: RunRequest) -> AsyncIterator[Any]:
        yield 42

    with pytest.raises(UpstreamError) as err:
        asyncio.run(drain(AgentSource(agent)))
    assert err.value.code == "upstream_protocol_error" and "int" in err.value.message


def test_run_agent_input_is_a_valid_ag_ui_run_input() -> None:
    """What docs/mount.md hands a framework's AG-UI adapter (e.g. Pydantic AI's)."""
    from ag_ui.core import RunAgentInput
    from streampace.server.mount import run_agent_input

    run = RunRequest(thread_id="t1", run_id="r2", prompt="and now?", run_index=1,
                     history=[{"id": "u0", "role": "user", "content": "hi"},
                              {"id": "a0", "role": "assistant", "content": "hello"}],
                     state={"step": 1})
    parsed = RunAgentInput.model_validate(run_agent_input(run))
    assert (parsed.thread_id, parsed.run_id, parsed.state) == ("t1", "r2", {"step": 1})
    assert [m.content for m in parsed.messages] == ["hi", "hello", "and now?"]
