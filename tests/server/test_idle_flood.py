"""Issue 18 item 4: ~1 100 idle and half-open connections from one client, against a
`streampace serve` process with the usual 1 024 file-descriptor limit.

They used to exhaust the descriptors: real viewers' handshakes waited in the
kernel's queue until they timed out, and the server spent a core logging about
2 000 "socket.accept() out of system resource" tracebacks a second (CPython
3.11 schedules one retry per backlog slot).  Now the address's connections past
its share are cut at accept, the rest are closed after the handshake or attach
timeout, the process never reaches its descriptor limit, and a viewer from
another address attaches and completes a run meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import websockets

from .conftest import WAIT_S, Received, recv_until, runs_ended, send

SRC = Path(__file__).resolve().parents[2] / "py"
FD_LIMIT = 1024
FLOOD = 1100


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


@pytest.fixture
def own_fds() -> None:
    """The test itself holds ~1 100 sockets: it needs more than the server may."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4 * FLOOD
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the hard descriptor limit ({hard}) is too low for the flood")
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def test_a_flood_of_idle_connections_from_one_client_locks_nobody_out(
        own_fds: None, tmp_path: Path) -> None:
    errors = tmp_path / "server.err"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = f"{SRC}{os.pathsep}{env.get('PYTHONPATH', '')}"
    with errors.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streampace", "serve", "--port", "0", "--speed", "50",
             "--client-session-ids", "--handshake-timeout", "1", "--attach-timeout", "1",
             "--log-level", "warning"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, preexec_fn=_limit_fds)
    try:
        line = ""
        deadline = time.monotonic() + WAIT_S
        while "serving" not in line:
            assert time.monotonic() < deadline and proc.poll() is None, errors.read_text()
            line = proc.stdout.readline() if proc.stdout else ""
        port = int(re.search(r":(\d+)/", line).group(1))  # type: ignore[union-attr]
        held, ws_codes, viewer = asyncio.run(_flood(port))
        server_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
    finally:
        proc.kill()
        proc.wait(WAIT_S)
    log = errors.read_text()
    assert viewer.events[-1]["type"] == "RUN_FINISHED"  # the bystander got its whole run
    assert held == 0, f"{held} of the flood's raw sockets were never closed"
    assert set(ws_codes) <= {1008, 4429, None}, ws_codes  # attach timeout, the address's share
    assert server_fds < FD_LIMIT // 2
    assert "out of file descriptors" not in log and "out of system resource" not in log, log


async def _flood(port: int) -> tuple[int, list[int | None], Received]:
    raw: list[socket.socket] = []
    sockets: list[object] = []
    for i in range(FLOOD):
        kind = i % 3
        if kind == 2:
            with contextlib.suppress(OSError, websockets.InvalidHandshake, TimeoutError):
                sockets.append(await websockets.connect(
                    f"ws://127.0.0.1:{port}/ws/sessions/idle-{i}", open_timeout=5))
            continue
        s = socket.socket()
        s.setblocking(False)
        with contextlib.suppress(OSError):
            await asyncio.get_running_loop().sock_connect(s, ("127.0.0.1", port))
        if kind == 1:
            with contextlib.suppress(OSError):
                await asyncio.get_running_loop().sock_sendall(
                    s, b"GET /ws/sessions/x HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a request
        raw.append(s)

    # A real viewer from another address, while the flood holds what it can.
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws/sessions/real",
                                  local_addr=("127.0.0.2", 0), open_timeout=WAIT_S) as ws:
        await send(ws, type="resume", after=0)
        await send(ws, type="run", prompt="am I locked out?", scenario="very_fast")
        viewer = await recv_until(ws, Received(), runs_ended(1))

    async def closed(s: socket.socket) -> bool:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(WAIT_S):
                while await loop.sock_recv(s, 4096):
                    pass
            return True  # the server closed it
        except TimeoutError:
            return False  # still open: never reaped
        except OSError:
            return True  # reset by the server (cut at accept)
        finally:
            s.close()

    async def code(ws: object) -> int | None:
        try:
            async with asyncio.timeout(WAIT_S):
                while True:
                    await ws.recv()  # type: ignore[attr-defined]
        except websockets.ConnectionClosed as exc:
            return exc.rcvd.code if exc.rcvd else None

    done = await asyncio.gather(*(closed(s) for s in raw))
    codes = await asyncio.gather(*(code(ws) for ws in sockets))
    return done.count(False), list(codes), viewer
