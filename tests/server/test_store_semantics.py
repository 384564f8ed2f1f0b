"""The log's resume and snapshot semantics, the same for both stores (property tests).

The same events go into a memory-store Session and, through the lease-fenced
append, into a Redis stream.  A fresh Redis-backed Session (another process: its
own client, an empty mirror) must then answer every resume point exactly as the
memory store does: the same log window and replay, or the same snapshot.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streampace.server import ServerConfig
from streampace.server import redis_store as rs
from streampace.server.session import Session
from streampace.server.sources import parse_source
from streampace.sim import simulate

SCENARIOS = ("bursty", "paste", "agentic", "slow", "demo")


def _runs(spec: list[tuple[str, int]], cut: int | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, (scenario, seed) in enumerate(spec):
        out += [te.event for te in simulate(scenario, seed=seed, thread_id="t", run_id=f"r{i}")]
    if cut is not None and out:
        out = out[: max(1, cut % len(out))]  # end mid-run: snapshots re-open what streams
    return out


def _answer(session: Session, after: int) -> tuple[str, list[dict[str, Any]]]:
    log_ = session.log
    if log_.covers(after):
        return "log", log_.read(after, 10**9, 10**12)
    return "snapshot", session.conversation.snapshot_events()


async def _both(url: str, events: list[dict[str, Any]], config: ServerConfig,
                chunk: int) -> tuple[Session, Session]:
    source = parse_source("demo")
    memory = Session("m", source, config)
    store = rs.RedisStore(url, config)
    sid = f"p{uuid.uuid4().hex[:8]}"
    writer = Session(sid, source, config, store)
    backend = writer.backend
    assert isinstance(backend, rs.RedisBackend)
    await writer.ready()
    token = "test-writer"
    client = store.conn.client
    await client.set(backend.keys.lease, token, px=60_000)
    backend.lease.token = token  # as while running: periodic snapshots
    for i in range(0, len(events), chunk):
        part = events[i:i + chunk]
        memory.append(part)
        await client.set(backend.keys.lease, token, px=60_000)  # a terminal frees it
        await backend.lease.write(part, token)
        await backend.mirror.catch_up()
        if any(e["type"] in ("RUN_FINISHED", "RUN_ERROR") for e in part):
            await backend.lease.write_snapshot()
    await asyncio.sleep(0)  # let spawned snapshot writes finish
    await backend.lease.settled()
    other = rs.RedisStore(url, config)
    fresh = Session(sid, source, config, other)
    await fresh.ready()
    await fresh.close()
    await writer.close()
    await store.close()
    await other.close()
    return memory, fresh


@pytest.fixture(scope="module")
def shared_redis(redis_server: Any) -> str:
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()
    return redis_server.url


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=st.lists(st.tuples(st.sampled_from(SCENARIOS), st.integers(0, 5)),
                  min_size=1, max_size=3),
    cut=st.one_of(st.none(), st.integers(0, 10_000)),
    log_events=st.sampled_from([8, 40, 300, 10_000]),
    log_bytes=st.sampled_from([2_000, 8 * 1024 * 1024]),
    chunk=st.integers(1, 60),
    resume=st.lists(st.integers(0, 3000), max_size=6),
)
def test_every_resume_point_gets_the_same_answer_from_both_stores(
        shared_redis: str, spec: list[tuple[str, int]], cut: int | None, log_events: int,
        log_bytes: int, chunk: int, resume: list[int]) -> None:
    events = _runs(spec, cut)
    config = ServerConfig(log_events=log_events, log_bytes=log_bytes)
    memory, fresh = asyncio.run(_both(shared_redis, events, config, chunk))
    assert fresh.log.head == memory.log.head == len(events)
    assert fresh.log.first_seq == memory.log.first_seq
    points = {0, memory.log.head, memory.log.first_seq - 1, *(r % (len(events) + 2)
                                                             for r in resume)}
    for after in sorted(points):
        assert _answer(fresh, after) == _answer(memory, after), after
    assert fresh.conversation.snapshot_events() == memory.conversation.snapshot_events()
