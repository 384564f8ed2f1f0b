"""The tag in a host page of its own (issue 23), in real headless Chromium.

The page (tests/browser/pages/yourpage.*) lays the answer out the way sites do —
the page scrolls, a container scrolls, a two-column grid — with or without
js_shim/streampace.css, and mounts the tag on a scripted stream. Covered: ids an
agent reuses every run, a commit that fails, Stop, scroll following, the width
of the page, right-to-left text, light and dark.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By

from .browser_harness import BOOT_TIMEOUT_S, console_errors, wait_for

pytestmark = pytest.mark.browser


def open_page(driver: Any, page_server: Any, sid: str, **params: str) -> None:
    query = "&".join(f"{k}={v}" for k, v in {"sid": sid, **params}.items())
    driver.get(page_server.url(f"/tests/browser/pages/yourpage.html?{query}"))
    wait_for(driver, "return !!(window.streampace && window.streampace.instances.length"
                     " && window.streampace.instances[0].controller)", BOOT_TIMEOUT_S)


def run(sid: str, rid: str, items: list[tuple[str, str, str]],
        end: dict | None = None) -> list[dict]:
    """A run's events: (id, role, text) per message; ``end`` replaces RUN_FINISHED."""
    out: list[dict] = [{"type": "RUN_STARTED", "threadId": sid, "runId": rid}]
    for mid, role, text in items:
        out += [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text},
                {"type": "TEXT_MESSAGE_END", "messageId": mid}]
    out.append(end or {"type": "RUN_FINISHED", "threadId": sid, "runId": rid})
    return out


def events(driver: Any, name: str) -> list[dict]:
    return driver.execute_script(
        "return window.__rec.events.filter((e) => e.name === arguments[0])"
        ".map((e) => e.detail)", f"streampace:{name}")


def messages(driver: Any) -> list[list[str]]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#answer .sp-message')]"
        ".map((m) => [m.dataset.role, m.querySelector('.sp-text').textContent])")


def wait_runs(driver: Any, n: int, timeout: float = 30) -> None:
    wait_for(driver, "return window.__rec.events.filter("
                     "(e) => e.name === 'streampace:run-end').length >= arguments[0]",
             timeout, n)


# ---------------------------------------------------------------- ids reused across runs
def test_an_agent_that_reuses_ids_gets_a_new_answer_each_run(driver: Any,
                                                             page_server: Any) -> None:
    sid = "reuse-ids"
    open_page(driver, page_server, sid, layout="page", css="1")
    sessions = page_server.sessions
    sessions.push(sid, run(sid, "r1", [("u", "user", "first question"),
                                       ("a1", "assistant", "The **first** answer.")]))
    wait_runs(driver, 1)
    sessions.push(sid, run(sid, "r2", [("u", "user", "second question"),
                                       ("a1", "assistant", "The **second** answer.")]))
    wait_runs(driver, 2)
    time.sleep(0.5)  # frames go by: nothing may be re-applied or fail in them
    assert messages(driver) == [["user", "first question"], ["assistant", "The first answer."],
                                ["user", "second question"], ["assistant", "The second answer."]]
    assert driver.execute_script(
        "return document.querySelectorAll('#answer .sp-markdown strong').length") == 2
    assert [e["status"] for e in events(driver, "run-end")] == ["finished", "finished"]
    assert [e["messageId"] for e in events(driver, "message-end")] == ["u", "a1", "u", "a1"]
    assert events(driver, "error") == []
    stats = driver.execute_script("return window.streampace.stats()")
    assert stats["errors"] == [] and stats["hostErrors"] == 0
    assert not [e for e in console_errors(driver) if "favicon" not in e]


INJECT = """
const done = arguments[arguments.length - 1];
window.streampace.runtime().then((py) => {
  py.runPython(`
from streampace.browser import markdown_dom
if not hasattr(markdown_dom.MarkdownView, "_feed_before_test"):
    markdown_dom.MarkdownView._feed_before_test = markdown_dom.MarkdownView.feed
_feed_before = markdown_dom.MarkdownView._feed_before_test
def _failing_feed(self, delta):
    if "\\u{1F4A5}" in delta:
        raise RuntimeError("injected failure")
    return markdown_dom.MarkdownView._feed_before_test(self, delta)
markdown_dom.MarkdownView.feed = ${arguments[0] ? "_failing_feed" : "_feed_before"}
`);
  done(true);
});
"""


def test_a_commit_that_raises_is_reported_once_and_the_view_goes_on(driver: Any,
                                                                   page_server: Any) -> None:
    sid = "failing-commit"
    open_page(driver, page_server, sid, layout="page")
    driver.execute_async_script(INJECT, True)  # Markdown fails on "💥" (a fault injected)
    try:
        sessions = page_server.sessions
        sessions.push(sid, run(sid, "r1", [("u", "user", "go"),
                                           ("a", "assistant", "before 💥 after *it*")]))
        wait_runs(driver, 1)
        time.sleep(0.5)
        errors = events(driver, "error")
        assert len(errors) == 1, errors
        assert errors[0]["where"] == "render" and errors[0]["code"] == "render_failed"
        assert "injected failure" in errors[0]["message"]
        # The whole batch is shown once, the failed message as plain text.
        assert messages(driver) == [["user", "go"], ["assistant", "before 💥 after *it*"]]
        # The next run renders as usual, with no further error.
        sessions.push(sid, run(sid, "r2", [("u2", "user", "again"),
                                           ("b", "assistant", "now **fine**")]))
        wait_runs(driver, 2)
        time.sleep(0.3)
        assert messages(driver)[2:] == [["user", "again"], ["assistant", "now fine"]]
        assert driver.execute_script(
            "return document.querySelector('#answer [data-id=b] .sp-markdown strong')"
            ".textContent") == "fine"
        assert len(events(driver, "error")) == 1
        assert driver.execute_script("return window.streampace.stats().hostErrors") == 0
    finally:
        driver.execute_async_script(INJECT, False)


# ---------------------------------------------------------------- Stop
def test_stop_shows_stopped_and_an_error_stays_an_error(driver: Any, page_server: Any) -> None:
    sid = "stop"
    open_page(driver, page_server, sid, layout="page", css="1")
    sessions = page_server.sessions
    sessions.push(sid, run(sid, "r1", [("a", "assistant", "partial")], end={
        "type": "RUN_ERROR", "message": "run cancelled by a viewer", "code": "cancelled"}))
    wait_runs(driver, 1)
    status = "return document.querySelector('#answer .sp-status').textContent"
    run_attr = "return document.querySelector('#answer .sp-view').dataset.run"
    assert driver.execute_script(status) == "Stopped"
    assert driver.execute_script(run_attr) == "stopped"
    (end,) = events(driver, "run-end")
    assert end["status"] == "stopped" and end["outcome"] == "stopped"
    assert end["code"] == "cancelled" and end["error"] is None
    sessions.push(sid, run(sid, "r2", [("b", "assistant", "partial")], end={
        "type": "RUN_ERROR", "message": "the model went away", "code": "upstream_error"}))
    wait_runs(driver, 2)
    assert driver.execute_script(status) == "Error: the model went away (upstream_error)"
    assert driver.execute_script(run_attr) == "error"
    end = events(driver, "run-end")[1]
    assert end["status"] == "error" and end["error"] == "the model went away"
    assert events(driver, "error") == []  # a run's failure is its run-end, not a view error


# ---------------------------------------------------------------- scrolling
LINES = [f"Line {i:03d} of a long answer that grows below the fold." for i in range(200)]


def push_lines(sessions: Any, sid: str, mid: str, lo: int, hi: int) -> None:
    for start in range(lo, hi, 10):
        sessions.push(sid, [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid,
                             "delta": "".join(f"{line}\n\n" for line in LINES[start:start + 10])}])


def wait_line(driver: Any, n: int) -> None:
    wait_for(driver, "return document.querySelector('#answer').textContent"
                     ".includes(arguments[0])", 30, LINES[n])
    time.sleep(0.25)  # the frame after the commit has followed (or not)


GAP = {  # px between the view's bottom and the bottom of what scrolls it
    "container": "const b = document.getElementById('box');"
                 " return document.querySelector('#answer .sp-view').getBoundingClientRect()"
                 ".bottom - (b.getBoundingClientRect().top + b.clientTop + b.clientHeight);",
    "page": "return document.querySelector('#answer .sp-view').getBoundingClientRect().bottom"
            " - document.documentElement.clientHeight;",
}
TOP = {"container": "return document.getElementById('box').scrollTop;",
       "page": "return window.scrollY;"}
JUMP_SHOWN = "const j = document.querySelector('#answer .sp-jump'); return !!j && !j.hidden;"


@pytest.mark.parametrize("layout", ["container", "page"])
def test_the_view_follows_the_text_like_a_chat(driver: Any, page_server: Any,
                                              layout: str) -> None:
    sid = f"scroll-{layout}"
    open_page(driver, page_server, sid, layout=layout, css="1")
    sessions = page_server.sessions
    sessions.push(sid, [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
    push_lines(sessions, sid, "m", 0, 60)
    wait_line(driver, 59)
    # At the bottom: the view follows.
    assert abs(driver.execute_script(GAP[layout])) <= 2
    assert not driver.execute_script(JUMP_SHOWN)
    # The reader scrolls up (a wheel, as a person does): it stays where they are.
    target = driver.find_element(By.ID, "box" if layout == "container" else "answer")
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(target), 0, -400).perform()
    time.sleep(0.5)
    top = driver.execute_script(TOP[layout])
    push_lines(sessions, sid, "m", 60, 80)
    wait_line(driver, 79)
    assert abs(driver.execute_script(TOP[layout]) - top) <= 1
    assert driver.execute_script(GAP[layout]) > 300
    assert driver.execute_script(JUMP_SHOWN)
    # "Jump to latest" brings the newest text back and follows it again.
    driver.find_element(By.CSS_SELECTOR, "#answer .sp-jump-button").click()
    time.sleep(0.3)
    assert abs(driver.execute_script(GAP[layout])) <= 2
    assert not driver.execute_script(JUMP_SHOWN)
    push_lines(sessions, sid, "m", 80, 100)
    wait_line(driver, 99)
    assert abs(driver.execute_script(GAP[layout])) <= 2
    # Up again, then back down by hand to within a few pixels: pinned again.
    scroller = "document.getElementById('box')" if layout == "container" else "window"
    driver.execute_script(f"{scroller}.scrollBy(0, -500)")
    time.sleep(0.3)
    assert driver.execute_script(JUMP_SHOWN)
    driver.execute_script(f"{scroller}.scrollBy(0, arguments[0])",
                          driver.execute_script(GAP[layout]) - 3)
    time.sleep(0.3)
    push_lines(sessions, sid, "m", 100, 120)
    wait_line(driver, 119)
    assert abs(driver.execute_script(GAP[layout])) <= 2
    # ... and so it stays for the next run.
    sessions.push(sid, [{"type": "TEXT_MESSAGE_END", "messageId": "m"},
                        {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"},
                        {"type": "RUN_STARTED", "threadId": sid, "runId": "r2"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
    push_lines(sessions, sid, "m", 120, 160)
    wait_line(driver, 159)
    assert abs(driver.execute_script(GAP[layout])) <= 2
    assert events(driver, "error") == []


def test_data_scroll_off_leaves_scrolling_to_the_reader(driver: Any, page_server: Any) -> None:
    sid = "scroll-off"
    open_page(driver, page_server, sid, layout="container", css="1", tag="1", scroll="off")
    sessions = page_server.sessions
    sessions.push(sid, [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
    push_lines(sessions, sid, "m", 0, 60)
    wait_line(driver, 59)
    assert driver.execute_script(TOP["container"]) == 0
    assert driver.execute_script("return document.querySelector('#answer .sp-jump')") is None


# ---------------------------------------------------------------- the page's width
WIDE = (
    "A long code line:\n\n```python\n"
    + "result = compute(" + ", ".join(f"argument_{i}=value_{i}" for i in range(7)) + ")  # x\n"
    + "```\n\nA long word: https://example.com/" + "a" * 300 + "\n\n"
    + "| " + " | ".join(f"column{i}" for i in range(8)) + " |\n"
    + "|" + "---|" * 8 + "\n"
    + "| " + " | ".join("supercalifragilisticexpialidocious" for _ in range(8)) + " |\n\n"
    + "- [x] a task that is done\n- [ ] a task that is not\n"
)


@pytest.mark.parametrize("css", ["0", "1"])
def test_a_long_code_line_never_widens_the_page(driver: Any, page_server: Any, css: str) -> None:
    assert len(WIDE.splitlines()[3]) >= 140  # the code line of the report
    sid = f"width-{css}"
    driver.set_window_size(1400, 900)
    try:
        open_page(driver, page_server, sid, layout="grid", css=css)
        page_server.sessions.push(sid, run(sid, "r1", [("a", "assistant", WIDE)]))
        wait_runs(driver, 1)
        widths = driver.execute_script(
            "const d = document.documentElement;"
            " const pre = document.querySelector('#answer pre'), code = pre.querySelector('code');"
            " const inside = (el) => el.scrollWidth > el.clientWidth;"
            "return {page: d.scrollWidth, window: d.clientWidth,"
            " scrolls: [inside(pre), inside(code)]}")
        assert widths["page"] <= widths["window"], widths
        # The code block scrolls inside itself rather than being cut or widening: the
        # code element with our stylesheet, the pre itself (its inline style) without it.
        assert widths["scrolls"] == ([False, True] if css == "1" else [True, False]), widths
        if css == "1":
            # The copy button stays in the block's corner when the code is scrolled.
            corner = driver.execute_script(
                "const pre = document.querySelector('#answer pre');"
                " const code = pre.querySelector('code'), b = pre.querySelector('.sp-copy');"
                " const before = b.getBoundingClientRect().right;"
                " code.scrollLeft = code.scrollWidth;"
                " return [before, b.getBoundingClientRect().right,"
                " pre.getBoundingClientRect().right, code.scrollLeft]")
            assert corner[3] > 0 and corner[0] == corner[1] and corner[1] <= corner[2], corner
        if css == "1":
            table = driver.execute_script(
                "const t = document.querySelector('#answer table');"
                " return [t.scrollWidth, t.clientWidth]")
            assert table[0] > table[1]  # the table scrolls inside itself too
            bullets = driver.execute_script(
                "return [...document.querySelectorAll('#answer li.task-list-item')]"
                ".map((li) => getComputedStyle(li).listStyleType)")
            assert bullets == ["none", "none"]
    finally:
        driver.set_window_size(1200, 900)


# ---------------------------------------------------------------- direction, light and dark
BIDI = ("English first, left to right.\n\n"
        "مرحبا بك، هذه فقرة باللغة العربية تقرأ من اليمين إلى اليسار.\n\n"
        "- שלום עולם\n- רשימה בעברית\n")


def test_arabic_and_hebrew_read_right_to_left_in_light_and_dark(driver: Any,
                                                               page_server: Any) -> None:
    sid = "bidi"
    open_page(driver, page_server, sid, layout="page", css="1")
    page_server.sessions.push(sid, run(sid, "r1", [("q", "user", "سؤال بالعربية"),
                                                   ("a", "assistant", BIDI)]))
    wait_runs(driver, 1)
    directions = driver.execute_script(
        "const md = document.querySelector('#answer [data-id=a] .sp-markdown');"
        "const dir = (el) => [el.getAttribute('dir'), getComputedStyle(el).direction];"
        "return {paragraphs: [...md.querySelectorAll('p')].map(dir),"
        " list: dir(md.querySelector('ul')),"
        " user: dir(document.querySelector('#answer [data-id=q] .sp-text'))}")
    assert directions == {"paragraphs": [["auto", "ltr"], ["auto", "rtl"]],
                          "list": ["auto", "rtl"], "user": ["auto", "rtl"]}
    colors = {}
    try:
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
                "features": [{"name": "prefers-color-scheme", "value": scheme}]})
            colors[scheme] = driver.execute_script(
                "const s = getComputedStyle(document.querySelector('#answer .sp-view'));"
                "return [s.color, s.backgroundColor, getComputedStyle(document.body).color]")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    # The view takes the host's look (issue 27): its text colour, no background of its
    # own; this host page declares no color-scheme, so the OS preference changes nothing.
    for color, background, host_color in colors.values():
        assert color == host_color and background == "rgba(0, 0, 0, 0)", colors
