"""A real Redis Cluster on loopback: six redis-servers (three masters, one replica each),
no persistence, temp dirs, a short cluster-node-timeout so a failover takes ~1-2 s.

Ports: a random free range in 20000-45000 (the cluster bus is port + 10000, so every
port and bus port stays below 65536 and parallel runs rarely collide; a taken port
moves the range).
"""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from .redis_harness import REDIS_SERVER, START_S

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
NODE_TIMEOUT_MS = 1000
NODES = 6
SETTLE_S = 30.0  # bounded: the cluster forms, or fails over, within this


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_range(count: int) -> int:
    for _ in range(50):
        base = random.randrange(20000, 45000 - count)
        ports = range(base, base + count)
        if all(_port_free(p) and _port_free(p + 10000) for p in ports):
            return base
    raise RuntimeError("no free port range for a Redis Cluster")


def _command(port: int, *words: str, timeout: float = 2.0) -> str:
    out = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(port), *words],
                         capture_output=True, text=True, timeout=timeout)
    return out.stdout


class RedisCluster:
    def __init__(self, workdir: Path, nodes: int = NODES, replicas: int = 1) -> None:
        self.workdir = workdir
        self.count = nodes
        self.replicas = replicas
        self.base = _free_range(nodes)
        self.ports = list(range(self.base, self.base + nodes))
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.live_ports())

    def live_ports(self) -> list[int]:
        return [p for p, proc in self.procs.items() if proc.poll() is None]

    def start(self) -> RedisCluster:
        for port in self.ports:
            d = self.workdir / str(port)
            d.mkdir(parents=True, exist_ok=True)
            self.procs[port] = subprocess.Popen(
                [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                 "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                 # A replica fails over however long its link was down (the tests
                 # stop one on purpose), and starts replicating at once (Redis
                 # waits 5 s for more replicas before a diskless sync by default).
                 "--cluster-replica-validity-factor", "0",
                 "--repl-diskless-sync-delay", "0",
                 "--save", "", "--appendonly", "no", "--dir", str(d),
                 "--loglevel", "warning", "--logfile", str(d / "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_S
        for port in self.ports:
            while "PONG" not in _command(port, "PING"):
                assert self.procs[port].poll() is None, f"redis-server {port} exited"
                assert time.monotonic() < deadline, f"redis-server {port} did not start"
                time.sleep(0.02)
        created = subprocess.run(
            [REDIS_CLI, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
            capture_output=True, text=True, timeout=SETTLE_S)
        assert created.returncode == 0, created.stdout + created.stderr
        self.wait_ok()
        self.wait_replicated()
        return self

    def wait_replicated(self, timeout: float = SETTLE_S) -> None:
        """Every live replica's link to its master is up (its first sync done)."""
        deadline = time.monotonic() + timeout
        while True:
            links = [_command(p, "INFO", "replication") for p in self.live_ports()]
            if all("master_link_status:up" in t for t in links if "role:slave" in t):
                return
            assert time.monotonic() < deadline, "replicas did not sync"
            time.sleep(0.05)

    def info(self, port: int) -> dict[str, str]:
        out = _command(port, "CLUSTER", "INFO")
        return dict(line.split(":", 1) for line in out.split() if ":" in line)

    def wait_ok(self, timeout: float = SETTLE_S) -> None:
        """Every live node says the cluster is ok and agrees on three masters that
        cover every slot."""
        deadline = time.monotonic() + timeout
        while True:
            states = [self.info(p).get("cluster_state") for p in self.live_ports()]
            if all(s == "ok" for s in states) and len(self.masters()) == self.count // (
                    self.replicas + 1):
                return
            assert time.monotonic() < deadline, f"cluster not ok: {states}"
            time.sleep(0.1)

    def masters(self) -> dict[int, list[tuple[int, int]]]:
        """Live masters by port, with their slot ranges, as the first live node sees them."""
        out: dict[int, list[tuple[int, int]]] = {}
        for port in self.live_ports():
            text = _command(port, "CLUSTER", "NODES")
            if not text:
                continue
            for line in text.splitlines():
                parts = line.split()
                if "master" not in parts[2] or "fail" in parts[2]:
                    continue
                node_port = int(parts[1].split("@")[0].rpartition(":")[2])
                ranges = []
                for r in parts[8:]:
                    if r.startswith("["):
                        continue
                    lo, _, hi = r.partition("-")
                    ranges.append((int(lo), int(hi or lo)))
                if ranges:
                    out[node_port] = ranges
            return out
        return out

    def master_of(self, slot: int) -> int:
        for port, ranges in self.masters().items():
            if any(lo <= slot <= hi for lo, hi in ranges):
                return port
        raise LookupError(f"no master serves slot {slot}")

    def replica_of(self, master: int) -> int:
        node_id = _command(master, "CLUSTER", "MYID").strip()
        for port in self.live_ports():
            if port == master:
                continue
            role = _command(port, "ROLE").split()
            if role and role[0] == "slave" and int(role[2]) == master:
                return port
        raise LookupError(f"no replica of {master} ({node_id})")

    def cut_replication(self, master: int, tag: str) -> None:
        """With its replica stopped (SIGSTOP), make ``master`` drop the replica's link:
        a tiny output-buffer limit and a few MiB written past it, more than the
        socket buffers hold.  What the master acknowledges afterwards never reaches
        the replica (what async replication loses when a master dies).  ``tag``: a
        hash tag of a slot this master serves."""
        import redis

        client = redis.Redis(host="127.0.0.1", port=master, socket_timeout=10)
        try:
            client.config_set("client-output-buffer-limit", "replica 262144 262144 0")
            before = client.info("replication")["connected_slaves"]
            assert before >= 1
            blob = b"x" * (4 << 20)
            for i in range(8):
                client.set(f"junk{i}{{{tag}}}", blob)
                client.delete(f"junk{i}{{{tag}}}")
                if client.info("replication")["connected_slaves"] < before:
                    return
            raise AssertionError("the master kept its replica's link")
        finally:
            client.close()

    def command(self, port: int, *words: str) -> str:
        return _command(port, *words)

    def signal(self, port: int, sig: int) -> None:
        self.procs[port].send_signal(sig)
        if sig == signal.SIGKILL:
            self.procs[port].wait(5)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(5)
