"""A viewer's typed feed states (session/viewer_feed.py): the table, and each path to
each state on a real Session with an in-memory socket (no network)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from starlette.websockets import WebSocketState
from streampace.lifecycle import LifecycleError, Machine, unreachable
from streampace.server import ServerConfig
from streampace.server.session import Session
from streampace.server.viewer import Viewer
from streampace.session.delivery import DeliveryConfig
from streampace.session.protocol import CloseCode
from streampace.session.viewer_feed import FEED_TABLE, FeedEvent, FeedState

V, E = FeedState, FeedEvent
STATES = list(FeedState)


@pytest.mark.parametrize(("state", "event"), list(itertools.product(STATES, FeedEvent)))
def test_every_pair_is_listed_or_raises(state: FeedState, event: FeedEvent) -> None:
    machine = Machine("t", FEED_TABLE, state)
    if (state, event) in FEED_TABLE:
        assert machine.step(event) in STATES
    else:
        with pytest.raises(LifecycleError, match=f"{event.name} in state {state.name}"):
            machine.step(event)
        assert machine.state is state


def test_closing_sends_nothing_and_detached_only_attaches_closes_or_is_lost() -> None:
    def out_of(state: FeedState) -> dict[FeedEvent, FeedState]:
        return {e: rule.target for (s, e), rule in FEED_TABLE.items() if s is state}

    assert set(out_of(V.CLOSING).values()) == {V.CLOSING, V.CLOSED}
    assert set(out_of(V.CLOSED).values()) == {V.CLOSING, V.CLOSED}
    moves = {e for e, target in out_of(V.DETACHED).items() if target is not V.DETACHED}
    assert moves == {E.ATTACH_LIVE, E.ATTACH_LOG, E.ATTACH_SNAPSHOT, E.CLOSE, E.LOST, E.STOP}
    assert unreachable(FEED_TABLE, V.DETACHED, FeedState) == []
    assert all(rule.why for rule in FEED_TABLE.values())


class MemorySocket:
    """Stands in for Starlette's WebSocket: records text; ``gate`` stalls sends."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.application_state = WebSocketState.CONNECTED
        self.closed_with: int | None = None

    async def send_text(self, text: str) -> None:
        await self.gate.wait()
        self.sent.append(json.loads(text))

    async def close(self, code: int, reason: str = "") -> None:
        self.closed_with = code
        self.application_state = WebSocketState.DISCONNECTED


def step_event(i: int, size: int = 0) -> dict[str, Any]:
    return {"type": "STEP_STARTED", "stepName": f"s{i}" + "x" * size}


def run(body: Any) -> None:
    asyncio.run(asyncio.wait_for(body(), 10))


async def until(condition: Any) -> None:
    """Let the viewer's sender task run until ``condition()`` (bounded)."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


def state_of(viewer: Viewer) -> FeedState:
    """Read afresh: mypy keeps `viewer.state` narrowed by an earlier assert."""
    return viewer.state


def make(limit: int = 1 << 20) -> tuple[Session, Viewer, MemorySocket]:
    delivery = DeliveryConfig(max_wait_ms=0, ramp_wait_ms=0)  # every batch on the next tick
    config = ServerConfig(delivery=delivery, outbound_limit_bytes=limit)
    session = Session("s", source=None, config=config)  # type: ignore[arg-type]
    ws = MemorySocket()
    return session, Viewer(ws, config.delivery, limit), ws  # type: ignore[arg-type]


def test_attach_from_now_joins_the_feed() -> None:
    async def body() -> None:
        session, viewer, ws = make()
        assert viewer.state == V.DETACHED
        session.attach(viewer, None)
        assert state_of(viewer) == V.SHARED and viewer in session.feed.members
        session.append([step_event(1)])
        await until(lambda: len(ws.sent) == 2)
        assert [m.get("through") for m in ws.sent] == [None, 1]  # attached, then the batch
        await viewer.stop()
        assert state_of(viewer) == V.CLOSED and viewer not in session.feed.members

    run(body)


def test_resume_catches_up_from_the_log_then_goes_live() -> None:
    async def body() -> None:
        session, viewer, ws = make()
        session.append([step_event(i) for i in range(1, 4)])
        session.attach(viewer, 0)
        assert viewer.state == V.REPLAYING
        # The sender pulls seqs 1..3 from the log, then finds it exhausted and
        # joins the session's shared feed, which delivers what follows.
        await until(lambda: state_of(viewer) == V.SHARED)
        assert viewer.cursor == 3 and viewer.feed is session.feed
        session.append([step_event(4)])
        await until(lambda: viewer.cursor == 4)
        await until(lambda: sum(len(m.get("events", [])) for m in ws.sent) == 4)
        events = [e["stepName"] for m in ws.sent for e in m.get("events", [])]
        assert events == ["s1", "s2", "s3", "s4"]
        await viewer.stop()

    run(body)


def test_a_snapshot_resume_catches_up_then_joins_the_feed() -> None:
    """The snapshot goes out part by part from the sender (issue 18 item 7): until it
    has, the viewer takes no live events; then it is at the head and joins."""
    async def body() -> None:
        session, viewer, ws = make()
        session.append([step_event(1)])
        assert session.attach(viewer, 5, epoch="another") == "snapshot"
        assert viewer.state == V.SNAPSHOT and viewer.feed is None
        session.append([step_event(2)])  # waits in the log until the snapshot is out
        assert state_of(viewer) == V.SNAPSHOT and viewer.cursor == 1
        await until(lambda: state_of(viewer) == V.SHARED)
        assert [m.get("type") for m in ws.sent][:1] == ["attached"]
        assert ws.sent[1]["through"] == 1 and "more" not in ws.sent[1]
        assert [e["stepName"] for e in ws.sent[2]["events"]] == ["s2"]  # then the log
        await viewer.stop()

    run(body)


def test_a_full_queue_leaves_the_feed_and_a_full_queue_while_live_is_behind() -> None:
    async def body() -> None:
        session, viewer, ws = make(limit=300)
        ws.gate.clear()  # the peer stops reading
        session.attach(viewer, None)
        assert viewer.state == V.SHARED
        session.append([step_event(1, size=400)])
        await until(lambda: viewer.state != V.SHARED)  # the feed's batch goes over the limit
        assert state_of(viewer) == V.REPLAYING and viewer.feed is None
        session.append([step_event(2)])
        assert state_of(viewer) == V.REPLAYING  # not taken live: the sender pulls it later
        ws.gate.set()
        await until(lambda: viewer.state == V.SHARED)  # caught up: back on the shared feed
        assert viewer.cursor == 2
        await until(lambda: len(ws.sent) == 3)
        events = [e["stepName"][:2] for m in ws.sent for e in m.get("events", [])]
        assert events == ["s1", "s2"]

        other_session, live, other_ws = make(limit=300)
        other_session.append([step_event(1)])
        other_session.attach(live, 5, epoch="another")  # a snapshot, then the feed
        await until(lambda: live.state == V.SHARED)
        other_ws.gate.clear()
        other_session.append([step_event(2, size=400)])  # queued, the socket not reading
        await until(lambda: live.queued_bytes > 300)
        other_session.append([step_event(3)])  # queue over the limit: behind
        assert live.state == V.REPLAYING
        other_ws.gate.set()
        await viewer.stop()
        await live.stop()

    run(body)


def test_close_from_detached_and_from_live_and_it_stays_closing() -> None:
    async def body() -> None:
        session, viewer, ws = make()
        viewer.close(CloseCode.SLOW_CONSUMER, "test")
        assert viewer.state == V.CLOSING and viewer.closing
        session.attach(viewer, None)  # a late resume on a closing socket
        assert viewer.state == V.CLOSING and viewer not in session.feed.members
        viewer.send_error("x", "y")  # dropped: nothing more goes out
        await viewer.stop()
        assert ws.closed_with == CloseCode.SLOW_CONSUMER
        assert viewer.close_code is CloseCode.SLOW_CONSUMER
        assert [m.get("type") for m in ws.sent] == []

        session2, live, ws2 = make()
        session2.attach(live, None)
        live.close(CloseCode.SLOW_CONSUMER, "test")
        assert live.state == V.CLOSING and live not in session2.feed.members
        session2.append([step_event(1)])  # not delivered, not an error
        await live.stop()
        assert state_of(live) == V.CLOSED and live.closing

    run(body)


def test_an_illegal_move_on_a_viewer_raises() -> None:
    async def body() -> None:
        _session, viewer, _ws = make()
        with pytest.raises(LifecycleError, match="JOIN in state DETACHED"):
            viewer.delivery._move(E.JOIN)
        assert viewer.state == V.DETACHED
        await viewer.stop()

    run(body)
