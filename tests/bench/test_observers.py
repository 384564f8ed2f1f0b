"""bench/observers.py: the page's MutationObserver callbacks, counted and timed."""

from __future__ import annotations

import json

import pytest

from bench.engines import browser, engine_missing
from bench.observers import WRAP_JS, report

_PY = {"n": 100, "mean": 2.0, "followerMs": 30.0}


def test_the_report_lists_the_observers_called_beside_the_frames_python() -> None:
    plays = [{"py": _PY, "observers": [
        {"maker": "/js_shim/pyscript.js < /vendor/pyscript/core.js", "calls": 90,
         "records": 180, "ms": 12.345},
        {"maker": "/demo/demo.js", "calls": 0, "records": 0, "ms": 0.0}]}]
    text = report("demo", "md_32k", 4.0, plays)
    assert text.splitlines()[0].startswith("### demo, md_32k, 4× CPU")
    assert "| 1 | frame callbacks (Python) | 100 | — | 200 |" in text
    assert "| 1 | followers (Python) | — | — | 30 |" in text
    assert ("| 1 | observer made by `/js_shim/pyscript.js < /vendor/pyscript/core.js` | 90 "
            "| 180 | 12.3 |") in text
    assert "demo.js" not in text  # never called


# An observer made through the wrapper, and one of a subclass the page defines:
# each mutation's callback counted while the probe is on, not before.
_OBSERVE_JS = """
const done = arguments[arguments.length - 1];
window.__probe = { on: false };
class Mine extends MutationObserver {}
const seen = [];
for (const Kind of [MutationObserver, Mine]) {
  new Kind((records) => seen.push(records.length)).observe(document.body, { childList: true });
}
document.body.append(document.createElement("p"));  // before the probe: not counted
setTimeout(() => {
  window.__probe.on = true;
  document.body.append(document.createElement("p"), document.createElement("p"));
  setTimeout(() => done(JSON.stringify({ seen, observers: window.__observers })), 0);
}, 0);
"""


def test_chromium_counts_each_observers_callbacks_while_the_probe_is_on() -> None:
    if missing := engine_missing("chromium"):
        pytest.fail(missing)
    with browser("chromium", prefix="streampace-observers-") as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WRAP_JS})
        driver.get("data:text/html,<body></body>")
        got = json.loads(driver.execute_async_script(_OBSERVE_JS))
    assert got["seen"] == [1, 1, 1, 1]  # the callbacks themselves still run, each time
    assert [(o["calls"], o["records"]) for o in got["observers"]] == [(1, 1), (1, 1)]
    assert all(o["ms"] >= 0 for o in got["observers"])
    # A script run by WebDriver has no URL on its stack.
    assert {o["maker"] for o in got["observers"]} == {"(no script on the stack)"}
