"""Issue 12 item 1: every batch's `through` is the sequence number of its own last
event, and a client that drops duplicates by sequence loses nothing."""

from __future__ import annotations

import asyncio

import websockets
from streampace.client.session_client import SessionClient

from .conftest import Received, Serve, recv_until, runs_ended, send


def _user_text(events: list[dict]) -> str:
    user = {e["messageId"] for e in events
            if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "user"}
    return "".join(e["delta"] for e in events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] in user)


def test_early_flush_batch_carries_its_own_last_seq_and_the_client_keeps_it(serve: Serve) -> None:
    # The repro: a 5000-char prompt makes the first enqueue of the run
    # cross 4096 units, so the buffer flushes before the call's last event.
    server = serve("demo", speed=20.0)
    prompt = "p" * 5000

    async def scenario() -> tuple[Received, list[str]]:
        async with websockets.connect(server.ws_url("bigprompt")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt=prompt, scenario="fast")
            raw: list[str] = []
            r = Received()

            async def pred_recv() -> None:
                while not runs_ended(1)(r):
                    text = await ws.recv()
                    assert isinstance(text, str), text  # the protocol sends text frames
                    raw.append(text)
                    r.add(text)

            await asyncio.wait_for(pred_recv(), 20)
            return r, raw

    r, raw = asyncio.run(scenario())
    # Sequence numbers are 1, 2, 3... per event of the session log (no other
    # writer in this session), so the k-th raw event has seq k.  Compaction may
    # merge adjacent deltas, so count raw events through the merge.
    seen = 0
    for batch in r.batches:
        assert batch["through"] > seen, (batch["through"], seen)
        seen = batch["through"]
    first = r.batches[0]
    assert first["events"][0]["type"] == "RUN_STARTED"
    assert first["through"] >= 3, first["through"]  # RUN_STARTED, START, CONTENT: seqs 1..3

    delivered: list[dict] = []
    client = SessionClient(delivered.extend)
    for text in raw:
        client.receive(text)
    assert client.stats["duplicates"] == 0
    assert _user_text(delivered) == prompt


def _assistant_text(events: list[dict]) -> str:
    ids = {e["messageId"] for e in events
           if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "assistant"}
    return "".join(e["delta"] for e in events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] in ids)


def test_resume_mid_paste_gets_the_answer_past_the_last_applied_through(serve: Serve) -> None:
    """The issue's repro: resuming after the user echo (seqs 1-4) of a `paste` run
    got `through: 4` together with the whole answer, which a client drops."""
    server = serve("demo", speed=4.0)

    async def scenario() -> None:
        url = server.ws_url("paste")
        async with websockets.connect(url) as steady:
            await send(steady, type="resume", after=0)
            await send(steady, type="run", prompt="go", scenario="paste")
            ref = await recv_until(steady, Received(), runs_ended(1))
        answer = _assistant_text(ref.events)
        assert len(answer) > 4096
        for after in (4, 5):  # after the user echo; after the assistant's START
            got: list[dict] = []
            client = SessionClient(got.extend)
            client.last_through = after  # what this viewer had applied before the drop
            async with websockets.connect(url) as late:
                await send(late, type="resume", after=after)
                r = Received()
                while not runs_ended(1)(r):
                    text = await asyncio.wait_for(late.recv(), 20)
                    r.add(text)
                    client.receive(text)
            assert client.stats["duplicates"] == 0, after
            assert "".join(e["delta"] for e in got
                           if e["type"] == "TEXT_MESSAGE_CONTENT") == answer, after

    asyncio.run(scenario())
