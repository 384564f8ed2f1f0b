"""Keyboard use of the demo and the embed: Stop, copy buttons, focus left alone."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .browser_harness import BOOT_TIMEOUT_S, PageServer, free_port, serving, wait_for

pytestmark = pytest.mark.browser

# Installed in the page: the id (or tag) of the focused element, every frame.
FOCUS_LOG = (
    "window.__focus = []; const tick = () => { const a = document.activeElement;"
    " window.__focus.push(a ? (a.id || a.className || a.tagName) : null);"
    " if (window.__focus.length < 100000) requestAnimationFrame(tick); };"
    " requestAnimationFrame(tick);")


def tab_until(driver: Any, selector: str, limit: int) -> int:
    """Press Tab until the focused element matches `selector`; how many presses (or -1)."""
    for presses in range(1, limit + 1):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script("return document.activeElement.matches(arguments[0])",
                                 selector):
            return presses
    return -1


@pytest.fixture(scope="module")
def demo_page(driver: Any, runtime_ready: None) -> Iterator[str]:
    port = free_port()
    with serving([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                 port) as origin:
        driver.get(origin + "/?speed=1")
        wait_for(driver, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
                 BOOT_TIMEOUT_S)
        yield origin


def test_stop_is_reachable_labelled_and_focus_stays_while_streaming(
        driver: Any, demo_page: str) -> None:
    Select(driver.find_element(By.ID, "scenario")).select_by_visible_text("Long answer")
    prompt = driver.find_element(By.ID, "prompt")
    prompt.click()
    driver.execute_script(FOCUS_LOG)
    prompt.send_keys(Keys.CONTROL, Keys.ENTER)
    wait_for(driver, "return document.querySelector('#paced .sp-view')"
             ".getAttribute('data-run') === 'running'", 30)
    wait_for(driver, "return document.querySelectorAll('#paced .sp-message').length > 1"
             " && document.querySelector('#paced .sp-view').textContent.length > 400", 30)
    # Streaming moved no focus: every frame so far had the prompt focused.
    assert set(driver.execute_script("return window.__focus")) == {"prompt"}
    stop = driver.find_element(By.ID, "cancel")
    assert stop.accessible_name == "Stop" and stop.is_enabled()
    assert tab_until(driver, "#cancel", 5) > 0, "Stop is not reachable with Tab"
    driver.execute_script(FOCUS_LOG)
    driver.execute_script("return new Promise((r) => setTimeout(r, 500))")
    assert set(driver.execute_script("return window.__focus")) == {"cancel"}
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_for(driver, "return document.querySelector('#paced .sp-view')"
             ".getAttribute('data-run') === 'stopped'", 30)
    # The disabled Stop hands the focus to Run, not to the page's start.
    wait_for(driver, "return document.activeElement.id === 'run'", 10)


CODE_RUN = "Some code:\n\n```python\nprint(1)\nprint(2)\n```\n\nAnd more text after it.\n"


def test_copy_buttons_are_reachable_and_streaming_leaves_focus_alone(
        driver: Any, page_server: PageServer) -> None:
    driver.get(page_server.url("/tests/browser/pages/stream.html?format=markdown&sid=kb"))
    wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
    # A host input before the view, focused while the answer streams.
    driver.execute_script(
        "const i = document.createElement('input'); i.id = 'host-input';"
        " i.setAttribute('aria-label', 'Host field');"
        " document.getElementById('answer').before(i); i.focus();" + FOCUS_LOG)
    sid = "kb"
    batches = [[{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                {"type": "TEXT_MESSAGE_START", "messageId": "k1", "role": "assistant"}]]
    batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": "k1", "delta": CODE_RUN[i:i + 6]}]
                for i in range(0, len(CODE_RUN), 6)]
    batches.append([{"type": "TEXT_MESSAGE_END", "messageId": "k1"},
                    {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    page_server.sessions.push_spaced(sid, batches, 20)
    wait_for(driver, "return document.querySelector('#answer .sp-view')"
             ".getAttribute('data-run') === 'finished'", 60)
    assert set(driver.execute_script("return window.__focus")) == {"host-input"}
    presses = tab_until(driver, "#answer button.sp-copy", 10)
    assert presses > 0, "the copy button is not reachable with Tab"
    copy = driver.switch_to.active_element
    assert copy.accessible_name == "Copy code"
    # Shown while it has keyboard focus (it is hidden until hover or focus).
    assert driver.execute_script(
        "return getComputedStyle(document.activeElement).opacity") == "1"
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_for(driver, "return document.activeElement.hasAttribute('data-copied')", 10)
