"""Several `streampace serve --store redis://...` processes on one real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from streampace.server.config import THREAD_SECRET_ENV
from streampace.session.delivery import compact

from .conftest import (
    TEST_LEASE_MS,
    WAIT_S,
    Received,
    assert_conformant,
    close_code,
    recv_until,
    runs_ended,
    send,
    split_runs,
)
from .redis_harness import RedisProcess

SRC = Path(__file__).resolve().parents[2] / "py"


class ServerProcess:
    def __init__(self, store: str, *extra: str, speed: float = 4.0) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # Processes serving one store share the thread-id key (as deployments must), so
        # their log lines name a session alike.
        env.setdefault(THREAD_SECRET_ENV, "streampace tests")
        env["PYTHONPATH"] = f"{SRC}{os.pathsep}{env.get('PYTHONPATH', '')}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streampace", "serve", "--port", "0", "--store", store,
             "--lease-ms", str(TEST_LEASE_MS), "--speed", str(speed), "--log-level",
             "warning", "--client-session-ids", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        line = ""
        deadline = time.monotonic() + WAIT_S
        while "serving" not in line:
            assert time.monotonic() < deadline and self.proc.poll() is None, (
                self.proc.stderr.read() if self.proc.stderr else "")
            line = self.proc.stdout.readline() if self.proc.stdout else ""
        self.line = line
        self.url = re.search(r"http://\S+/", line).group(0)  # type: ignore[union-attr]

    def ws(self, session: str) -> str:
        return self.url.replace("http://", "ws://") + f"ws/sessions/{session}"

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(WAIT_S)

    def alive(self) -> bool:
        return self.proc.poll() is None


@pytest.fixture
def procs(redis_url: str) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for p in started:
        p.kill(signal.SIGTERM)
        if p.proc.stderr is not None:  # shown when the test failed
            print(p.proc.stderr.read()[-4000:])


def _contents(r: Received) -> int:
    return sum(e["type"] == "TEXT_MESSAGE_CONTENT" for e in r.events)


def _canonical(r: Received) -> bytes:
    # Batch boundaries differ per process (each has its own 150 ms timers), and a
    # batch merges adjacent deltas; the event stream itself must be the same bytes.
    return json.dumps(compact(r.events), ensure_ascii=False, separators=(",", ":")).encode()


def test_three_processes_see_identical_streams_and_a_cancel_crosses_processes(
        redis_url: str, procs: list[ServerProcess]) -> None:
    a, b, c = (ServerProcess(redis_url) for _ in range(3))
    procs += [a, b, c]

    async def scenario() -> list[Received]:
        async with websockets.connect(a.ws("m")) as wa, websockets.connect(b.ws("m")) as wb, \
                websockets.connect(c.ws("m")) as wc:
            for ws in (wa, wb, wc):
                await send(ws, type="resume", after=0)
            await send(wa, type="run", prompt="shared", scenario="long")
            got = [Received(), Received(), Received()]
            await recv_until(wb, got[1], lambda r: _contents(r) >= 3)
            await send(wc, type="run", prompt="second")  # refused: A runs the session
            await send(wb, type="cancel")  # B cancels the run that executes in A
            await asyncio.gather(*(recv_until(ws, r, runs_ended(1))
                                   for ws, r in zip((wa, wb, wc), got, strict=True)))
            return got

    got = asyncio.run(scenario())
    for r in got:
        assert_conformant(r.events, prompt="shared")
        assert r.events[-1]["code"] == "cancelled"
    assert _canonical(got[0]) == _canonical(got[1]) == _canonical(got[2])
    assert got[0].through == got[1].through == got[2].through
    assert [e["code"] for e in got[2].errors] == ["run_active"]


def test_kill_9_of_the_run_owner_ends_the_run_elsewhere_and_resume_moves_over(
        redis_url: str, procs: list[ServerProcess]) -> None:
    a, b = ServerProcess(redis_url, speed=2.0), ServerProcess(redis_url, speed=2.0)
    procs += [a, b]

    async def scenario() -> tuple[Received, Received, Received, float]:
        async with websockets.connect(b.ws("k")) as wb:
            await send(wb, type="resume", after=0)
            onb = Received()
            ona = Received()
            async with websockets.connect(a.ws("k")) as wa:
                await send(wa, type="resume", after=0)
                await send(wa, type="run", prompt="owner dies", scenario="long")
                await recv_until(wa, ona, lambda r: _contents(r) >= 4)
                a.kill()  # kill -9: no shutdown, no RUN_ERROR from A
                killed_at = time.monotonic()
                with contextlib.suppress(websockets.ConnectionClosed):
                    async with asyncio.timeout(WAIT_S):
                        while True:
                            ona.add(await wa.recv())
            await recv_until(wb, onb, runs_ended(1))
            lost_after = time.monotonic() - killed_at
            # A's viewer moves to B and resumes where its last batch ended.
            async with websockets.connect(b.ws("k")) as again:
                await send(again, type="resume", after=ona.through)
                rest = await recv_until(again, Received(), runs_ended(1))
            return ona, onb, rest, lost_after

    ona, onb, rest, lost_after = asyncio.run(scenario())
    print(f"run_lost reached the other process {lost_after * 1000:.0f} ms after kill -9 "
          f"(lease {TEST_LEASE_MS} ms)")
    assert onb.events[-1]["type"] == "RUN_ERROR" and onb.events[-1]["code"] == "run_lost"
    assert_conformant(onb.events, prompt="owner dies")
    joined = ona.events + rest.events
    assert compact(joined) == compact(onb.events)  # nothing lost, nothing twice
    assert rest.through == onb.through
    # The session is free again: a new run starts at B and finishes.
    assert b.alive()


def test_redis_down_mid_run_gives_clear_errors_and_recovers(
        tmp_path: Path, procs: list[ServerProcess]) -> None:
    redis = RedisProcess(tmp_path / "r").start()
    try:
        a = ServerProcess(redis.url, "--log-level", "info", speed=2.0)
        procs.append(a)

        async def scenario() -> tuple[Received, int | None, Received, Received]:
            async with websockets.connect(a.ws("d")) as ws:
                await send(ws, type="resume", after=0)
                await send(ws, type="run", prompt="outage", scenario="long")
                got = Received()
                await recv_until(ws, got, lambda r: _contents(r) >= 3)
                redis.stop()
                await recv_until(ws, got, lambda r: any(
                    e["code"] == "store_unavailable" for e in r.errors))
                await asyncio.sleep(1.5)  # down for a while: no crash, no busy loop
                assert a.alive()
                redis.start()  # same port, empty (no persistence): the data is gone
                code = await close_code(ws)  # told to resume into what Redis has now
            async with websockets.connect(a.ws("d")) as ws:
                await send(ws, type="resume", after=got.through,
                           epoch=got.attached[0]["epoch"])
                back = await recv_until(ws, Received(), lambda r: bool(r.batches))
                await send(ws, type="run", prompt="after", scenario="very_fast")
                after = await recv_until(ws, Received(), runs_ended(1))
                return got, code, back, after

        got, code, back, after = asyncio.run(scenario())
    finally:
        redis.stop()
    assert [e["code"] for e in got.errors].count("store_unavailable") >= 1
    assert code == 1013
    assert back.attached[0]["mode"] == "snapshot"  # a new epoch: the client starts over
    assert back.attached[0]["epoch"] != got.attached[0]["epoch"]
    assert_conformant(after.events, prompt="after")


def test_workers_flag_serves_one_session_from_several_processes(
        redis_url: str, procs: list[ServerProcess]) -> None:
    w = ServerProcess(redis_url, "--workers", "2", speed=50.0)
    procs.append(w)
    assert "2 workers" in w.line

    async def scenario() -> list[Received]:
        out = []
        for i in range(4):  # new connections land on either worker
            async with websockets.connect(w.ws("wk")) as ws:
                await send(ws, type="resume", after=0)
                await send(ws, type="run", prompt=f"p{i}", scenario="very_fast")
                out.append(await recv_until(ws, Received(), runs_ended(i + 1)))
        return out

    got = asyncio.run(scenario())
    runs = split_runs(got[-1].events)
    assert len(runs) == 4  # every run of the session, whichever worker ran it
    for i, run in enumerate(runs):
        assert_conformant(run, prompt=f"p{i}")
    children = [d for d in os.listdir("/proc") if d.isdigit() and _ppid(int(d)) == w.proc.pid]
    assert len(children) == 2


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


def test_a_password_in_the_store_url_is_never_printed(
        redis_server: RedisProcess, procs: list[ServerProcess]) -> None:
    url = f"redis://user:sekrit-pw@127.0.0.1:{redis_server.port}/0"
    p = ServerProcess(url, "--log-level", "debug")
    procs.append(p)
    assert "redis://user:***@127.0.0.1:" in p.line

    async def touch() -> None:  # make the server talk to Redis (and fail to log in)
        with contextlib.suppress(Exception):
            async with websockets.connect(p.ws("pw")) as ws:
                await send(ws, type="resume", after=0)
                await asyncio.wait_for(ws.recv(), 5)

    asyncio.run(touch())
    p.kill(signal.SIGTERM)
    out = (p.proc.stdout.read() if p.proc.stdout else "") + (
        p.proc.stderr.read() if p.proc.stderr else "")
    assert "sekrit-pw" not in out and "sekrit-pw" not in p.line
    assert "redis" in out  # it did log about the store


def test_store_urls_are_checked_and_redacted() -> None:
    from streampace.server.store import check_store_spec, redact_url

    assert redact_url("rediss://u:p@h:6380/2") == "rediss://u:***@h:6380/2"
    assert redact_url("redis://:p@[::1]:6379/0") == "redis://:***@[::1]:6379/0"
    assert redact_url("redis://h:1/0") == "redis://h:1/0"
    assert check_store_spec("memory") == "memory"
    for bad in ("redis://u:pw@h/x", "mysql://h", "redis://"):
        with pytest.raises(ValueError) as err:
            check_store_spec(bad)
        assert "pw" not in str(err.value)


def test_every_process_announces_the_session_epoch_so_a_resume_moves_over(
        redis_url: str, procs: list[ServerProcess]) -> None:
    """The epoch lives in Redis: a client that reconnects to another process resumes
    in the same numbering instead of being reset to a snapshot (a 'restart')."""
    a, b = ServerProcess(redis_url), ServerProcess(redis_url)
    procs += [a, b]

    async def scenario() -> tuple[Received, Received]:
        ona = Received()
        async with websockets.connect(a.ws("ep")) as wa:
            await send(wa, type="resume", after=0)
            await send(wa, type="run", prompt="one epoch")
            await recv_until(wa, ona, runs_ended(1))
        onb = Received()
        async with websockets.connect(b.ws("ep")) as wb:
            await send(wb, type="resume", after=ona.through, epoch=ona.attached[0]["epoch"])
            await recv_until(wb, onb, lambda r: bool(r.attached))
        return ona, onb

    ona, onb = asyncio.run(scenario())
    assert onb.attached[0]["epoch"] == ona.attached[0]["epoch"]
    assert onb.attached[0]["mode"] in ("live", "log")  # resumed in place, not a snapshot
    assert onb.attached[0]["after"] == ona.through
