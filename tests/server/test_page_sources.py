"""The demo page (index.html, written by the browser side) streams from this server
for every source, in headless Chromium, under the server's CSP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import FakeUpstream, Serve, sse_event, sse_headers, write_raw

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
NEEDED = ("index.html", "vendor/pyodide/pyodide.mjs", "vendor/pyscript/core.js",
          "vendor/streampace.zip")

pytestmark = pytest.mark.browser
os.environ.setdefault("SE_MANAGER_PATH", "/nonexistent/selenium-manager-disabled")


def _missing() -> str | None:
    for rel in NEEDED:
        if not (ROOT / rel).is_file():
            return f"{rel} missing (scripts/setup)"
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return "chromium / chromedriver missing"
    return None


def _driver() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def _wait(driver: Any, script: str, timeout: float) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: d.execute_script(script))


def _agui(h: Any, body: dict) -> None:
    sse_headers(h)
    tid, rid = body["threadId"], body["runId"]
    events = [{"type": "RUN_STARTED", "threadId": tid, "runId": rid},
              {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": f"agui {i} 🙂 "}
               for i in range(40)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "a1"},
               {"type": "RUN_FINISHED", "threadId": tid, "runId": rid}]
    for e in events:
        write_raw(h, sse_event(e), pause_s=0.01)


def _openai(h: Any, body: dict) -> None:
    sse_headers(h)
    for i in range(40):
        write_raw(h, sse_event({"choices": [{"index": 0, "delta": {"content": f"oa {i} 日本 "},
                                             "finish_reason": None}]}), pause_s=0.01)
    write_raw(h, b"data: [DONE]\n\n")


@pytest.mark.parametrize("kind", ["replay", "agui", "openai"])
def test_demo_page_streams_from_each_source(serve: Serve, tmp_path: Path, kind: str) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    upstream = None
    if kind == "replay":
        path = tmp_path / "rec.jsonl"
        subprocess.run([sys.executable, "-m", "streampace", "record", "--scenario", "fast",
                        "-o", str(path)], check=True, timeout=60)
        source, expect = f"replay:{path}", None
    elif kind == "agui":
        upstream = FakeUpstream(_agui)
        source, expect = f"agui:{upstream.url}", "agui 39 🙂"
    else:
        upstream = FakeUpstream(_openai)
        source, expect = f"openai:{upstream.url}/v1", "oa 39 日本"
    server = serve(source, speed=4.0, model="m")
    driver = _driver()
    try:
        driver.get(server.url)
        _wait(driver, "return window.streampaceDemo && window.streampaceDemo.ready", 90)
        assert driver.execute_script("return window.streampaceDemo.mode") == "server"
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        prompt = driver.find_element(By.ID, "prompt")
        prompt.clear()
        prompt.send_keys(f"page on {kind}")
        prompt.send_keys(Keys.CONTROL, Keys.ENTER)
        _wait(driver, "const v = document.querySelector('#paced .sp-view');"
                      " return v && v.getAttribute('data-run') === 'finished'", 60)
        text = driver.execute_script(
            "return [...document.querySelectorAll('#paced .sp-message .sp-text')]"
            ".map(n => n.textContent).join('\\n')")
        delivered = driver.execute_script(
            "return [...document.querySelectorAll('#delivered .sp-message .sp-text')]"
            ".map(n => n.textContent).join('\\n')")
        assert text == delivered and len(text) > 100
        assert f"page on {kind}" in text
        if expect:
            assert expect in text
        severe = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
        if upstream is not None:
            upstream.close()
