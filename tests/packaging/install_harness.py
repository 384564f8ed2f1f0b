"""Helpers for the install-path tests (imported by conftest.py and the test modules;
kept out of conftest.py so test modules never import a conftest)."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.browser.browser_harness import free_port

ROOT = Path(__file__).resolve().parents[2]

WAIT_S = 60.0


def pyproject_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@dataclass
class InstalledWheel:
    wheel: Path
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def streampace(self) -> Path:
        return self.venv / "bin" / "streampace"


@contextlib.contextmanager
def streampace_serve(command: list[str], cwd: Path) -> Iterator[str]:
    """Run `streampace serve --port 0 ...` in ``cwd``; yields the URL it printed."""
    proc = subprocess.Popen([*command, "--port", "0", "--log-level", "warning"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "streampace: serving http://127.0.0.1:PORT/ ..."
        found = re.search(r"serving (http://\S+/)", line)
        if found is None:
            proc.kill()
            raise AssertionError(f"streampace serve did not start: {line!r} "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        yield found.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def static_server(directory: Path) -> Iterator[str]:
    """A plain static file server (python -m http.server) on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(directory)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            assert proc.poll() is None, "http.server exited"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < deadline, "http.server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
