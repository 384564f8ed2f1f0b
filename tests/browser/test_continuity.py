"""Issue 27: the conversation survives what people do, in real Chromium, on a host
application that mounts StreampaceApp (tests/browser/hostapp/app.py, its own
process on the memory store, so SIGKILL and a restart really lose the sessions).

Covered: a second question during an answer (queued, shown at once, both
answered in order; withdrawn), reload mid-answer (the same conversation, the
answer finished once), the server killed mid-answer and restarted (what was
shown stays, the cut run marked, the next question answered below), the
session id never in the page's text.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .browser_harness import (
    BOOT_TIMEOUT_S,
    CSP,
    ScriptedSessions,
    build_app,
    free_port,
    serve_app,
    wait_for,
    wait_port,
)
from .hostapp.app import answer_words

pytestmark = pytest.mark.browser

HOSTAPP = Path(__file__).resolve().parent / "hostapp" / "app.py"


class HostApp:
    """The host app's process: start, SIGKILL, start again on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HOSTAPP), str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_port(self.port, self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def host(runtime_ready: None) -> Iterator[HostApp]:
    app = HostApp()
    app.start()
    try:
        yield app
    finally:
        app.stop()


def open_host(driver: Any, host: HostApp, query: str = "") -> None:
    driver.get(f"{host.origin}/{query}")
    wait_for(driver, "return !!(window.streampace && window.streampace.instances.length"
                     " && window.streampace.instances[0].controller)", BOOT_TIMEOUT_S)


def answer(prompt: str) -> str:
    return " ".join(answer_words(prompt))


def shown(driver: Any) -> list[list[str]]:
    """Every message shown, in order: [role, text] (queued questions included)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#answer .sp-message')]"
        ".map((m) => [m.dataset.role, m.querySelector('.sp-text').textContent.trim(),"
        " m.dataset.state])")


def run_ends(driver: Any) -> list[dict]:
    return driver.execute_script(
        "return window.__rec.events.filter((e) => e.name === 'run-end').map((e) => e.detail)")


def send(driver: Any, prompt: str) -> dict:
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.streampace.send({type: 'run', prompt: arguments[0]}).then(done);", prompt)


def wait_text(driver: Any, text: str, timeout: float = 30) -> None:
    wait_for(driver, "return document.querySelector('#answer').textContent.includes(arguments[0])",
             timeout, text)


def session_id(driver: Any) -> str:
    url = driver.execute_script("return window.streampace.stats().connection.url")
    sid = url.rsplit("/", 1)[1]
    assert sid and sid != "new", url
    return sid


def assert_id_hidden(driver: Any, sid: str) -> None:
    visible = driver.execute_script("return document.body.innerText + ' ' + document.title")
    assert sid not in visible


# ---------------------------------------------------------------- a second question
def test_a_question_asked_during_an_answer_waits_and_is_answered_next(driver: Any,
                                                                       host: HostApp) -> None:
    open_host(driver, host)
    assert send(driver, "first")["status"] == "accepted"
    wait_text(driver, "word05")
    second = send(driver, "second")
    assert second["status"] == "queued" and second["position"] == 1
    # Shown at once, as the person's message, marked as waiting.
    assert shown(driver)[-1] == ["user", "second", "waiting"]
    third = send(driver, "third")
    assert third["status"] == "queued"
    withdrawn = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.streampace.withdraw(arguments[0]).then(done);", third["id"])
    assert withdrawn is True
    assert [m[1] for m in shown(driver)].count("third") == 0
    wait_for(driver, "return window.__rec.events.filter((e) => e.name === 'run-end')"
                     ".length >= 2", 60)
    wait_text(driver, answer("second"))
    wait_for(driver, "return !document.querySelector('#answer .sp-queued')", 10)
    messages = shown(driver)
    assert [m[:2] for m in messages] == [["user", "first"], ["assistant", answer("first")],
                                         ["user", "second"], ["assistant", answer("second")]]
    assert [e["status"] for e in run_ends(driver)] == ["finished", "finished"]
    assert driver.execute_script("return window.streampace.stats().outbox")["withdrawn"] == 1
    refused = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.streampace.send({type: 'run', prompt: ''}).then(done);")
    assert refused["status"] == "refused" and refused["code"] == "bad_field"


def assistant_text(driver: Any) -> str:
    return driver.execute_script(
        "const m = [...document.querySelectorAll('#answer .sp-message[data-role=assistant]')];"
        " return m.length ? m[m.length - 1].querySelector('.sp-text').textContent : '';")


# ---------------------------------------------------------------- reload
def test_a_reload_mid_answer_keeps_the_conversation(driver: Any, host: HostApp) -> None:
    open_host(driver, host)
    send(driver, "first")
    wait_text(driver, "word20")
    sid = session_id(driver)
    assert_id_hidden(driver, sid)
    before = driver.execute_script("return document.querySelector('#answer .sp-timeline')"
                                   ".textContent")
    driver.refresh()
    open_host_again = ("return !!(window.streampace && window.streampace.instances.length"
                       " && window.streampace.instances[0].controller)")
    wait_for(driver, open_host_again, BOOT_TIMEOUT_S)
    # What was shown comes back at once (a snapshot, not a paced replay of the log).
    wait_for(driver, "return document.querySelector('#answer .sp-timeline')"
                     ".textContent.length >= arguments[0]", 10, len(before))
    again = driver.execute_script("return document.querySelector('#answer .sp-timeline')"
                                  ".textContent")
    assert again.startswith(before.rstrip()), (before, again)
    assert session_id(driver) == sid  # the same conversation
    assert sid not in driver.current_url
    assert_id_hidden(driver, sid)
    wait_for(driver, "return window.__rec.events.some((e) => e.name === 'run-end')", 30)
    messages = shown(driver)
    assert [m[:2] for m in messages] == [["user", "first"], ["assistant", answer("first")]]
    assert [e["status"] for e in run_ends(driver)] == ["finished"]
    client = driver.execute_script("return window.streampace.stats().client")
    assert client["duplicates"] == 0 and client["epochs"] == 0
    # The next question continues the same session.
    assert send(driver, "second")["status"] == "accepted"
    wait_text(driver, answer("second"))
    assert session_id(driver) == sid


def test_remember_none_starts_a_new_conversation_on_reload(driver: Any, host: HostApp) -> None:
    open_host(driver, host, "?remember=none")
    send(driver, "first")
    wait_text(driver, answer("first"))
    sid = session_id(driver)
    assert driver.execute_script("return Object.keys(sessionStorage).length") == 0
    driver.refresh()
    open_host(driver, host, "?remember=none")
    send(driver, "again")
    wait_text(driver, "word00")
    assert session_id(driver) != sid
    assert "first" not in driver.execute_script("return document.body.innerText")


# ---------------------------------------------------------------- server restart
def test_a_server_killed_mid_answer_leaves_the_text_and_answers_the_next_question_below(
        driver: Any, host: HostApp) -> None:
    open_host(driver, host)
    send(driver, "first")
    wait_text(driver, "word15")
    sid = session_id(driver)
    host.kill()
    # Reconnecting: the status line says so, and never shows the key.
    netloc = host.origin.split("//")[1]
    wait_for(driver, "const n = document.querySelector('#answer .sp-connection');"
                     " return n && !n.hidden && n.textContent.includes(arguments[0])", 20, netloc)
    line = driver.execute_script("return document.querySelector('#answer .sp-connection')"
                                 ".textContent")
    assert sid not in line and "Nothing answers at" in line, line
    assert_id_hidden(driver, sid)
    shown_before = assistant_text(driver)
    assert "word15" in shown_before
    host.start()  # the memory store: every session is gone
    wait_for(driver, "return !!document.querySelector('#answer .sp-lost')", 30)
    kept = driver.execute_script(
        "return [...document.querySelectorAll('#answer .sp-earlier .sp-message')]"
        ".map((m) => [m.dataset.role, m.querySelector('.sp-text').textContent.trim(),"
        " m.dataset.state])")
    assert kept[0] == ["user", "first", "done"]
    assert kept[1][0] == "assistant" and kept[1][2] == "lost"
    assert kept[1][1].startswith(shown_before.strip()), (shown_before, kept)
    status = driver.execute_script("return document.querySelector('#answer .sp-status')"
                                   ".textContent")
    assert "Error" not in status  # one clear line, not a red error in place of the text
    assert send(driver, "second")["status"] == "accepted"
    wait_text(driver, answer("second"))
    assert [m[:2] for m in shown(driver)][2:] == [["user", "second"],
                                                 ["assistant", answer("second")]]
    assert kept[1][1] in driver.execute_script("return document.body.innerText")
    new_sid = session_id(driver)
    assert new_sid != sid
    assert_id_hidden(driver, new_sid)


# ---------------------------------------------------------------- the host's look and words
LOOK = """
const view = document.querySelector('#answer .sp-view');
const probe = document.createElement('a');
view.append(probe);
const s = getComputedStyle(view), a = getComputedStyle(probe).color;
probe.remove();
return {color: s.color, background: s.backgroundColor, scheme: s.colorScheme, accent: a,
        host: getComputedStyle(document.documentElement).color,
        roles: [...view.querySelectorAll('.sp-role')].map((r) => r.textContent)};
"""


@pytest.mark.parametrize("dark", [False, True])
def test_the_view_takes_the_host_pages_colours_not_the_os(driver: Any, host: HostApp,
                                                          dark: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "light"}]})
    try:
        open_host(driver, host, "?dark=1" if dark else "")
        send(driver, "colours")
        wait_text(driver, "word00")
        look = driver.execute_script(LOOK)
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert look["background"] == "rgba(0, 0, 0, 0)"
    assert look["color"] == look["host"] == ("rgb(230, 230, 230)" if dark else "rgb(20, 20, 20)")
    # Accents by the host's color-scheme (a dark site on a light OS: the dark ones).
    assert look["accent"] == ("rgb(124, 177, 255)" if dark else "rgb(11, 98, 214)")
    assert look["roles"][:2] == ["You", "Assistant"]


def test_the_views_words_follow_the_page_language_and_the_hosts_labels(
        driver: Any, host: HostApp) -> None:
    open_host(driver, host, "?lang=fr")
    send(driver, "bonjour")
    wait_text(driver, answer("bonjour"))
    assert driver.execute_script(LOOK)["roles"] == ["Vous", "Assistant"]
    assert driver.execute_script(
        "return document.querySelector('#answer .sp-status').textContent") == "Terminé"
    open_host(driver, host, '?labels={"user":"Me","done":"Answered"}')
    send(driver, "hello")
    wait_text(driver, answer("hello"))
    # The same tab: the conversation so far came back, in the host's words too.
    assert driver.execute_script(LOOK)["roles"] == ["Me", "Assistant"] * 2
    assert driver.execute_script(
        "return document.querySelector('#answer .sp-status').textContent") == "Answered"


# ---------------------------------------------------------------- boot failures
STRICT = ("default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
          "img-src 'self' data:")


@pytest.mark.parametrize(("page", "csp", "expected", "code"), [
    # The PyScript page under the embed's strict policy: PyScript's core needs eval.
    ("/tests/browser/pages/pyscript-api.html", CSP, "'unsafe-eval'", "csp_eval"),
    # The embed where WebAssembly itself is not allowed.
    ("/tests/browser/pages/yourpage.html?sid=csp", STRICT, "'wasm-unsafe-eval'", "csp_wasm"),
])
def test_a_boot_the_pages_policy_forbids_says_so_on_the_page(
        driver: Any, runtime_ready: None, page: str, csp: str, expected: str,
        code: str) -> None:
    with serve_app(build_app(ScriptedSessions(), csp)) as port:
        # Listening before the page's own scripts run (the event may come first).
        listen = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
            "window.__bootErrors = [];"
            "document.addEventListener('streampace:error', (e) => __bootErrors.push(e.detail),"
            " true);")})
        try:
            driver.get(f"http://127.0.0.1:{port}{page}")
        finally:
            driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument",
                                   {"identifier": listen["identifier"]})
        wait_for(driver, "return !!document.querySelector('.streampace-boot-failed')", 10)
        shown = driver.execute_script(
            "return document.querySelector('.streampace-boot-failed').textContent")
        assert expected in shown and "Content-Security-Policy" in shown, shown
        assert "Loading" not in driver.execute_script("return document.body.innerText")
        errors = driver.execute_script("return window.__bootErrors")
        assert [(e["where"], e["code"]) for e in errors] == [("boot", code)], errors
        assert expected in errors[0]["message"]
