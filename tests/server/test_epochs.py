"""Issue 12 item 2: session epochs. A client that resumes into a restarted server
resets to its snapshot, accepts what follows, and sees its lost run end."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import websockets
from streampace.client.session_client import SessionClient
from streampace.conversation.items import MessageItem
from streampace.conversation.live_state import LiveState

from .conftest import WAIT_S, Received, Serve, recv_until, runs_ended, send


def _attached(epoch: str, mode: str, after: int = 0) -> str:
    return json.dumps({"type": "attached", "protocol": 2, "sessionId": "s", "epoch": epoch,
                       "mode": mode, "after": after})


def _batch(through: int, events: list[dict]) -> str:
    return json.dumps({"through": through, "events": events})


RUN = {"type": "RUN_STARTED", "threadId": "s", "runId": "r1"}
START = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}


def test_client_resets_to_the_snapshot_of_a_new_epoch_and_ends_the_lost_run() -> None:
    got: list[dict] = []
    client = SessionClient(got.extend)
    client.receive(_attached("e1", "log"))
    client.receive(_batch(3, [RUN, START, {"type": "TEXT_MESSAGE_CONTENT",
                                                      "messageId": "m", "delta": "old"}]))
    # The server restarted: its log is empty, so the snapshot is at seq 0.
    client.receive(_attached("e2", "snapshot", 0))
    client.receive(_batch(0, [{"type": "MESSAGES_SNAPSHOT", "messages": []},
                                        {"type": "STATE_SNAPSHOT", "snapshot": {}}]))
    client.receive(_batch(1, [dict(RUN, runId="r2")]))
    types = [e["type"] for e in got]
    assert types == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR",
                     "CUSTOM", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_STARTED"]
    assert got[3]["code"] == "server_restarted"
    # The view keeps what it showed of the lost session (renderer.archive).
    assert got[4] == {"type": "CUSTOM", "name": "streampace.session_lost",
                      "value": {"runCut": True}}
    assert client.last_through == 1 and client.epoch == "e2"
    assert client.stats["duplicates"] == 0 and client.stats["runs_lost"] == 1
    # The same epoch again is an ordinary resume: old seqs are duplicates.
    client.receive(_attached("e2", "log", 1))
    client.receive(_batch(1, [dict(RUN, runId="r2")]))
    assert client.stats["duplicates"] == 1


def test_resume_with_another_epoch_gets_a_snapshot_even_inside_the_log(serve: Serve) -> None:
    server = serve("demo", speed=200.0)

    async def scenario() -> tuple[Received, Received]:
        url = server.ws_url("ep")
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="hi", scenario="fast")
            first = await recv_until(ws, Received(), runs_ended(1))
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=2, epoch="not-this-one")
            other = await recv_until(ws, Received(), lambda r: bool(r.batches))
        return first, other

    first, other = asyncio.run(scenario())
    epoch = first.attached[0]["epoch"]
    assert first.attached[0]["mode"] == "log" and first.attached[0]["protocol"] == 3
    assert other.attached[0] == {"type": "attached", "protocol": 3, "sessionId": "ep",
                                 "epoch": epoch, "mode": "snapshot", "after": first.through}
    # The session's last run ended: the snapshot comes in that run's frame.
    assert [e["type"] for e in other.batches[0]["events"]] == [
        "RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]


# -- a real restart: SIGKILL the server process, start it again on its port ----


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streampace", "serve", "--port", str(port), "--speed", "20",
         "--log-level", "warning", "--client-session-ids"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            httpx.head(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except httpx.HTTPError:
            assert proc.poll() is None, "server exited"
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)


class _Resumer:
    """Like the page's connection: resume after the last through, in its epoch."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.client = SessionClient(self.events.extend)
        self.state = LiveState()

    def resume_message(self) -> str:
        return self.client.resume_message()

    def feed(self, text: str | bytes) -> None:
        before = len(self.events)
        self.client.receive(text)
        self.state.apply(self.events[before:])

    def answer(self) -> str:
        return "\n".join(i.text for i in self.state.items()
                         if isinstance(i, MessageItem) and i.role == "assistant")


def test_resume_into_a_restarted_server_process(tmp_path: Path) -> None:
    port = _free_port()
    url = f"ws://127.0.0.1:{port}/ws/sessions/restart"
    proc = _start(port)
    viewer = _Resumer()

    async def before_kill() -> None:
        async with websockets.connect(url) as ws:
            await ws.send(viewer.resume_message())
            await send(ws, type="run", prompt="a long one", scenario="long")
            async with asyncio.timeout(WAIT_S):
                while viewer.client.last_through < 40:
                    viewer.feed(await ws.recv())
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(WAIT_S)
            try:
                async with asyncio.timeout(WAIT_S):
                    while True:
                        viewer.feed(await ws.recv())
            except websockets.ConnectionClosed:
                pass

    async def after_restart() -> str:
        async with websockets.connect(url) as ws:
            await ws.send(viewer.resume_message())
            async with asyncio.timeout(WAIT_S):
                while viewer.client.stats["epochs"] == 0 or not viewer.client.stats["batches"]:
                    viewer.feed(await ws.recv())
                await send(ws, type="run", prompt="again", scenario="fast")
                while viewer.client.run_open or viewer.events[-1]["type"] != "RUN_FINISHED":
                    viewer.feed(await ws.recv())
        async with websockets.connect(url) as fresh:  # the reference: a new viewer
            await send(fresh, type="resume", after=0)
            ref = await recv_until(fresh, Received(), runs_ended(1))
        return "".join(e["delta"] for e in ref.events if e["type"] == "TEXT_MESSAGE_CONTENT"
                       and not e["messageId"].endswith("-user"))

    try:
        asyncio.run(before_kill())
        old_epoch = viewer.client.epoch
        assert viewer.client.run_open  # killed mid-run: nobody ended it
        proc = _start(port)
        expected = asyncio.run(after_restart())
    finally:
        proc.kill()
        proc.wait(WAIT_S)
    assert viewer.client.epoch != old_epoch
    lost = [e for e in viewer.events if e["type"] == "RUN_ERROR"]
    assert [e["code"] for e in lost] == ["server_restarted"]
    assert viewer.client.stats["duplicates"] == 0
    assert len(expected) > 500
    assert viewer.answer() == expected  # the snapshot replaced the lost run's text
