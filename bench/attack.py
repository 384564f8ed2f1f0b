"""Hostile-input benchmark: what one hostile upstream event costs the other sessions.

    python -m bench.attack                      # every attack, this tree
    python -m bench.attack --part clients       # hostile clients (bench/attack_clients.py)
    python -m bench.attack --attacks doubling,deep600 --window 3
    STREAMPACE_BENCH_PY=/path/to/other/py python -m bench.attack   # another tree (A/B)

A real server (``streampace serve --source agui:URL``) runs in a child process on
loopback; a fake AG-UI upstream (threads in this process, payloads encoded in
advance) answers each run by its prompt: ``bystander`` streams a delta every
20 ms carrying its send time, ``attack:NAME`` sends one hostile event.  While a
bystander session streams, a second, idle session's socket sends a WebSocket
ping every 40 ms: its round trip is how long the server's event loop was
unavailable to anyone else.  Each attack is measured side by side with an
idle window of the same length (no attack) just before it:

- ping RTT p50 / max and bystander delta lateness p50 / max (arrival minus send,
  both on CLOCK_MONOTONIC), idle window vs attack window;
- *added delay*: the attack window's max ping RTT minus the idle window's;
- the server's CPU time in the attack window beyond the idle window's rate
  (less sensitive than wall times to a machine shared with other work);
- server RSS before, peak during, and 2 s after the attack;
- how the attacking run ended (its RUN_ERROR code), and how long it took.

A benchmark, not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PY = os.environ.get("STREAMPACE_BENCH_PY") or str(REPO / "py")


# -- hostile events -----------------------------------------------------------


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _nested_text(levels: int) -> str:
    return "[" * levels + "0" + "]" * levels


ATTACKS: dict[str, Callable[[], list[bytes]]] = {
    # The issue's ~1 KB STATE_DELTA: 22 copies of the whole state, each doubling it.
    "doubling": lambda: [
        _sse({"type": "STATE_SNAPSHOT", "snapshot": {"a": "x" * 40}}),
        _sse({"type": "STATE_DELTA",
              "delta": [{"op": "copy", "from": "", "path": f"/k{i}"} for i in range(22)]}),
    ],
    # A 600-deep value, as JSON text (json.loads alone recurses 600 levels).
    "deep600": lambda: [_raw(
        '{"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/d", "value": '
        + _nested_text(600) + "}]}")],
    # 40 levels: a valid event, but deeper than the state may be.
    "deep40": lambda: [_sse({"type": "STATE_DELTA",
                             "delta": [{"op": "add", "path": "/d", "value": _deep(40)}]})],
    # A state near its value bound, then copies and removals of it: the work bound.
    "work": lambda: [
        _sse({"type": "STATE_SNAPSHOT", "snapshot": {"a": list(range(24_000))}}),
        _sse({"type": "STATE_DELTA", "delta": [
            op for _ in range(200) for op in ({"op": "copy", "from": "/a", "path": "/b"},
                                              {"op": "remove", "path": "/b"})]}),
    ],
    # `test` against an equal copy, 7 times (as many values as one event may hold):
    # comparisons count as work too; this patch passes, and is applied once more by
    # the session's transcript.
    "test": lambda: [
        _sse({"type": "STATE_SNAPSHOT",
              "snapshot": {"a": [{"k": i, "s": "v"} for i in range(2_500)]}}),
        _sse({"type": "STATE_DELTA", "delta": [
            {"op": "test", "path": "/a", "value": [{"k": i, "s": "v"} for i in range(2_500)]}
        ] * 7}),
    ],
    # Just under 1 MiB of empty arrays in one CUSTOM event: 340 000 values.
    "values1m": lambda: [_raw('{"type": "CUSTOM", "name": "x", "value": ['
                              + ",".join(["[]"] * 340_000) + "]}")],
    # Just under 1 MiB of short strings in one CUSTOM event: 170 000 values.
    "strings1m": lambda: [_sse({"type": "CUSTOM", "name": "x", "value": ["ab"] * 170_000})],
    # The largest state snapshot accepted: 50 000 values.
    "state50k": lambda: [_sse({"type": "STATE_SNAPSHOT",
                               "snapshot": {"a": list(range(49_990))}})],
    # One text delta of just under 1 MiB (an upstream's largest event): split, logged, sent.
    "delta1m": lambda: [_sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                              "delta": "y" * (1024 * 1024 - 200)})],
    # One event over the bound: refused while it arrives.
    "over1m": lambda: [_sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                             "delta": "y" * (4 * 1024 * 1024)})],
}


def _sse(event: dict[str, Any]) -> bytes:
    return _raw(json.dumps(event, separators=(",", ":")))


def _raw(data: str) -> bytes:
    return b"data: " + data.encode() + b"\n\n"


# -- the server's handling of one attack, in this process ---------------------------


def handling_ms(name: str, payload: list[bytes], repeat: int = 5) -> tuple[float, str]:
    """CPU time (min of ``repeat``) the server's own code spends on an attack's
    events: SSE decoding, bounded parsing, validation and framing, then what the
    session applies to its transcript for each logged event.  No network, no
    scheduler: the figure the loop-delay measurements are noisy versions of."""
    sys.path.insert(0, PY)
    from streampace.conversation.transcript import Transcript
    from streampace.server.sources.sse import SseDecoder, SseError
    from streampace.session.framing import (
        MAX_UPSTREAM_EVENT_BYTES,
        RunFramer,
        UpstreamError,
        upstream_json_object,
    )

    data = b"".join(payload)
    best, outcome = float("inf"), "?"
    for _ in range(repeat):
        conv = Transcript()
        framer = RunFramer("t", "r", "p", state=conv.shared_state)
        opening = framer.feed_group([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                                     {"type": "TEXT_MESSAGE_START", "messageId": "m",
                                      "role": "assistant"}])
        conv.apply(opening)
        t0 = time.process_time()
        decoder = SseDecoder(MAX_UPSTREAM_EVENT_BYTES)
        out: list[dict[str, Any]] = []
        try:
            for at in range(0, len(data), 65_536):
                for sse in decoder.feed(data[at:at + 65_536]):
                    event = upstream_json_object(sse.data, "not json", "not an object")
                    framed = framer.feed_group([event])
                    conv.apply(framed)
                    out += framed
                    if framer.done:
                        break
                if framer.done:
                    break
        except (SseError, UpstreamError) as exc:
            out = [{"type": "RUN_ERROR", "code": getattr(exc, "code", "upstream_protocol_error")}]
        best = min(best, (time.process_time() - t0) * 1000)
        last = out[-1] if out else {}
        outcome = last.get("code") or last.get("type", "?")
    return best, outcome


# -- the fake upstream ------------------------------------------------------------


class Upstream:
    """A real HTTP server on loopback answering AG-UI runs by prompt."""

    def __init__(self, payloads: dict[str, list[bytes]], delta_ms: float,
                 duration_s: float) -> None:
        bench = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    bench.answer(self, body)

        self.payloads = payloads
        self.delta_ms = delta_ms
        self.duration_s = duration_s
        self.stop = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/agent"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        ids = {"threadId": body["threadId"], "runId": body["runId"]}
        prompt = body["messages"][-1]["content"]
        w = h.wfile
        w.write(_sse({"type": "RUN_STARTED", **ids}))
        w.write(_sse({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        w.flush()
        if prompt == "bystander":
            end = time.monotonic() + self.duration_s
            while time.monotonic() < end and not self.stop.is_set():
                w.write(_sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                              "delta": f"{time.monotonic():.6f} "}))
                w.flush()
                time.sleep(self.delta_ms / 1000)
        else:
            for chunk in self.payloads.get(prompt.removeprefix("attack:"), ()):
                w.write(chunk)
                w.flush()
        w.write(_sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
        w.write(_sse({"type": "RUN_FINISHED", **ids}))
        w.flush()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# -- the server under test ----------------------------------------------------------


SERVE = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from streampace.server.cli import main; sys.exit(main(sys.argv[2:]))")


def serve_has(flag: str) -> bool:
    """Whether the tree under test's `serve` takes ``flag`` (older trees: A/B runs)."""
    out = subprocess.run([sys.executable, "-c", SERVE, PY, "serve", "--help"],
                         capture_output=True, text=True)
    return flag in out.stdout


def start_server(upstream_url: str) -> tuple[subprocess.Popen[str], str]:
    # Our sessions have names: a tree that mints ids must be told to take them.
    named = ["--client-session-ids"] if serve_has("--client-session-ids") else []
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, PY, "serve", "--port", "0", "--log-level", "warning",
         "--source", f"agui:{upstream_url}", *named],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving http://" not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    url = line.split("serving ", 1)[1].split(" ", 1)[0]
    return proc, url.replace("http://", "ws://")


def cpu_ms(pid: int) -> float:
    """User + system CPU the process has used, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- clients -------------------------------------------------------------------


async def _attach(ws: Any) -> None:
    await ws.send(json.dumps({"type": "resume", "after": 0}))


async def bystander(base: str, lateness: list[tuple[float, float]], done: asyncio.Event,
                    **connect: Any) -> None:
    """A session streaming deltas stamped with their send time: their lateness."""
    import websockets

    async with websockets.connect(f"{base}ws/sessions/bystander", max_size=None,
                                  **connect) as ws:
        await _attach(ws)
        await ws.send(json.dumps({"type": "run", "prompt": "bystander"}))
        while not done.is_set():
            msg = json.loads(await ws.recv())
            now = time.monotonic()
            for e in msg.get("events", ()):
                if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == "m":
                    for stamp in e["delta"].split():
                        lateness.append((now, now - float(stamp)))
                elif e["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    return


async def pinger(base: str, rtts: list[tuple[float, float]], done: asyncio.Event,
                 **connect: Any) -> None:
    """An idle session's socket pinged every 40 ms: how long the loop was busy.  (Every
    10 ms until issue 33: 100 pings a second is past the server's control-frame
    budget, ~30 small pings a second, and the server closed the pinger.)"""
    import websockets

    async with websockets.connect(f"{base}ws/sessions/idle-pinger", max_size=None,
                                  **connect) as ws:
        await _attach(ws)
        while not done.is_set():
            t = time.monotonic()
            pong = await ws.ping()
            await pong
            rtts.append((t, time.monotonic() - t))
            await asyncio.sleep(0.04)


@contextlib.asynccontextmanager
async def watched(base: str, **connect: Any
                  ) -> AsyncIterator[tuple[list[tuple[float, float]], list[tuple[float, float]]]]:
    """The bystander and the pinger running (after 1 s of warm-up): their samples,
    (lateness, ping round trips), as (monotonic time, seconds) pairs."""
    done = asyncio.Event()
    lateness: list[tuple[float, float]] = []
    rtts: list[tuple[float, float]] = []
    tasks = [asyncio.create_task(bystander(base, lateness, done, **connect)),
             asyncio.create_task(pinger(base, rtts, done, **connect))]
    await asyncio.sleep(1.0)
    try:
        yield lateness, rtts
    finally:
        done.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def cpu_beyond_idle(cpu: tuple[float, float, float], t: tuple[float, float, float]) -> float:
    """The server's CPU ms in the attack window beyond what the idle window cost (per
    second of window, scaled to the attack window's length).  ``cpu`` and ``t``: the
    CPU ms and the time at the idle window's start, the attack's start, its end."""
    (cpu_idle, cpu_attack, cpu_end), (t_idle, t_attack, t_end) = cpu, t
    idle_rate = (cpu_attack - cpu_idle) / (t_attack - t_idle)
    return (cpu_end - cpu_attack) - idle_rate * (t_end - t_attack)


async def attack(base: str, name: str, n: int) -> tuple[str, float]:
    import websockets

    async with websockets.connect(f"{base}ws/sessions/attacker-{name}-{n}",
                                  max_size=None) as ws:
        await _attach(ws)
        t = time.monotonic()
        await ws.send(json.dumps({"type": "run", "prompt": f"attack:{name}"}))
        while True:
            msg = json.loads(await ws.recv())
            for e in msg.get("events", ()):
                if e["type"] == "RUN_ERROR":
                    return e.get("code") or "?", time.monotonic() - t
                if e["type"] == "RUN_FINISHED":
                    return "finished", time.monotonic() - t


def _window(samples: list[tuple[float, float]], t0: float, t1: float) -> list[float]:
    return [v for t, v in samples if t0 <= t < t1]


def _stats(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    return statistics.median(values) * 1000, max(values) * 1000


async def run(base: str, pid: int, names: list[str], window_s: float) -> list[dict[str, Any]]:
    async with watched(base) as (lateness, rtts):
        return await _attacks(pid, base, names, window_s, lateness, rtts)


async def _attacks(pid: int, base: str, names: list[str], window_s: float,
                   lateness: list[tuple[float, float]], rtts: list[tuple[float, float]]
                   ) -> list[dict[str, Any]]:
    rows = []
    for n, name in enumerate(names):
        t_idle = time.monotonic()
        cpu_idle = cpu_ms(pid)
        await asyncio.sleep(window_s)
        t_attack = time.monotonic()
        cpu_attack = cpu_ms(pid)
        rss_before = rss_mib(pid)
        peak = rss_before
        outcome = asyncio.create_task(attack(base, name, n))
        while not outcome.done() or time.monotonic() < t_attack + window_s:
            peak = max(peak, rss_mib(pid))
            await asyncio.sleep(0.02)
        code, took = outcome.result()
        t_end = time.monotonic()
        cpu_end = cpu_ms(pid)
        await asyncio.sleep(2.0)
        rss_after = rss_mib(pid)
        idle_rtt = _stats(_window(rtts, t_idle, t_attack))
        hit_rtt = _stats(_window(rtts, t_attack, t_end))
        idle_late = _stats(_window(lateness, t_idle, t_attack))
        hit_late = _stats(_window(lateness, t_attack, t_end))
        rows.append({
            "attack": name, "code": code, "took_ms": took * 1000,
            "cpu_extra_ms": cpu_beyond_idle((cpu_idle, cpu_attack, cpu_end),
                                            (t_idle, t_attack, t_end)),
            "rtt_idle_p50": idle_rtt[0], "rtt_idle_max": idle_rtt[1],
            "rtt_attack_p50": hit_rtt[0], "rtt_attack_max": hit_rtt[1],
            "added_delay_ms": hit_rtt[1] - idle_rtt[1],
            "late_idle_p50": idle_late[0], "late_idle_max": idle_late[1],
            "late_attack_p50": hit_late[0], "late_attack_max": hit_late[1],
            "rss_before": rss_before, "rss_peak": peak, "rss_after": rss_after,
        })
        print(_row(rows[-1]), flush=True)
    return rows


HEADER = ("| attack | run ended | took ms | server CPU ms beyond idle"
          " | ping RTT idle p50/max ms | ping RTT attack p50/max ms"
          " | added delay ms | bystander lateness idle p50/max ms | attack p50/max ms"
          " | RSS MiB before/peak/+2 s |\n|---|---|---|---|---|---|---|---|---|---|")


def _row(r: dict[str, Any]) -> str:
    return (f"| {r['attack']} | {r['code']} | {r['took_ms']:.0f} | {r['cpu_extra_ms']:.0f} "
            f"| {r['rtt_idle_p50']:.1f} / {r['rtt_idle_max']:.1f} "
            f"| {r['rtt_attack_p50']:.1f} / {r['rtt_attack_max']:.1f} "
            f"| **{r['added_delay_ms']:.0f}** "
            f"| {r['late_idle_p50']:.0f} / {r['late_idle_max']:.0f} "
            f"| {r['late_attack_p50']:.0f} / {r['late_attack_max']:.0f} "
            f"| {r['rss_before']:.0f} / {r['rss_peak']:.0f} / {r['rss_after']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacks", default=",".join(ATTACKS),
                        help=f"comma-separated, from: {', '.join(ATTACKS)}")
    parser.add_argument("--window", type=float, default=2.0,
                        help="seconds of the idle and of the attack window (default 2)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the list this many times (one row per attack and round)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--part", choices=("events", "clients", "all"), default="all",
                        help="hostile events (this module), hostile clients "
                             "(bench/attack_clients.py), or both (default)")
    parser.add_argument("--clients",
                        default="flood,stalled,big,pings,spread,bomb,bomb-plain,sessions",
                        help="client attacks: flood, stalled, big, pings, spread, bomb, "
                             "bomb-plain, sessions")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    if args.part in ("clients", "all"):
        from bench.attack_clients import CLIENT_ATTACKS
        from bench.attack_clients import main as clients_main

        chosen = [n for n in args.clients.split(",") if n]
        if set(chosen) - set(CLIENT_ATTACKS):
            parser.error(f"unknown client attacks: {set(chosen) - set(CLIENT_ATTACKS)}")
        print("## hostile clients\n")
        rows += clients_main(chosen, args.window)
        print()
    if args.part == "clients":
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1, default=str))
        return 0
    print("## hostile events\n")
    names = [n for n in args.attacks.split(",") if n] * max(args.repeat, 1)
    unknown = set(names) - set(ATTACKS)
    if unknown:
        parser.error(f"unknown attacks: {', '.join(sorted(unknown))}")
    payloads = {name: ATTACKS[name]() for name in set(names)}
    print("server-side handling, in process (CPU ms, min of 5):\n\n| attack | outcome | ms |"
          "\n|---|---|---|")
    for name in dict.fromkeys(names):
        try:
            ms, outcome = handling_ms(name, payloads[name])
        except ImportError as exc:  # an older tree (STREAMPACE_BENCH_PY) lacks the parts
            print(f"| {name} | n/a ({exc.name}) | |", flush=True)
            continue
        print(f"| {name} | {outcome} | {ms:.1f} |", flush=True)
    print()
    duration = len(names) * (2 * args.window + 2.5) + 60  # the bystander outlives them all
    upstream = Upstream(payloads, delta_ms=20, duration_s=duration)
    proc, base = start_server(upstream.url)
    print(f"server: {PY} (pid {proc.pid}), load average {os.getloadavg()[0]:.2f}\n\n{HEADER}",
          flush=True)
    try:
        rows += asyncio.run(run(base, proc.pid, names, args.window))
    finally:
        upstream.close()
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(15)
        if proc.poll() is None:
            proc.kill()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
