"""Issue 18 items 1 and 2: a costly or deep STATE_DELTA from an upstream is refused
before it is logged, the run ends with a clear code, and every viewer — live or
replaying the log, in the memory store and in Redis — sees the same events."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import websockets

from .conftest import (
    BOTH_STORES,
    FakeUpstream,
    Received,
    Serve,
    Upstream,
    UpstreamScript,
    assert_conformant,
    recv_until,
    runs_ended,
    send,
    split_runs,
    sse_event,
    sse_headers,
    write_raw,
)

pytestmark = BOTH_STORES

STATE = {"a": "x" * 40}
# The issue's ~1 KB event: 22 copies of the whole state, each doubling it.
DOUBLING = [{"op": "copy", "from": "", "path": f"/k{i}"} for i in range(22)]


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _hostile_run(body: dict[str, Any], delta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = {"threadId": body["threadId"], "runId": body["runId"]}
    return [
        {"type": "RUN_STARTED", **ids},
        {"type": "TEXT_MESSAGE_START", "messageId": f"{body['runId']}-a", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"{body['runId']}-a", "delta": "before "},
        {"type": "STATE_SNAPSHOT", "snapshot": STATE},
        {"type": "STATE_DELTA", "delta": delta},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"{body['runId']}-a", "delta": "after"},
        {"type": "TEXT_MESSAGE_END", "messageId": f"{body['runId']}-a"},
        {"type": "RUN_FINISHED", **ids},
    ]


def _good_run(body: dict[str, Any]) -> list[dict[str, Any]]:
    ids = {"threadId": body["threadId"], "runId": body["runId"]}
    return [
        {"type": "RUN_STARTED", **ids},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 1}]},
        {"type": "RUN_FINISHED", **ids},
    ]


def _script(delta: list[dict[str, Any]]) -> UpstreamScript:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        events = _hostile_run(body, delta) if body["messages"][-1]["content"] == "one" \
            else _good_run(body)
        for e in events:
            write_raw(h, sse_event(e))
    return script


async def _session(url: str) -> tuple[Received, Received, Received]:
    """A live viewer runs the hostile run and then a good one; a second viewer
    replays the whole log; a third, from another epoch, gets a snapshot."""
    async with websockets.connect(url) as ws:
        await send(ws, type="resume", after=0)
        await send(ws, type="run", prompt="one")
        live = await recv_until(ws, Received(), runs_ended(1))
        # With Redis the first run's lease is released just after its terminal
        # event is delivered: a run sent at once may be refused as run_active.
        for _ in range(50):
            await send(ws, type="run", prompt="two")
            await recv_until(ws, live, lambda r: runs_ended(2)(r) or bool(r.errors))
            if not live.errors:
                break
            assert [e["code"] for e in live.errors] == ["run_active"], live.errors
            live.errors.clear()
            await asyncio.sleep(0.1)
    async with websockets.connect(url) as ws:
        await send(ws, type="resume", after=0)
        replay = await recv_until(ws, Received(), runs_ended(2))
    async with websockets.connect(url) as ws:
        await send(ws, type="resume", after=1, epoch="0" * 16)
        snap = await recv_until(ws, Received(), lambda r: bool(r.batches))
    return live, replay, snap


def _check(up: FakeUpstream, live: Received, replay: Received, snap: Received, code: str,
           message: str) -> None:
    hostile, good = split_runs(live.events)
    assert_conformant(hostile, prompt="one")
    assert_conformant(good, prompt="two")
    assert hostile[-1]["type"] == "RUN_ERROR"
    assert hostile[-1]["code"] == code, hostile[-1]
    assert message in hostile[-1]["message"]
    # Refused before it was logged: no viewer ever gets it, and the text before it stays.
    assert not [e for e in hostile if e["type"] == "STATE_DELTA"]
    text = "".join(e["delta"] for e in hostile if e["type"] == "TEXT_MESSAGE_CONTENT"
                   and e["messageId"].endswith("-a"))
    assert text == "before "
    # The live viewer and the one replaying the log saw the same log.
    assert json.dumps(live.events) == json.dumps(replay.events)
    assert live.through == replay.through
    # The session's state is the snapshot, untouched by the refused patch, and the
    # next run starts from it (its upstream gets it) and changes it normally.
    assert up.requests[1]["body"]["state"] == STATE
    state = [e["snapshot"] for e in snap.events if e["type"] == "STATE_SNAPSHOT"]
    assert state == [{**STATE, "b": 1}]


def test_a_doubling_patch_is_refused_before_it_is_logged(serve: Serve, upstream: Upstream) -> None:
    up = upstream(_script(DOUBLING))
    server = serve(f"agui:{up.url}")
    assert len(json.dumps(DOUBLING)) < 1100
    live, replay, snap = asyncio.run(_session(server.ws_url("double")))
    _check(up, live, replay, snap, "state_too_large",
           "document would be larger than 1048576 characters")


def test_a_600_deep_patch_is_an_upstream_protocol_error(serve: Serve, upstream: Upstream) -> None:
    up = upstream(_script([{"op": "add", "path": "/deep", "value": _deep(600)}]))
    server = serve(f"agui:{up.url}")
    live, replay, snap = asyncio.run(_session(server.ws_url("deep")))
    _check(up, live, replay, snap, "upstream_protocol_error", "deeper than 48")


def test_a_patch_deeper_than_the_state_may_be_is_state_too_large(
        serve: Serve, upstream: Upstream) -> None:
    # Within one event's depth (48), beyond the state's (32).
    up = upstream(_script([{"op": "add", "path": "/deep", "value": _deep(40)}]))
    server = serve(f"agui:{up.url}")
    live, replay, snap = asyncio.run(_session(server.ws_url("deep40")))
    _check(up, live, replay, snap, "state_too_large", "deeper than 32 levels")


def test_a_runs_state_events_are_checked_against_the_state_earlier_runs_left(
        serve: Serve, upstream: Upstream) -> None:
    """The session engine hands each run's framer the session's state: a patch
    that fits an empty state but not the one the first run left is refused."""
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        ids = {"threadId": body["threadId"], "runId": body["runId"]}
        state: dict[str, Any]
        if body["messages"][-1]["content"] == "one":
            state = {"type": "STATE_SNAPSHOT", "snapshot": {"big": "y" * 900_000}}
        else:
            state = {"type": "STATE_DELTA",
                     "delta": [{"op": "add", "path": "/more", "value": "z" * 200_000}]}
        for e in ({"type": "RUN_STARTED", **ids}, state, {"type": "RUN_FINISHED", **ids}):
            write_raw(h, sse_event(e))

    up = upstream(script)
    server = serve(f"agui:{up.url}")

    async def two_runs() -> Received:
        async with websockets.connect(server.ws_url("grow")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="one")
            got = await recv_until(ws, Received(), runs_ended(1))
            for _ in range(50):  # Redis: the lease is released just after RUN_FINISHED
                await send(ws, type="run", prompt="two")
                await recv_until(ws, got, lambda r: runs_ended(2)(r) or bool(r.errors))
                if not got.errors:
                    return got
                got.errors.clear()
                await asyncio.sleep(0.1)
            raise AssertionError("the second run never started")

    first, second = split_runs(asyncio.run(two_runs()).events)
    assert first[-1]["type"] == "RUN_FINISHED"
    assert second[-1]["code"] == "state_too_large", second[-1]
    assert up.requests[1]["body"]["state"] == {"big": "y" * 900_000}
