"""Issue 12: the demo page on `streampace serve` through dropped connections and a
server crash (SIGKILL + restart on the same port): after the restart the page
keeps what it showed, marks the lost run, and the next answer it shows below
equals the full answer byte for byte. Also: on plain static files the page probes
for a server without a failed WebSocket handshake in the console."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
import websockets
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from streampace.client.session_client import SessionClient
from streampace.conversation.live_state import LiveState

from .browser_harness import (
    BOOT_TIMEOUT_S,
    ROOT,
    console_errors,
    free_port,
    make_driver,
    wait_for,
    wait_port,
)
from .test_demo import RUN_DONE

pytestmark = pytest.mark.browser

GLUE = ("const done = arguments[arguments.length - 1];"
        "import(new URL('demo/demo.js', location.href).href).then(m => done(%s));")


def _serve(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streampace", "serve", "--port", str(port), "--speed", "1.5",
         "--log-level", "warning"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc)
    return proc


def _run(drv: Any, label: str) -> None:
    Select(drv.find_element(By.ID, "scenario")).select_by_visible_text(label)
    wait_for(drv, "return !document.getElementById('run').disabled", 60)
    drv.find_element(By.ID, "run").click()
    wait_for(drv, "return document.querySelector('#paced .sp-view')"
             ".getAttribute('data-run') === 'running'", 30)


def _drop(drv: Any) -> None:
    drv.execute_async_script(GLUE % "(m.earlySocket.drop(), true)")


def _wait_connected(drv: Any) -> None:
    for _ in range(300):
        if drv.execute_async_script(GLUE % "m.earlySocket.connected"):
            return
        time.sleep(0.05)
    raise AssertionError("the page did not reconnect")


def _shown(item: Any) -> str:
    """A message's text as the page shows it: assistant messages are Markdown."""
    if item.role != "assistant":
        return item.text
    from streampace.markdown import MarkdownStream
    from streampace.markdown.tree import text_of

    stream = MarkdownStream()
    stream.feed(item.text)
    stream.close()
    return "".join(text_of(node) for node in stream.nodes())


def live_text(drv: Any, pane: str) -> str:
    """The pane's messages of the current session (not those kept from before)."""
    return drv.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' .sp-message .sp-text')]"
        ".filter(n => !n.closest('.sp-earlier')).map(n => n.textContent).join('\\n')",
        f"#{pane}")


def _reference_text(port: int, session: str) -> str:
    """What a fresh viewer of the session shows: every message, in order."""

    async def read() -> str:
        state = LiveState()

        def deliver(events: list[dict]) -> None:
            state.apply(events)

        client = SessionClient(deliver)
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws/sessions/{session}") as ws:
            await ws.send(json.dumps({"type": "resume", "after": 0}))
            async with asyncio.timeout(30):
                while state.status not in ("finished", "error"):
                    client.receive(await ws.recv())
        return "\n".join(_shown(i) for i in state.items() if i.kind == "message")

    return asyncio.run(read())


def test_page_survives_drops_and_a_server_restart(runtime_ready: None) -> None:
    port = free_port()
    proc = _serve(port)
    drv = make_driver()
    try:
        drv.get(f"http://127.0.0.1:{port}/")
        wait_for(drv, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
                 BOOT_TIMEOUT_S)
        assert drv.execute_script("return window.streampaceDemo.mode") == "server"

        # A long answer, cut by a crash: SIGKILL mid-run, then a new server process.
        _run(drv, "Long answer")
        wait_for(drv, "return document.querySelector('#paced').textContent.length > 200", 60)
        _drop(drv)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc = _serve(port)
        # The page reconnects into the new epoch: what it showed stays above, the
        # cut run marked lost by one line (issue 27), not replaced by an error.
        wait_for(drv, "return !!document.querySelector('#paced .sp-earlier .sp-lost')", 60)
        kept = drv.execute_script(
            "return document.querySelector('#paced .sp-earlier').textContent.length")
        assert kept > 200
        status = drv.execute_script(
            "return document.querySelector('#paced .sp-status').textContent")
        assert "Error" not in status, status

        # The next run, with two drops in the middle: its full answer, byte for byte.
        _run(drv, "Fast model")
        for _ in range(2):
            wait_for(drv, "return document.querySelector('#paced').textContent.length > 0", 30)
            _wait_connected(drv)
            _drop(drv)
            time.sleep(0.4)
        wait_for(drv, RUN_DONE, 90, "finished")
        # The page asked for a new session (ws/sessions/new); its socket now names the
        # one the server minted after the restart.
        session = drv.execute_async_script(GLUE % "m.earlySocket.url").rsplit("/", 1)[1]
        assert session != "new"
        expected = _reference_text(port, session)
        paced, delivered = live_text(drv, "paced"), live_text(drv, "delivered")
        assert len(expected) > 300
        assert paced == expected
        assert delivered == expected
        opens = drv.execute_async_script(GLUE % "m.earlySocket.opens")
        assert opens >= 4  # first open, the reconnect after the crash, two drops
    finally:
        drv.quit()
        proc.kill()
        proc.wait(30)


def test_static_files_probe_logs_no_websocket_error(runtime_ready: None) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    drv = make_driver()
    try:
        wait_port(port, proc)
        drv.get(f"http://127.0.0.1:{port}/")
        wait_for(drv, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
                 BOOT_TIMEOUT_S)
        assert drv.execute_script("return window.streampaceDemo.mode") == "sim"
        errors = [m for m in console_errors(drv) if "favicon" not in m]
        assert errors == [], errors
    finally:
        drv.quit()
        proc.terminate()
        proc.wait(10)
