"""The headless store (`streampace.createStore`), `<streampace-view>` and teardown,
in real headless Chromium on a scripted stream (issue 28)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .browser_harness import BOOT_TIMEOUT_S, console_errors, wait_for

pytestmark = pytest.mark.browser

BURSTY = ("Pacing turns a bursty stream into steady reading: "
          + "每个字都按帧显示 👩‍👩‍👧 — grapheme-safe, one update per frame. " * 6)


def answer(sid: str, mid: str, text: str, pieces: int) -> list[list[dict]]:
    """A run whose answer arrives in `pieces` bursts (network batches)."""
    step = -(-len(text) // pieces)
    chunks = [text[i:i + step] for i in range(0, len(text), step)]
    batches: list[list[dict]] = [[{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                                  {"type": "TEXT_MESSAGE_START", "messageId": "u",
                                   "role": "user"},
                                  {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u",
                                   "delta": "Why pace?"},
                                  {"type": "TEXT_MESSAGE_END", "messageId": "u"},
                                  {"type": "TEXT_MESSAGE_START", "messageId": mid,
                                   "role": "assistant"}]]
    batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": c}] for c in chunks]
    batches.append([{"type": "TEXT_MESSAGE_END", "messageId": mid},
                    {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    return batches


def run_python(driver: Any, code: str) -> Any:
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.streampace.runtime().then(py => done(py.runPython(arguments[0])))"
        ".catch(e => done('ERROR ' + e));", code)


def host_users(driver: Any) -> Any:
    """How many views and stores lease the page's frame loop."""
    return run_python(driver, "from streampace.browser import page_host\n"
                              "page_host.page_host_users()")


def make_store(driver: Any, name: str, sid: str) -> None:
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.__store.make(arguments[0], {stream: arguments[1]})"
        ".then(done, (e) => done('ERROR ' + e));", name, f"/ws/sessions/{sid}")
    assert result is True, result


def summary(driver: Any, name: str, mid: str) -> dict:
    return driver.execute_script("return window.__store.summary(arguments[0], arguments[1])",
                                 name, mid)


def wait_finished(driver: Any, name: str, timeout: float = 30) -> None:
    wait_for(driver, "const r = window.__store.stores[arguments[0]];"
                     "return r && r.store && r.store.getSnapshot().run.status === 'finished';",
             timeout, name)


def viewers(page_server: Any, sid: str) -> int:
    return len(page_server.sessions.sockets.get(sid, ()))


def wait_viewers(page_server: Any, sid: str, n: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while viewers(page_server, sid) != n:
        assert time.monotonic() < deadline, f"{sid}: {viewers(page_server, sid)} viewers, not {n}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def store_page(driver: Any, page_server: Any) -> Any:
    driver.get(page_server.url("/tests/browser/pages/store.html"))
    wait_for(driver, "return !!(window.streampace && window.__store)", BOOT_TIMEOUT_S)
    return page_server


def test_loading_the_module_without_a_target_mounts_nothing(driver: Any, store_page: Any) -> None:
    time.sleep(0.3)
    assert driver.execute_script("return window.streampace.instances.length") == 0
    assert driver.execute_script("return window.__store.added") == []
    assert driver.execute_script("return window.streampace.runtime()") is None  # nothing booted


def test_a_store_paces_a_bursty_answer_frame_by_frame(driver: Any, store_page: Any) -> None:
    sid, mid = "store-bursty", "a"
    make_store(driver, "one", sid)
    wait_viewers(store_page, sid, 1)
    store_page.sessions.push_spaced(sid, answer(sid, mid, BURSTY, 4), 250)
    wait_finished(driver, "one")
    s = summary(driver, "one", mid)
    lengths = [n for n in s["lengths"] if n >= 0]
    assert s["distinct"] >= 20, s["lengths"]
    assert len(set(lengths)) >= 20  # paced per frame, not per batch (4 batches)
    assert lengths == sorted(lengths)
    assert s["sameFrameCalls"] == 0  # at most one listener call per animation frame
    assert s["changedWithoutCall"] == 0 and s["stableNow"] and s["frozen"]
    assert s["reusedFirstMessage"] >= s["calls"] - 3  # the user's message object is reused
    messages = s["last"]["messages"]
    assert [(m["id"], m["role"], m["done"]) for m in messages] == [
        ("u", "user", True), (mid, "assistant", True)]
    assert messages[1]["text"] == BURSTY  # exactly the agent's text
    assert s["last"]["run"] == {"status": "finished", "error": None, "code": None}
    assert s["last"]["connection"]["state"] == "attached"
    assert s["last"]["queued"] == []
    # The store added nothing to the page.
    assert driver.execute_script("return window.__store.added") == []
    assert driver.execute_script("return window.streampace.instances.length") == 0


def test_two_stores_are_independent_and_destroy_stops_one(driver: Any, store_page: Any) -> None:
    make_store(driver, "left", "store-left")
    make_store(driver, "right", "store-right")
    wait_viewers(store_page, "store-left", 1)
    wait_viewers(store_page, "store-right", 1)
    sessions = store_page.sessions
    sessions.push_spaced("store-left", answer("store-left", "l", "left " * 40, 2), 50)
    sessions.push_spaced("store-right", answer("store-right", "r", "right " * 40, 2), 50)
    wait_finished(driver, "left")
    wait_finished(driver, "right")
    left, right = summary(driver, "left", "l"), summary(driver, "right", "r")
    assert [m["text"] for m in left["last"]["messages"]] == ["Why pace?", "left " * 40]
    assert [m["text"] for m in right["last"]["messages"]] == ["Why pace?", "right " * 40]
    # One frame loop for every store: one shared host with three users.
    assert host_users(driver) == 3
    calls = left["calls"]
    driver.execute_script("window.__store.stores.left.store.destroy()")
    wait_viewers(store_page, "store-left", 0)  # its socket is closed
    sessions.push("store-left", [{"type": "RUN_STARTED", "threadId": "x", "runId": "r2"}])
    sessions.push_spaced("store-right", [[{"type": "RUN_STARTED", "threadId": "y",
                                           "runId": "r2"}]], 0)
    wait_for(driver, "return window.__store.stores.right.store.getSnapshot().run.status"
                     " === 'running'", 10)
    time.sleep(0.3)
    assert summary(driver, "left", "l")["calls"] == calls  # no listener after destroy
    assert host_users(driver) == 2


def test_a_listener_may_destroy_its_store(driver: Any, store_page: Any) -> None:
    sid = "store-self-destroy"
    make_store(driver, "quitter", sid)
    wait_viewers(store_page, sid, 1)
    driver.execute_script(
        "const r = window.__store.stores.quitter; r.quits = 0;"
        "r.store.subscribe(() => { r.quits++; r.store.destroy(); });")
    store_page.sessions.push_spaced(sid, answer(sid, "q", "gone after one frame " * 5, 2), 50)
    wait_viewers(store_page, sid, 0)
    time.sleep(0.5)
    assert driver.execute_script("return window.__store.stores.quitter.quits") == 1
    assert host_users(driver) == 2  # "one" and "right" remain
    assert not [e for e in console_errors(driver) if "favicon" not in e]


def test_destroying_every_store_frees_the_frame_loop(driver: Any, store_page: Any) -> None:
    code = """
import json, weakref, gc
from streampace.browser import page_host
host = page_host.shared_host()
_sp_refs = [weakref.ref(host.frame_callback), weakref.ref(host.timeout_callback),
            weakref.ref(host.visibility_callback)]
del host
json.dumps(page_host.page_host_users())
"""
    assert json.loads(run_python(driver, code)) >= 1
    driver.execute_script("for (const r of Object.values(window.__store.stores))"
                          " { r.store.destroy(); r.store = null; }")
    for sid in ("store-bursty", "store-right"):
        wait_viewers(store_page, sid, 0)
    after = json.loads(run_python(driver, """
gc.collect()
json.dumps({"users": page_host.page_host_users(), "host": page_host.shared_host() is None,
            "alive": sum(r() is not None for r in _sp_refs)})
"""))
    assert after == {"users": 0, "host": True, "alive": 0}
    assert not [e for e in console_errors(driver) if "favicon" not in e]


def test_the_element_shows_an_answer_and_cleans_up_when_removed(driver: Any,
                                                                 store_page: Any) -> None:
    sid = "element"
    driver.execute_script(
        "const el = document.createElement('streampace-view');"
        "el.setAttribute('stream', arguments[0]); el.setAttribute('format', 'text');"
        "el.id = 'el'; window.__el = el; document.getElementById('host').append(el);",
        f"/ws/sessions/{sid}")
    wait_viewers(store_page, sid, 1)
    store_page.sessions.push_spaced(sid, answer(sid, "e", "Shown by the element.", 2), 50)
    wait_for(driver, "const t = document.querySelector('#el .sp-message[data-id=e] .sp-text');"
                     "return t && t.textContent === 'Shown by the element.'", 30)
    assert driver.execute_script("return document.querySelector('#el .sp-view') !== null")
    assert host_users(driver) == 1
    # A new `stream` shows that session instead.
    driver.execute_script("window.__el.setAttribute('stream', '/ws/sessions/element-2')")
    wait_viewers(store_page, sid, 0)
    wait_viewers(store_page, "element-2", 1)
    wait_for(driver, "return !document.querySelector('#el .sp-message[data-id=e]')", 10)
    # One removed at once (while its view starts) leaves nothing either.
    driver.execute_script(
        "window.__errors = [];"
        "const el = document.createElement('streampace-view');"
        "el.setAttribute('stream', '/ws/sessions/element-gone');"
        "el.addEventListener('streampace:error', (e) => window.__errors.push(e.detail));"
        "document.body.append(el); el.remove(); window.__gone = el;")
    driver.execute_script("window.__el.remove()")
    wait_viewers(store_page, "element-2", 0)
    wait_viewers(store_page, "element-gone", 0)
    assert driver.execute_script("return window.__errors") == []
    assert driver.execute_script("return window.__gone.childElementCount") == 0
    wait_for(driver, "return window.streampace.instances.length === 0", 5)
    host_users(driver)  # imports page_host
    state = json.loads(run_python(driver, "import json\njson.dumps([page_host.page_host_users(),"
                                          " page_host.shared_host() is None])"))
    assert state == [0, True]
    assert driver.execute_script("return window.__el.childElementCount") == 0


def test_the_python_page_api_tears_down_cleanly(driver: Any, store_page: Any) -> None:
    sid = "python-api"
    run_python(driver, f"""
import js, json
from streampace.browser import page_host
from streampace.browser.page import mount
_sp_el = js.document.createElement("div")
js.document.body.append(_sp_el)
_sp_view = mount(_sp_el, "/ws/sessions/{sid}", text_format="text")
_sp_seen = []
_sp_view.on_text(lambda mid, delta: _sp_seen.append(delta))
""")
    wait_viewers(store_page, sid, 1)
    store_page.sessions.push_spaced(sid, answer(sid, "p", "From Python's page API.", 2), 50)
    wait_for(driver, "return document.body.lastElementChild.textContent"
                     ".includes('From Python')", 30)
    assert host_users(driver) == 1
    state = json.loads(run_python(driver, """
_sp_view.destroy()
json.dumps([page_host.page_host_users(), page_host.shared_host() is None,
            _sp_el.childElementCount, _sp_view.view.host.pending(), len(_sp_view._text)])
"""))
    assert state == [0, True, 0, {"frames": 0, "timeouts": 0}, 0]
    wait_viewers(store_page, sid, 0)  # its socket is closed


def test_the_preact_example_streams_a_paced_answer(driver: Any, page_server: Any) -> None:
    # Last in this module: it leaves the store page.
    from .browser_harness import requested_urls

    sid, mid = "preact-example", "a"
    requested_urls(driver)
    driver.get(page_server.url(f"/examples/preact.html?stream=/ws/sessions/{sid}"))
    wait_for(driver, "return !!window.exampleStore", BOOT_TIMEOUT_S)
    wait_viewers(page_server, sid, 1)
    # Sample what Preact shows every animation frame.
    driver.execute_script(
        "window.__shown = [];"
        "const tick = () => { const t = document.querySelector('.turn[data-id=a] .text');"
        " window.__shown.push(t ? t.textContent.length : -1); requestAnimationFrame(tick); };"
        "requestAnimationFrame(tick);")
    page_server.sessions.push_spaced(sid, answer(sid, mid, BURSTY, 3), 250)
    wait_for(driver, "return document.querySelector('.run').dataset.run === 'finished'", 30)
    shown = driver.execute_script("return document.querySelector('.turn[data-id=a] .text')"
                                  ".textContent")
    assert shown == BURSTY
    lengths = {n for n in driver.execute_script("return window.__shown") if n > 0}
    assert len(lengths) >= 20, lengths  # Preact re-rendered per paced frame, not per batch
    assert driver.execute_script("return document.querySelector('.turn[data-id=u] .text')"
                                 ".textContent") == "Why pace?"
    urls = requested_urls(driver)
    assert any(u.endswith("/node_modules/htm/preact/standalone.module.js") for u in urls)
    assert all(u.startswith((page_server.origin, page_server.ws_origin, "data:")) for u in urls)
    assert not [e for e in console_errors(driver) if "favicon" not in e]


def test_a_question_asked_during_a_run_waits_in_the_snapshot(driver: Any,
                                                             store_page: Any) -> None:
    sid = "store-queue"
    driver.get(store_page.url("/tests/browser/pages/store.html"))  # an earlier test left it
    wait_for(driver, "return !!(window.streampace && window.__store)", BOOT_TIMEOUT_S)
    make_store(driver, "queue", sid)
    wait_viewers(store_page, sid, 1)
    store_page.sessions.push(sid, [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"}])
    wait_for(driver, "return window.__store.stores.queue.store.getSnapshot().run.status"
                     " === 'running'", 10)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.__store.stores.queue.store.send({type: 'run', prompt: 'next'}).then(done);")
    assert result["status"] == "queued" and result["position"] == 1
    wait_for(driver, "return window.__store.stores.queue.store.getSnapshot().queued.length"
                     " === 1", 5)
    queued = driver.execute_script(
        "return window.__store.stores.queue.store.getSnapshot().queued")
    assert queued == [{"id": result["id"], "prompt": "next", "state": "waiting"}]
    assert store_page.sessions.client_messages(sid, "run") == []  # not sent yet
    store_page.sessions.push(sid, [{"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    deadline = time.monotonic() + 10
    while not store_page.sessions.client_messages(sid, "run"):
        assert time.monotonic() < deadline, "the waiting question was not sent"
        time.sleep(0.05)
    assert store_page.sessions.client_messages(sid, "run") == [{"type": "run", "prompt": "next"}]
