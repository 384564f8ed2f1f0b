"""Fault soak: many viewers, dropped sockets, bad input, a bad upstream, a server crash.

    python -m bench.soak                      # full: 10 minutes
    python -m bench.soak --duration 60        # the CI-sized run (tests/soak)
    python -m bench.soak --store memory       # session store passed to `serve --store`

Pieces, all on loopback:

- a `streampace serve` **process** (so it can be SIGKILLed and started again on its
  port) with an `agui:` source pointing at
- a fake AG-UI agent (thread) that streams `streampace.sim.scenarios` runs with their timing;
  every ``--bad-upstream-every``-th run is malformed (an event for a message that is
  not open, a lone surrogate, a non-JSON line, a tool call cut off mid-arguments);
- a TCP proxy in front of the server that aborts a random half of the live
  connections every ~``--drop-every`` seconds (the server's sockets drop);
- per session: a **reference** viewer connected straight to the server (never
  dropped by the proxy), reading viewers through the proxy (some slow), and one
  viewer that never reads;
- one viewer per session ("hopper") leaves after a moment and resumes at once; every
  100th frame a viewer sends is preceded by a malformed one (not JSON, nested too
  deep, unknown type, bad field, binary): 1 % bad client frames;
- runs back to back in every session; once, mid-soak and mid-run, the server is
  killed (SIGKILL) and started again.

Checks: at a checkpoint before the crash and at the end, every reading viewer's
transcript (its LiveState rendered as text) equals the reference's byte for byte;
the server's RSS stays under ``--rss-bound-mib``; at the end a fresh viewer of every
session gets the same transcript and can run.  Viewers speak protocol v2 like the page
(`SessionClient`: duplicates by sequence, epochs across the restart).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import websockets
from streampace.client.session_client import SessionClient
from streampace.conversation.items import ToolCallItem
from streampace.conversation.live_state import LiveState
from streampace.sim import iter_simulate

SCENARIOS = ("fast", "cjk_emoji", "agentic", "bursty", "very_fast")
BAD_FRAMES = (
    "{not json",
    "[" * 1000,
    '{"type": "dance"}',
    '{"type": "run", "prompt": 5}',
    b"\x00binary",
)
BAD_UPSTREAM = ("ghost", "surrogate", "garbage", "cut_tool_call")


def _log(msg: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- fake AG-UI agent --------------------------------------------------------


def _serve_has(flag: str) -> bool:
    """Whether this tree's `streampace serve` takes ``flag`` (older trees: A/B runs)."""
    out = subprocess.run([sys.executable, "-m", "streampace", "serve", "--help"],
                         capture_output=True, text=True)
    return flag in out.stdout


class FakeAgent:
    """Streams simulated runs as AG-UI SSE; the prompt says which and whether malformed."""

    def __init__(self, speed: float) -> None:
        self.speed = speed
        self.runs = 0
        self.bad_runs = 0
        agent = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with contextlib.suppress(OSError):
                    agent.stream(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/agent"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def stream(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        prompt = body["messages"][-1]["content"]
        # prompt: "<scenario> <seed> [bad:<kind>]"
        words = prompt.split()
        scenario, seed = words[0], int(words[1])
        bad = words[2].split(":", 1)[1] if len(words) > 2 and words[2].startswith("bad:") else None
        self.runs += 1
        self.bad_runs += bad is not None
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        timed = list(iter_simulate(scenario, seed=seed, speed=self.speed,
                                   thread_id=body["threadId"], run_id=body["runId"]))
        cut = len(timed) // 2
        start = time.monotonic()
        for i, te in enumerate(timed):
            delay = start + te.t_ms / 1000 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if bad is not None and i == cut:
                self._write_bad(h, bad, body["runId"])
                if bad in ("garbage", "cut_tool_call"):
                    return
            h.wfile.write(f"data: {json.dumps(te.event, ensure_ascii=False)}\n\n".encode())
            h.wfile.flush()

    @staticmethod
    def _write_bad(h: BaseHTTPRequestHandler, kind: str, run_id: str) -> None:
        if kind == "ghost":
            raw = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost",
                              "delta": "boo"})
        elif kind == "surrogate":
            raw = '{"type": "TEXT_MESSAGE_CONTENT", "messageId": "x", "delta": "\\udc00"}'
        elif kind == "garbage":
            raw = "{{{ not json"
        else:  # a tool call whose arguments stop half way, then the stream ends
            raw = "\n\ndata: ".join([
                # Ids unique per run, as real agents make them (an id reused across
                # runs is shown differently live and from a snapshot; see report).
                json.dumps({"type": "TOOL_CALL_START", "toolCallId": f"cut-{run_id}",
                            "toolCallName": "lookup"}),
                json.dumps({"type": "TOOL_CALL_ARGS", "toolCallId": f"cut-{run_id}",
                            "delta": '{"q": "half'}),
            ])
        h.wfile.write(f"data: {raw}\n\n".encode())
        h.wfile.flush()


# -- dropping proxy ----------------------------------------------------------


class DroppingProxy:
    """TCP proxy to the server; ``drop()`` aborts a random part of its connections."""

    def __init__(self, target_port: int, rng: random.Random) -> None:
        self.target_port = target_port
        self.rng = rng
        self.pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self.dropped = 0
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        try:
            sr, sw = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            cw.transport.abort()
            return
        pair = (cw, sw)
        self.pairs.add(pair)

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.transport.abort()

        try:
            await asyncio.gather(pipe(cr, sw), pipe(sr, cw))
        finally:
            self.pairs.discard(pair)

    def drop(self) -> int:
        victims = [p for p in self.pairs if self.rng.random() < 0.5]
        for cw, sw in victims:
            cw.transport.abort()
            sw.transport.abort()
        self.dropped += len(victims)
        return len(victims)

    async def close(self) -> None:
        for cw, sw in list(self.pairs):
            cw.transport.abort()
            sw.transport.abort()
        if self.server is not None:
            self.server.close()


# -- the server process ------------------------------------------------------


class ServerProcess:
    def __init__(self, port: int, source: str, store: str, log_path: Path,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.extra_args = extra_args
        self.port = port
        self.source = source
        self.store = store
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.rss_max_kib = 0
        self.restarts = 0

    def start(self) -> None:
        cmd = [sys.executable, "-m", "streampace", "serve", "--port", str(self.port),
               "--source", self.source, "--log-level", "warning"]
        if _serve_has("--client-session-ids"):
            cmd += ["--client-session-ids"]  # the soak names its sessions
        if self.store != "memory":
            cmd += ["--store", self.store]  # the Redis store's flag (issue 11)
        cmd += list(self.extra_args)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=1):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}; see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start within 30 s")
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def restart(self) -> None:
        self.kill()
        self.start()
        self.restarts += 1

    def sample_rss(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return 0
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    kib = int(line.split()[1])
                    self.rss_max_kib = max(self.rss_max_kib, kib)
                    return kib
        except OSError:
            pass
        return 0

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)


# -- viewers -----------------------------------------------------------------


def transcript_lines(state: LiveState) -> list[str]:
    """The view as text: every item in timeline order, with its role / tool name."""
    lines = []
    for item in state.items():
        if isinstance(item, ToolCallItem):
            lines.append(f"[tool {item.name}] {item.args} -> {item.result!r}")
        else:
            lines.append(f"[{item.kind} {getattr(item, 'role', '')}] {item.text}")
    return lines


def transcript(state: LiveState) -> str:
    return "\n".join(transcript_lines(state))


@dataclass
class SoakViewer:
    name: str
    url: str
    kind: str  # "reference" | "reader" | "slow" | "hopper" | "stalled"
    rng: random.Random
    stats: dict[str, int]
    client: SessionClient = field(init=False)
    state: LiveState = field(init=False)
    ws: Any = None
    connects: int = 0
    snapshots: int = 0  # attaches that started from a snapshot (log gone, new epoch)
    closes: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.client = SessionClient(self._deliver)
        self.state = LiveState()

    def _deliver(self, events: list[dict[str, Any]]) -> None:
        self.state.apply(events)

    async def send(self, ws: Any, text: str) -> None:
        """Send a frame; 1 % of frames are preceded by a malformed one."""
        self.stats["frames"] += 1
        if self.stats["frames"] % 100 == 0:  # exactly 1 %, whatever the timing
            await ws.send(BAD_FRAMES[self.stats["bad_frames"] % len(BAD_FRAMES)])
            self.stats["bad_frames"] += 1
        await ws.send(text)

    def resume_message(self) -> str:
        return self.client.resume_message()

    async def run_forever(self) -> None:
        attempt = 0
        while True:
            try:
                async with websockets.connect(self.url, max_size=None, open_timeout=10,
                                              max_queue=1 if self.kind == "stalled" else 16,
                                              ping_interval=None) as ws:
                    self.ws = ws
                    self.connects += 1
                    attempt = 0
                    await self.send(ws, self.resume_message())
                    if self.kind == "stalled":
                        await asyncio.Event().wait()  # never read
                    # A hopper leaves after a moment and resumes at once: attach/detach
                    # churn, and most of the client frames the soak sends.
                    life = self.rng.uniform(0.1, 0.6) if self.kind == "hopper" else None
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(life):
                            async for text in ws:
                                if isinstance(text, str) and text.startswith(
                                        '{"type":"attached"') and (
                                        '"mode":"snapshot"' in text):
                                    self.snapshots += 1
                                self.client.receive(text)
                                if self.kind == "slow":
                                    await asyncio.sleep(self.rng.uniform(0.005, 0.03))
                    if life is not None:
                        self.closes[1000] = self.closes.get(1000, 0) + 1
                        continue
            except (TimeoutError, OSError, websockets.WebSocketException) as exc:
                code = getattr(getattr(exc, "rcvd", None), "code", None) or 1006
                self.closes[code] = self.closes.get(code, 0) + 1
            finally:
                self.ws = None
            attempt += 1
            await asyncio.sleep(min(2.0, 0.05 * 2 ** min(attempt, 6)) * self.rng.uniform(0.5, 1))


# -- the soak ----------------------------------------------------------------


@dataclass
class SoakConfig:
    duration_s: float = 600.0
    sessions: int = 3
    readers: int = 3  # reading viewers per session besides the reference (one of them slow)
    drop_every_s: float = 5.0
    bad_upstream_every: int = 7
    speed: float = 3.0
    store: str = "memory"
    rss_bound_mib: float = 160.0
    seed: int = 1
    workdir: Path = Path("/tmp")
    server_args: tuple[str, ...] = ()  # more `streampace serve` flags, e.g. --log-events 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Soak:
    def __init__(self, cfg: SoakConfig) -> None:
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.stats = {"frames": 0, "bad_frames": 0, "runs": 0, "bad_runs": 0,
                      "checkpoints": 0, "chars_compared": 0, "mismatches": 0,
                      "viewers_compared": 0}
        self.mismatch_detail: list[str] = []
        self.agent = FakeAgent(cfg.speed)
        self.port = _free_port()
        self.server = ServerProcess(self.port, f"agui:{self.agent.url}", cfg.store,
                                    cfg.workdir / f"soak-server-{self.port}.log",
                                    cfg.server_args)
        self.proxy = DroppingProxy(self.port, self.rng)
        self.viewers: dict[str, list[SoakViewer]] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self.run_counter = 0
        self.pause = asyncio.Event()  # set: do not start new runs
        self.busy: set[str] = set()  # sessions whose driver has a run in flight

    def _url(self, session: str, direct: bool) -> str:
        port = self.port if direct else self.proxy.port
        return f"ws://127.0.0.1:{port}/ws/sessions/{session}"

    def _prompt(self) -> str:
        self.run_counter += 1
        n = self.run_counter
        scenario = SCENARIOS[n % len(SCENARIOS)]
        prompt = f"{scenario} {n}"
        if n % self.cfg.bad_upstream_every == 0:
            prompt += f" bad:{BAD_UPSTREAM[(n // self.cfg.bad_upstream_every) % 4]}"
            self.stats["bad_runs"] += 1
        return prompt

    async def _drive(self, session: str) -> None:
        """Runs back to back, started over the reference viewer's socket."""
        ref = self.viewers[session][0]
        while True:
            self.busy.discard(session)
            if self.pause.is_set() or ref.ws is None or ref.client.run_open:
                await asyncio.sleep(0.05)
                continue
            self.busy.add(session)  # from sending the run until its end was seen
            with contextlib.suppress(websockets.WebSocketException):
                await ref.ws.send(json.dumps({"type": "run", "prompt": self._prompt()}))
                self.stats["runs"] += 1
            # Wait until the reference saw it start, then end (or its socket went away).
            t0 = time.monotonic()
            while not ref.client.run_open and ref.ws is not None and time.monotonic() - t0 < 5:
                await asyncio.sleep(0.02)
            while ref.client.run_open:
                await asyncio.sleep(0.05)

    async def _dropper(self) -> None:
        while True:
            await asyncio.sleep(self.cfg.drop_every_s * self.rng.uniform(0.6, 1.4))
            n = self.proxy.drop()
            _log(f"dropped {n} connections (total {self.proxy.dropped})")

    async def _rss(self) -> None:
        while True:
            self.server.sample_rss()
            await asyncio.sleep(0.5)

    async def _quiesce(self, timeout: float = 60.0) -> bool:
        """No run in progress and every reading viewer caught up with its reference."""
        self.pause.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = not self.busy
            for viewers in self.viewers.values():
                ref = viewers[0]
                if ref.client.run_open or ref.ws is None:
                    done = False
                    break
                for v in viewers[1:]:
                    if v.kind == "stalled":
                        continue
                    if (v.client.epoch != ref.client.epoch
                            or v.client.last_through != ref.client.last_through):
                        done = False
                        break
            if done:
                return True
            await asyncio.sleep(0.1)
        return False

    def _compare(self, label: str) -> None:
        self.stats["checkpoints"] += 1
        for session, viewers in self.viewers.items():
            want = transcript(viewers[0].state).encode()
            for v in viewers[1:]:
                if v.kind == "stalled":
                    continue
                got = transcript(v.state).encode()
                self.stats["viewers_compared"] += 1
                self.stats["chars_compared"] += len(got.decode())
                if got != want:
                    self.stats["mismatches"] += 1
                    pairs = enumerate(zip(got, want, strict=False))
                    at = next((i for i, (a, b) in pairs if a != b), min(len(got), len(want)))
                    self.mismatch_detail.append(
                        f"{label} {session}/{v.name}: differs at byte {at} "
                        f"(len {len(got)} vs {len(want)})")
        _log(f"checkpoint {label}: {self.stats['viewers_compared']} viewers compared, "
             f"{self.stats['mismatches']} mismatches")

    async def _fresh_viewer_check(self) -> dict[str, Any]:
        """A new viewer per session: the reference's transcript, and a run works.

        A long soak outgrows the session log, so the fresh viewer may start from a
        snapshot, which holds only the newest messages (history bounds): it must
        then equal the reference's transcript from that point on.
        """
        ok = 0
        for session, viewers in self.viewers.items():
            ref = viewers[0]
            fresh = SoakViewer("fresh", self._url(session, direct=True), "reference",
                               self.rng, self.stats)
            async with websockets.connect(fresh.url, max_size=None) as ws:
                await ws.send(fresh.resume_message())
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(60):
                        while fresh.client.last_through < ref.client.last_through:
                            fresh.client.receive(await ws.recv())
                got = transcript_lines(fresh.state)
                want = transcript_lines(ref.state)[-len(got):] if got else []
                same = bool(got) and got == want
                self.stats["chars_compared"] += sum(len(line) for line in got)
                if not same:
                    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False))
                               if a != b), min(len(got), len(want)))
                    self.mismatch_detail.append(
                        f"fresh viewer of {session}: {len(got)} items vs the reference's last "
                        f"{len(want)}; item {at}: {got[at:at + 1]!r:.200} vs "
                        f"{want[at:at + 1]!r:.200}")
                before = fresh.state.run.run_id
                await ws.send(json.dumps({"type": "run", "prompt": "fast 9999"}))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(60):
                        while (fresh.state.run.run_id == before
                               or fresh.state.status not in ("finished", "error")):
                            fresh.client.receive(await ws.recv())
                ok += same and fresh.state.status == "finished"
        return {"fresh_viewers_ok": ok, "fresh_viewers": len(self.viewers)}

    async def run(self) -> dict[str, Any]:
        cfg = self.cfg
        self.server.start()
        await self.proxy.start()
        rss_start = self.server.sample_rss()
        for s in range(cfg.sessions):
            session = f"soak{s}"
            kinds = ["reference"] + ["slow" if i == 0 else "reader" for i in range(cfg.readers)]
            kinds += ["hopper", "stalled"]
            self.viewers[session] = [
                SoakViewer(f"{k}{i}", self._url(session, direct=(k == "reference")), k,
                           random.Random(self.rng.random()), self.stats)
                for i, k in enumerate(kinds)
            ]
        for viewers in self.viewers.values():
            self.tasks += [asyncio.create_task(v.run_forever()) for v in viewers]
        await asyncio.sleep(0.5)
        self.tasks += [asyncio.create_task(self._drive(s)) for s in self.viewers]
        self.tasks += [asyncio.create_task(self._dropper()), asyncio.create_task(self._rss())]
        t0 = time.monotonic()
        result: dict[str, Any] = {}
        try:
            # First half, then a checkpoint comparison, then a crash mid-run.
            await asyncio.sleep(cfg.duration_s / 2)
            if not await self._quiesce():
                self.mismatch_detail.append("checkpoint 1: viewers did not catch up in 60 s")
                self.stats["mismatches"] += 1
            self._compare("before-restart")
            self.pause.clear()
            await asyncio.sleep(min(2.0, cfg.duration_s / 20))  # let runs start
            _log("killing the server (SIGKILL) mid-run and starting it again")
            await asyncio.to_thread(self.server.restart)
            await asyncio.sleep(max(0.0, cfg.duration_s - (time.monotonic() - t0)))
            if not await self._quiesce():
                self.mismatch_detail.append("final: viewers did not catch up in 60 s")
                self.stats["mismatches"] += 1
            self._compare("final")
            result.update(await self._fresh_viewer_check())
        finally:
            for t in self.tasks:
                t.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
            await self.proxy.close()
            self.server.sample_rss()
            self.server.stop()
            self.agent.close()
        lost = sum(v.client.stats["runs_lost"] for vs in self.viewers.values() for v in vs)
        dup = sum(v.client.stats["duplicates"] for vs in self.viewers.values() for v in vs)
        bad_events = sum(v.client.stats["bad_events"] for vs in self.viewers.values() for v in vs)
        result.update(
            duration_s=round(time.monotonic() - t0, 1),
            sessions=cfg.sessions,
            viewers=sum(len(v) for v in self.viewers.values()),
            store=cfg.store,
            drops_survived=self.proxy.dropped,
            restarts_survived=self.server.restarts,
            bad_client_frames_sent=self.stats["bad_frames"],
            client_frames_sent=self.stats["frames"],
            runs_started=self.stats["runs"],
            malformed_upstream_runs=self.stats["bad_runs"],
            runs_lost_to_the_restart=lost,
            duplicates_dropped=dup,
            invalid_events_received=bad_events,
            characters_compared=self.stats["chars_compared"],
            viewer_transcripts_compared=self.stats["viewers_compared"],
            mismatches=self.stats["mismatches"],
            mismatch_detail=self.mismatch_detail,
            rss_start_mib=round(rss_start / 1024, 1),
            rss_max_mib=round(self.server.rss_max_kib / 1024, 1),
            rss_bound_mib=cfg.rss_bound_mib,
            snapshot_resumes=sum(v.snapshots for vs in self.viewers.values() for v in vs),
            reconnects=sum(v.connects - 1 for vs in self.viewers.values() for v in vs),
            close_codes=_merge_counts(v.closes for vs in self.viewers.values() for v in vs),
        )
        result["rss_within_bound"] = result["rss_max_mib"] <= cfg.rss_bound_mib
        return result


def _merge_counts(counts: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[str(k)] = out.get(str(k), 0) + n
    return dict(sorted(out.items()))


def run_soak(cfg: SoakConfig) -> dict[str, Any]:
    return asyncio.run(Soak(cfg).run())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--readers", type=int, default=3, help="reading viewers per session")
    ap.add_argument("--drop-every", type=float, default=5.0)
    ap.add_argument("--speed", type=float, default=3.0, help="simulated model speed")
    ap.add_argument("--store", default="memory", help="session store (`serve --store`)")
    ap.add_argument("--rss-bound-mib", type=float, default=160.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="also write the result here")
    ap.add_argument("--server-arg", action="append", default=[],
                    help="extra `streampace serve` argument (repeatable), e.g. --log-events=300")
    args = ap.parse_args(argv)
    cfg = SoakConfig(duration_s=args.duration, sessions=args.sessions, readers=args.readers,
                     drop_every_s=args.drop_every, speed=args.speed, store=args.store,
                     rss_bound_mib=args.rss_bound_mib, seed=args.seed,
                     server_args=tuple(args.server_arg))
    result = run_soak(cfg)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    ok = (result["mismatches"] == 0 and result["rss_within_bound"]
          and result["fresh_viewers_ok"] == result["fresh_viewers"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
