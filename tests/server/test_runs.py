"""Runs from the demo and replay sources, as viewers receive them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import websockets
from streampace.session.delivery import compact
from streampace.sim import SCENARIOS, simulate, stamped, visible_text

from .conftest import (
    BOTH_STORES,
    Received,
    Serve,
    assert_conformant,
    recv_until,
    runs_ended,
    send,
    watch_run,
    write_jsonl,
)

pytestmark = BOTH_STORES


def _expected(run_id: str, scenario: str, session: str, speed: float) -> list[dict]:
    return [te.event for te in simulate(scenario, seed=0, speed=speed, thread_id=session,
                                        run_id=run_id)]


def _model_part(events: list[dict]) -> list[dict]:
    """Events minus the user echo (which the server inserts after RUN_STARTED)."""
    user = {e["messageId"] for e in events
            if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "user"}
    return [e for e in events if e.get("messageId") not in user]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_demo_run_is_conformant_and_equals_the_source(serve: Serve, scenario: str) -> None:
    server = serve("demo", speed=200.0)
    got = asyncio.run(watch_run(server.ws_url("s1"), prompt="Hi 👋🏽", scenario=scenario))
    assert_conformant(got.events, prompt="Hi 👋🏽")
    run_id = got.events[0]["runId"]
    expected = _expected(run_id, scenario, "s1", 200.0)
    # Batching may merge adjacent deltas but must not lose, add or reorder anything.
    assert compact(_model_part(got.events)) == compact(expected)
    assert got.events[-1]["type"] == "RUN_FINISHED"


def test_replay_source_replays_the_file(serve: Serve, tmp_path: Path) -> None:
    recorded = stamped(simulate("cjk_emoji", seed=3, thread_id="old", run_id="old-run"),
                       start_ms=1_700_000_000_000)
    path = write_jsonl(tmp_path / "run.jsonl", recorded)
    server = serve(f"replay:{path}", speed=50.0)
    got = asyncio.run(watch_run(server.ws_url("r1"), prompt="again"))
    assert_conformant(got.events, prompt="again")
    # The recording's run ids are replaced by the session's; everything else is as recorded.
    assert got.events[0]["threadId"] == "r1"
    assert visible_text(_model_part(got.events)) == visible_text(recorded)


def test_batching_first_delta_alone_terminal_immediate_and_bounded(
        serve: Serve, tmp_path: Path) -> None:
    # 100 deltas 10 ms apart: a 1 s answer.  With 150 ms batches it arrives in a
    # handful of messages, not 100 and not 1.
    t0 = 1_000
    events = [{"type": "RUN_STARTED", "threadId": "x", "runId": "y", "timestamp": t0},
              {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant",
               "timestamp": t0 + 5}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": f"w{i} ",
                "timestamp": t0 + 10 + 10 * i} for i in range(100)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "a", "timestamp": t0 + 1015},
               {"type": "RUN_FINISHED", "threadId": "x", "runId": "y", "timestamp": t0 + 1500}]
    server = serve(f"replay:{write_jsonl(tmp_path / 'b.jsonl', events)}", speed=1.0)
    got = asyncio.run(watch_run(server.ws_url("b1")))
    assert_conformant(got.events)
    content_batches = [b for b in got.batches
                       if any(e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "a"
                              for e in b["events"])]
    first = content_batches[0]["events"]
    # The first delta is flushed the moment it arrives: it ends its batch, alone.
    assert [e for e in first if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "w0 ",
         "timestamp": t0 + 10}
    ]
    assert first[-1]["type"] == "TEXT_MESSAGE_CONTENT"
    # Later deltas are grouped (far fewer messages than deltas) but not held to the end.
    assert 3 <= len(content_batches) <= 40, len(content_batches)
    # The terminal event arrives 485 ms after END: it must be flushed on its own batch.
    assert got.batches[-1]["events"][-1]["type"] == "RUN_FINISHED"
    assert [e["type"] for e in got.batches[-1]["events"]] == ["RUN_FINISHED"]
    text = "".join(e["delta"] for e in got.events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "a")
    assert text == "".join(f"w{i} " for i in range(100))


def test_two_viewers_see_identical_events(serve: Serve) -> None:
    server = serve("demo", speed=20.0)

    async def scenario() -> tuple[Received, Received]:
        url = server.ws_url("shared")
        async with websockets.connect(url) as a, websockets.connect(url) as b:
            await send(a, type="resume", after=0)
            await send(b, type="resume", after=0)
            await send(a, type="run", prompt="both of you", scenario="agentic")
            ra, rb = Received(), Received()
            await asyncio.gather(recv_until(a, ra, runs_ended(1)),
                                 recv_until(b, rb, runs_ended(1)))
            return ra, rb

    ra, rb = asyncio.run(scenario())
    assert_conformant(ra.events, prompt="both of you")
    assert compact(ra.events) == compact(rb.events)
    assert ra.through == rb.through


def test_cancel_ends_the_run_with_run_error_cancelled(serve: Serve) -> None:
    server = serve("demo", speed=1.0)

    async def scenario() -> Received:
        async with websockets.connect(server.ws_url("c1")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="long please", scenario="demo")
            got = Received()
            # Wait until the model is mid-answer, then cancel.
            await recv_until(ws, got, lambda r: sum(
                e["type"] == "TEXT_MESSAGE_CONTENT" for e in r.events) >= 3)
            await send(ws, type="cancel")
            await recv_until(ws, got, runs_ended(1))
            # The session is usable again: a second run starts and finishes.
            await send(ws, type="run", prompt="short", scenario="very_fast")
            await recv_until(ws, got, runs_ended(2), timeout=60)
            return got

    got = asyncio.run(scenario())
    first = got.events[: next(i for i, e in enumerate(got.events) if e["type"] == "RUN_ERROR") + 1]
    assert_conformant(first, prompt="long please")
    assert first[-1]["code"] == "cancelled"
    assert first[-2]["type"] in ("TEXT_MESSAGE_END", "REASONING_END", "TOOL_CALL_END",
                                 "REASONING_MESSAGE_END", "STEP_FINISHED", "RUN_STARTED",
                                 "TEXT_MESSAGE_CONTENT", "TOOL_CALL_RESULT")
    second = got.events[len(first):]
    assert_conformant(second, prompt="short")
