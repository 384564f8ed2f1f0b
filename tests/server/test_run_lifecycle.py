"""The run lifecycle: every path ends in exactly one terminal event and back to idle.

Regression (issue 12 item 3): `run` then `cancel` back to back cancelled the run task
before it first ran, so its `finally` never cleared it: no RUN_STARTED / RUN_ERROR, every
later run refused with run_active, and the session never idle (never evicted).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streampace.server import ServerConfig
from streampace.server.session import Session
from streampace.server.sources import RunRequest
from streampace.session.framing import UpstreamError
from streampace.session.run_lifecycle import RunState

from .conftest import (
    WAIT_S,
    Received,
    Serve,
    assert_conformant,
    recv_until,
    runs_ended,
    send,
    split_runs,
)


class _Sink:
    """Stands in for a Viewer: records what the session fans out."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.seqs: list[int] = []

    def on_append(self, events: list[dict[str, Any]], first: int, through: int) -> None:
        assert first == (self.seqs[-1] + 1 if self.seqs else first)
        self.events.extend(events)
        self.seqs.extend(range(first, through + 1))


class _StepSource:
    """A tiny trusted source: a few groups, a yield between each, optionally a failure."""

    name = "steps"
    supports_scenarios = False
    trusted = False

    def __init__(self) -> None:
        self.fail_at: int | None = None

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        mid = f"{request.run_id}-a"
        yield [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}]
        for i in range(3):
            await asyncio.sleep(0)
            if self.fail_at == i:
                raise UpstreamError("upstream_http_error", "boom")
            yield [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": f"w{i} "}]
        yield [{"type": "TEXT_MESSAGE_END", "messageId": mid},
               {"type": "RUN_FINISHED", "threadId": request.thread_id,
                "runId": request.run_id}]


async def _until_idle(session: Session, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while session.running:
            await asyncio.sleep(0.001)


def test_cancel_before_the_run_task_first_runs_ends_the_run_and_frees_the_session() -> None:
    async def scenario() -> tuple[Session, _Sink]:
        session = Session("s", _StepSource(), ServerConfig())
        sink = _Sink()
        session.viewers.add(sink)
        session.start_run("p", None)
        session.stop_run("cancelled", "run cancelled by a viewer")  # same loop step
        await _until_idle(session)
        session.start_run("again", None)  # must not be refused as run_active
        await _until_idle(session)
        return session, sink

    session, sink = asyncio.run(scenario())
    runs = split_runs(sink.events)
    assert len(runs) == 2
    assert_conformant(runs[0], prompt="p")
    assert runs[0][-1]["type"] == "RUN_ERROR" and runs[0][-1]["code"] == "cancelled"
    assert_conformant(runs[1], prompt="again")
    assert runs[1][-1]["type"] == "RUN_FINISHED"
    session.viewers.clear()
    assert session.idle and session.run_state is RunState.IDLE


def test_run_then_cancel_back_to_back_on_one_socket(serve: Serve) -> None:
    server = serve("demo", speed=50.0)

    async def scenario() -> Received:
        async with websockets.connect(server.ws_url("rc")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="x", scenario="fast")
            await send(ws, type="cancel")
            got = Received()
            await recv_until(ws, got, runs_ended(1), timeout=5)
            await send(ws, type="run", prompt="y", scenario="very_fast")
            await recv_until(ws, got, runs_ended(2), timeout=20)
            return got

    got = asyncio.run(scenario())
    assert not [e for e in got.errors if e["code"] == "run_active"], got.errors
    first, second = split_runs(got.events)
    assert_conformant(first, prompt="x")
    assert_conformant(second, prompt="y")
    # The socket closed as the scenario returned; its handler detaches the viewer
    # just after, on the server's loop.
    deadline = time.monotonic() + WAIT_S
    while not server.hub.sessions["rc"].idle:
        assert time.monotonic() < deadline, "the session never went idle"
        time.sleep(0.01)


_ACTIONS = st.lists(
    st.one_of(
        st.just(("run",)),
        st.just(("cancel",)),
        st.just(("attach",)),
        st.just(("detach",)),
        st.tuples(st.just("fail"), st.integers(0, 3)),
        st.tuples(st.just("yield"), st.integers(1, 6)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=_ACTIONS)
def test_any_interleaving_of_run_cancel_resume_disconnect_ends_every_run_once(
        actions: list[tuple[Any, ...]]) -> None:
    async def scenario() -> tuple[Session, _Sink, int]:
        source = _StepSource()
        session = Session("p", source, ServerConfig())
        witness = _Sink()  # attached throughout: sees the whole log
        session.viewers.add(witness)
        extra: list[_Sink] = []
        started = 0
        for action in actions:
            kind = action[0]
            if kind == "run":
                if session.running:
                    continue  # the socket layer answers run_active
                session.start_run(f"p{started}", None)
                started += 1
            elif kind == "cancel":
                session.stop_run("cancelled", "run cancelled by a viewer")
            elif kind == "attach":
                sink = _Sink()
                extra.append(sink)
                session.viewers.add(sink)
            elif kind == "detach" and extra:
                session.detach(extra.pop())
            elif kind == "fail":
                source.fail_at = action[1] if action[1] < 3 else None
            elif kind == "yield":
                for _ in range(action[1]):
                    await asyncio.sleep(0)
        await _until_idle(session)
        for sink in extra:
            session.detach(sink)
        session.detach(witness)
        return session, witness, started

    session, witness, started = asyncio.run(scenario())
    runs = split_runs(witness.events)
    assert len(runs) == started
    for i, run in enumerate(runs):
        assert_conformant(run, prompt=f"p{i}")  # one RUN_STARTED, exactly one terminal
    assert witness.seqs == list(range(1, len(witness.events) + 1))
    assert session.run_state is RunState.IDLE and not session.running
    assert session.idle
