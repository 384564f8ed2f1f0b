"""PyScript pages on our runtime, in headless Chromium.

- The Python page API (streampace.browser.page) on a scripted stream: paced
  text, paced events, the view's events, a failing subscriber.
- PyScript's document observer is handed nothing from inside a view (a
  py-click there stays unbound), while the page's own observers hear it all.
- The same page when the memory snapshot is missing: the ordinary boot.
- The user's example page (examples/pyscript.html, its own one-line
  pyscript.toml) on plain static files (in-page simulation) and on
  `streampace serve` (real server, real CSP).
- micropip: `packages` in a page's pyscript.toml installs a local wheel offline.

Every page boots through js_shim/pyscript.js (our interpreter module) and must
request nothing from another origin.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .browser_harness import (
    BOOT_TIMEOUT_S,
    CSP,
    FALLBACK_NOTE,
    PageServer,
    SnapshotSwitch,
    console_errors,
    free_port,
    make_driver,
    requested_urls,
    serving,
    switchable_snapshot_server,
    wait_for,
)

pytestmark = pytest.mark.browser

# What `streampace serve` sends with a PyScript page (server/headers.py): the
# strict policy plus 'unsafe-eval', which PyScript's core needs to boot.
CSP_PYSCRIPT = CSP.replace("'wasm-unsafe-eval'", "'wasm-unsafe-eval' 'unsafe-eval'")
HEARD = "return window.pyHeard ? JSON.parse(window.pyHeard()) : null"
# How this page's Python booted, from our interpreter module (one instance per page).
# Pages that publish it (pyscript-api.js) are read in their own module graph: in
# Firefox a WebDriver script's import() gets a module instance of its own.
RUNTIME_INFO = ("const done = arguments[arguments.length - 1];"
                "if (window.__runtimeInfo) done(window.__runtimeInfo); else "
                "import('/js_shim/pyscript.js').then((m) => done(m.runtimeInfo));")


@pytest.fixture(scope="module")
def pyscript_server(runtime_ready: None,
                    engine: str) -> Iterator[tuple[PageServer, SnapshotSwitch]]:
    # One per engine: a session's log outlives the page that read it.
    with switchable_snapshot_server(CSP_PYSCRIPT) as served:
        yield served


@pytest.fixture(scope="module")
def static_origin(runtime_ready: None) -> Iterator[str]:
    port = free_port()
    with serving([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                 port) as origin:
        yield origin


def only_own_origin(urls: list[str], origin: str) -> list[str]:
    """The requests that left `origin` (must be none)."""
    ws = origin.replace("http://", "ws://")
    return [u for u in urls if not u.startswith((origin + "/", ws + "/", "data:", "blob:"))]


def run(sid: str, mid: str, pieces: list[str]) -> list[list[dict]]:
    """The batches of one run: one message streamed in `pieces`."""
    return [
        [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
         {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}],
        *[[{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": p}] for p in pieces],
        [{"type": "TEXT_MESSAGE_END", "messageId": mid},
         {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}],
    ]


def open_api_page(driver: Any, server: PageServer, sid: str) -> None:
    console_errors(driver)
    requested_urls(driver)
    driver.get(server.url(f"/tests/browser/pages/pyscript-api.html?sid={sid}"))
    wait_for(driver, "return !!window.pyHeard", BOOT_TIMEOUT_S)


@pytest.mark.engines
def test_page_api_hears_paced_text_then_the_events(driver: Any, pyscript_server: Any) -> None:
    server, switch = pyscript_server
    switch.mode = "real"
    sid = "api"
    open_api_page(driver, server, sid)
    assert driver.execute_async_script(RUNTIME_INFO) == {"snapshot": True, "fallback": None}
    pieces = [f"piece {i:02d}, with some more words. " for i in range(24)]
    server.sessions.push_spaced(sid, run(sid, "m1", pieces), gap_ms=40)
    wait_for(driver, "const h = JSON.parse(window.pyHeard());"
             " return h.events.some(e => e[0] === 'run-end')", 60)
    heard = driver.execute_script(HEARD)
    assert heard["pyscript_pyc"] is True

    # The text, as revealed: all of it, in order, in more frames than batches.
    expected = "".join(pieces)
    assert "".join(d for _, d in heard["text"]) == expected
    assert {m for m, _ in heard["text"]} == {"m1"}
    assert heard["paced_frames"] > len(pieces)
    # The events, each after the text of its frame.
    names = [name for name, _ in heard["events"] if name != "status"]
    assert names == ["message-end", "run-end"]
    end = next(d for n, d in heard["events"] if n == "message-end")
    assert end == {"messageId": "m1", "role": "assistant", "text": expected}
    assert next(d for n, d in heard["events"] if n == "run-end")["status"] == "finished"
    first, detail = heard["events"][0]
    assert (first, detail["state"]) == ("status", "open")
    # The DOM events fired as well, with the same details.
    dom = driver.execute_script("return window.__dom")
    assert [[n.removeprefix("streampace:"), d] for n, d in dom] == [
        e for e in heard["events"] if e[0] != "status"]
    # The failing subscriber was reported and stopped nothing.
    failures = [m for m in console_errors(driver) if "a failing subscriber" in m]
    assert failures

    # Bad input from the stream: an "error" event, in Python and in the DOM.
    server.sessions.push(sid, [{"type": "TEXT_MESSAGE_CONTENT", "messageId": 7, "delta": None}])
    wait_for(driver, "const h = JSON.parse(window.pyHeard());"
             " return h.events.some(e => e[0] === 'error')", 30)
    error = next(d for n, d in driver.execute_script(HEARD)["events"] if n == "error")
    assert error["where"] == "stream" and error["message"]
    assert only_own_origin(requested_urls(driver), server.origin) == []


# A button naming a Python handler (PyScript binds py-* attributes of elements
# added to the document), put inside the view and outside it; the outside one
# is clicked once the observers' microtasks have run.
_PY_CLICK_BUTTONS = """
const done = arguments[arguments.length - 1];
for (const [id, parent] of [["inside", document.querySelector("#answer .sp-view")],
                            ["outside", document.body]]) {
  const b = document.createElement("button");
  b.id = id;
  b.setAttribute("py-click", "clicked");
  parent.append(b);
}
setTimeout(() => { document.getElementById("outside").click(); done(true); }, 0);
"""
_CLICKS = "return JSON.parse(window.pyHeard()).clicked.length"


@pytest.mark.engines
def test_pyscript_leaves_the_views_subtree_alone(driver: Any, pyscript_server: Any) -> None:
    """PyScript's core watches the whole document for py-* attributes and
    scripts; what a view adds is never PyScript's, so its observer is handed
    nothing from inside a view, while any other observer still hears it all."""
    server, switch = pyscript_server
    switch.mode = "real"
    sid = "observer"
    open_api_page(driver, server, sid)
    server.sessions.push_spaced(sid, run(sid, "m1", ["Some **text**, ", "a `code` span."]),
                                gap_ms=40)
    wait_for(driver, "const h = JSON.parse(window.pyHeard());"
             " return h.events.some(e => e[0] === 'run-end')", 60)
    # The page's observer was made while our module held the global, and heard
    # the view's additions; the global is the browser's again.
    assert driver.execute_script("return window.__observerAtLoad") != "MutationObserver"
    assert driver.execute_script("return window.__addedInView") > 0
    assert driver.execute_script("return MutationObserver.name") == "MutationObserver"
    # PyScript binds the handler outside the view, not inside it (the two
    # handlers would run in click order).
    assert driver.execute_async_script(_PY_CLICK_BUTTONS) is True
    wait_for(driver, f"{_CLICKS} >= 1", 30)
    driver.execute_script("document.getElementById('inside').click();"
                          " document.getElementById('outside').click();")
    wait_for(driver, f"{_CLICKS} >= 2", 30)
    assert driver.execute_script(HEARD)["clicked"] == ["outside", "outside"]


def test_pyscript_page_without_a_snapshot_boots_the_ordinary_way(
        driver: Any, pyscript_server: Any) -> None:
    server, switch = pyscript_server
    switch.mode = "missing"
    try:
        open_api_page(driver, server, "nosnap")
    finally:
        switch.mode = "real"
    info = driver.execute_async_script(RUNTIME_INFO)
    assert info["snapshot"] is False and "no snapshot manifest" in info["fallback"]
    # No snapshot, no precompiled PyScript: Python compiled it.
    assert driver.execute_script(HEARD)["pyscript_pyc"] is False
    notes = [e["message"] for e in driver.get_log("browser") if FALLBACK_NOTE in e["message"]]
    assert len(notes) == 1, notes
    server.sessions.push_spaced("nosnap", run("nosnap", "m", ["plain ", "boot"]), gap_ms=20)
    wait_for(driver, "const h = JSON.parse(window.pyHeard());"
             " return h.text.map(t => t[1]).join('') === 'plain boot'", 30)


def run_example(driver: Any, origin: str) -> dict:
    """Open examples/pyscript.html, ask once, return what it shows."""
    driver.get_log("browser")
    requested_urls(driver)
    driver.get(origin + "/examples/pyscript.html")
    wait_for(driver, "return document.body.dataset.source", BOOT_TIMEOUT_S)
    info = driver.execute_async_script(RUNTIME_INFO)
    driver.find_element("id", "ask-button").click()
    wait_for(driver, "return document.body.dataset.runs === '1'", 90)
    shown = driver.execute_script(
        "const n = (id) => Number(document.getElementById(id).textContent);"
        "return {source: document.body.dataset.source, revealed: n('revealed'),"
        " frames: n('frames'), complete: n('complete'),"
        " status: document.getElementById('status').textContent,"
        " answer: document.querySelector('#answer .sp-message[data-role=assistant]').textContent}")
    return {**shown, "info": info, "urls": requested_urls(driver),
            "console": [e for e in driver.get_log("browser")
                        if e.get("level") == "SEVERE" and "favicon" not in e["message"]]}


def check_example(shown: dict, origin: str) -> None:
    assert shown["info"] == {"snapshot": True, "fallback": None}
    assert shown["status"] == "Answered." and len(shown["answer"]) > 200
    # Every character of the complete messages was told to on_text, paced.
    assert shown["revealed"] == shown["complete"] > 200
    assert shown["frames"] > 20
    assert origin + "/examples/pyscript.toml" in shown["urls"]
    assert origin + "/vendor/pyscript/core.js" in shown["urls"]
    assert only_own_origin(shown["urls"], origin) == []
    assert shown["console"] == [], json.dumps(shown["console"], indent=1)


def test_example_page_on_static_files_simulates(driver: Any, static_origin: str) -> None:
    shown = run_example(driver, static_origin)
    assert shown["source"] == "simulation"
    check_example(shown, static_origin)


def test_example_page_on_streampace_serve(runtime_ready: None) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "streampace", "serve", "--port", str(port), "--speed", "3"]
    with serving(cmd, port) as origin:
        drv = make_driver()
        try:
            shown = run_example(drv, origin)
        finally:
            drv.quit()
    assert shown["source"] == "server"
    check_example(shown, origin)


def test_micropip_installs_a_local_wheel_offline(driver: Any, static_origin: str,
                                                 local_wheel: str) -> None:
    requested_urls(driver)
    driver.get(static_origin + "/tests/browser/pages/packages.html")
    wait_for(driver, "return document.getElementById('out').textContent !== 'booting…'",
             BOOT_TIMEOUT_S)
    assert driver.find_element("id", "out").text == "hello from a local wheel"
    # micropip ran on the restored snapshot, not on a fresh interpreter.
    assert driver.execute_async_script(RUNTIME_INFO) == {"snapshot": True, "fallback": None}
    urls = requested_urls(driver)
    assert static_origin + local_wheel in urls
    assert any(u.endswith("/vendor/pyodide/micropip-0.11.1-py3-none-any.whl") for u in urls)
    assert only_own_origin(urls, static_origin) == []
