"""Graceful shutdown: runs end with RUN_ERROR, buffers are flushed, sockets close 1001."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import websockets

from .conftest import WAIT_S, Received, Serve, assert_conformant, recv_until, send


def _content_count(r: Received) -> int:
    return sum(e["type"] == "TEXT_MESSAGE_CONTENT" for e in r.events)


async def _watch_until_closed(url: str, got: Received, started: threading.Event) -> int | None:
    async with websockets.connect(url) as ws:
        await send(ws, type="resume", after=0)
        await send(ws, type="run", prompt="stop me", scenario="long")
        await recv_until(ws, got, lambda r: _content_count(r) >= 2)
        started.set()
        try:
            async with asyncio.timeout(WAIT_S):
                while True:
                    got.add(await ws.recv())
        except websockets.ConnectionClosed as exc:
            return exc.rcvd.code if exc.rcvd else None
    return None


def test_shutdown_ends_runs_flushes_and_closes_1001(serve: Serve) -> None:
    server = serve("demo", speed=1.0)
    got = Received()
    started = threading.Event()
    result: list[int | None] = []
    t = threading.Thread(target=lambda: result.append(
        asyncio.run(_watch_until_closed(server.ws_url("bye"), got, started))))
    t.start()
    assert started.wait(WAIT_S)
    server.stop()
    t.join(WAIT_S)
    assert result == [1001]
    assert_conformant(got.events, prompt="stop me")
    assert got.events[-1]["type"] == "RUN_ERROR"
    assert got.events[-1]["code"] == "server_shutdown"


def test_cli_prints_url_and_ctrl_c_is_graceful(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    src = Path(__file__).resolve().parents[2] / "py"
    env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streampace", "serve", "--port", "0", "--speed", "1",
         "--log-level", "warning", "--client-session-ids"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
        line = ""
        deadline = time.monotonic() + WAIT_S
        while "serving" not in line:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
            line = proc.stdout.readline()
        served = re.search(r"http://\S+/", line)
        assert served is not None, line
        url = served.group(0)
        assert url.startswith("http://127.0.0.1:")
        got = Received()
        started = threading.Event()
        result: list[int | None] = []
        ws_url = url.replace("http://", "ws://") + "ws/sessions/cli"
        t = threading.Thread(target=lambda: result.append(
            asyncio.run(_watch_until_closed(ws_url, got, started))))
        t.start()
        assert started.wait(WAIT_S)
        proc.send_signal(signal.SIGINT)
        t.join(WAIT_S)
        assert proc.wait(WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert result == [1001]
    assert got.events[-1]["code"] == "server_shutdown"
    assert_conformant(got.events, prompt="stop me")


def test_cli_rejects_a_bad_source(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "RUN_STARTED"}\n')
    for args, needle in (
        (["--source", "nope"], "unknown source"),
        (["--source", f"replay:{bad}"], "bad.jsonl:1"),
        (["--source", "openai:http://127.0.0.1:9"], "--model"),
        (["--source", "agui:ftp://x"], "http"),
    ):
        out = subprocess.run([sys.executable, "-m", "streampace", "serve", *args],
                             capture_output=True, text=True, timeout=WAIT_S)
        assert out.returncode == 2, (args, out.stderr)
        assert needle in out.stderr, (args, out.stderr)
