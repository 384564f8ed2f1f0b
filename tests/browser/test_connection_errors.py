"""Connection failures in real headless Chromium (issue 23 item 2): no server,
an HTTP 404 stream, a refused origin, a server closing with a code, a failure
while the page boots, and a reconnect during the boot.

Each failure must fire `streampace:error` with a machine-readable code, show on
the view's status line, be in `stats().connection`, and be retried with backoff
unless retrying is useless (4403).  The refusals come from real `streampace
serve` processes; the 404 from the page server (a site without streampace).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .browser_harness import (
    BOOT_TIMEOUT_S,
    CSP,
    PageServer,
    ScriptedSessions,
    build_app,
    free_port,
    serve_app,
    serving,
    wait_for,
)

pytestmark = pytest.mark.browser

# The page may open sockets to the streampace servers on other loopback ports.
CONN_CSP = CSP.replace("connect-src 'self'",
                       "connect-src 'self' ws://127.0.0.1:* http://127.0.0.1:*")
PAGE = "/tests/browser/pages/stream.html"


@pytest.fixture(scope="module")
def conn_server(runtime_ready: None) -> Iterator[PageServer]:
    sessions = ScriptedSessions()
    with serve_app(build_app(sessions, CONN_CSP)) as port:
        yield PageServer(port, sessions)


@contextlib.contextmanager
def streampace_serve(*args: str) -> Iterator[int]:
    """A real `streampace serve` on a free loopback port."""
    port = free_port()
    with serving([sys.executable, "-m", "streampace", "serve", "--host", "127.0.0.1",
                  "--port", str(port), "--speed", "5", *args], port):
        yield port


@pytest.fixture()
def page(driver: Any, conn_server: PageServer) -> PageServer:
    """The test page booted without a stream (tests mount their own views)."""
    if not driver.execute_script("return !!window.__connPage"):
        driver.get(conn_server.url(PAGE))
        wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
        driver.execute_script("window.__connPage = true; window.__conn = {};")
    return conn_server


MOUNT = """
const [name, stream] = arguments;
const div = document.createElement("div");
div.id = name;
document.body.append(div);
const rec = {errors: [], t0: performance.now()};
div.addEventListener("streampace:error", (e) =>
  rec.errors.push({...e.detail, atMs: performance.now() - rec.t0}));
rec.inst = window.streampace.mount({target: div, stream, format: "text"});
window.__conn[name] = rec;
"""


def mount(driver: Any, name: str, stream: str) -> None:
    driver.execute_script(MOUNT, name, stream)


def errors(driver: Any, name: str) -> list[dict]:
    return driver.execute_script("return window.__conn[arguments[0]].errors", name)


def first_error(driver: Any, name: str, timeout: float = 15) -> dict:
    wait_for(driver, "return window.__conn[arguments[0]].errors.length > 0", timeout, name)
    return errors(driver, name)[0]


def connection(driver: Any, name: str) -> dict:
    return driver.execute_script(
        "return window.__conn[arguments[0]].inst.stats().connection", name)


def status_line(driver: Any, name: str) -> str | None:
    """The view's connection status line: its text, None when hidden or absent."""
    return driver.execute_script(
        "const n = document.querySelector('#' + arguments[0] + ' .sp-connection');"
        "return n && !n.hidden ? n.textContent : null;", name)


def unmount(driver: Any, name: str) -> None:
    driver.execute_script(
        "const r = window.__conn[arguments[0]]; r.inst.destroy();"
        "document.getElementById(arguments[0]).remove();", name)


def test_no_server_is_reported_and_retried_with_backoff(driver: Any, page: PageServer) -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws/sessions/nobody"  # nothing listens there
    mount(driver, "nosrv", url)
    try:
        err = first_error(driver, "nosrv")
        assert err["where"] == "connection" and err["code"] == "no_server", err
        assert err["closeCode"] == 1006 and err["retrying"] is True
        assert err["url"] == url.rsplit("/", 1)[0] + "/…"  # the server, not the session id
        assert "Nothing answers at" in err["message"]
        line = status_line(driver, "nosrv")
        assert line is not None and "Nothing answers at" in line and "Reconnecting" in line
        # Backoff 125-250, 250-500, 500-1000 ms: three more attempts within seconds.
        wait_for(driver, "return window.__conn.nosrv.inst.stats().connection.attempt >= 3", 20)
        st = connection(driver, "nosrv")
        assert st["state"] in ("waiting", "connecting", "diagnosing"), st
        assert st["lastClose"]["code"] == 1006 and st["problem"]["code"] == "no_server"
        assert st["opens"] == 0 and st["closes"] >= 3
        assert len(errors(driver, "nosrv")) == 1  # once per streak, not per attempt
    finally:
        unmount(driver, "nosrv")


def test_a_404_stream_url_is_reported_as_not_found(driver: Any, page: PageServer) -> None:
    mount(driver, "missing", "/ws/missing/x")
    try:
        err = first_error(driver, "missing")
        assert err["code"] == "not_found" and err["httpStatus"] == 404, err
        assert err["retrying"] is True
        line = status_line(driver, "missing")
        assert line is not None and line.startswith("There is no stream at")
        assert connection(driver, "missing")["problem"]["httpStatus"] == 404
    finally:
        unmount(driver, "missing")


def test_a_refused_origin_is_reported_and_not_retried(driver: Any, page: PageServer) -> None:
    with streampace_serve() as port:  # allows only its own origin, not the page's
        mount(driver, "origin", f"ws://127.0.0.1:{port}/ws/sessions/x")
        try:
            err = first_error(driver, "origin")
            assert err["code"] == "origin_refused" and err["closeCode"] == 4403, err
            assert err["retrying"] is False and err["retryInMs"] is None
            line = status_line(driver, "origin")
            assert line is not None and line.endswith("Not reconnecting.")
            # The first retry would be due within 250 ms: give it six times that.
            time.sleep(1.5)
            st = connection(driver, "origin")
            assert st["state"] == "closed" and st["problem"]["final"] is True
            assert st["opens"] == 1 and st["closes"] == 1
            assert len(errors(driver, "origin")) == 1
        finally:
            unmount(driver, "origin")


def test_a_server_closing_with_a_code_is_retried_until_it_serves(
        driver: Any, page: PageServer) -> None:
    from websockets.sync.client import connect

    # Named sessions, and no quiet period: the holder's session may go once it is idle.
    with streampace_serve("--max-sessions", "1", "--allow-origin", page.origin,
                          "--client-session-ids", "--session-quiet", "0.01") as port:
        try:
            # The one session the server holds, watched: a new one is refused.
            with connect(f"ws://127.0.0.1:{port}/ws/sessions/holder") as holder:
                holder.send(json.dumps({"type": "resume", "after": 0}))
                assert json.loads(holder.recv(10))["type"] == "attached"
                mount(driver, "crowded", f"ws://127.0.0.1:{port}/ws/sessions/crowded")
                err = first_error(driver, "crowded")
                assert err["code"] == "try_again_later" and err["closeCode"] == 1013, err
                assert err["reason"] == "too many sessions in use" and err["retrying"] is True
                line = status_line(driver, "crowded")
                assert line is not None and "cannot take this session" in line
                wait_for(driver,
                         "return window.__conn.crowded.inst.stats().connection.attempt >= 2", 20)
            # Closed: its session is idle now and the server can forget it.
            wait_for(driver, "return window.__conn.crowded.inst.stats().connection.state"
                     " === 'attached'", 30)
            st = connection(driver, "crowded")
            assert st["problem"] is None and st["attempt"] == 0
            assert st["lastClose"]["code"] == 1013 and st["opens"] >= 3
            assert status_line(driver, "crowded") is None
            driver.execute_script("window.__conn.crowded.inst.send("
                                  "{type: 'run', prompt: 'hello again', scenario: 'fast'})")
            wait_for(driver, "return document.querySelector('#crowded .sp-view')"
                     ".getAttribute('data-run') === 'finished'", 60)
            assert len(errors(driver, "crowded")) == 1
        finally:
            if driver.execute_script("return !!(window.__conn && window.__conn.crowded)"):
                unmount(driver, "crowded")


# ---------------------------------------------------------------- during the boot
def test_a_failure_while_booting_is_kept_and_reported_after_the_boot(
        driver: Any, conn_server: PageServer) -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws/sessions/early"
    driver.get(conn_server.url(f"{PAGE}?stream={url}"))
    wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
    wait_for(driver, "return window.__rec.events.some(e => e.name === 'streampace:error')", 15)
    events = driver.execute_script("return window.__rec.events")
    names = [e["name"] for e in events]
    assert names.index("streampace:ready") < names.index("streampace:error")
    err = next(e["detail"] for e in events if e["name"] == "streampace:error")
    assert err["code"] == "no_server" and err["url"] == url.rsplit("/", 1)[0] + "/…"
    shown = driver.execute_script(
        "const n = document.querySelector('#answer .sp-connection'); return n && n.textContent")
    assert shown and "Nothing answers at" in shown
    assert driver.execute_script("return window.streampace.stats().connection.closes") >= 1


def test_a_reconnect_while_booting_resumes_without_loss(driver: Any,
                                                        conn_server: PageServer) -> None:
    """The server drops the socket after the page's greeting, before Python is
    up: the socket waits, Python resumes from what it applied."""
    sid = "bootdrop"
    sessions = conn_server.sessions
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b1"}
    sessions.push(sid, [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "b1", "role": "assistant"},
                        {**delta, "delta": "one "}])
    # The ordinary boot (no snapshot) leaves seconds between open and attach.
    driver.get(conn_server.url(f"{PAGE}?sid={sid}&snapshot=off"))
    deadline = time.monotonic() + 30
    while not (sessions.client_messages(sid, "resume") and sessions.sockets.get(sid)):
        assert time.monotonic() < deadline, "the page's socket never attached"
        time.sleep(0.01)
    through = sessions.push(sid, [{**delta, "delta": "two "}])
    assert sessions.drop(sid) == 1
    booting = not driver.execute_script("return !!window.__rec.ready")
    sessions.push(sid, [{**delta, "delta": "three "}])  # logged while the page is away
    sessions.push(sid, [{**delta, "delta": "four "}])
    assert booting, "Python was up before the drop: the test did not test the boot"
    wait_for(driver, "return !!window.__rec.ready", BOOT_TIMEOUT_S)
    wait_for(driver, "return window.streampace.stats().connection.opens >= 2", 30)
    sessions.push(sid, [{**delta, "delta": "five"},
                        {"type": "TEXT_MESSAGE_END", "messageId": "b1"},
                        {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    wait_for(driver, "return window.__rec.visibleText() === arguments[0]", 30,
             "one two three four five")
    resumes = [m["after"] for m in sessions.client_messages(sid, "resume")]
    assert resumes == [0, through]
    st = driver.execute_script("return window.streampace.stats()")
    assert st["client"]["duplicates"] == 0 and st["connection"]["state"] == "attached"
    # The drop (close 1012) was reported once, as what it was.
    assert [e["detail"]["code"] for e in driver.execute_script("return window.__rec.events")
            if e["name"] == "streampace:error"] == ["server_restart"]
