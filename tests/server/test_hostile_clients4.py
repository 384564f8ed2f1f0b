"""Issue 33 ("hostile clients, round 4"): one socket, one address range or one
upstream cannot take the server.  Real servers on loopback; counts, close codes
and bytes, never wall time."""

from __future__ import annotations

import socket
import time

import pytest

from .conftest import WAIT_S
from .test_admission import _frames, _raw_handshake

PING = b"\x89\xfd" + b"\x00\x00\x00\x00" + b"p" * 125  # a masked 125-byte ping (mask 0)
PINGS = 40_000  # ~5.2 MB of pings: what the attacker sends in well under a second


def _flood_pings(sock: socket.socket, count: int) -> int:
    """Send up to ``count`` pings without reading; how many went out before the
    server ended the connection."""
    sock.settimeout(WAIT_S)
    burst = PING * 100
    sent = 0
    try:
        while sent < count:
            sock.sendall(burst)
            sent += 100
    except OSError:  # reset or broken pipe: the server cut us
        pass
    return sent


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(WAIT_S)
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except OSError:
        pass
    return data


@pytest.mark.parametrize("attach", [False, True])
def test_a_ping_flood_from_a_socket_that_does_not_read_is_cut(serve, attach):
    """Defect 1: each ping queued a pong and reading went on (+343 MiB in 15 s)."""
    server = serve("demo", client_session_ids=True, attach_timeout_s=WAIT_S * 2)
    sock = _raw_handshake(server.ws_url("pinger"))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        if attach:
            from .test_admission import _masked_text
            sock.sendall(_masked_text('{"type": "resume", "after": 0}'))
        sent = _flood_pings(sock, PINGS)
        data = _read_until_closed(sock)
    finally:
        sock.close()
    assert sent < PINGS, "the server read every ping and queued a pong for each"
    codes = [code for kind, code in _frames(data) if kind == "CLOSE"]
    assert codes in ([], [1008]), codes  # told why when it could still write
    pongs = sum(1 for kind, _ in _frames(data) if kind == "PONG")
    assert pongs < sent // 10  # pongs for a peer that does not read are not queued
    deadline = time.monotonic() + WAIT_S
    while server.server.guard.open:
        assert time.monotonic() < deadline, "the connection is still held"
        time.sleep(0.02)
