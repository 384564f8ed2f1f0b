"""Fixtures for the headless browser tests: Debian Chromium, a page server, a scripted stream.

The page server is a Starlette app on a free loopback port that serves the repo
root (the same files `streampace serve` and `python3 -m http.server` serve) with
a strict CSP, plus `/ws/sessions/{id}` speaking protocol v1 from a script the
test controls (push batches, drop connections). Everything is same-origin, so a
test can fail on any request that leaves the page's origin.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .browser_harness import (
    CSP,
    ENGINE_CRASH,
    ROOT,
    PageServer,
    ScriptedSessions,
    build_app,
    engine_missing,
    make_driver,
    renew_lost_webkit_session,
    runtime_missing,
    selected_engines,
    serve_app,
    tiny_wheel,
)


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "engines: a browser test that also runs in Firefox and WebKit "
        "(STREAMPACE_ENGINES picks the engines; Chromium alone for the others)")


def pytest_generate_tests(metafunc: Any) -> None:
    """Browser tests get an `engine`: every selected engine for those marked
    `engines`, Chromium for the rest (one Chromium driver per module either way)."""
    if "engine" not in metafunc.fixturenames:
        return
    marked = metafunc.definition.get_closest_marker("engines") is not None
    engines = selected_engines() if marked else ("chromium",)
    metafunc.parametrize("engine", engines, indirect=True, scope="module")


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """A WebKit test whose page WebKit lost to a crash of its own (ENGINE_CRASH)
    runs once more, on a renewed session; any other failure stands. The rerun
    shows in the summary ("1 rerun")."""
    for item in items:
        if engine_param(item) == "webkit":
            item.add_marker(pytest.mark.flaky(reruns=1, only_rerun=[ENGINE_CRASH]))


def engine_param(item: Any) -> str | None:
    callspec = getattr(item, "callspec", None)
    return None if callspec is None else callspec.params.get("engine")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    """Before a WebKit test's fixtures are set up (a module's page fixture that
    failed on the crash is set up again for the rerun), its module's driver gets
    a new session if WebKit deleted its last one: without it one crash would fail
    every later test of the module, and the rerun would meet the same session."""
    if engine_param(item) != "webkit":
        return
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.get("driver") if info is not None else None
    cached = defs[-1].cached_result if defs else None
    if cached is not None and cached[2] is None:  # a driver made, not an error
        renew_lost_webkit_session(cached[0])


@pytest.fixture(scope="module")
def engine(request: Any) -> str:
    name = str(request.param)
    missing = engine_missing(name)
    if missing:
        pytest.fail(missing)
    return name


@pytest.fixture(scope="session")
def runtime_ready() -> None:
    # Rebuild vendor/streampace.zip if a module changed since the last setup.
    if (ROOT / "scripts" / "setup_runtime").is_file() and shutil.which("npm"):
        subprocess.run([sys.executable, str(ROOT / "scripts" / "setup_runtime")], check=True)
    missing = runtime_missing()
    if missing:
        pytest.fail(missing)


@pytest.fixture(scope="module")
def page_server(runtime_ready: None, engine: str) -> Iterator[PageServer]:
    # One per engine: a session's log outlives the page that read it.
    sessions = ScriptedSessions()
    with serve_app(build_app(sessions, CSP)) as port:
        yield PageServer(port, sessions)


# ---------------------------------------------------------------- browser
@pytest.fixture(scope="module")
def driver(runtime_ready: None, engine: str) -> Iterator[Any]:
    drv = make_driver(engine)
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture(scope="session")
def local_wheel() -> str:
    """URL path of a tiny local wheel (vendor/ is served and gitignored)."""
    return "/vendor/test-wheels/" + tiny_wheel(ROOT / "vendor" / "test-wheels")
