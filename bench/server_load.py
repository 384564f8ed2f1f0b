"""Server load benchmark: K viewers x M sessions on loopback, real WebSocket clients.

    python3 bench/server_load.py                       # the default matrix
    python3 bench/server_load.py --sessions 10 --viewers 100 --scenario fast --speed 1
    python3 bench/server_load.py --store redis --procs 1,2,4 --sessions 1 --viewers 1000
    python3 bench/server_load.py --store memory,redis,redis-cluster --procs 2 \
        --sessions 1 --viewers 1000        # the stores side by side, one run

The server runs in a child process (so its memory is its own), instrumented
only to note when each event enters a session log; one client process holds
every viewer.  With ``--store redis`` a private redis-server is started and
``--procs N`` server processes share it; each session's viewers are spread over
the processes, and RSS / CPU are the sum over them (Redis's own RSS is reported
apart).  ``--store redis-cluster`` starts a private 3-master Redis Cluster (no
replicas: the figures are the store's, not replication's) the same way.  A comma
list of stores runs each in turn, for a side-by-side table.  Per configuration it
reports:

- delivered events/s: raw session events that reached viewers (each viewer
  counts every event its batches cover), divided by the streaming time;
- p50 / p99 / max delay between an event entering the session log and the
  batch that covers it reaching a viewer (both processes read CLOCK_MONOTONIC);
- memory per viewer: server RSS with all viewers attached minus RSS before
  they connected, divided by the number of viewers; plus peak RSS while streaming;
- server CPU per delivered event (user + system time of the server process while
  streaming, divided by delivered events): less sensitive to machine load than
  events/s, since on a busy machine the server simply gets fewer cores;
- Redis commands per event written (Redis stores): the commands clients sent
  (INFO ``total_commands_processed``, summed over the nodes; a script counts
  once, not the calls inside it) while streaming, divided by the events the runs
  wrote;
- the 1-minute load average at the end, to judge how shared the machine was.

This is a benchmark, not a test: figures depend on the machine and its load
(the client process competes with the server for the same cores).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


# -- child: the instrumented server -----------------------------------------


def child(args: argparse.Namespace) -> None:
    # STREAMPACE_BENCH_PY: another tree's py/ (an A/B run against older code).
    sys.path.insert(0, os.environ.get("STREAMPACE_BENCH_PY") or str(REPO / "py"))
    from streampace.server import ServerConfig, build_server, parse_source
    from streampace.server.session import Session
    from streampace.server.sources.base import SourceOptions

    entered: dict[str, list[float]] = {}
    if args.store == "memory":
        original = Session.append

        def append(self: Session, events: list[dict]) -> None:
            t = time.monotonic()
            times = entered.setdefault(self.id, [0.0])  # index = seq
            times.extend([t] * len(events))
            original(self, events)

        Session.append = append  # type: ignore[method-assign]
    else:
        # The log is the Redis stream: an event enters it when the run's process
        # sends the append (the reader of every process delivers it from there).
        writer: Any
        try:
            from streampace.server.redis_lease import RunLease as writer
            method = "write"
        except ImportError:  # a tree from before issue 22 (STREAMPACE_BENCH_PY)
            writer = importlib.import_module("streampace.server.redis_store").RedisSession
            method = "_write"
        original_write = getattr(writer, method)

        async def write(self: Any, events: list[dict], token: str) -> int:
            t = time.monotonic()
            last = await original_write(self, events, token)
            sid = getattr(self, "session_id", None) or self.id
            times = entered.setdefault(sid, {})  # type: ignore[arg-type]
            for seq in range(last - len(events) + 1, last + 1):
                times[seq] = t
            return last

        setattr(writer, method, write)
    extra: dict[str, Any] = {} if args.store == "memory" else {"store": args.store}
    names = {f.name for f in dataclasses.fields(ServerConfig)}  # older trees lack some
    if "client_session_ids" in names:  # named sessions, 1 000 sockets from one address
        extra.update(client_session_ids=True, max_connections_per_client=0,
                     max_sessions_per_client=0)
    if "client_new_sessions_per_s" in names:  # every session is made in the first second
        extra.update({name: 1_000_000 for name in (
            "new_sessions_per_s", "new_sessions_burst", "client_new_sessions_per_s",
            "client_new_sessions_burst")})
    config = ServerConfig(port=0, log_events=args.log_events, max_sessions=100_000, **extra)
    source = parse_source("demo", SourceOptions(speed=args.speed, seed=1))
    server = build_server(config, source, log_level="warning",
                          on_ready=lambda url: print(f"URL {url}", flush=True))
    profile = os.environ.get("STREAMPACE_BENCH_PROFILE")  # where the server's time goes
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if profile:
        prof.disable()
        prof.dump_stats(f"{profile}.{os.getpid()}")
    if args.store != "memory":  # seq -> time, as a list indexed by seq
        entered = {k: [v.get(i, 0.0) for i in range(max(v, default=0) + 1)]  # type: ignore
                   for k, v in entered.items()}
    Path(args.dump).write_text(json.dumps(entered))


# -- parent: clients and measurement ----------------------------------------


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def viewer(url: str, start_run: bool, scenario: str, attached: asyncio.Event,
                 go: asyncio.Event, log: list[tuple[float, int, int]]) -> None:
    import websockets

    async with websockets.connect(url, max_size=None, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "resume", "after": 0}))
        # An error reply proves the server processed our resume (there is no run yet).
        await ws.send(json.dumps({"type": "cancel"}))
        while "type" not in json.loads(await ws.recv()):
            pass
        attached.set()
        await go.wait()
        if start_run:
            await ws.send(json.dumps({"type": "run", "prompt": "load test", "scenario": scenario}))
        prev = 0
        while True:
            msg = json.loads(await ws.recv())
            if "through" not in msg:
                continue
            log.append((time.monotonic(), prev, msg["through"]))
            prev = msg["through"]
            if any(e["type"] in ("RUN_FINISHED", "RUN_ERROR") for e in msg["events"]):
                return


async def drive(bases: list[str], sessions: int, viewers: int, scenario: str,
                pids: list[int], redis_ops: Any = None) -> dict:
    go = asyncio.Event()
    logs: dict[tuple[int, int], list[tuple[float, int, int]]] = {}
    events_attached: list[asyncio.Event] = []
    tasks = []
    def rss() -> int:
        return sum(rss_kib(p) for p in pids)

    def cpu() -> float:
        return sum(cpu_s(p) for p in pids)

    rss_before = rss()
    sem = asyncio.Semaphore(200)  # bounded connection concurrency

    async def one(s: int, v: int) -> None:
        attached = asyncio.Event()
        events_attached.append(attached)
        log: list[tuple[float, int, int]] = []
        logs[(s, v)] = log
        async with sem:
            # Viewers of one session spread over the processes (no stickiness).
            base = bases[(s * viewers + v) % len(bases)]
            task = asyncio.create_task(viewer(
                f"{base}ws/sessions/load{s}", v == 0, scenario, attached, go, log))
            await attached.wait()
        await task

    for s in range(sessions):
        for v in range(viewers):
            tasks.append(asyncio.create_task(one(s, v)))
    t_connect = time.monotonic()
    while len(events_attached) < sessions * viewers or not all(
            e.is_set() for e in events_attached):
        await asyncio.sleep(0.05)
        if time.monotonic() - t_connect > 300:
            raise RuntimeError("viewers did not attach within 300 s")
    connect_s = time.monotonic() - t_connect
    await asyncio.sleep(1.0)
    rss_attached = rss()
    peak = rss_attached
    cpu0 = cpu()
    ops0 = redis_ops() if redis_ops else 0
    t0 = time.monotonic()
    go.set()
    done = asyncio.gather(*tasks)
    while not done.done():
        peak = max(peak, rss())
        await asyncio.sleep(0.1)
    await done
    t1 = time.monotonic()
    cpu1 = cpu()
    ops1 = redis_ops() if redis_ops else 0
    return {"logs": logs, "rss_before": rss_before, "rss_attached": rss_attached,
            "server_cpu_s": cpu1 - cpu0, "redis_ops": ops1 - ops0,
            "rss_peak": peak, "t0": t0, "t1": t1, "connect_s": connect_s}


def redis_commands(ports: list[int]) -> int:
    """Commands the Redis nodes on these ports have processed so far, summed."""
    import redis

    total = 0
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            total += int(client.info("stats")["total_commands_processed"])
        finally:
            client.close()
    return total


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


def run_config(sessions: int, viewers: int, scenario: str, speed: float, log_events: int,
               store: str = "memory", procs: int = 1) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        redis: Any = None
        cluster: Any = None
        redis_ports: list[int] = []
        sys.path.insert(0, str(REPO / "tests"))
        if store == "redis":
            # The tests' Redis harnesses (tests/ is on the path only from here).
            RedisProcess = importlib.import_module("server.redis_harness").RedisProcess
            redis = RedisProcess(Path(tmp) / "redis").start()
            store_url = redis.url
            redis_ports = [redis.port]
        elif store == "redis-cluster":
            RedisCluster = importlib.import_module("server.redis_cluster_harness").RedisCluster
            cluster = RedisCluster(Path(tmp) / "cluster", nodes=3, replicas=0).start()
            store_url = cluster.url
            redis_ports = list(cluster.ports)
        else:
            store_url = "memory"
        dumps = [Path(tmp) / f"entered{i}.json" for i in range(procs)]
        children = [subprocess.Popen(
            [sys.executable, __file__, "--child", "--dump", str(dump), "--speed", str(speed),
             "--log-events", str(log_events), "--store", store_url],
            stdout=subprocess.PIPE, text=True,
        ) for dump in dumps]
        try:
            bases = []
            for proc in children:
                assert proc.stdout is not None  # started with stdout=PIPE
                line = proc.stdout.readline()
                if not line.startswith("URL "):
                    raise RuntimeError(f"server did not start: {line!r}")
                bases.append(line.split()[1].replace("http://", "ws://"))
            res = asyncio.run(drive(bases, sessions, viewers, scenario,
                                    [p.pid for p in children],
                                    (lambda: redis_commands(redis_ports)) if redis_ports
                                    else None))
        finally:
            for proc in children:
                proc.send_signal(signal.SIGINT)
            for proc in children:
                proc.wait(60)
            redis_rss = 0
            if redis is not None:
                redis_rss = rss_kib(redis.proc.pid) if redis.proc else 0
                redis.stop()
            if cluster is not None:
                redis_rss = sum(rss_kib(p.pid) for p in cluster.procs.values())
                cluster.stop()
        entered: dict[str, list[float]] = {}
        for dump in dumps:
            for k, v in json.loads(dump.read_text()).items():
                mine = entered.setdefault(k, [])
                mine.extend([0.0] * (len(v) - len(mine)))
                for i, t in enumerate(v):
                    if t:
                        mine[i] = t
    delays: list[float] = []
    delivered = 0
    for (s, _v), log in res["logs"].items():
        times = entered[f"load{s}"]
        for t_recv, prev, through in log:
            for seq in range(prev + 1, through + 1):
                delays.append((t_recv - times[seq]) * 1000)
            delivered += through - prev
    delays.sort()
    n = sessions * viewers
    written = sum(max(len(v) - 1, 0) for v in entered.values())
    streaming_s = res["t1"] - res["t0"]
    return {
        "store": store,
        "procs": procs,
        "redis_rss_mib": round(redis_rss / 1024, 1) if store != "memory" else None,
        "events_written": written,
        "redis_cmds_per_event": (round(res["redis_ops"] / max(written, 1), 2)
                                 if store != "memory" else None),
        "sessions": sessions,
        "viewers_per_session": viewers,
        "viewers": n,
        "scenario": scenario,
        "speed": speed,
        "connect_s": round(res["connect_s"], 2),
        "streaming_s": round(streaming_s, 2),
        "delivered_events": delivered,
        "delivered_events_per_s": round(delivered / streaming_s),
        "server_cpu_s": round(res["server_cpu_s"], 2),
        "server_cpu_us_per_event": round(res["server_cpu_s"] / max(delivered, 1) * 1e6, 1),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "delay_ms_p50": round(percentile(delays, 50), 1),
        "delay_ms_p99": round(percentile(delays, 99), 1),
        "delay_ms_max": round(delays[-1], 1) if delays else None,
        "rss_before_mib": round(res["rss_before"] / 1024, 1),
        "rss_attached_mib": round(res["rss_attached"] / 1024, 1),
        "rss_peak_mib": round(res["rss_peak"] / 1024, 1),
        "kib_per_viewer_attached": round((res["rss_attached"] - res["rss_before"]) / n, 1),
        "kib_per_viewer_peak": round((res["rss_peak"] - res["rss_before"]) / n, 1),
    }


DEFAULT_MATRIX = [(1, 10), (10, 10), (10, 50), (10, 100), (1, 1000), (1000, 1)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dump", help=argparse.SUPPRESS)
    p.add_argument("--sessions", type=int, help="M sessions (with --viewers: one config)")
    p.add_argument("--viewers", type=int, help="K viewers per session")
    p.add_argument("--scenario", default="fast", help="demo scenario per run (default fast)")
    p.add_argument("--speed", type=float, default=1.0, help="demo speed (default 1 = real time)")
    p.add_argument("--log-events", type=int, default=10_000)
    p.add_argument("--store", default="memory",
                   help="memory | redis (a private redis-server) | redis-cluster (a private "
                        "3-master cluster), or a comma list of them; the child gets the URL")
    p.add_argument("--procs", default="1",
                   help="server processes on one Redis; a comma list runs each (e.g. 1,2,4)")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)
    if args.child:
        child(args)
        return 0
    matrix = [(args.sessions, args.viewers)] if args.sessions and args.viewers else DEFAULT_MATRIX
    procs_list = [int(p) for p in args.procs.split(",")]
    stores = args.store.split(",")
    if unknown := set(stores) - {"memory", "redis", "redis-cluster"}:
        p.error(f"unknown store(s): {', '.join(sorted(unknown))}")
    results = []
    header = (f"{'store':>10} {'M x K':>11} {'viewers':>7} {'events/s':>9} {'p50 ms':>7} "
              f"{'p99 ms':>7} {'max ms':>7} {'KiB/viewer':>10} {'peak KiB/v':>10} "
              f"{'RSS MiB':>8} {'CPU us/ev':>9} {'cmds/ev':>7} {'load':>5}")
    print(header)
    for sessions, viewers in matrix:
        for store in stores:
            # The memory store keeps a session in one process: it runs with one.
            for procs in [1] if store == "memory" else procs_list:
                r = run_config(sessions, viewers, args.scenario, args.speed, args.log_events,
                               store, procs)
                results.append(r)
                label = {"memory": "memory", "redis": f"redis/{procs}"}.get(
                    store, f"cluster/{procs}")
                cmds = r["redis_cmds_per_event"]
                print(f"{label:>10} {sessions:>4} x {viewers:<4} {r['viewers']:>7} "
                      f"{r['delivered_events_per_s']:>9} "
                      f"{r['delay_ms_p50']:>7} {r['delay_ms_p99']:>7} {r['delay_ms_max']:>7} "
                      f"{r['kib_per_viewer_attached']:>10} {r['kib_per_viewer_peak']:>10} "
                      f"{r['rss_peak_mib']:>8} {r['server_cpu_us_per_event']:>9} "
                      f"{'-' if cmds is None else cmds:>7} {r['loadavg_1m']:>5}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
