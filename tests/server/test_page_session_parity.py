"""The page's simulated session and the server drive the same session engine
(streampace.session.engine), so the same scenario and seed give the same events (ids
included), and the same bad client message gets the same reply, byte for byte.

Both take their run ids from an injected generator (the page seeds it; the server
draws from the OS unless given one), so nothing here patches either side."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets
from streampace.client.page_socket import SimulatedSession
from streampace.server import ServerConfig
from streampace.server.session import Session
from streampace.server.sources.demo import DemoSource
from streampace.session import protocol
from streampace.session.client_messages import CANCEL_CODE, CANCEL_MESSAGE
from streampace.session.source import RunRequest, new_run_id
from streampace.sim.timed_model import SimulatedModel
from streampace.testing import ManualHost

from .conftest import Serve, assert_conformant, split_runs

SPEED = 100.0  # divides due times only; the events do not depend on it
WHOLE = 10**9
Run = tuple[str, str]  # (prompt, scenario)


class _StallingDemo(DemoSource):
    """The demo source, stopping (until cancelled) before group ``stall_at`` of a run."""

    def __init__(self, seed: int, stall_at: int | None) -> None:
        super().__init__(SPEED, seed)
        self.stall_at = stall_at
        self.stalled = asyncio.Event()

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        n = 0
        async for group in super().stream(request):
            if n == self.stall_at:
                self.stalled.set()
                await asyncio.Event().wait()
            yield group
            n += 1


def _server_log(seed: int, runs: list[Run],
                cancel_at: int | None = None) -> list[dict[str, Any]]:
    """The session log after ``runs`` on the server's Session (in memory, no socket);
    with ``cancel_at``, each run is cancelled once its source gave that many groups."""

    async def main() -> list[dict[str, Any]]:
        source = _StallingDemo(seed, cancel_at)
        # Run ids seeded as the page seeds them (SimulatedSession: the model's seed).
        session = Session("s1", source, ServerConfig(), run_ids=random.Random(seed))
        for prompt, scenario in runs:
            source.stalled.clear()
            session.start_run(prompt, scenario)
            task = session.run_task
            assert task is not None
            if cancel_at is not None:
                await asyncio.wait_for(source.stalled.wait(), 20)
                session.perform(session.engine.cancel())  # a viewer's `cancel`
            await asyncio.wait_for(task, 20)
        return session.log.read(0, WHOLE, WHOLE)

    return asyncio.run(main())


def _page_log(seed: int, runs: list[Run], cancel_at: int | None = None) -> list[dict[str, Any]]:
    """The page session's log after the same runs, on a virtual clock."""
    host = ManualHost()
    sim = SimulatedSession(host, "s1", speed=SPEED, seed=seed)
    replies: list[str] = []
    sim.attach(lambda kind, data: replies.append(data)
               if kind == "message" and data.startswith('{"type":"error"') else None)
    host.tick(0)  # the socket opens
    ids = random.Random(seed)
    for index, (prompt, scenario) in enumerate(runs):
        run_id = new_run_id(ids)
        sim.send(json.dumps({"type": "run", "prompt": prompt, "scenario": scenario}))
        if cancel_at is not None:
            request = RunRequest("s1", run_id, prompt, scenario, run_index=index)
            due = [t for t, _ in SimulatedModel(SPEED, seed).timed_groups(request)]
            # Between the last group the server's source gave before stalling and the next.
            assert due[cancel_at] - due[cancel_at - 1] > 0.1, "pick another cancel_at"
            host.tick((due[cancel_at - 1] + due[cancel_at]) / 2)
            sim.send(json.dumps({"type": "cancel"}))
        for _ in range(100_000):
            if not sim.run_active:
                break
            host.tick(5)
    assert replies == []
    return sim.session.log.read(0, WHOLE, WHOLE)


@pytest.mark.parametrize("scenario", ["demo", "agentic", "cjk_emoji"])
def test_same_scenario_and_seed_give_the_same_events(scenario: str) -> None:
    runs = [("Tell me about tea", scenario), ("And coffee?", scenario)]
    server = _server_log(11, runs)
    page = _page_log(11, runs)
    assert page == server
    first, second = split_runs(page)
    assert_conformant(first, prompt="Tell me about tea")
    assert_conformant(second, prompt="And coffee?")
    # The framer echoes the prompt; the model no longer opens with "You asked…".
    assert "You asked" not in json.dumps(page)


def test_a_cancel_closes_the_same_items_with_the_same_terminal_event() -> None:
    runs = [("Search for tea", "agentic")]
    server = _server_log(5, runs, cancel_at=6)
    page = _page_log(5, runs, cancel_at=6)
    assert page == server
    assert page[-1] == {"type": "RUN_ERROR", "message": CANCEL_MESSAGE, "code": CANCEL_CODE}
    assert_conformant(page, prompt="Search for tea")


BAD = [
    "not json",
    "[1, 2]",
    '{"prompt": "no type"}',
    '{"type": "dance"}',
    '{"type": "run"}',
    '{"type": "run", "prompt": 5}',
    '{"type": "run", "prompt": "x", "scenario": 3}',
    '{"type": "run", "prompt": "x", "scenario": "nope"}',
    '{"type": "run", "prompt": "\\ud800"}',
    '{"type": "resume", "after": -1}',
    '{"type": "resume", "after": 0}',  # the socket already resumed: already_attached
    '{"type": "cancel"}',
]


def test_bad_client_messages_get_the_same_replies(serve: Serve) -> None:
    server = serve("demo", speed=SPEED)

    async def from_server() -> list[str]:
        out: list[str] = []
        for raw in BAD:  # a socket each: the abuse meter closes one after ten refusals
            async with websockets.connect(server.ws_url("bad")) as ws:
                await ws.send(json.dumps({"type": "resume", "after": 0}))
                assert json.loads(await ws.recv())["type"] == "attached"
                await ws.send(raw)
                out.append(await asyncio.wait_for(ws.recv(decode=True), 10))
        return out

    host = ManualHost()
    sim = SimulatedSession(host, "bad", speed=SPEED, seed=1)
    page: list[str] = []
    sim.attach(lambda kind, data: page.append(data)
               if kind == "message" and data.startswith('{"type":"error"') else None)
    host.tick(0)
    sim.send(protocol.HELLO)  # attach first, as the server side does above
    for raw in BAD:
        sim.send(raw)
    got = asyncio.run(from_server())
    assert page == got
    assert [json.loads(m)["code"] for m in got] == [
        "bad_json", "bad_message", "bad_message", "unknown_type", "bad_field", "bad_field",
        "bad_field", "bad_scenario", "bad_field", "bad_field", "already_attached", "no_run"]
