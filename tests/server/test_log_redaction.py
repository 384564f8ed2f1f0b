"""A session id is a key: it never reaches the server's log, not even through the
ASGI server's own handshake lines (uvicorn logs each WebSocket's path)."""

from __future__ import annotations

import asyncio
import logging
import signal

import pytest
import websockets
from streampace.server.app import create_app
from streampace.server.config import ServerConfig
from streampace.server.log_redaction import redact_session_path
from streampace.server.sources import parse_source

from .conftest import WAIT_S, send
from .test_multiprocess import ServerProcess

SECRET = "k3y-0f-the-c0nversation-0123456789"


@pytest.mark.parametrize(("text", "shown"), [
    (f"/ws/sessions/{SECRET}", "/ws/sessions/\N{HORIZONTAL ELLIPSIS}"),
    (f'1.2.3.4:5 - "WebSocket /chat/ws/sessions/{SECRET}?a=b" [accepted]',
     '1.2.3.4:5 - "WebSocket /chat/ws/sessions/\N{HORIZONTAL ELLIPSIS}" [accepted]'),
    ("/ws/sessions/new", "/ws/sessions/new"),
    (f"/ws/sessions/{SECRET} and /ws/sessions/{SECRET}x",
     "/ws/sessions/\N{HORIZONTAL ELLIPSIS} and /ws/sessions/\N{HORIZONTAL ELLIPSIS}"),
    ("GET /index.html", "GET /index.html"),
])
def test_a_session_path_is_shown_without_its_id(text: str, shown: str) -> None:
    assert redact_session_path(text) == shown


def test_an_app_hides_ids_in_the_asgi_servers_handshake_lines(
        caplog: pytest.LogCaptureFixture) -> None:
    """A mounted app (the host runs its own uvicorn) gets the filter too."""
    create_app(ServerConfig(), parse_source("demo"), static=False)
    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        logging.getLogger("uvicorn.error").info(
            '%s - "WebSocket %s" [accepted]', "127.0.0.1:1", f"/ws/sessions/{SECRET}")
    said = [r.getMessage() for r in caplog.records]
    assert said and all(SECRET not in m for m in said), said


def test_serve_at_info_level_never_logs_a_session_id() -> None:
    proc = ServerProcess("memory", "--log-level", "info")
    try:
        async def visit() -> None:
            async with websockets.connect(proc.ws(SECRET)) as ws:
                await send(ws, type="resume", after=0)
                await asyncio.wait_for(ws.recv(), WAIT_S)

        asyncio.run(visit())
    finally:
        proc.kill(signal.SIGTERM)
    logged = (proc.proc.stderr.read() if proc.proc.stderr else "") + (
        proc.proc.stdout.read() if proc.proc.stdout else "")
    assert "WebSocket /ws/sessions/" in logged  # the handshake line is there
    assert SECRET not in logged
