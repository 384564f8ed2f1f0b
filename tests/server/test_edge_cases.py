"""Issue 12 item 6: nested JSON, encoded slashes in session ids, very long URLs."""

from __future__ import annotations

import asyncio
import socket

import pytest
import websockets

from .conftest import Received, Serve, close_code, errors_at_least, recv_until, runs_ended, send


@pytest.mark.parametrize("raw", ["[" * 1000, "{\"a\":" * 1000])
def test_deeply_nested_json_is_a_bad_json_error_and_the_socket_stays(
        serve: Serve, raw: str) -> None:
    server = serve("demo", speed=100.0)

    async def scenario() -> Received:
        async with websockets.connect(server.ws_url("nest")) as ws:
            got = Received()
            await ws.send(raw)
            await recv_until(ws, got, errors_at_least(1))
            await send(ws, type="run", prompt="still here", scenario="fast")
            return await recv_until(ws, got, runs_ended(1))

    got = asyncio.run(scenario())
    assert got.errors[0]["code"] == "bad_json"
    assert "deep" in got.errors[0]["message"]


def test_nested_json_counts_toward_the_abuse_meter(serve: Serve) -> None:
    server = serve("demo", abuse_errors=3)

    async def scenario() -> int | None:
        async with websockets.connect(server.ws_url("nest-abuse")) as ws:
            for _ in range(3):
                await ws.send("[" * 1000)
            return await close_code(ws)

    assert asyncio.run(scenario()) == 4400


@pytest.mark.parametrize("path", ["a%2Fb", "a%2fb%2F..", "%2F", "a/b"])
def test_encoded_slash_in_a_session_id_closes_with_4400(serve: Serve, path: str) -> None:
    server = serve("demo")

    async def scenario() -> int | None:
        url = server.url.replace("http", "ws") + "ws/sessions/" + path
        async with websockets.connect(url) as ws:
            return await close_code(ws)

    assert asyncio.run(scenario()) == 4400
    assert not server.hub.sessions


def _raw_request(port: int, path: str, upgrade: bool) -> bytes:
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if upgrade:
        req += ("Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall((req + "\r\n").encode())
        try:
            return c.recv(100)
        except TimeoutError:
            return b"(no answer in 5 s)"


@pytest.mark.parametrize("length", [8_200, 9_000, 60_000])
def test_a_very_long_websocket_url_gets_an_answer(serve: Serve, length: int) -> None:
    server = serve("demo")
    port = int(server.url.rstrip("/").rsplit(":", 1)[1])
    answer = _raw_request(port, "/ws/sessions/" + "a" * length, upgrade=True)
    assert answer.startswith(b"HTTP/1.1 414"), answer
    # The server is fine afterwards.
    ok = _raw_request(port, "/ws/sessions/ok", upgrade=True)
    assert ok.startswith(b"HTTP/1.1 101"), ok
