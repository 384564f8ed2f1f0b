"""Issue 30: the Redis store on a real Redis Cluster (three masters, one replica each),
started here once for the module (redis_cluster_harness), torn down at the end.

`streampace serve --store redis+cluster://...` processes share sessions as on one
node: fan-out and resume across processes, `--max-sessions` across the cluster, every
key of a session in one slot and sessions on several masters.  The last test kills a
master mid-run after its replica fell behind, so the promoted replica lacks events the
viewers were shown: the loss is detected and said, and every viewer ends with the same
text under one epoch.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import websockets
from redis.crc import key_slot
from streampace.session.delivery import compact

from .conftest import WAIT_S, Received, close_code, recv_until, runs_ended, send
from .redis_cluster_harness import RedisCluster
from .redis_harness import redis_available
from .redis_viewers import (
    Viewer,
    assert_same_view,
    resume_into_a_new_epoch,
    run_again_for_both,
    two_viewers_mid_run,
)
from .test_multiprocess import ServerProcess, procs  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    if not redis_available():
        pytest.fail("redis-server is missing: scripts/setup installs it (Debian redis-server)")
    started = time.monotonic()
    c = RedisCluster(tmp_path_factory.mktemp("cluster")).start()
    print(f"redis cluster of {c.count} nodes up in {time.monotonic() - started:.1f} s")
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def redis_url(cluster: RedisCluster) -> str:
    """For test_multiprocess's ``procs`` fixture: the cluster's URL."""
    return cluster.url


def _slot(key: str) -> int:
    return key_slot(key.encode())


def _keys_by_master(cluster: RedisCluster) -> dict[int, list[str]]:
    out = {}
    for port in cluster.masters():
        text = cluster.command(port, "--scan", "--pattern", "sp:*")
        out[port] = text.split()
    return out


def _canonical(r: Received) -> bytes:
    return json.dumps(compact(r.events), ensure_ascii=False, separators=(",", ":")).encode()


def test_sessions_spread_over_masters_and_each_keeps_its_keys_in_one_slot(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    a = ServerProcess(cluster.url, speed=50.0)
    procs.append(a)
    names = [f"spread{i}" for i in range(8)]

    async def scenario() -> None:
        for name in names:
            async with websockets.connect(a.ws(name)) as ws:
                await send(ws, type="resume", after=0)
                await send(ws, type="run", prompt=name, scenario="very_fast")
                await recv_until(ws, Received(), runs_ended(1))

    asyncio.run(scenario())
    held = _keys_by_master(cluster)
    masters_used = set()
    for name in names:
        keys = [(port, k) for port, ks in held.items() for k in ks
                if k.startswith(f"sp:{{{name}}}")]
        assert {k.rpartition(":")[2] for _p, k in keys} >= {"log", "seq", "epoch", "runs", "snap"}
        assert len({_slot(k) for _p, k in keys}) == 1  # one slot: one master, atomic scripts
        assert len({p for p, _k in keys}) == 1
        masters_used.add(keys[0][0])
    assert len(masters_used) >= 2  # 8 sessions over 3 masters
    assert not any(k == "sp:instance" for ks in held.values() for k in ks)


def test_two_processes_fan_out_one_run_identically_and_a_resume_moves_over(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    a, b = ServerProcess(cluster.url), ServerProcess(cluster.url)
    procs += [a, b]

    async def scenario() -> tuple[Received, Received, Received, Received]:
        async with websockets.connect(a.ws("fan")) as wa, \
                websockets.connect(b.ws("fan")) as wb:
            for ws in (wa, wb):
                await send(ws, type="resume", after=0)
            await send(wa, type="run", prompt="across", scenario="fast")
            ona, onb = Received(), Received()
            await recv_until(wb, onb, lambda r: len(r.batches) >= 2)
            partial, head = onb.through, Received(batches=list(onb.batches))
            await asyncio.gather(recv_until(wa, ona, runs_ended(1)),
                                 recv_until(wb, onb, runs_ended(1)))
        # A viewer that dropped mid-run resumes on the other process, in the same epoch.
        async with websockets.connect(b.ws("fan")) as again:
            await send(again, type="resume", after=partial, epoch=ona.attached[0]["epoch"])
            rest = await recv_until(again, Received(), runs_ended(1))
        return ona, onb, rest, head

    ona, onb, rest, head = asyncio.run(scenario())
    assert ona.events[-1]["type"] == "RUN_FINISHED"
    assert _canonical(ona) == _canonical(onb)
    assert ona.through == onb.through == rest.through
    assert rest.attached[0]["mode"] in ("live", "log")  # resumed in place, not a snapshot
    assert compact(head.events + rest.events) == compact(ona.events)


def test_max_sessions_counts_the_sessions_of_the_whole_cluster(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    for port in cluster.masters():  # earlier tests' sessions would count
        cluster.command(port, "FLUSHALL")
    a = ServerProcess(cluster.url, "--max-sessions", "3", "--session-quiet", "600")
    b = ServerProcess(cluster.url, "--max-sessions", "3", "--session-quiet", "600")
    procs += [a, b]

    async def scenario() -> tuple[list[str], int | None]:
        held = []
        for i, proc in enumerate((a, b, a)):
            ws = await websockets.connect(proc.ws(f"cap{i}"))
            await send(ws, type="resume", after=0)
            got = await recv_until(ws, Received(), lambda r: bool(r.attached))
            held.append((ws, got.attached[0]["sessionId"]))
        async with websockets.connect(b.ws("cap3")) as fourth:
            await send(fourth, type="resume", after=0)
            full = await close_code(fourth)
        for ws, _sid in held:
            await ws.close()
        return [sid for _ws, sid in held], full

    ids, full = asyncio.run(scenario())
    assert ids == ["cap0", "cap1", "cap2"]
    assert full == 1013  # refused though the 3 sessions live on other masters
    assert len({cluster.master_of(_slot(f"sp:{{{sid}}}:epoch")) for sid in ids}) >= 2


# The commands a restricted ACL user needs (docs/scaling.md, the operator's checklist).
ACL_COMMANDS = (
    "ping", "get", "set", "del", "exists", "incr", "incrby", "pexpire", "xadd", "xrange",
    "xrevrange", "hget", "hmget", "hset", "zadd", "zcard", "zrem", "zrangebyscore",
    "zremrangebyscore", "multi", "exec", "eval", "publish",
    "subscribe", "unsubscribe", "cluster|slots", "cluster|shards", "command")


def test_an_acl_user_with_only_the_listed_commands_serves_sessions(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    for port in cluster.masters():
        cluster.command(port, "FLUSHALL")
    for port in cluster.live_ports():  # ACLs are per node
        assert "OK" in cluster.command(
            port, "ACL", "SETUSER", "sp-acl", "on", ">acl-pw", "resetkeys", "~sp:*",
            "resetchannels", "&sp:control", "-@all", *(f"+{c}" for c in ACL_COMMANDS))
        cluster.command(port, "ACL", "LOG", "RESET")
    url = cluster.url.replace("://", "://sp-acl:acl-pw@")
    a = ServerProcess(url, "--max-sessions", "2", "--session-quiet", "0.01", speed=20.0)
    b = ServerProcess(url, speed=20.0)
    procs += [a, b]

    async def scenario() -> list[str | None]:
        codes: list[str | None] = []
        for i in range(3):  # the third makes room: a quiet session is forgotten
            async with websockets.connect(a.ws(f"acl{i}")) as wa:
                # The process with --max-sessions 2 makes the session (and the room
                # for it): wait for its `attached` before the other process loads it.
                await send(wa, type="resume", after=0)
                await asyncio.wait_for(wa.recv(), WAIT_S)
                wb = await websockets.connect(b.ws(f"acl{i}"))
                await send(wb, type="resume", after=0)
                await send(wa, type="run", prompt="restricted", scenario="long")
                got = await recv_until(wb, Received(), lambda r: len(r.batches) >= 2)
                await send(wb, type="cancel")  # crosses processes on sp:control
                await recv_until(wb, got, runs_ended(1))
                codes.append(got.events[-1].get("code"))
                await wb.close()
            await asyncio.sleep(0.05)
        return codes

    assert asyncio.run(scenario()) == ["cancelled"] * 3
    # acl2 made room by forgetting a quiet session: the one quiet longest, which is
    # acl0 unless the other process's heartbeat touched it after acl1 (under load).
    exists = {sid: cluster.command(cluster.master_of(_slot(f"sp:{{{sid}}}:epoch")), "EXISTS",
                                   f"sp:{{{sid}}}:epoch").strip()
              for sid in ("acl0", "acl1", "acl2")}
    assert sorted(exists.values()) == ["0", "1", "1"] and exists["acl2"] == "1", exists
    for port in cluster.live_ports():
        assert cluster.command(port, "ACL", "LOG").strip() == ""  # nothing was denied


def _on_another_master(cluster: RedisCluster, than: str) -> str:
    taken = cluster.master_of(_slot(f"sp:{{{than}}}:log"))
    for i in range(100):
        if cluster.master_of(_slot(f"sp:{{kill{i}}}:log")) != taken:
            return f"kill{i}"
    raise LookupError("every candidate session is on one master")


def test_a_master_killed_mid_run_ends_the_run_the_same_for_every_viewer(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    """The session's master is SIGKILLed mid-run; its replica (in sync) takes over.  The
    run cannot be written meanwhile: every viewer is told (store_unavailable), the run
    ends (run_lost) for all with the same text under the same epoch, and the next run
    streams whole."""
    session = _on_another_master(cluster, "failover")  # that one is for the next test
    a, b = ServerProcess(cluster.url, speed=1.0), ServerProcess(cluster.url, speed=1.0)
    procs += [a, b]
    master = cluster.master_of(_slot(f"sp:{{{session}}}:log"))

    async def scenario() -> tuple[Viewer, Viewer, str | None]:
        va, vb = await two_viewers_mid_run(a, b, session, "before the kill")
        epoch = va.client.epoch
        cluster.signal(master, signal.SIGKILL)
        for v in (va, vb):
            await v.read_until(lambda v: v.state.status in ("finished", "error"))
        await asyncio.to_thread(cluster.wait_ok)
        await run_again_for_both(va, vb, "after the kill")
        return va, vb, epoch

    va, vb, epoch = asyncio.run(asyncio.wait_for(scenario(), 3 * WAIT_S))
    for v in (va, vb):
        assert "store_unavailable" in v.errors
        assert v.closes == []  # nothing was lost: nobody had to start over
    assert_same_view(va, vb)
    assert va.client.epoch == epoch


def test_a_master_killed_after_its_replica_fell_behind_loses_events_visibly(
        cluster: RedisCluster, procs: list[ServerProcess]) -> None:  # noqa: F811
    """The replica of the session's master stops (SIGSTOP) and loses its link while the
    run streams on, so the master acknowledges events it never replicates; then the
    master is SIGKILLed and the replica, resumed, is promoted.  Both processes' viewers
    were shown events the new master lacks: the store says so (store_unavailable, a new
    epoch), and both end with the same text; the next run streams whole."""
    a, b = ServerProcess(cluster.url, speed=1.0), ServerProcess(cluster.url, speed=1.0)
    procs += [a, b]
    master = cluster.master_of(_slot("sp:{failover}:log"))
    replica = cluster.replica_of(master)

    async def scenario() -> tuple[Viewer, Viewer, str | None, float]:
        va, vb = await two_viewers_mid_run(a, b, "failover", "before the failover")
        old_epoch = va.client.epoch
        cluster.signal(replica, signal.SIGSTOP)
        await asyncio.to_thread(cluster.cut_replication, master, "failover")
        seen = va.contents()
        await va.read_until(lambda v: v.contents() >= seen + 20)
        await vb.read_until(lambda v: v.contents() >= seen + 20)
        cluster.signal(master, signal.SIGKILL)
        killed = time.monotonic()
        cluster.signal(replica, signal.SIGCONT)
        await va.read_to_close()
        await vb.read_to_close()
        closed_after = time.monotonic() - killed
        await asyncio.to_thread(cluster.wait_ok)
        await resume_into_a_new_epoch((va, vb), old_epoch)
        for v in (va, vb):  # the interrupted run ends (run_lost) for both
            await v.read_until(lambda v: v.state.status in ("finished", "error"))
        await run_again_for_both(va, vb, "after the failover")
        return va, vb, old_epoch, closed_after

    try:
        va, vb, old_epoch, closed_after = asyncio.run(
            asyncio.wait_for(scenario(), 3 * WAIT_S))
    finally:
        if replica in cluster.live_ports():
            cluster.signal(replica, signal.SIGCONT)
    print(f"viewers closed {closed_after * 1000:.0f} ms after the master was killed")
    for v in (va, vb):
        assert "store_unavailable" in v.errors
        assert 1013 in v.closes
    assert_same_view(va, vb)
    assert va.client.epoch != old_epoch
    assert "after the failover" in va.text()


def test_a_lease_renews_on_a_master_with_no_scripts_while_another_master_is_down(
        cluster: RedisCluster) -> None:
    """A node promoted by a failover has no scripts cached.  Renewing a lease there
    must not need every master (redis-py loads a missing script on all of them):
    with another master just killed, the renewal still answers, and it is true."""
    from streampace.server.config import ServerConfig
    from streampace.server.redis_conn import RedisConnection
    from streampace.server.redis_keys import SessionKeys

    other = next(p for p in cluster.masters() if _has_replica(cluster, p))
    keys = next(k for k in (SessionKeys.of(f"no-scripts-{i}") for i in range(64))
                if cluster.master_of(_slot(k.lease)) != other)
    cluster.command(cluster.master_of(_slot(keys.lease)), "SCRIPT", "FLUSH")

    async def renew_with_a_master_down() -> bool:
        conn = RedisConnection(cluster.url, ServerConfig(lease_ms=5_000))
        try:
            assert await conn.take_lease(keys, "token")
            cluster.signal(other, signal.SIGKILL)
            return await conn.renew_lease(keys, "token")
        finally:
            await conn.close()

    try:
        assert asyncio.run(asyncio.wait_for(renew_with_a_master_down(), WAIT_S))
    finally:
        cluster.wait_ok()  # the killed master's replica took over


def _has_replica(cluster: RedisCluster, master: int) -> bool:
    try:
        cluster.replica_of(master)
    except LookupError:
        return False
    return True


def test_a_mounted_app_takes_the_cluster_store_and_refuses_a_bad_one(
        cluster: RedisCluster) -> None:
    from streampace.server import StreampaceApp

    async def agent(_request: Any) -> AsyncIterator[dict[str, Any]]:  # never run here
        yield {"type": "RUN_STARTED"}

    app = StreampaceApp(agent, store=cluster.url)

    async def use() -> tuple[bool, bool]:
        async with app.lifespan():
            store: Any = app.hub.store
            return store.conn.cluster, await store.exists("never-made")

    assert asyncio.run(use()) == (True, False)  # it answered from the cluster
    with pytest.raises(ValueError, match="HOST:PORT"):
        StreampaceApp(agent, store="redis+cluster://:pw@nohostport")
