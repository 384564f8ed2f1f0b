"""Issue 33 ("hostile clients, round 4"): one socket, one address range or one
upstream cannot take the server.  Real servers on loopback; counts, close codes
and bytes, never wall time."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
import websockets
from streampace.server import StreampaceApp

from .conftest import (
    WAIT_S,
    Received,
    Serve,
    Upstream,
    close_code,
    recv_until,
    runs_ended,
    send,
    sse_event,
    sse_headers,
    write_raw,
)
from .test_admission import _attach, _echo, _frames, _Mounted, _raw_handshake

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
def test_a_ping_flood_from_a_socket_that_does_not_read_is_cut(serve: Serve, attach: bool) -> None:
    """Defect 1: each ping queued a pong and reading went on (+343 MiB in 15 s)."""
    server = serve("demo", client_session_ids=True, attach_timeout_s=WAIT_S * 2)
    sock = _raw_handshake(server.ws_url("pinger"))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        if attach:
            from .test_admission import _masked_text
            sock.sendall(_masked_text('{"type": "resume", "after": 0}'))
        started = time.monotonic()
        sent = _flood_pings(sock, PINGS)
        data = _read_until_closed(sock)
        elapsed = time.monotonic() - started
    finally:
        sock.close()
    assert sent < PINGS, "the server read every ping and queued a pong for each"
    codes = [code for kind, code in _frames(data) if kind == "CLOSE"]
    assert codes in ([], [1008]), codes  # told why when it could still write
    pongs = sum(1 for kind, _ in _frames(data) if kind == "PONG")
    # No more pongs than the control budget pays for (a ping costs 64 + 125 bytes).
    config = server.hub.config
    paid = (config.control_burst_bytes + config.control_bytes_per_s * elapsed) / (64 + 125)
    assert pongs <= paid, (pongs, paid)
    deadline = time.monotonic() + WAIT_S
    while server.server.guard.open:
        assert time.monotonic() < deadline, "the connection is still held"
        time.sleep(0.02)


# -- defect 2: many addresses, each leaving empty sessions behind ------------------------


async def _attach_or_code(url: str, **connect: Any) -> tuple[Any, int | None]:
    """Open and resume: (the socket, None) once attached, or (None, its close code)."""
    ws = await websockets.connect(url, **connect)
    await send(ws, type="resume", after=0)
    try:
        async with asyncio.timeout(WAIT_S):
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("type") == "attached":
                    return ws, None
    except websockets.ConnectionClosed as exc:
        return None, exc.rcvd.code if exc.rcvd else None


async def _no_viewers(server: Any) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while server.hub.viewers:
        assert asyncio.get_running_loop().time() < deadline, "viewers still held"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
def test_sessions_left_empty_lock_nobody_out(
        serve: Serve, store_kind: str, request: pytest.FixtureRequest) -> None:
    """Addresses that each attach once and leave used to fill --max-sessions and
    their own share with "recent" empty sessions: every newcomer got 1013 for
    the whole quiet period."""
    server = serve("demo", speed=200.0, client_session_ids=False, max_sessions=6,
                   max_sessions_per_client=3, quiet_s=600)

    async def scenario() -> list[int | None]:
        codes = []
        for address in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
            for _ in range(4):  # past the address's share, and all of them past the limit
                ws, code = await _attach_or_code(server.ws_url("new"),
                                                 local_addr=(address, 0))
                codes.append(code)
                if ws is not None:
                    await ws.close()
                    await _no_viewers(server)
        # A session that was used still counts as in use for the quiet period.
        ws, code = await _attach_or_code(server.ws_url("new"), local_addr=("127.0.0.6", 0))
        assert ws is not None, code
        await send(ws, type="run", prompt="kept", scenario="very_fast")
        await recv_until(ws, Received(), runs_ended(1))
        await ws.close()
        await _no_viewers(server)
        newcomer, code = await _attach_or_code(server.ws_url("new"),
                                               local_addr=("127.0.0.7", 0))
        codes.append(code)
        assert newcomer is not None
        await newcomer.close()
        return codes

    codes = asyncio.run(scenario())
    assert codes == [None] * 13
    assert len(server.hub.sessions) <= 6
    used = [s for s in server.hub.sessions.values() if s.engine.log.head]
    assert len(used) == 1  # the session with a run was never the one forgotten
    if store_kind == "redis":
        redis = request.getfixturevalue("redis_server")
        assert int(redis.command("ZCARD", "sp:sessions").strip()[1:]) <= 6


def test_new_sessions_are_rate_limited_per_address_and_in_all(serve: Serve) -> None:
    server = serve("demo", client_session_ids=False, new_sessions_per_s=0.01,
                   new_sessions_burst=4, client_new_sessions_per_s=0.01,
                   client_new_sessions_burst=2)

    async def scenario() -> list[int | None]:
        codes = []
        for address in ("127.0.2.1", "127.0.2.1", "127.0.2.1", "127.0.2.2", "127.0.2.3",
                        "127.0.2.4"):
            ws, code = await _attach_or_code(server.ws_url("new"), local_addr=(address, 0))
            codes.append(code)
            if ws is not None:
                await ws.close()
        return codes

    # One address's own share first (4429), then everyone's (1013).
    assert asyncio.run(scenario()) == [None, None, 4429, None, None, 1013]


# -- defect 5: forwarded headers, and IPv6 clients by prefix --------------------------------


def _from(address: str) -> dict[str, Any]:
    return {"additional_headers": {"X-Forwarded-For": address}}


def test_forwarded_headers_from_loopback_are_not_trusted_by_default(serve: Serve) -> None:
    """One local peer writing a new X-Forwarded-For per request made 90 sessions
    past a limit of 64."""
    server = serve("demo", client_session_ids=False, max_sessions_per_client=2)

    async def scenario() -> list[int | None]:
        held, codes = [], []
        for i in range(3):
            ws, code = await _attach_or_code(server.ws_url("new"), **_from(f"192.0.2.{i + 1}"))
            codes.append(code)
            held += [ws] if ws is not None else []
        for ws in held:
            await ws.close()
        return codes

    assert asyncio.run(scenario()) == [None, None, 4429]


def test_a_named_proxy_is_trusted_and_ipv6_clients_count_by_prefix(serve: Serve) -> None:
    server = serve("demo", client_session_ids=False, max_sessions_per_client=2,
                   forwarded_allow_ips=("127.0.0.1",))

    async def scenario() -> list[int | None]:
        held, codes = [], []
        for address in ("2001:db8::1", "2001:db8::2:1", "2001:db8::ffff:3",  # one /64
                        "2001:db8:0:1::1", "192.0.2.1"):  # another /64, an IPv4 client
            ws, code = await _attach_or_code(server.ws_url("new"), **_from(address))
            codes.append(code)
            held += [ws] if ws is not None else []
        for ws in held:
            await ws.close()
        return codes

    assert asyncio.run(scenario()) == [None, None, 4429, None, None]


# -- defect 3: a compression bomb on a mount ---------------------------------------------


def test_a_mount_without_the_guards_says_so_once_and_refuses_what_it_can_see(
        caplog: pytest.LogCaptureFixture) -> None:
    """Under uvicorn's defaults the mount negotiated permessage-deflate and took
    16 MiB messages; it now says once in its log that the guards are missing, and
    refuses a message over its own bound as soon as it sees one."""
    plain = _Mounted(StreampaceApp(_echo), ws_per_message_deflate=True)  # uvicorn's defaults
    guarded_app = StreampaceApp(_echo)
    guarded = _Mounted(guarded_app, **guarded_app.uvicorn_options())
    bomb = json.dumps({"type": "run", "prompt": "a" * (1 << 20)})  # ~1 KB deflated

    async def send_bomb(url: str) -> tuple[bool, int | None]:
        async with websockets.connect(url, max_size=None) as ws:
            compressed = bool(ws.protocol.extensions)
            await ws.send(bomb)
            return compressed, await close_code(ws)

    async def scenario() -> list[tuple[bool, int | None]]:
        return [await send_bomb(plain.ws("new")), await send_bomb(plain.ws("new")),
                await send_bomb(guarded.ws("new"))]

    try:
        with caplog.at_level("WARNING", logger="streampace.server"):
            results = asyncio.run(scenario())
    finally:
        plain.stop()
        guarded.stop()
    assert results == [(True, 1009), (True, 1009), (False, 1009)]
    said = [r for r in caplog.records if "without its guards" in r.getMessage()]
    assert len(said) == 1 and "uvicorn_options()" in said[0].getMessage()
    assert guarded_app.hub.warned_unguarded is False


# -- defect 6: numbers JSON cannot carry, in an upstream's state ------------------------------


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_state_values_json_cannot_carry_end_the_run_before_they_are_logged(
        serve: Serve, upstream: Upstream, store_kind: str, token: str) -> None:
    """They were relayed as bare NaN / Infinity tokens, which strict JSON clients
    cannot parse."""
    from .test_hostile_state import _check, _good_run, _hostile_run, _session

    def script(h: Any, body: Any) -> None:
        sse_headers(h)
        hostile = body["messages"][-1]["content"] == "one"
        events = (_hostile_run(body, [{"op": "add", "path": "/n", "value": "__N__"}])
                  if hostile else _good_run(body))
        for e in events:
            write_raw(h, sse_event(e).replace(b'"__N__"', token.encode()))

    up = upstream(script)
    server = serve(f"agui:{up.url}")
    raw: list[str] = []

    async def session() -> tuple[Received, Received, Received]:
        return await _session(server.ws_url("numbers"))

    live, replay, snap = asyncio.run(session())
    _check(up, live, replay, snap, "upstream_protocol_error", "is not a JSON number")
    for received in (live, replay, snap):
        raw.append(json.dumps(received.batches, allow_nan=False))  # strict JSON throughout
    assert all(token not in text for text in raw)


# -- defect 7: the upstream gets a thread id, not the session's key ---------------------------


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
def test_an_upstream_gets_a_thread_id_that_is_not_the_session_key(
        serve: Serve, upstream: Upstream, store_kind: str) -> None:
    from .test_hostile_state import _good_run

    def script(h: Any, body: Any) -> None:
        sse_headers(h)
        for e in _good_run(body):  # echoes the threadId it was given
            write_raw(h, sse_event(e))

    up = upstream(script)
    server = serve(f"agui:{up.url}", client_session_ids=False)

    async def one_session(runs: int) -> tuple[str, Received]:
        ws, hello = await _attach(server.ws_url("new"))
        got = Received()
        for n in range(runs):
            await send(ws, type="run", prompt=f"p{n}")
            await recv_until(ws, got, runs_ended(n + 1))
        await ws.close()
        return hello["sessionId"], got

    async def scenario() -> tuple[str, str, Received, int | None]:
        first, got = await one_session(2)
        second, _ = await one_session(1)
        # The thread id opens nothing.
        thread = up.requests[0]["body"]["threadId"]
        async with websockets.connect(server.ws_url(thread)) as ws:
            await send(ws, type="resume", after=0)
            code = await close_code(ws)
        return first, second, got, code

    first, second, got, code = asyncio.run(scenario())
    threads = [r["body"]["threadId"] for r in up.requests]
    assert threads[0] == threads[1] != threads[2]  # stable per session, one per session
    assert first not in threads and second not in threads
    assert not any(first in json.dumps(r["body"]) for r in up.requests[:2])
    # Viewers still see their session's own id on its runs.
    assert {e["threadId"] for e in got.events if e["type"] == "RUN_STARTED"} == {first}
    assert code in (1008, 4404)


# -- defect 4: the byte budget as sessions grow ----------------------------------------------


def test_sessions_made_empty_and_then_filled_stay_near_the_byte_budget(serve: Serve) -> None:
    """The budget was checked only when a session was made: 12 sessions made empty
    and then filled reached 4.1x it."""
    budget = 400_000
    server = serve("demo", speed=200.0, client_session_ids=True,
                   memory_budget_bytes=budget, max_sessions_per_client=0)
    prompt = "p" * 32_000

    async def scenario() -> tuple[list[str], Received]:
        sockets = [(await _attach(server.ws_url(f"fill-{i}")))[0] for i in range(12)]
        codes: list[str] = []
        for _ in range(4):  # 12 x 4 runs x 32 KB x 2 (log and kept text): ~3 MB
            for ws in sockets:
                await send(ws, type="run", prompt=prompt, scenario="very_fast")
                got = await recv_until(ws, Received(),
                                       lambda r: runs_ended(1)(r) or bool(r.errors))
                codes += [e["code"] for e in got.errors]
        for ws in sockets:
            await ws.close()
        # What a session had stays: a late viewer gets it whole.
        late, _ = await _attach(server.ws_url("fill-0"))
        await send(late, type="resume", after=0)
        kept = await recv_until(late, Received(), runs_ended(1))
        await late.close()
        return codes, kept

    codes, kept = asyncio.run(scenario())
    assert "server_busy" in codes and set(codes) == {"server_busy"}
    held = server.hub.bytes_held()
    assert budget <= held < 2 * budget, held
    assert any(e["type"] == "RUN_FINISHED" for e in kept.events)


def test_a_socket_past_its_message_rate_is_closed_whatever_server_runs_the_app(
        serve: Serve) -> None:
    """What ASGI lets the app see it bounds itself, under any server (defect 3)."""
    server = serve("demo", speed=200.0, client_session_ids=True, messages_burst=6,
                   messages_per_s=0.01)

    async def scenario() -> tuple[int | None, str]:
        ws, _ = await _attach(server.ws_url("chatty"))  # message 1
        try:
            for _ in range(20):
                await send(ws, type="run", prompt="hi", scenario="very_fast")
                await send(ws, type="cancel")
            async with asyncio.timeout(WAIT_S):
                while True:
                    await ws.recv()
        except websockets.ConnectionClosed as exc:
            return (exc.rcvd.code, exc.rcvd.reason) if exc.rcvd else (None, "")
        return None, ""

    assert asyncio.run(scenario()) == (1008, "too many messages")
