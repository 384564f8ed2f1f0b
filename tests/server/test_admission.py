"""Issue 18 items 3-5: who gets in, on which session, and what a socket may cost
before it is anyone's viewer.  Real servers on loopback (and a real redis-server
where the store matters); close codes, counts and bytes, never wall time."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import uvicorn
import websockets
from streampace.server import StreampaceApp

from .conftest import WAIT_S, Received, Serve, close_code, recv_until, runs_ended, send
from .redis_harness import RedisProcess

OTHER_ADDRESS = "127.0.0.2"  # loopback too: another client as far as the server can tell


async def _attach(url: str, **connect: Any) -> tuple[Any, dict[str, Any]]:
    ws = await websockets.connect(url, **connect)
    await send(ws, type="resume", after=0)
    got = await recv_until(ws, Received(), lambda r: bool(r.attached or r.errors))
    return ws, got.attached[0]


def _new(server: Any) -> str:
    return server.ws_url("new")


# -- a socket that never attaches ------------------------------------------------


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
def test_sockets_that_never_attach_create_nothing_and_are_closed(
        serve: Serve, store_kind: str, request: pytest.FixtureRequest) -> None:
    server = serve("demo", client_session_ids=True, attach_timeout_s=0.3)
    redis = request.getfixturevalue("redis_server") if store_kind == "redis" else None

    async def scenario() -> list[int | None]:
        # A cancel is not an attach: refused without making the session.  (Sent at
        # once: opening the other sockets can take longer than the attach timeout.)
        sockets = [await websockets.connect(server.ws_url("bare-0"))]
        await send(sockets[0], type="cancel")
        sockets += [await websockets.connect(server.ws_url(f"bare-{i}")) for i in range(1, 30)]
        sockets += [await websockets.connect(_new(server)) for _ in range(10)]
        return list(await asyncio.gather(*(close_code(ws) for ws in sockets)))

    codes = asyncio.run(scenario())
    assert codes == [1008] * 40
    deadline = time.monotonic() + WAIT_S
    while server.hub.sockets.total():  # each handler ends just after its close is sent
        assert time.monotonic() < deadline, "sockets still counted"
        time.sleep(0.02)
    assert server.hub.sessions == {} and server.hub.bytes_held() == 0
    if redis is not None:  # not one key, let alone a 7-day one (the data set's marker aside)
        assert redis.command("KEYS", "*").split(b"\r\n")[2:-1:2] == [b"sp:instance"]


# -- session ids are capabilities ----------------------------------------------------


def test_the_server_mints_ids_and_refuses_ids_it_did_not_make(serve: Serve) -> None:
    server = serve("demo", speed=200.0, client_session_ids=False)

    async def scenario() -> tuple[dict, dict, dict, Received, int | None]:
        first, hello = await _attach(_new(server))
        _, other = await _attach(_new(server))
        await send(first, type="run", prompt="mine", scenario="very_fast")
        await recv_until(first, Received(), runs_ended(1))
        await first.close()
        again, back = await _attach(server.ws_url(hello["sessionId"]))  # its capability
        replay = await recv_until(again, Received(), runs_ended(1))
        await again.close()
        async with websockets.connect(server.ws_url("made-up-by-a-client")) as guess:
            await send(guess, type="resume", after=0)
            unknown = await close_code(guess)
        return hello, other, back, replay, unknown

    hello, other, back, replay, unknown = asyncio.run(scenario())
    assert back["epoch"] == hello["epoch"] and back["sessionId"] == hello["sessionId"]
    sid = hello["sessionId"]
    assert len(sid) == 22 and sid != other["sessionId"]  # 128 bits, URL-safe base64
    assert set(sid) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert replay.events[-1]["type"] == "RUN_FINISHED"  # the same session, by its id
    assert unknown == 4404
    assert "made-up-by-a-client" not in server.hub.sessions


def test_client_chosen_ids_where_the_operator_allows_them(serve: Serve) -> None:
    server = serve("demo", client_session_ids=True)

    async def scenario() -> dict:
        ws, hello = await _attach(server.ws_url("my-own-id"))
        await ws.close()
        return hello

    assert asyncio.run(scenario())["sessionId"] == "my-own-id"


# -- the mounted app: authorize hook, Host and Origin ----------------------------------


class _Mounted:
    """A StreampaceApp served by plain uvicorn (as a host application would)."""

    def __init__(self, app: Any, **uvicorn_options: Any) -> None:
        self.app = app
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.sock = sock
        self.port = sock.getsockname()[1]
        uvicorn_options.setdefault("ws_per_message_deflate", False)
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning",
                                                    **uvicorn_options))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)

    def ws(self, session: str) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/sessions/{session}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT_S)
        self.sock.close()


async def _echo(run: Any) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"}
    yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": run.prompt}
    yield {"type": "TEXT_MESSAGE_END", "messageId": "a"}


@pytest.fixture
def mounted() -> Iterator[Any]:
    made: list[_Mounted] = []

    def factory(guarded: bool = False, **options: Any) -> _Mounted:
        app = StreampaceApp(_echo, **options)
        m = _Mounted(app, **(app.uvicorn_options() if guarded else {}))
        made.append(m)
        return m

    yield factory
    for m in made:
        m.stop()


def test_the_authorize_hook_decides_at_the_handshake(mounted: Callable[..., _Mounted]) -> None:
    asked: list[tuple[str, bool, str | None]] = []
    owners: dict[str, str] = {}

    async def authorize(websocket: Any, session_id: str, new: bool) -> bool:
        user = websocket.cookies.get("user")
        asked.append((session_id, new, user))
        if user is None:
            return False
        if new:
            owners[session_id] = user  # the host application remembers who owns it
            return True
        return owners.get(session_id) == user

    m = mounted(authorize=authorize)

    async def scenario() -> tuple[dict, Received, int | None, int | None]:
        alice = {"additional_headers": {"Cookie": "user=alice"}}
        ws, hello = await _attach(m.ws("new"), **alice)
        await send(ws, type="run", prompt="alice's secret")
        got = await recv_until(ws, Received(), runs_ended(1))
        await ws.close()
        sid = hello["sessionId"]
        async with websockets.connect(m.ws(sid),
                                      additional_headers={"Cookie": "user=mallory"}) as bad:
            mallory = await close_code(bad)
        async with websockets.connect(m.ws(sid)) as anon:
            anonymous = await close_code(anon)
        return hello, got, mallory, anonymous

    hello, got, mallory, anonymous = asyncio.run(scenario())
    sid = hello["sessionId"]
    assert asked[0] == (sid, True, "alice")  # the minted id, before any session existed
    assert any(e.get("delta") == "alice's secret" for e in got.events)
    assert mallory == 4401 and anonymous == 4401
    assert list(m.app.hub.sessions) == [sid]  # refused sockets made and read nothing


def test_a_rebinding_page_is_refused_and_allowed_hosts_let_a_real_name_in(
        mounted: Callable[..., _Mounted]) -> None:
    local = mounted()
    named = mounted(allowed_hosts=["chat.example"])

    async def code(m: _Mounted, host: str, origin: str) -> int | None:
        # The name in the URL is the Host header; the connection goes to loopback,
        # as a rebound name's would.
        async with websockets.connect(f"ws://{host}/ws/sessions/new", host="127.0.0.1",
                                      port=m.port, origin=origin) as ws:  # type: ignore[arg-type]
            try:
                await send(ws, type="resume", after=0)
                async with asyncio.timeout(WAIT_S):
                    msg = json.loads(await ws.recv())
                return 0 if msg.get("type") == "attached" else -1
            except websockets.ConnectionClosed as exc:
                return exc.rcvd.code if exc.rcvd else None

    async def scenario() -> list[int | None]:
        p = local.port
        return [
            await code(local, f"127.0.0.1:{p}", f"http://127.0.0.1:{p}"),  # the real page
            await code(local, f"evil.example:{p}", f"http://evil.example:{p}"),  # rebinding
            await code(named, f"chat.example:{named.port}", f"http://chat.example:{named.port}"),
            await code(named, f"evil.example:{named.port}", f"http://evil.example:{named.port}"),
            await code(named, f"chat.example:{named.port}", "http://evil.example"),
        ]

    assert asyncio.run(scenario()) == [0, 4403, 0, 4403, 4403]


# -- per-address limits -----------------------------------------------------------------


def test_sockets_per_address_are_limited_and_other_addresses_are_not(serve: Serve) -> None:
    server = serve("demo", client_session_ids=True, max_connections_per_client=3)

    async def scenario() -> tuple[int | None, dict]:
        held = [await websockets.connect(server.ws_url(f"c{i}")) for i in range(3)]
        async with websockets.connect(server.ws_url("c3")) as fourth:
            refused = await close_code(fourth)
        ws, hello = await _attach(server.ws_url("other"), local_addr=(OTHER_ADDRESS, 0))
        await ws.close()
        for h in held:
            await h.close()
        return refused, hello

    refused, hello = asyncio.run(scenario())
    assert refused == 4429 and hello["sessionId"] == "other"


def test_sessions_per_address_are_limited(serve: Serve) -> None:
    server = serve("demo", max_sessions_per_client=2)

    async def scenario() -> tuple[int | None, str]:
        a, _ = await _attach(_new(server))
        b, _ = await _attach(_new(server))
        async with websockets.connect(_new(server)) as third:
            await send(third, type="resume", after=0)
            refused = await close_code(third)
        c, hello = await _attach(_new(server), local_addr=(OTHER_ADDRESS, 0))
        for ws in (a, b, c):
            await ws.close()
        return refused, hello["sessionId"]

    refused, other = asyncio.run(scenario())
    assert refused == 4429 and other in server.hub.sessions


# -- eviction and the byte budget --------------------------------------------------------


def test_a_session_used_recently_is_never_forgotten_for_a_new_one(serve: Serve) -> None:
    server = serve("demo", speed=200.0, client_session_ids=True, max_sessions=1, quiet_s=600)

    async def scenario() -> tuple[int | None, Received]:
        ws, _ = await _attach(server.ws_url("recent"))
        await send(ws, type="run", prompt="keep me", scenario="very_fast")
        got = await recv_until(ws, Received(), runs_ended(1))
        await ws.close()  # nobody watches it now, but it ran a moment ago
        deadline = asyncio.get_running_loop().time() + WAIT_S
        while server.hub.sessions["recent"].viewers:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        async with websockets.connect(server.ws_url("newcomer")) as ws2:
            await send(ws2, type="resume", after=0)
            refused = await close_code(ws2)
        return refused, got

    refused, got = asyncio.run(scenario())
    assert refused == 1013
    assert list(server.hub.sessions) == ["recent"]
    assert server.hub.sessions["recent"].log.head == got.through  # kept whole


def test_over_the_byte_budget_new_sessions_and_runs_are_refused_and_old_text_stays(
        serve: Serve) -> None:
    server = serve("demo", speed=200.0, client_session_ids=True, memory_budget_bytes=20_000)

    async def scenario() -> tuple[int | None, str, Received, Received]:
        ws, _ = await _attach(server.ws_url("big"))
        await send(ws, type="run", prompt="x" * 16_000, scenario="very_fast")
        first = await recv_until(ws, Received(), runs_ended(1))
        async with websockets.connect(server.ws_url("late")) as late:
            await send(late, type="resume", after=0)
            try:
                async with asyncio.timeout(WAIT_S):
                    while True:
                        await late.recv()
            except websockets.ConnectionClosed as exc:
                code, reason = (exc.rcvd.code, exc.rcvd.reason) if exc.rcvd else (None, "")
        # The session may not grow past the budget either (issue 33 item 4) ...
        await send(ws, type="run", prompt="still here", scenario="very_fast")
        refused = await recv_until(ws, Received(), lambda r: bool(r.errors))
        await ws.close()
        # ... and what it has stays: a viewer resuming gets the whole run.
        again, _ = await _attach(server.ws_url("big"))
        kept = await recv_until(again, Received(), runs_ended(1))
        await again.close()
        def text(r: Received) -> str:
            return "".join(e["delta"] for e in r.events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert text(kept) == text(first) and kept.events[-1]["type"] == "RUN_FINISHED"
        return code, reason, refused, kept

    code, reason, refused, kept = asyncio.run(scenario())
    assert code == 1013 and "memory budget" in reason
    assert [e["code"] for e in refused.errors] == ["server_busy"]
    assert "memory budget" in refused.errors[0]["message"]
    assert "late" not in server.hub.sessions
    assert server.hub.bytes_held() >= 20_000


# -- idle, half-open and stalled connections ----------------------------------------------


def _raw_handshake(url: str) -> socket.socket:
    """A WebSocket opened by hand: this peer never answers pings and never reads
    unless the test does."""
    from websockets.client import ClientProtocol
    from websockets.uri import parse_uri

    uri = parse_uri(url)
    sock = socket.create_connection((uri.host, uri.port), timeout=WAIT_S)
    proto = ClientProtocol(uri)
    proto.send_request(proto.connect())
    sock.sendall(b"".join(proto.data_to_send()))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "no handshake answer"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head[:40]
    return sock


def _read_to_eof(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(WAIT_S)
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_peer_that_answers_no_ping_is_closed(serve: Serve) -> None:
    server = serve("demo", client_session_ids=True, ws_ping_interval_s=0.2,
                   ws_ping_timeout_s=0.2)
    sock = _raw_handshake(server.ws_url("silent"))
    try:
        sock.sendall(_masked_text(json.dumps({"type": "resume", "after": 0})))
        data = _read_to_eof(sock)  # the server ends it: pings unanswered
    finally:
        sock.close()
    frames = _frames(data)
    assert frames[:1] == [("TEXT", "attached")]
    assert ("PING", None) in frames  # it was pinged ...
    assert frames[-1] == ("CLOSE", 1011)  # ... and, with no pong, closed
    deadline = time.monotonic() + WAIT_S
    while server.hub.viewers:
        assert time.monotonic() < deadline, "the viewer was never released"
        time.sleep(0.02)


def _frames(data: bytes) -> list[tuple[str, Any]]:
    """The server's frames: (opcode, the message type / close code)."""
    from websockets.frames import Close, Frame, Opcode
    from websockets.streams import StreamReader

    reader = StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    out: list[tuple[str, Any]] = []
    while True:
        parser = Frame.parse(reader.read_exact, mask=False)
        try:
            next(parser)
        except StopIteration as done:
            frame = done.value
        except EOFError:
            return out
        if frame.opcode is Opcode.TEXT:
            out.append(("TEXT", json.loads(frame.data).get("type")))
        elif frame.opcode is Opcode.CLOSE:
            out.append(("CLOSE", Close.parse(frame.data).code))
        else:
            out.append((frame.opcode.name, None))


def _masked_text(text: str) -> bytes:
    from websockets.frames import Frame, Opcode

    frame = Frame(Opcode.TEXT, text.encode())
    return frame.serialize(mask=True, extensions=[])


def test_connections_without_a_whole_request_are_cut_after_the_handshake_timeout(
        serve: Serve) -> None:
    server = serve("demo", handshake_timeout_s=0.3)
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    silent = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    partial = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    partial.sendall(b"GET /ws/sessions/x HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
    try:
        assert _read_to_eof(silent) == b"" and _read_to_eof(partial) == b""
    finally:
        silent.close()
        partial.close()
    assert server.server.guard.timed_out == 2 and server.server.guard.open == 0


def test_a_host_applications_uvicorn_gets_the_guards_below_asgi(
        mounted: Callable[..., _Mounted]) -> None:
    from streampace.server import ServerConfig

    config = ServerConfig(handshake_timeout_s=0.3, max_connections_per_client=2)
    m = mounted(guarded=True, config=config)
    # The class uvicorn_options() handed to uvicorn (typed there as a name or a class).
    http_protocol: Any = m.server.config.http
    guard = http_protocol.guard
    silent = socket.create_connection(("127.0.0.1", m.port), timeout=WAIT_S)
    try:
        assert _read_to_eof(silent) == b""  # no whole request: cut, as under serve
    finally:
        silent.close()
    assert guard.timed_out == 1

    async def scenario() -> dict[str, Any]:
        ws, hello = await _attach(m.ws("new"))  # the app itself works under the options
        await ws.close()
        return hello

    assert asyncio.run(scenario())["type"] == "attached"
    deadline = time.monotonic() + WAIT_S
    while guard.open:
        assert time.monotonic() < deadline, "connections still counted"
        time.sleep(0.02)


# -- --max-sessions with Redis: the store's sessions, across processes -------------------


@pytest.mark.parametrize("store_kind", ["redis"])
def test_with_redis_max_sessions_bounds_the_store_and_quiet_sessions_make_room(
        serve: Serve, store_kind: str, redis_server: RedisProcess) -> None:
    first = serve("demo", speed=200.0, client_session_ids=True, max_sessions=2, quiet_s=600)
    second = serve("demo", speed=200.0, client_session_ids=True, max_sessions=2, quiet_s=600)

    async def scenario() -> tuple[int | None, int | None]:
        held = [(await _attach(first.ws_url(f"s{i}")))[0] for i in range(2)]
        for ws in held:  # used for a run: kept for the quiet period (empty ones are not)
            await send(ws, type="run", prompt="keep", scenario="very_fast")
            await recv_until(ws, Received(), runs_ended(1))
        async with websockets.connect(second.ws_url("s2")) as third:  # another process
            await send(third, type="resume", after=0)
            full = await close_code(third)
        for ws in held:
            await ws.close()
        # Nobody uses s0 and s1 now, but they ran a moment ago: still no room.
        async with websockets.connect(second.ws_url("s2")) as again:
            await send(again, type="resume", after=0)
            recent = await close_code(again)
        return full, recent

    full, recent = asyncio.run(scenario())
    assert full == 1013 and recent == 1013
    assert redis_server.command("ZCARD", "sp:sessions").strip() == b":2"

    quiet = serve("demo", speed=200.0, client_session_ids=True, max_sessions=2, quiet_s=0.01)

    async def later() -> dict:
        deadline = asyncio.get_running_loop().time() + WAIT_S
        while first.hub.viewers:  # then nothing marks s0 and s1 as in use any more
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)  # longer than this server's quiet period
        ws, hello = await _attach(quiet.ws_url("s2"))  # the quietest one goes
        await ws.close()
        return hello

    assert asyncio.run(later())["sessionId"] == "s2"
    assert redis_server.command("ZCARD", "sp:sessions").strip() == b":2"
    assert redis_server.command("EXISTS", "sp:{s0}:epoch").strip() == b":0"
