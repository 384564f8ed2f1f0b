"""Hostile clients (issue 18 items 3-8), the client half of ``python -m bench.attack``.

    python -m bench.attack --part clients                    # every client attack
    python -m bench.attack --part clients --clients flood,stalled
    STREAMPACE_BENCH_PY=/path/to/other/py python -m bench.attack --part clients   # A/B

A real ``streampace serve`` runs in a child process with the usual 1 024 file
descriptors (soft = hard limit, as the issue measured); the bystander (a session
streaming a delta every 20 ms) and the pinger (an idle session's socket, a ping
every 40 ms) connect from 127.0.0.2; each attack comes from an address of its own
(the flood from 127.0.0.1, the stalled readers from 127.0.0.3, the big answers from
127.0.0.4, the sessions from 127.0.1.x), so one attack's sessions, still recent, do
not meet the next one's per-address limit.  Each attack is measured side by side
with an idle window of the same length just before it:

- **flood**: 1 100 connections at once — bare TCP, half an HTTP request, WebSocket
  handshakes that never attach, attached idle sockets; time until the server has
  closed every one of them (the attacker's view), descriptors it held;
- **stalled**: a session filled to its history bound (run + cancel, 32 KB prompts),
  then 150 sockets resume with an unknown epoch (a snapshot each) and never read:
  RSS peak and how long until it is returned;
- **sessions**: sessions filled by run + cancel with 32 KB prompts until the server
  refuses a new one: RSS per session, and the refusal (the byte budget);
- **big**: a 10 MB and a 50 MB answer from a fast upstream, to a viewer that reads
  and to one that reads 5 ms per message (cut, resumes): delivered whole or not.

For each: bystander delay (ping RTT p50/max, idle vs attack), the server's CPU
beyond the idle rate, RSS before / peak / after and seconds until it is back near
its start.  A benchmark, not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import time
from typing import Any

from bench.attack import (
    PY,
    SERVE,
    Upstream,
    _sse,
    _stats,
    _window,
    cpu_beyond_idle,
    cpu_ms,
    rss_mib,
    serve_has,
    watched,
)

BYSTANDER = "127.0.0.2"  # another client, as far as the server can tell
STALLED_FROM = "127.0.0.3"
BIG_FROM = "127.0.0.4"
FD_LIMIT = 1024
# The sessions attack fills the byte budget, refusing every new session after it
# (as it should): it runs last.
CLIENT_ATTACKS = ("flood", "stalled", "big", "pings", "spread", "bomb", "bomb-plain",
                  "sessions")


def _fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def start_server(upstream_url: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """`streampace serve` (this tree or STREAMPACE_BENCH_PY's) with 1 024 descriptors."""
    named = ["--client-session-ids"] if serve_has("--client-session-ids") else []
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, PY, "serve", "--port", "0", "--log-level", "error",
         "--source", f"agui:{upstream_url}", *named, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=_fd_limit)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving http://" not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    url = line.split("serving ", 1)[1].split(" ", 1)[0]
    return proc, url.replace("http://", "ws://")


def fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


# -- connections -----------------------------------------------------------------------


async def _connect(url: str, **kw: Any) -> Any:
    import websockets

    return await websockets.connect(url, max_size=None, open_timeout=30, **kw)


# -- the attacks ------------------------------------------------------------------------


async def flood(base: str, pid: int, n: int = 1100) -> dict[str, Any]:
    """``n`` idle connections at once; seconds until the server closed them all."""
    import websockets

    host, port = base.removeprefix("ws://").rstrip("/").rsplit(":", 1)
    loop = asyncio.get_running_loop()
    raw: list[socket.socket] = []
    sockets: list[Any] = []
    attached: list[bool] = []  # per socket: it sent resume (a viewer, idle but alive)
    t0 = time.monotonic()

    async def one(i: int) -> None:
        kind = i % 4
        if kind >= 2:
            with contextlib.suppress(OSError, websockets.InvalidHandshake, TimeoutError):
                ws = await websockets.connect(f"{base}ws/sessions/idle-{i}", open_timeout=10)
                sockets.append(ws)
                attached.append(kind == 3)
                if kind == 3:
                    await ws.send(json.dumps({"type": "resume", "after": 0}))
            return
        s = socket.socket()
        s.setblocking(False)
        raw.append(s)
        with contextlib.suppress(OSError):
            async with asyncio.timeout(10):
                await loop.sock_connect(s, (host, int(port)))
                if kind == 1:
                    await loop.sock_sendall(s, b"GET /ws/sessions/x HTTP/1.1\r\nHost: x\r\n")

    for at in range(0, n, 100):  # in waves, as a script would
        await asyncio.gather(*(one(i) for i in range(at, min(at + 100, n))),
                             return_exceptions=True)
    held = fds(pid)

    async def closed_raw(s: socket.socket) -> float | None:
        try:
            async with asyncio.timeout(60):
                while await loop.sock_recv(s, 4096):
                    pass
        except TimeoutError:
            return None
        except OSError:
            pass
        finally:
            s.close()
        return time.monotonic() - t0

    async def closed_ws(ws: Any) -> float | None:
        try:
            async with asyncio.timeout(60):
                while True:
                    await ws.recv()
        except TimeoutError:
            await ws.close()
            return None
        except websockets.ConnectionClosed:
            return time.monotonic() - t0

    done = await asyncio.gather(*(closed_raw(s) for s in raw), *(closed_ws(w) for w in sockets))
    kinds = [False] * len(raw) + attached
    viewers = sum(1 for d, a in zip(done, kinds, strict=True) if d is None and a)
    others = sum(1 for d, a in zip(done, kinds, strict=True) if d is None and not a)
    reaped = [d for d in done if d is not None]
    return {"detail": f"{n} opened ({len(sockets)} WebSocket handshakes completed, "
                      f"{sum(attached)} of them attached), server held {held} fds; still open "
                      f"after 60 s: {viewers} attached viewers (they answer pings: "
                      f"kept, as viewers are), {others} others",
            "reap_s": max(reaped) if reaped else float("nan")}


async def _run_cancel(ws: Any, prompt: str) -> None:
    await ws.send(json.dumps({"type": "run", "prompt": prompt}))
    await ws.send(json.dumps({"type": "cancel"}))
    while True:
        msg = json.loads(await ws.recv())
        if msg.get("type") == "error" and msg.get("code") == "server_busy":
            raise _Busy(msg.get("message", ""))  # the byte budget: no more runs
        if any(e["type"] in ("RUN_ERROR", "RUN_FINISHED") for e in msg.get("events", ())):
            return


class _Busy(Exception):
    pass


async def _fill(base: str, sid: str, runs: int, address: str = "127.0.0.1") -> None:
    ws = await _connect(f"{base}ws/sessions/{sid}", local_addr=(address, 0))
    t0, sent = time.monotonic(), 1
    async with ws:
        await ws.send(json.dumps({"type": "resume", "after": 0}))
        for i in range(runs):
            # Within the server's message rate (200 at once, 50/s), as an attacker who
            # read docs/security.md would be.
            while sent + 2 > 190 + 45 * (time.monotonic() - t0):
                await asyncio.sleep(0.02)
            sent += 2
            await _run_cancel(ws, f"{i} " + "p" * 32_760)


async def stalled(base: str, pid: int, sockets: int = 150) -> dict[str, Any]:
    await _fill(base, "full", 140, STALLED_FROM)  # ~4.4 MB of prompts: the history bound
    await asyncio.sleep(2.0)
    baseline = rss_mib(pid)  # the session itself is kept: the sockets' cost is what counts
    raw = []
    loop = asyncio.get_running_loop()
    host, port = base.removeprefix("ws://").rstrip("/").rsplit(":", 1)
    for _ in range(sockets):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # takes almost nothing
        s.bind((STALLED_FROM, 0))
        s.setblocking(False)
        await loop.sock_connect(s, (host, int(port)))
        await loop.sock_sendall(s, _handshake(host, port, "full"))
        head = b""
        while b"\r\n\r\n" not in head:  # a frame sent with the handshake is lost (uvicorn)
            head += await loop.sock_recv(s, 1)
        await loop.sock_sendall(s, _frame(json.dumps({"type": "resume", "after": 3,
                                                      "epoch": "not-this-one"})))
        raw.append(s)
    return {"detail": f"{sockets} sockets resumed past the log and never read (RSS with the "
                      f"full session, before them: {baseline:.0f} MiB)", "keep": raw,
            "baseline": baseline}


def _handshake(host: str, port: str, sid: str) -> bytes:
    return (f"GET /ws/sessions/{sid} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n").encode()


def _frame(text: str) -> bytes:
    data = text.encode()
    assert len(data) < 126
    mask = b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4]
                                                         for i, b in enumerate(data))


async def sessions(base: str, pid: int, limit: int = 400, runs: int = 130
                   ) -> dict[str, Any]:
    """Filled sessions until one is refused; from many addresses (one address alone
    meets its own limit first: 64 sessions)."""
    import websockets

    before = rss_mib(pid)
    made = 0
    refused = ""
    for i in range(limit):
        try:
            # 130 x 32 KB prompts: ~4 MiB of log and the history's 4 MiB bound.
            await _fill(base, f"filled-{i}", runs, f"127.0.1.{1 + i // 50}")
            made += 1
        except websockets.ConnectionClosed as exc:
            refused = f"{exc.rcvd.code} {exc.rcvd.reason}" if exc.rcvd else "closed"
            break
        except _Busy as exc:  # a session filling up past the budget: its run refused
            made += 1
            refused = f"a run refused: server_busy {exc}"
            break
    grown = rss_mib(pid) - before
    return {"detail": f"{made} sessions of {runs} runs x 32 KB, {grown / max(made, 1):.1f} MiB "
                      f"RSS each; then: {refused or 'no refusal'}"}


async def big(base: str, pid: int) -> dict[str, Any]:
    out = []
    for mb in (10, 50):
        for delay in (0.0, 0.005):
            whole, closes = await _big_answer(base, mb, delay)
            out.append(f"{mb} MB {'slow' if delay else 'reading'}: "
                       f"{'whole' if whole else 'NOT whole'}"
                       + (f" (cut {closes}, resumed)" if closes else ""))
    return {"detail": "; ".join(out)}


async def _big_answer(base: str, mb: int, delay: float) -> tuple[bool, list[Any]]:
    import websockets

    sid = f"big-{mb}-{int(delay * 1000)}"
    through, epoch, done = 0, None, False
    text: list[str] = []
    closes: list[int | str | None] = []
    parts: list[Any] = []
    for attempt in range(6):
        if done:
            break
        try:
            ws = await _connect(f"{base}ws/sessions/{sid}", local_addr=(BIG_FROM, 0))
            async with ws:
                resume: dict[str, Any] = {"type": "resume", "after": through}
                if epoch:
                    resume["epoch"] = epoch
                await ws.send(json.dumps(resume))
                if attempt == 0:
                    await ws.send(json.dumps({"type": "run", "prompt": f"big:{mb}"}))
                async with asyncio.timeout(120):
                    while not done:
                        msg = json.loads(await ws.recv())
                        if delay:
                            await asyncio.sleep(delay)
                        if msg.get("type") == "attached":
                            epoch = msg["epoch"]
                        if "events" not in msg:
                            continue
                        if msg.get("more"):
                            parts.append(msg["events"])
                            continue
                        events = msg["events"]
                        if parts:  # a snapshot in parts: its message texts continue
                            events, parts = [e for p in parts for e in p] + events, []
                        through = msg["through"]
                        first = True
                        for e in events:
                            if e["type"] == "MESSAGES_SNAPSHOT":
                                if first:
                                    text, first = [], False
                                text += [m.get("content") or "" for m in e["messages"]
                                         if m["id"] == "m"]
                            elif e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "m":
                                text.append(e["delta"])
                            elif e["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                                done = True
        except websockets.ConnectionClosed as exc:
            closes.append(exc.rcvd.code if exc.rcvd else None)
        except TimeoutError:
            closes.append("timeout")
            break
    return done and sum(map(len, text)) == mb * 1024 * 1024, closes


def big_payload(mb: int) -> list[bytes]:
    piece = "0123456789abcdef" * 1024  # 16 KiB
    return [_sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": piece})
            for _ in range(mb * 64)]


# -- issue 33: pings, an address spread, a compression bomb -------------------------------

PINGS_FROM = "127.0.0.5"
PING_FRAME = b"\x89\xfd" + b"\x00\x00\x00\x00" + b"p" * 125  # masked 125-byte ping


async def pings(base: str, pid: int, seconds: float = 15.0) -> dict[str, Any]:
    """One socket that never attaches and never reads sends 125-byte pings for up to
    ``seconds`` (the issue: +343 MiB in 15 s, a pong queued per ping)."""
    loop = asyncio.get_running_loop()
    host, port = base.removeprefix("ws://").rstrip("/").rsplit(":", 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((PINGS_FROM, 0))
    s.setblocking(False)
    await loop.sock_connect(s, (host, int(port)))
    await loop.sock_sendall(s, _handshake(host, port, "pinger-new"))
    head = b""
    while b"\r\n\r\n" not in head:
        head += await loop.sock_recv(s, 1)
    burst = PING_FRAME * 100
    sent, t0, ended = 0, time.monotonic(), "still open"
    try:
        while time.monotonic() - t0 < seconds:
            async with asyncio.timeout(max(0.1, seconds - (time.monotonic() - t0))):
                await loop.sock_sendall(s, burst)
            sent += 100
    except TimeoutError:
        ended = "still open (sends blocked)"
    except OSError as exc:
        ended = f"cut by the server ({type(exc).__name__})"
    took = time.monotonic() - t0
    s.close()
    return {"detail": f"{sent} pings ({sent * len(PING_FRAME) / 1e6:.1f} MB) sent in "
                      f"{took:.1f} s, then {ended}"}


async def spread(base: str, pid: int, addresses: int = 16, per_address: int = 64,
                 budget_s: float = 30.0) -> dict[str, Any]:
    """The issue's lockout: ``addresses`` loopback addresses each open
    ``per_address`` new sessions, attach once and leave them empty, as fast as they
    can (for at most ``budget_s``); then a newcomer from another address."""
    import websockets

    outcomes: dict[str, int] = {}
    t0 = time.monotonic()

    async def one_address(a: int) -> None:
        for _ in range(per_address):
            if time.monotonic() - t0 > budget_s:
                return
            key = "attached"
            try:
                ws = await _connect(f"{base}ws/sessions/new", local_addr=(f"127.0.3.{a + 1}", 0))
                async with ws:
                    await ws.send(json.dumps({"type": "resume", "after": 0}))
                    json.loads(await ws.recv())
            except websockets.ConnectionClosed as exc:
                key = f"{exc.rcvd.code if exc.rcvd else None}"
            except (OSError, websockets.InvalidHandshake, TimeoutError) as exc:
                key = type(exc).__name__
            outcomes[key] = outcomes.get(key, 0) + 1

    await asyncio.gather(*(one_address(a) for a in range(addresses)))
    took = time.monotonic() - t0
    newcomer = "attached"
    try:
        ws = await _connect(f"{base}ws/sessions/new", local_addr=("127.0.4.1", 0))
        async with ws:
            await ws.send(json.dumps({"type": "resume", "after": 0}))
            msg = json.loads(await ws.recv())
            newcomer = msg.get("type", "?")
    except websockets.ConnectionClosed as exc:
        newcomer = f"refused {exc.rcvd.code if exc.rcvd else None}"
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
    return {"detail": f"{addresses} addresses x {per_address} sessions attached once and "
                      f"left empty in {took:.1f} s ({counts}); then a newcomer: {newcomer}"}


async def bomb(base: str, pid: int, messages: int = 24) -> dict[str, Any]:
    """``messages`` run messages of 16 MiB of one letter, which permessage-deflate
    carries in ~16 KB each: what a server that negotiates it inflates."""
    import websockets

    text = json.dumps({"type": "run", "prompt": "a" * (16 * 1024 * 1024 - 64)})
    compressed, codes = 0, []
    for sockets in (messages, 1):  # one message per socket, then all on one socket
        for _ in range(sockets):
            try:
                ws = await _connect(f"{base}ws/sessions/new", local_addr=(BIG_FROM, 0),
                                    compression="deflate")
                async with ws:
                    compressed += bool(ws.protocol.extensions)
                    await ws.send(json.dumps({"type": "resume", "after": 0}))
                    for _ in range(messages // sockets):
                        await ws.send(text)
                    while True:
                        await ws.recv()
            except websockets.ConnectionClosed as exc:
                codes.append(exc.rcvd.code if exc.rcvd else None)
    return {"detail": f"{messages} messages of 16 MiB offered with permessage-deflate, one "
                      f"per socket, then {messages} on one socket; negotiated on "
                      f"{compressed} of {messages + 1}; closes: "
                      f"{', '.join(f'{c} x{codes.count(c)}' for c in dict.fromkeys(codes))}"}


PLAIN_MOUNT = """
import sys; sys.path.insert(0, sys.argv[1])
import uvicorn
from streampace.server import StreampaceApp

async def echo(run):
    yield {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"}
    yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": run.prompt[:10]}
    yield {"type": "TEXT_MESSAGE_END", "messageId": "a"}

# uvicorn's defaults, as `uvicorn app:app` on the command line: no uvicorn_options().
uvicorn.run(StreampaceApp(echo), host="127.0.0.1", port=int(sys.argv[2]), log_level="error")
"""


async def bomb_plain(base: str, pid: int) -> dict[str, Any]:
    """The same bombs against a mount under plain uvicorn (not what docs/mount.md shows
    any more): what the guards of ``uvicorn_options()`` are for.  The figures are that
    process's, not the measured server's."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-c", PLAIN_MOUNT, PY, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        before, peak = rss_mib(proc.pid), 0.0
        task = asyncio.create_task(bomb(f"ws://127.0.0.1:{port}/", proc.pid))
        while not task.done():
            peak = max(peak, rss_mib(proc.pid))
            await asyncio.sleep(0.02)
        detail = task.result()["detail"]
        await asyncio.sleep(2.0)
        after = rss_mib(proc.pid)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    said = "says so in its log" if "without its guards" in err else "says nothing"
    return {"detail": f"plain uvicorn mount: {detail}; its RSS {before:.0f} / {peak:.0f} / "
                      f"{after:.0f} MiB; the app {said}"}


# -- one run -----------------------------------------------------------------------------


async def run(base: str, pid: int, names: list[str], window_s: float) -> list[dict[str, Any]]:
    async with watched(base, local_addr=(BYSTANDER, 0), open_timeout=30) as (lateness, rtts):
        return await _attacks(base, pid, names, window_s, lateness, rtts)


async def _attacks(base: str, pid: int, names: list[str], window_s: float,
                   lateness: list[tuple[float, float]], rtts: list[tuple[float, float]]
                   ) -> list[dict[str, Any]]:
    rows = []
    attacks = {"flood": flood, "stalled": stalled, "sessions": sessions, "big": big,
               "pings": pings, "spread": spread, "bomb": bomb, "bomb-plain": bomb_plain}
    for name in names:
        t_idle, cpu_idle = time.monotonic(), cpu_ms(pid)
        await asyncio.sleep(window_s)
        t_attack, cpu_attack, rss_before = time.monotonic(), cpu_ms(pid), rss_mib(pid)
        task = asyncio.create_task(attacks[name](base, pid))
        peak = rss_before
        while not task.done():
            peak = max(peak, rss_mib(pid))
            await asyncio.sleep(0.05)
        result = task.result()
        t_end, cpu_end = time.monotonic(), cpu_ms(pid)
        base_rss = result.pop("baseline", rss_before)
        # RSS until it is back near where it started (or 90 s).
        back_s = float("nan")
        while time.monotonic() < t_end + 90:
            peak = max(peak, rss_now := rss_mib(pid))
            if rss_now <= base_rss + max(5.0, 0.1 * (peak - base_rss)):
                back_s = time.monotonic() - t_end
                break
            await asyncio.sleep(0.5)
        for s in result.pop("keep", ()):
            s.close()
        idle_rtt = _stats(_window(rtts, t_idle, t_attack))
        hit_rtt = _stats(_window(rtts, t_attack, t_end))
        late = _stats(_window(lateness, t_attack, t_end))
        rows.append({
            "attack": name, **result, "took_s": t_end - t_attack,
            "cpu_extra_ms": cpu_beyond_idle((cpu_idle, cpu_attack, cpu_end),
                                            (t_idle, t_attack, t_end)),
            "rtt_idle": idle_rtt, "rtt_attack": hit_rtt, "late_attack": late,
            "rss": (rss_before, peak, rss_mib(pid)), "rss_back_s": back_s,
        })
        print(_row(rows[-1]), flush=True)
    return rows


HEADER = ("| attack | what happened | took s | server CPU ms beyond idle "
          "| bystander ping RTT idle p50/max ms | attack p50/max ms | bystander lateness "
          "p50/max ms | RSS MiB before/peak/after | s until RSS is back |\n"
          "|---|---|---|---|---|---|---|---|---|")


def _row(r: dict[str, Any]) -> str:
    detail = r["detail"] + (f"; the rest closed by the server within {r['reap_s']:.1f} s "
                            "of the flood's start" if "reap_s" in r else "")
    return (f"| {r['attack']} | {detail} | {r['took_s']:.1f} | {r['cpu_extra_ms']:.0f} "
            f"| {r['rtt_idle'][0]:.1f} / {r['rtt_idle'][1]:.1f} "
            f"| {r['rtt_attack'][0]:.1f} / {r['rtt_attack'][1]:.1f} "
            f"| {r['late_attack'][0]:.0f} / {r['late_attack'][1]:.0f} "
            f"| {r['rss'][0]:.0f} / {r['rss'][1]:.0f} / {r['rss'][2]:.0f} "
            f"| {r['rss_back_s']:.1f} |")


def main(names: list[str], window_s: float) -> list[dict[str, Any]]:
    payloads = {f"big:{mb}": big_payload(mb) for mb in (10, 50)}
    upstream = Upstream(payloads, delta_ms=20, duration_s=3600)
    proc, base = start_server(upstream.url)
    print(f"server: {PY} (pid {proc.pid}, {FD_LIMIT} fds), load average "
          f"{os.getloadavg()[0]:.2f}\n\n{HEADER}", flush=True)
    try:
        return asyncio.run(run(base, proc.pid, names, window_s))
    finally:
        upstream.close()
        proc.kill()
        proc.wait(15)
