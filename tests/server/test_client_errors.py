"""What a client can send wrong: the reply, the socket's fate, nobody else affected."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from streampace.session.delivery import compact
from websockets.typing import Origin

from .conftest import (
    Received,
    Serve,
    assert_conformant,
    close_code,
    errors_at_least,
    recv_until,
    runs_ended,
    send,
)

BAD = [
    ("not json", "bad_json"),
    ("[1, 2]", "bad_message"),
    ('{"prompt": "no type"}', "bad_message"),
    ('{"type": 7}', "bad_message"),
    ('{"type": "dance"}', "unknown_type"),
    ('{"type": "run"}', "bad_field"),
    ('{"type": "run", "prompt": ""}', "bad_field"),
    ('{"type": "run", "prompt": 5}', "bad_field"),
    ('{"type": "run", "prompt": "x", "scenario": 3}', "bad_field"),
    ('{"type": "run", "prompt": "x", "scenario": "nope"}', "bad_scenario"),
    ('{"type": "run", "prompt": "\\ud800"}', "bad_field"),
    ('{"type": "resume", "after": -1}', "bad_field"),
    ('{"type": "resume", "after": "3"}', "bad_field"),
    ('{"type": "resume", "after": true}', "bad_field"),
    ('{"type": "cancel"}', "no_run"),
]


def test_bad_messages_get_errors_and_the_socket_stays_usable(serve: Serve) -> None:
    server = serve("demo", speed=200.0)

    async def scenario() -> Received:
        async with websockets.connect(server.ws_url("bad")) as ws:
            got = Received()
            # Six refusals (the abuse limit is 10 within 10 s).
            for i, (raw, _) in enumerate(BAD[:5]):
                await ws.send(raw)
                await recv_until(ws, got, errors_at_least(i + 1))
            await ws.send(b"\x00binary")
            await recv_until(ws, got, errors_at_least(6))
            # Still usable: attach, run, and a second resume is refused.
            await send(ws, type="resume", after=0)
            await send(ws, type="resume", after=0)
            await recv_until(ws, got, errors_at_least(7))
            await send(ws, type="run", prompt="still here", scenario="fast")
            await send(ws, type="run", prompt="twice")
            await recv_until(ws, got, runs_ended(1))
            return got

    got = asyncio.run(scenario())
    codes = [e["code"] for e in got.errors]
    assert codes[:6] == [c for _, c in BAD[:5]] + ["bad_json"]
    assert codes[6] == "already_attached"
    assert "run_active" in codes[7:]
    assert all(isinstance(e["message"], str) and e["message"] for e in got.errors)
    assert_conformant(got.events, prompt="still here")


@pytest.mark.parametrize(("raw", "code"), BAD[5:])
def test_each_bad_field_has_its_code(serve: Serve, raw: str, code: str) -> None:
    server = serve("demo", speed=200.0)

    async def scenario() -> Received:
        async with websockets.connect(server.ws_url("f")) as ws:
            await ws.send(raw)
            return await recv_until(ws, Received(), errors_at_least(1))

    got = asyncio.run(scenario())
    assert got.errors[0]["code"] == code
    assert set(got.errors[0]) == {"type", "code", "message"}
    assert got.errors[0]["type"] == "error"


def test_repeated_abuse_closes_with_4400_and_others_are_unaffected(serve: Serve) -> None:
    server = serve("demo", speed=50.0)

    async def scenario() -> tuple[int | None, Received]:
        url = server.ws_url("abuse")
        async with websockets.connect(url) as good, websockets.connect(url) as bad:
            await send(good, type="resume", after=0)
            for _ in range(12):
                try:
                    await bad.send("{nope")
                except websockets.ConnectionClosed:
                    break
            code = await close_code(bad)
            await send(good, type="run", prompt="after the abuse", scenario="fast")
            got = await recv_until(good, Received(), runs_ended(1))
            return code, got

    code, got = asyncio.run(scenario())
    assert code == 4400
    assert_conformant(got.events, prompt="after the abuse")


def test_oversize_message_closes_with_1009(serve: Serve) -> None:
    server = serve("demo", max_message_bytes=4096)

    async def scenario() -> int | None:
        async with websockets.connect(server.ws_url("big")) as ws:
            await ws.send(json.dumps({"type": "run", "prompt": "x" * 10_000}))
            return await close_code(ws)

    assert asyncio.run(scenario()) == 1009


def test_bad_session_id_closes_with_4400(serve: Serve) -> None:
    server = serve("demo")

    async def scenario() -> int | None:
        async with websockets.connect(server.url.replace("http", "ws") + "ws/sessions/"
                                      + "x" * 65) as ws:
            return await close_code(ws)

    assert asyncio.run(scenario()) == 4400


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:1", "null"])
def test_disallowed_origin_closes_with_4403(serve: Serve, origin: str) -> None:
    server = serve("demo")

    async def scenario() -> int | None:
        async with websockets.connect(server.ws_url("o"), origin=Origin(origin)) as ws:
            return await close_code(ws)

    assert asyncio.run(scenario()) == 4403
    # Nothing was attached or created for the refused socket.
    assert "o" not in server.hub.sessions


def test_own_origin_and_allowlisted_origins_are_accepted(serve: Serve) -> None:
    server = serve("demo", speed=200.0, allow_origins=("http://app.example",))
    port = server.url.rsplit(":", 1)[1].strip("/")

    async def scenario(origin: Origin | None) -> Received:
        session = f"ok{abs(hash(origin)) % 10_000}"
        async with websockets.connect(server.ws_url(session), origin=origin) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="hi", scenario="very_fast")
            return await recv_until(ws, Received(), runs_ended(1))

    for origin in (Origin(f"http://127.0.0.1:{port}"), Origin(f"http://localhost:{port}"),
                   Origin("http://app.example"), None):
        got = asyncio.run(scenario(origin))
        assert got.events[-1]["type"] == "RUN_FINISHED"


def test_session_limit_forgets_idle_sessions_and_refuses_when_all_are_busy(serve: Serve) -> None:
    server = serve("demo", max_sessions=2, quiet_s=0)  # no quiet period: s1 goes at once

    async def scenario() -> tuple[int | None, Received]:
        a = await websockets.connect(server.ws_url("s1"))
        b = await websockets.connect(server.ws_url("s2"))
        await send(a, type="resume", after=0)
        await send(b, type="resume", after=0)
        await send(a, type="cancel")  # an error reply proves the server has set s1 up
        await recv_until(a, Received(), errors_at_least(1))
        await send(b, type="cancel")
        await recv_until(b, Received(), errors_at_least(1))
        async with websockets.connect(server.ws_url("s3")) as c:
            await send(c, type="resume", after=0)  # only attaching makes a session
            busy = await close_code(c)
        await a.close()
        deadline = asyncio.get_running_loop().time() + 10
        while server.hub.sessions["s1"].viewers:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        async with websockets.connect(server.ws_url("s3")) as c:
            await send(c, type="run", prompt="room now", scenario="very_fast")
            got = await recv_until(c, Received(), runs_ended(1))
        await b.close()
        return busy, got

    busy, got = asyncio.run(scenario())
    assert busy == 1013
    assert_conformant(got.events, prompt="room now")
    assert "s1" not in server.hub.sessions and "s2" in server.hub.sessions


def test_a_socket_that_has_not_attached_holds_no_session_so_eviction_cannot_split_it(
        serve: Serve) -> None:
    """Issue 18 item 9: a socket that connected before its (idle, unattached) session
    was evicted used to keep running under the old session object, unseen by another
    socket on the same id.  A socket is now bound to its session by its first
    resume/run, so an early socket has nothing to be split from: when it attaches it
    gets the one session of that id."""
    server = serve("demo", speed=200.0, max_sessions=1, quiet_s=0)

    async def scenario() -> tuple[Received, Received]:
        early = await websockets.connect(server.ws_url("x"))  # not attached: no session
        async with websockets.connect(server.ws_url("y")) as other:
            await send(other, type="resume", after=0)
            await recv_until(other, Received(), lambda r: bool(r.attached))
            assert list(server.hub.sessions) == ["y"]
        deadline = asyncio.get_running_loop().time() + 10
        while server.hub.sessions["y"].viewers:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        await send(early, type="run", prompt="fresh", scenario="very_fast")  # y is forgotten
        got = await recv_until(early, Received(), runs_ended(1))
        async with websockets.connect(server.ws_url("x")) as again:
            await send(again, type="resume", after=0)
            seen = await recv_until(again, Received(), runs_ended(1))
        await early.close()
        return got, seen

    got, seen = asyncio.run(scenario())
    assert_conformant(got.events, prompt="fresh")
    assert compact(seen.events) == compact(got.events)  # one session x: the same run
    assert list(server.hub.sessions) == ["x"]
