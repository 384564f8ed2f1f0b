"""The Redis mirror's typed states on a real redis-server: a gap in the stream makes it
stale and a reload current again; an outage is told to viewers once, and once more
only after Redis answered in between."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from streampace.server import ServerConfig
from streampace.server import redis_store as rs
from streampace.server.redis_mirror import STORE_DOWN_MESSAGE, MirrorState
from streampace.server.session import Session
from streampace.server.sources import parse_source


class _Sink:
    """Stands in for a Viewer: records replies and deliveries."""

    def __init__(self, mirror: Any = None) -> None:
        self.mirror = mirror
        self.texts: list[str] = []
        self.seqs: list[int] = []
        self.left: list[MirrorState] = []  # the mirror's state when told to leave the feed

    def send_text(self, text: str) -> None:
        self.texts.append(text)

    def on_append(self, events: list[dict[str, Any]], first: int, through: int) -> None:
        self.seqs.extend(range(first, through + 1))

    def leave_feed(self) -> None:
        self.left.append(self.mirror.state)


def _step(i: int) -> dict[str, Any]:
    return {"type": "STEP_STARTED", "stepName": f"s{i}"}


@pytest.fixture
def session_and_backend(redis_url: str) -> tuple[Session, rs.RedisBackend, rs.RedisStore]:
    config = ServerConfig(log_events=100)
    store = rs.RedisStore(redis_url, config)
    session = Session(f"m{uuid.uuid4().hex[:8]}", parse_source("demo"), config, store)
    backend = session.backend
    assert isinstance(backend, rs.RedisBackend)
    return session, backend, store


def test_a_gap_makes_the_mirror_stale_and_a_reload_current(
        session_and_backend: tuple[Session, rs.RedisBackend, rs.RedisStore]) -> None:
    session, backend, store = session_and_backend

    async def body() -> tuple[list[MirrorState], _Sink, int]:
        seen = [backend.mirror.state]
        await session.ready()
        seen.append(backend.mirror.state)
        sink = _Sink(backend.mirror)
        session.viewers.add(sink)
        client = store.conn.client
        await client.set(backend.keys.lease, "t", px=60_000)
        await backend.lease.write([_step(1), _step(2)], "t")
        await backend.mirror.catch_up()
        # Another writer jumps the numbering (as a Redis restarted empty would).
        await client.xadd(backend.keys.log, {"e": json.dumps(_step(9))}, id="9-0")
        await backend.mirror.catch_up()  # finds the gap, reloads
        seen.append(backend.mirror.state)
        head = session.log.head
        await backend.close()
        seen.append(backend.mirror.state)
        await store.close()
        return seen, sink, head

    seen, sink, head = asyncio.run(asyncio.wait_for(body(), 20))
    assert seen == [MirrorState.EMPTY, MirrorState.CURRENT, MirrorState.CURRENT,
                    MirrorState.CLOSED]
    assert sink.seqs == [1, 2]  # delivered before the gap; the reload does not replay them
    assert sink.left == [MirrorState.STALE]  # the reload of the stale mirror replaced the log
    assert head == 9  # the reloaded log continues from the stream's contiguous tail


def test_an_outage_is_told_once_until_redis_answers_again(
        session_and_backend: tuple[Session, rs.RedisBackend, rs.RedisStore]) -> None:
    session, backend, store = session_and_backend

    async def body() -> tuple[list[MirrorState], _Sink]:
        await session.ready()
        sink = _Sink(backend.mirror)
        session.viewers.add(sink)
        mirror = backend.mirror
        seen = []
        for ok in (False, False, True, False):
            if ok:
                mirror.read_ok()
            else:
                mirror.read_failed(OSError("down"))
            seen.append(mirror.state)
        await backend.close()
        await store.close()
        return seen, sink

    seen, sink = asyncio.run(asyncio.wait_for(body(), 20))
    assert seen == [MirrorState.DOWN, MirrorState.DOWN, MirrorState.CURRENT, MirrorState.DOWN]
    assert [json.loads(t) for t in sink.texts] == [
        {"type": "error", "code": "store_unavailable", "message": STORE_DOWN_MESSAGE}] * 2


def test_a_snapshot_past_the_streams_end_is_never_kept_nor_loaded(
        session_and_backend: tuple[Session, rs.RedisBackend, rs.RedisStore]) -> None:
    """A process whose mirror is ahead of the store (a failover lost writes it had
    shown) must not leave a snapshot the stream does not continue: Redis refuses it,
    and one already there is passed over by the next load."""
    session, backend, store = session_and_backend

    async def body() -> tuple[list[Any], int, list[Any]]:
        await session.ready()
        client = store.conn.client
        await client.set(backend.keys.lease, "t", px=60_000)
        await backend.lease.write([
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "kept"}], "t")
        await store.conn.write_snapshot(backend.keys, 7, json.dumps({"items": []}))
        refused = await client.hmget(backend.keys.snap, ["seq"])
        await store.conn.write_snapshot(backend.keys, 2, json.dumps({"items": []}))
        kept = await client.hget(backend.keys.snap, "seq")
        # One written before Redis refused them (as an older server would have):
        await client.hset(backend.keys.snap, mapping={"seq": "7", "data": '{"items": []}'})
        await backend.mirror.load()
        head = session.log.head
        texts = [getattr(i, "text", None) for i in session.conversation.items()]
        await backend.close()
        await store.close()
        return [refused[0], kept], head, texts

    (refused, kept), head, texts = asyncio.run(asyncio.wait_for(body(), 20))
    assert refused is None  # the stream ends at 2: no snapshot at 7
    assert kept == b"2"
    assert head == 2
    assert texts == ["kept"]  # the conversation from the stream, not the snapshot at 7
