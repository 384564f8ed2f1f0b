"""Reconnect and resume: from the log, past the log (snapshots), slow consumers."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import websockets
from streampace.session.delivery import compact
from streampace.sim import visible_text
from websockets.client import ClientProtocol
from websockets.frames import Close, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from .conftest import (
    BOTH_STORES,
    WAIT_S,
    Received,
    RunningServer,
    Serve,
    Upstream,
    assert_conformant,
    first_snapshot,
    recv_until,
    runs_ended,
    send,
    split_runs,
    write_jsonl,
)

pytestmark = BOTH_STORES


def _content_count(r: Received) -> int:
    return sum(e["type"] == "TEXT_MESSAGE_CONTENT" for e in r.events)


async def _late_join(server: RunningServer, session: str, prompt: str,
                     after_contents: int) -> tuple[Received, Received]:
    """A first viewer starts a demo run; a second joins (resume after=0) once the
    first has seen `after_contents` content events. Both read to the run's end."""
    url = server.ws_url(session)
    async with websockets.connect(url) as first:
        await send(first, type="resume", after=0)
        await send(first, type="run", prompt=prompt, scenario="demo")
        a = Received()
        await recv_until(first, a, lambda r: _content_count(r) >= after_contents)
        async with websockets.connect(url) as late:
            await send(late, type="resume", after=0)
            b = Received()
            await recv_until(late, b, runs_ended(1), timeout=60)
        await recv_until(first, a, runs_ended(1), timeout=60)
        return a, b


def test_resume_after_a_drop_loses_and_duplicates_nothing(serve: Serve) -> None:
    server = serve("demo", speed=3.0)

    async def scenario() -> tuple[Received, Received, Received]:
        url = server.ws_url("drop")
        async with websockets.connect(url) as steady:
            await send(steady, type="resume", after=0)
            await send(steady, type="run", prompt="resume me", scenario="demo")
            full = Received()
            dropped = Received()
            async with websockets.connect(url) as flaky:
                await send(flaky, type="resume", after=0)
                await recv_until(flaky, dropped, lambda r: _content_count(r) >= 3)
            # The socket is gone mid-run; the steady viewer keeps receiving meanwhile.
            await recv_until(steady, full, lambda r: _content_count(r) >= _content_count(
                dropped) + 3)
            async with websockets.connect(url) as again:
                await send(again, type="resume", after=dropped.through)
                rest = Received()
                await recv_until(again, rest, runs_ended(1), timeout=60)
            await recv_until(steady, full, runs_ended(1), timeout=60)
            return full, dropped, rest

    full, dropped, rest = asyncio.run(scenario())
    assert rest.batches[0]["through"] > dropped.through
    joined = dropped.events + rest.events
    assert_conformant(joined, prompt="resume me")
    assert compact(joined) == compact(full.events)
    assert rest.through == full.through


def test_fresh_viewer_mid_run_gets_the_whole_run_from_the_log(serve: Serve) -> None:
    server = serve("demo", speed=3.0)

    a, b = asyncio.run(_late_join(server, "join", "join late", after_contents=4))
    assert_conformant(b.events, prompt="join late")
    assert compact(a.events) == compact(b.events)


def test_resume_past_the_log_gets_snapshots_when_idle(serve: Serve) -> None:
    server = serve("demo", speed=200.0, log_events=20)

    async def scenario() -> tuple[Received, Received]:
        url = server.ws_url("snap")
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="first", scenario="agentic")
            full = Received()
            await recv_until(ws, full, runs_ended(1))
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=0)
            snap = Received()
            await recv_until(ws, snap, lambda r: len(r.batches) >= 1)
            # The snapshot leaves the socket live: the next run streams normally.
            await send(ws, type="run", prompt="second", scenario="very_fast")
            await recv_until(ws, snap, runs_ended(2))  # the snapshot's frame, then this
        return full, snap

    full, snap = asyncio.run(scenario())
    first = snap.batches[0]
    # The last run ended: the snapshot is framed by it, so a viewer cut mid-run
    # learns how it ended.
    assert [e["type"] for e in first["events"]] == [
        "RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]
    assert first["events"][0]["runId"] == full.events[0]["runId"]
    assert first["events"][-1] == full.events[-1]
    assert first["through"] == full.through
    messages = first["events"][1]["messages"]
    texts = {m["id"]: m["content"] for m in messages if m["role"] in ("user", "assistant")
             and m.get("content")}
    expected = {k: v for k, v in visible_text(full.events).items() if k in texts or v}
    for mid, text in texts.items():
        assert expected[mid] == text
    assert any(m["role"] == "user" and m["content"] == "first" for m in messages)
    assistant_ids = {e["messageId"] for e in full.events
                     if e["type"] == "TEXT_MESSAGE_START" and e["role"] == "assistant"}
    assert assistant_ids <= set(texts)
    assert any(m.get("toolCalls") for m in messages), "the agentic run's tool call is kept"
    assert_conformant(split_runs(snap.events)[-1], prompt="second")


def test_resume_past_the_log_mid_run_reopens_what_is_streaming(serve: Serve) -> None:
    server = serve("demo", speed=3.0, log_events=8)

    a, b = asyncio.run(_late_join(server, "midsnap", "snapshot me", after_contents=12))
    head = [e["type"] for e in b.batches[0]["events"]]
    # The run, what is open in it, earlier runs' messages, then this run's items
    # replayed (transcript_views.snapshot_events).
    assert head[0] == "RUN_STARTED" and {"MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"} <= set(head)
    # A conformant run for the late viewer, ending in the same text.
    assert_conformant(b.events)
    # visible_text reads the snapshot too: what the late viewer ends up showing.
    late_text = visible_text(b.events)
    for mid, text in visible_text(a.events).items():
        assert late_text.get(mid, "") == text, mid
    assert b.through == a.through


class StalledClient:
    """A WebSocket client that stops reading: a raw socket with a tiny receive
    buffer, driven by the websockets sans-IO protocol (so nothing reads behind
    the test's back)."""

    def __init__(self, url: str) -> None:
        hostport = url.split("//")[1].split("/")[0]
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        self.sock.settimeout(WAIT_S)
        self.sock.connect((host, int(port)))
        self.proto = ClientProtocol(parse_uri(url), max_size=None)
        self.proto.send_request(self.proto.connect())
        self._flush()
        while not isinstance(self._next_event(), Response):
            pass

    def _flush(self) -> None:
        for chunk in self.proto.data_to_send():
            if chunk:
                self.sock.sendall(chunk)

    def _next_event(self) -> object:
        while True:
            events = self.proto.events_received()
            if events:
                self._pending = events[1:]
                return events[0]
            data = self.sock.recv(65536)
            self.proto.receive_data(data if data else b"")
            if not data:
                self.proto.receive_eof()

    def send_json(self, obj: dict) -> None:
        self.proto.send_text(json.dumps(obj).encode())
        self._flush()

    def drain(self, received: Received) -> int | None:
        """Read everything up to the server's close frame; return its code."""
        frames = list(getattr(self, "_pending", []))
        while True:
            for frame in frames:
                if frame.opcode == Opcode.TEXT:
                    received.add(frame.data.decode())
                elif frame.opcode == Opcode.CLOSE:
                    return Close.parse(frame.data).code
            data = self.sock.recv(1 << 20)
            if not data:
                return None
            self.proto.receive_data(data)
            self._flush()  # pongs
            frames = self.proto.events_received()

    def close(self) -> None:
        self.sock.close()


class _CutSeen(logging.Handler):
    """Sets `event` when the server logs that it closes a viewer as a slow consumer."""

    def __init__(self, event: threading.Event) -> None:
        super().__init__()
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        if "closing with 4408" in record.getMessage():
            self.event.set()


def _drain_once_cut(stalled: StalledClient, seen: Received,
                    codes: list[int | None]) -> threading.Thread:
    """A thread that waits (at most 60 s) for the server to cut a slow viewer, then
    reads `stalled` to its close frame; the close code goes into `codes`."""
    cut = threading.Event()
    handler = _CutSeen(cut)
    logger = logging.getLogger("streampace.server")
    logger.addHandler(handler)

    def run() -> None:
        try:
            if cut.wait(60):
                codes.append(stalled.drain(seen))
        finally:
            logger.removeHandler(handler)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_slow_consumer_is_disconnected_and_can_resume(serve: Serve, tmp_path: Path) -> None:
    # 1500 deltas of 8 KiB, 4 ms apart: ~12 MB over ~6 s, which a reading viewer
    # takes easily and a viewer that stopped reading cannot.
    big = "x" * 8192
    n = 1500
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 0},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "timestamp": 0}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": big,
                "timestamp": 4 * i} for i in range(n)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 4 * n},
               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 4 * n}]
    path = write_jsonl(tmp_path / "big.jsonl", events)
    limit = 256 * 1024
    # The log holds the whole run, so only the send timeout can cut the stalled viewer.
    server = serve(f"replay:{path}", speed=1.0, outbound_limit_bytes=limit,
                   log_bytes=64 * 1024 * 1024, send_timeout_s=1.5)
    url = server.ws_url("slow")
    stalled = StalledClient(url)
    stalled.send_json({"type": "resume", "after": 0})
    peak = 0

    async def good_viewer() -> Received:
        nonlocal peak
        async with websockets.connect(url, max_size=None) as good:
            await send(good, type="resume", after=0)
            await send(good, type="run", prompt="flood")
            got = Received()
            async with asyncio.timeout(60):
                while not runs_ended(1)(got):
                    got.add(await good.recv())
                    peak = max([peak] + [v.queued_bytes for v in server.hub.viewers])
            return got

    # The stalled viewer reads again as soon as the server cuts it: its close frame
    # waits behind the data the server had queued, and the server gives the close
    # handshake only a few seconds before it aborts the connection.
    seen = Received()
    codes: list[int | None] = []
    drainer = _drain_once_cut(stalled, seen, codes)
    try:
        got = asyncio.run(good_viewer())
        text = "".join(e["delta"] for e in got.events
                       if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "m")
        assert text == big * n  # the healthy viewer got everything, undisturbed
        drainer.join(60)
        assert codes, "the stalled viewer was never cut"
        code = codes[0]
    finally:
        stalled.close()
    assert code == 4408
    assert seen.through < got.through
    # What it got before the cut is a prefix of the run.
    assert compact(seen.events) == compact(got.events[: len(seen.events)]) or seen.events == []

    async def resume() -> Received:
        async with websockets.connect(url, max_size=None) as back:
            await send(back, type="resume", after=seen.through)
            return await recv_until(back, Received(), runs_ended(1), timeout=60)

    rest = asyncio.run(resume())
    # Resumed from the log: together exactly the run, nothing lost or doubled.
    assert compact(seen.events + rest.events) == compact(got.events)
    # No viewer's queue ever held much more than the bound (plus one pulled chunk).
    assert peak <= limit + limit // 2 + 64 * 1024, peak


def test_viewer_that_falls_out_of_the_log_is_cut_and_resumes_from_a_snapshot(
        serve: Serve, tmp_path: Path) -> None:
    big = "y" * 8192
    n = 1500
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 0},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "timestamp": 0}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": big,
                "timestamp": 2 * i} for i in range(n)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 2 * n},
               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 2 * n}]
    path = write_jsonl(tmp_path / "big.jsonl", events)
    # A short log and a long send timeout: only falling out of the log can cut it.
    server = serve(f"replay:{path}", speed=1.0, outbound_limit_bytes=128 * 1024,
                   log_events=50, send_timeout_s=600)
    url = server.ws_url("behind")
    stalled = StalledClient(url)
    try:
        stalled.send_json({"type": "resume", "after": 0})
        stalled.send_json({"type": "run", "prompt": "flood"})
        # Not reading until the server has given up on this viewer.
        deadline = time.monotonic() + 60
        while not server.hub.closes[4408]:
            assert time.monotonic() < deadline, "the stalled viewer was never cut"
            time.sleep(0.05)
        seen = Received()
        code = stalled.drain(seen)
    finally:
        stalled.close()
    assert code == 4408
    assert seen.events[0]["type"] == "RUN_STARTED"
    assert seen.events[0]["threadId"] == "behind"

    async def resume() -> Received:
        async with websockets.connect(url, max_size=None) as back:
            await send(back, type="resume", after=seen.through)
            # Either the run is still going (snapshot inside a re-opened run, then live
            # events to its end) or it is over (a snapshot in the run's frame).
            return await recv_until(back, Received(), runs_ended(1), timeout=60)

    rest = asyncio.run(resume())
    # The snapshot (the answer is kept whole: ~12 MB) comes in parts under the
    # outbound bound; whether the run was still going or had ended, the resumed
    # viewer ends with the whole text and the run's terminal event.
    assert max(len(json.dumps(b)) for b in rest.batches) < 256 * 1024
    snapshot = first_snapshot(rest)
    parts = next(i for i, b in enumerate(rest.batches) if not b.get("more")) + 1
    after = [e for b in rest.batches[parts:] for e in b["events"]]
    events = snapshot + after
    # Running: the run, then its snapshot and replay (transcript_views); ended: the
    # snapshot in the run's frame (session/snapshot.py).
    types = [e["type"] for e in snapshot]
    assert types[0] == "RUN_STARTED" and {"MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"} <= set(types)
    assert events[-1]["type"] == "RUN_FINISHED"
    snap = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")
    done = {m["id"]: m.get("content") for m in snap["messages"]}
    text = done.get("m") or ""
    text += "".join(e["delta"] for e in events
                    if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "m")
    assert text == big * n


def test_json_of_batches_is_compact_utf8(serve: Serve) -> None:
    server = serve("demo", speed=200.0)

    async def scenario() -> list[str]:
        async with websockets.connect(server.ws_url("u")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="日本語 🇯🇵", scenario="cjk_emoji")
            raws: list[str] = []
            async with asyncio.timeout(20):
                while True:
                    raw = await ws.recv()
                    assert isinstance(raw, str), raw  # text frames only
                    raws.append(raw)
                    if '"RUN_FINISHED"' in raw:
                        return raws

    raws = asyncio.run(scenario())
    assert all(isinstance(r, str) for r in raws)  # text frames only
    assert any("日本語 🇯🇵" in r for r in raws)  # UTF-8, not \\u escapes
    assert json.loads(raws[0])["type"] == "attached"  # protocol v2: the first message
    assert all(json.loads(r)["events"] for r in raws[1:])


def test_snapshot_state_follows_state_snapshot_and_deltas(serve: Serve, tmp_path: Path) -> None:
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"plan": ["a"], "done": False}},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/plan/-", "value": "b"},
                                          {"op": "replace", "path": "/done", "value": True}]},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "planned"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    server = serve(f"replay:{write_jsonl(tmp_path / 's.jsonl', events)}", log_events=3)

    async def scenario() -> Received:
        url = server.ws_url("state")
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="plan")
            await recv_until(ws, Received(), runs_ended(1))
        async with websockets.connect(url) as ws:
            await send(ws, type="resume", after=0)
            return await recv_until(ws, Received(), lambda r: len(r.batches) >= 1)

    snap = asyncio.run(scenario()).batches[0]["events"]
    assert snap[2] == {"type": "STATE_SNAPSHOT", "snapshot": {"plan": ["a", "b"], "done": True}}
    assert [m["content"] for m in snap[1]["messages"]] == ["plan", "planned"]


def test_a_late_viewer_after_idless_chunks_gets_the_whole_text(
        serve: Serve, upstream: Upstream) -> None:
    """Issue 8: the server's snapshot used to drop text of TEXT_MESSAGE_CHUNK events
    without a messageId; a viewer resuming past the log now shows what live ones do."""
    import threading

    from streampace.conversation.live_state import LiveState

    from .conftest import sse_event, sse_headers, write_raw

    pieces = [f"w{i} " for i in range(40)]
    go_on = threading.Event()

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        tid, rid = body["threadId"], body["runId"]
        write_raw(h, sse_event({"type": "RUN_STARTED", "threadId": tid, "runId": rid}))
        write_raw(h, sse_event({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c",
                                "role": "assistant", "delta": pieces[0]}))
        for piece in pieces[1:30]:
            write_raw(h, sse_event({"type": "TEXT_MESSAGE_CHUNK", "delta": piece}),
                      pause_s=0.005)
        go_on.wait(10)  # the late viewer attaches here, past the 8-event log
        for piece in pieces[30:]:
            write_raw(h, sse_event({"type": "TEXT_MESSAGE_CHUNK", "delta": piece}))
        write_raw(h, sse_event({"type": "RUN_FINISHED", "threadId": tid, "runId": rid}))

    up = upstream(script)
    server = serve(f"agui:{up.url}", log_events=8)

    async def scenario() -> tuple[Received, Received]:
        url = server.ws_url("chunks")
        async with websockets.connect(url) as first:
            await send(first, type="resume", after=0)
            await send(first, type="run", prompt="chunk me")
            a = Received()
            await recv_until(first, a, lambda r: "".join(
                e.get("delta", "") for e in r.events
                if e["type"] == "TEXT_MESSAGE_CHUNK").count("w") >= 30)
            async with websockets.connect(url) as late:
                await send(late, type="resume", after=0)
                b = Received()
                await recv_until(late, b, lambda r: bool(r.batches))
                go_on.set()
                await recv_until(late, b, runs_ended(1))
            await recv_until(first, a, runs_ended(1))
            return a, b

    a, b = asyncio.run(scenario())
    assert b.batches[0]["events"][1]["type"] == "MESSAGES_SNAPSHOT"  # past the log
    live, late = LiveState(), LiveState()
    live.apply(a.events)
    late.apply(b.events)
    assert live.messages["c"].text == "".join(pieces)
    assert late.messages["c"].text == "".join(pieces)
    assert late.anomalies == 0
