"""Boot paths of the embed in headless Chromium: the memory snapshot, the
ordinary boot when the snapshot is missing, stale or broken, and a view mounted
without a stream that is connected later.

A page server of its own serves vendor/snapshot/ through a switch, so one test
can hand the page a corrupt snapshot or a manifest for another build.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .browser_harness import (
    CSP,
    FALLBACK_NOTE,
    ROOT,
    PageServer,
    SnapshotSwitch,
    switchable_snapshot_server,
    wait_for,
)

pytestmark = pytest.mark.browser

# Ready, or failed to boot (then the test says why instead of timing out).
SETTLED = ("return !!(window.__rec && (window.__rec.ready ||"
           " window.__rec.events.some(e => e.name === 'streampace:error')))")


@pytest.fixture(scope="module")
def boot_server(runtime_ready: None) -> Iterator[tuple[PageServer, SnapshotSwitch]]:
    with switchable_snapshot_server(CSP) as served:
        yield served


def boot_page(driver: Any, server: PageServer, sid: str | None,
              page: str = "stream.html") -> dict:
    driver.get_log("browser")  # forget earlier pages' console
    query = f"?sid={sid}" if sid else ""
    driver.get(server.url(f"/tests/browser/pages/{page}{query}"))
    wait_for(driver, SETTLED)
    errors = driver.execute_script(
        "return window.__rec.events.filter(e => e.name === 'streampace:error').map(e => e.detail)")
    assert driver.execute_script("return !!window.__rec.ready"), errors
    return driver.execute_script("return window.streampace.stats()")


SNAPSHOT_URL = "/vendor/snapshot/streampace.snap.gz"
WASM_URL = "/vendor/pyodide/pyodide.asm.wasm"
MANIFEST = ROOT / "vendor" / "snapshot" / "manifest.json"


def forget_kept_snapshot(driver: Any, server: PageServer) -> None:
    """Empty the origin's Cache Storage, where a boot keeps the decoded snapshot."""
    driver.execute_cdp_cmd("Storage.clearDataForOrigin",
                           {"origin": server.origin, "storageTypes": "cache_storage"})


def nothing_kept(driver: Any, boot_server: Any) -> tuple[PageServer, str]:
    """The real snapshot served, nothing kept in the origin's Cache Storage: the server
    and the snapshot's key. Cleared from a blank page of the origin (to reach its
    caches), not a booted one, which may still be keeping a copy when idle: a put of
    the test's racing that one and the clear hung until the script timeout once
    (a fresh clone's run, 2026-12-06)."""
    server, switch = boot_server
    switch.mode = "real"
    driver.get(server.url("/tests/browser/pages/blank.html"))
    forget_kept_snapshot(driver, server)
    return server, json.loads(MANIFEST.read_text())["key"]


def kept_snapshot_key(driver: Any, server: PageServer, path: str = SNAPSHOT_URL,
                      want: str | None = None) -> str | None:
    """The key of the snapshot (or of the wasm at `path`) kept in Cache Storage
    (None: nothing kept), once the page has stored it (it does so when idle after
    its boot); with `want`, once it is that key (bounded)."""
    script = ("const done = arguments[arguments.length - 1];"
              "caches.open('streampace-snapshot').then((c) => c.match(arguments[0]))"
              ".then((r) => done(r ? r.headers.get('x-streampace-snapshot-key') : null),"
              " () => done(null));")
    key = None
    for _ in range(50):
        key = driver.execute_async_script(script, server.url(path))
        if key is not None and want in (None, key):
            break
        time.sleep(0.1)
    return key


def keep_snapshot(driver: Any, server: PageServer, key: str, body: str,
                  path: str = SNAPSHOT_URL, size: int | None = None) -> None:
    """Put an entry of our own in the page's Cache Storage (a test's stale or
    damaged copy), saying it is `size` bytes long if given."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const headers = {'x-streampace-snapshot-key': arguments[1]};"
        "if (arguments[3] !== null) headers['x-streampace-bytes'] = String(arguments[3]);"
        "caches.open('streampace-snapshot').then((c) => c.put(arguments[0], new Response("
        "arguments[2], {headers}))).then(done);",
        server.url(path), key, body, size)


def snapshot_requests(driver: Any, path: str = SNAPSHOT_URL) -> int:
    return int(driver.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter((r) => r.name.includes(arguments[0])).length", path))


def console(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser")]


def python(driver: Any, code: str) -> Any:
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.streampace.runtime().then((py) => done(py.runPython(arguments[0])));", code)


def show_text(server: PageServer, sid: str, text: str) -> None:
    server.sessions.push(sid, [
        {"type": "RUN_STARTED", "threadId": sid, "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": sid, "runId": "r"},
    ])


def test_snapshot_boot_shows_early_text_and_reseeds_random(driver: Any, boot_server: Any) -> None:
    server, switch = boot_server
    switch.mode = "real"
    forget_kept_snapshot(driver, server)
    draws = []
    for i in range(2):
        sid = f"snap{i}"
        show_text(server, sid, f"before boot {i}")  # logged before the page even loads
        st = boot_page(driver, server, sid)
        assert st["boot"] == {"snapshot": True, "fallback": None}
        # Downloaded the first time, then restored from the decoded copy the first
        # boot kept in Cache Storage (no request for it).
        assert snapshot_requests(driver) == (1 if i == 0 else 0)
        assert kept_snapshot_key(driver, server) == json.loads(MANIFEST.read_text())["key"]
        wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
                 f"before boot {i}")
        assert not [m for m in console(driver) if FALLBACK_NOTE in m]
        # Our modules came from the snapshot, not from importing the archive.
        assert python(driver, "import streampace.browser.runtime as r; r.snapshot_key()")
        # Their objects came frozen (runtime.freeze_heap): the page's collector
        # never scans them. Frozen objects freed since only lower the count.
        frozen = python(driver, "import gc; gc.get_freeze_count()")
        assert 0 < frozen <= json.loads(MANIFEST.read_text())["frozen"]
        # The restore's first Python call widened V8's call sites
        # (browser/call_sites.py) — in this page, not while the snapshot was
        # made — and its hook is gone.
        widened = python(driver, "import streampace.browser.call_sites as c\n"
                                 "c.widened_at()")
        started = driver.execute_script("return performance.timeOrigin / 1000")
        assert widened is not None and started <= widened <= time.time() + 1
        assert python(driver, "import sys; sys.getprofile() is None")
        draws.append(python(driver, "import random; random.random()"))
    # Without the reseed every restore would replay the setup machine's sequence.
    assert draws[0] != draws[1]


def test_a_message_sent_stops_the_page_warm_up_at_once(driver: Any, boot_server: Any) -> None:
    """browser/warm.py's sample steps stop when the page sends a message, not
    only once an answer starts: at 4x CPU a step was 24 ms of the answer's
    first frame (`python -m bench --browser --cpu 4`, the demo)."""
    server, switch = boot_server
    switch.mode = "real"
    boot_page(driver, server, "ask-early")
    # Read back in the promise's callback: no timer (a warm-up step) and no
    # socket message (the answer's start) can run in between.
    before, sent, after = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const s = window.streampace, before = s.stats().warmUp;"
        "s.send({type: 'run', prompt: 'now'}).then("
        "  (sent) => done([before, sent, s.stats().warmUp]));")
    # Right after ready the warm-up still runs (it takes most of a second).
    assert before is not None and not before["done"], before
    assert sent["status"] == "accepted", sent
    assert after["cancelled"] and after["done"], after


def test_snapshot_sent_as_brotli_is_restored(driver: Any, boot_server: Any) -> None:
    """The heap as `streampace serve` sends it to a browser that takes brotli
    (Content-Encoding: br, decoded by the browser, not gunzipped by the page),
    with the pages the wasm module's data segments hold copied from the module."""
    server, switch = boot_server
    forget_kept_snapshot(driver, server)
    switch.mode, switch.sent = "brotli", []
    show_text(server, "brotli", "restored from brotli")
    try:
        st = boot_page(driver, server, "brotli")
    finally:
        switch.mode = "real"
    # Chromium takes brotli from 127.0.0.1 (a secure context) as from https.
    assert switch.sent == ["br"]
    assert st["boot"] == {"snapshot": True, "fallback": None}
    wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
             "restored from brotli")
    # The data segments' pages were copied in: a static table reads right.
    assert python(driver, "import unicodedata; unicodedata.name('\u00e9')") == (
        "LATIN SMALL LETTER E WITH ACUTE")


@pytest.mark.parametrize("kept", ["other-key", "damaged"])
def test_a_kept_snapshot_of_another_key_or_damaged_is_downloaded_again(
        driver: Any, boot_server: Any, kept: str) -> None:
    server, key = nothing_kept(driver, boot_server)
    keep_snapshot(driver, server, "0" * 64 if kept == "other-key" else key, "not a heap")
    st = boot_page(driver, server, f"kept-{kept}")
    assert st["boot"] == {"snapshot": True, "fallback": None}
    assert snapshot_requests(driver) == 1
    assert kept_snapshot_key(driver, server, want=key) == key
    assert not [m for m in console(driver) if FALLBACK_NOTE in m]


def test_a_returning_visitor_compiles_the_wasm_kept_in_cache_storage(
        driver: Any, boot_server: Any) -> None:
    """The first boot keeps the decoded wasm (labelled with the snapshot's key);
    the next one hands it to Pyodide instead of a request for it."""
    server, key = nothing_kept(driver, boot_server)
    for i in range(2):
        st = boot_page(driver, server, f"kept-wasm{i}")
        assert st["boot"] == {"snapshot": True, "fallback": None}
        # (The first boot reads it once more from the HTTP cache, to keep it.)
        assert (snapshot_requests(driver, WASM_URL) > 0) == (i == 0)
        assert driver.execute_script(  # and the page says which it compiled
            "return performance.getEntriesByName('streampace:wasm-kept').length") == i
        assert kept_snapshot_key(driver, server, WASM_URL) == key
        assert not [m for m in console(driver) if FALLBACK_NOTE in m]
    assert python(driver, "import unicodedata; unicodedata.name('\u00e9')") == (
        "LATIN SMALL LETTER E WITH ACUTE")
    # The page's own fetch is its own again.
    assert driver.execute_script("return fetch.name") == "fetch"


@pytest.mark.parametrize("kept", ["other-key", "not-a-module", "cut-short"])
def test_a_kept_wasm_of_another_key_or_damaged_is_fetched_again(
        driver: Any, boot_server: Any, kept: str) -> None:
    server, key = nothing_kept(driver, boot_server)
    body = {"other-key": "\0asm", "not-a-module": "not a module",
            "cut-short": "\0asm\x01\0\0\0"}[kept]
    keep_snapshot(driver, server, "0" * 64 if kept == "other-key" else key, body, path=WASM_URL,
                  size=len(body) + (100 if kept == "cut-short" else 0))
    st = boot_page(driver, server, f"kept-wasm-{kept}")
    assert st["boot"] == {"snapshot": True, "fallback": None}
    assert snapshot_requests(driver, WASM_URL) > 0
    assert driver.execute_script(
        "return performance.getEntriesByName('streampace:wasm-kept').length") == 0
    assert kept_snapshot_key(driver, server, WASM_URL, want=key) == key
    assert not [m for m in console(driver) if FALLBACK_NOTE in m]


@pytest.mark.parametrize(("mode", "reason"), [
    ("missing", "no snapshot manifest"),
    ("misplaced-heap", "failed to restore"),
    ("stale-zip", "older than vendor/streampace.zip"),
    ("other-pyodide", "made for Pyodide 0.0.0"),
    ("corrupt", "failed to restore"),
])
def test_without_a_usable_snapshot_the_page_boots_normally_and_says_so_once(
        driver: Any, boot_server: Any, mode: str, reason: str) -> None:
    server, switch = boot_server
    forget_kept_snapshot(driver, server)
    switch.mode = mode
    sid = f"fallback-{mode}"
    show_text(server, sid, f"shown after a {mode} snapshot")
    try:
        st = boot_page(driver, server, sid)
    finally:
        switch.mode = "real"
    assert st["boot"]["snapshot"] is False
    assert reason in st["boot"]["fallback"]
    wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
             f"shown after a {mode} snapshot")
    notes = [m for m in console(driver) if FALLBACK_NOTE in m]
    assert len(notes) == 1 and reason in notes[0], notes
    assert driver.execute_script("return window.__rec.events.filter("
                                 "e => e.name === 'streampace:error').length") == 0


def test_tag_without_a_stream_boots_and_connects_later(driver: Any, boot_server: Any) -> None:
    server, switch = boot_server
    switch.mode = "real"
    # <script ... data-target="#answer"> and no data-stream (it used to fail in
    # embed.start with "'JsNull' object has no attribute 'attach'").
    st = boot_page(driver, server, None, page="mount-later.html")
    assert st["connection"]["state"] == "none" and st["errors"] == []
    assert not [m for m in console(driver) if "Error" in m]
    show_text(server, "later", "connected after ready")
    driver.execute_script("window.streampace.connect('/ws/sessions/later')")
    wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
             "connected after ready")
    assert driver.execute_script("return window.streampace.stats().connection.state") == "attached"


def test_a_failed_boot_says_what_failed(driver: Any, boot_server: Any) -> None:
    server, _ = boot_server
    driver.get(server.url("/tests/browser/pages/boot-error.html"))
    wait_for(driver, "return window.__rec && window.__rec.failed !== null", 60)
    assert driver.execute_script("return window.__rec.failed") is not False
    shown = driver.execute_script("return document.querySelector('#answer [role=status]')"
                                  ".textContent")
    # What failed, and the fix (js_shim/boot.js bootProblem).
    assert shown.startswith("streampace could not load its runtime") and "pyodide.mjs" in shown
    assert "run scripts/setup" in shown, shown
    events = driver.execute_script("return window.__rec.events")
    assert [(e["where"], e["code"]) for e in events] == [("boot", "runtime_missing")]


def test_tag_without_a_stream_connected_during_boot(driver: Any, boot_server: Any) -> None:
    server, switch = boot_server
    switch.mode = "real"
    show_text(server, "early", "connected while booting")
    boot_page(driver, server, "early", page="mount-later.html")
    assert driver.execute_script("return window.__rec.connectedBeforeReady") is True
    wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
             "connected while booting")
