"""Fixtures for the install-path tests: a wheel installed into a fresh venv outside the
repository, an npm tarball installed into a temporary directory, servers started from
temporary working directories, and a headless Chromium.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The browser helpers (driver, request log) are shared with tests/browser.
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_harness import free_port, make_driver, runtime_missing  # noqa: E402

WAIT_S = 60.0


def pyproject_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.fixture(scope="session")
def runtime_laid_out() -> None:
    """vendor/ as scripts/setup_runtime lays it out (the wheel and npm package carry it)."""
    if shutil.which("npm"):
        subprocess.run([sys.executable, str(ROOT / "scripts" / "setup_runtime")], check=True)
    missing = runtime_missing()
    if missing and "chromium" not in missing:
        pytest.fail(missing)


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


@pytest.fixture(scope="session")
def installed_wheel(runtime_laid_out: None, tmp_path_factory: Any) -> InstalledWheel:
    """The wheel built from this checkout, installed into a fresh venv outside the repo.

    Only streampace comes from the wheel (pip --no-deps); its dependencies are made
    visible from the test environment's site-packages through a .pth line, which adds
    that directory without running its .pth files (so the editable install of this
    checkout stays out). That keeps the test offline and fast.
    """
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                    "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("streampace-*.whl")
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return InstalledWheel(wheel, venv)


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
    import socket

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


@pytest.fixture(scope="module")
def driver(runtime_laid_out: None) -> Iterator[Any]:
    if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
        pytest.fail("chromium/chromedriver missing: apt-get install chromium chromium-driver")
    drv = make_driver()
    try:
        yield drv
    finally:
        drv.quit()
