"""Fixtures for the install-path tests: the vendored runtime, the wheel installed into a
fresh venv outside the repository, and a headless Chromium (helpers: install_harness.py).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.sizes import build_wheel
from tests.browser.browser_harness import make_driver, runtime_missing  # shared with tests/browser

from .install_harness import ROOT, InstalledWheel


@pytest.fixture(scope="session")
def runtime_laid_out() -> None:
    """vendor/ as scripts/setup_runtime lays it out (the wheel and npm package carry it)."""
    if shutil.which("npm"):
        subprocess.run([sys.executable, str(ROOT / "scripts" / "setup_runtime")], check=True)
    missing = runtime_missing()
    if missing and "chromium" not in missing:
        pytest.fail(missing)


@pytest.fixture(scope="session")
def installed_wheel(runtime_laid_out: None, tmp_path_factory: Any) -> InstalledWheel:
    """The wheel built from this checkout, installed with its dependencies into a fresh
    venv outside the repository, the way a user installs it (so a dependency missing
    from pyproject.toml fails here). Dependencies come from the package index as in
    scripts/setup (pip's cache makes it a few seconds)."""
    out = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(out, timeout_s=300)
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return InstalledWheel(wheel, venv)


@pytest.fixture(scope="module")
def driver(runtime_laid_out: None) -> Iterator[Any]:
    if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
        pytest.fail("chromium/chromedriver missing: apt-get install chromium chromium-driver")
    drv = make_driver()
    try:
        yield drv
    finally:
        drv.quit()
