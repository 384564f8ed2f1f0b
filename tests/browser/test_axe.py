"""axe-core (npm, served from node_modules/ by the test server: offline) on every
way the view reaches a page — the demo, the embed tag, a PyScript page and
`<streampace-view>` — after a run with headings, lists, a table, code and math:
no violation of impact moderate or above."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from streampace.session.protocol import PROTOCOL_HEADER, PROTOCOL_VERSION

from .browser_harness import (
    BOOT_TIMEOUT_S,
    CSP,
    ROOT,
    PageServer,
    ScriptedSessions,
    build_app,
    serve_app,
    wait_for,
)

pytestmark = pytest.mark.browser

AXE = "node_modules/axe-core/axe.min.js"
# PyScript pages need 'unsafe-eval' (docs/browser.md, "CSP"): the policy
# `streampace serve` gives them; the other pages work under it too.
CSP_PYSCRIPT = CSP.replace("'wasm-unsafe-eval'", "'wasm-unsafe-eval' 'unsafe-eval'")
IMPACTS = ("moderate", "serious", "critical")

ANSWER = """# Brewing notes

Tea needs water at the right temperature, e.g. 80 °C for green tea.

## Steps

1. Heat the water.
2. Warm the pot.
3. Steep for $t = 3$ minutes.

- loose leaves
- a strainer with a [link](https://example.com/strainer)

| tea | °C | minutes |
|:----|---:|--------:|
| green | 80 | 2 |
| black | 95 | 4 |

```python
def steep(minutes):
    for m in range(minutes):
        print("steeping", m)
    return "ready"
```

$$
T(t) = T_0 + (T_1 - T_0) e^{-kt}
$$

> Good tea takes **time**.

That is all.
"""


@pytest.fixture(scope="module")
def axe_server(runtime_ready: None) -> Iterator[PageServer]:
    if not (ROOT / AXE).is_file():
        pytest.fail(f"{AXE} missing: run scripts/setup (npm ci installs axe-core)")
    sessions = ScriptedSessions()
    with serve_app(_says_streampace(build_app(sessions, CSP_PYSCRIPT))) as port:
        yield PageServer(port, sessions)


def _says_streampace(app: Any) -> Any:
    """Answer HTTP as `streampace serve` does (its protocol header), so the demo and
    the PyScript example take the scripted server as theirs instead of simulating."""
    header = (PROTOCOL_HEADER.lower().encode(), str(PROTOCOL_VERSION).encode())

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_header(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        await app(scope, receive, send_with_header)

    return wrapped


def run_batches(sid: str) -> list[list[dict]]:
    batches = [[{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}]]
    batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": ANSWER[i:i + 40]}]
                for i in range(0, len(ANSWER), 40)]
    batches.append([{"type": "TEXT_MESSAGE_END", "messageId": "a1"},
                    {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    return batches


def minted_session(server: PageServer, before: int, timeout: float = BOOT_TIMEOUT_S) -> str:
    """The id the scripted server minted for the page's /ws/sessions/new."""
    deadline = time.monotonic() + timeout
    while len(server.sessions.minted) <= before:
        if time.monotonic() > deadline:
            raise AssertionError("the page opened no session")
        time.sleep(0.05)
    return server.sessions.minted[before]


def violations(driver: Any) -> list[dict]:
    """axe-core's violations of impact moderate or above on the page as it is."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        " if (window.axe) { done(true); return; }"
        " const s = document.createElement('script'); s.src = arguments[0];"
        " s.onload = () => done(true); s.onerror = () => done(false);"
        " document.head.append(s);", "/" + AXE)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        " axe.run(document, {resultTypes: ['violations']})"
        ".then((r) => done({v: r.violations.map((x) => ({id: x.id, impact: x.impact,"
        " help: x.help, nodes: x.nodes.slice(0, 5).map((n) => n.target.join(' '))})),"
        " version: axe.version}))"
        ".catch((e) => done({error: String(e)}));")
    assert "error" not in result, result
    return [v for v in result["v"] if v["impact"] in IMPACTS]


def check_page(driver: Any, server: PageServer, path: str, view: str) -> None:
    """Load `path`, stream the rich answer into the session it opens, run axe."""
    before = len(server.sessions.minted)
    # A tab keeps the session it was given for the next page on this origin
    # (remember="tab"): each page here starts a conversation of its own.
    driver.execute_script("try { sessionStorage.clear(); } catch (e) {}")
    driver.get(server.url(path))
    try:
        sid = minted_session(server, before)
    except AssertionError:
        state = driver.execute_script(
            "return [document.body.dataset.source, document.body.innerText.slice(0, 300)]")
        raise AssertionError(f"the page opened no session: {state}") from None
    wait_for(driver, "return !!document.querySelector(arguments[0] + ' .sp-view')",
             BOOT_TIMEOUT_S, view)
    server.sessions.push_spaced(sid, run_batches(sid), 20)
    wait_for(driver, "const v = document.querySelector(arguments[0] + ' .sp-view');"
             " return v.getAttribute('data-run') === 'finished'"
             " && !!v.querySelector('.sp-markdown table')"
             " && !!v.querySelector('.sp-markdown math')", 60, view)
    found = violations(driver)
    assert found == [], found


@pytest.mark.engines  # Chromium, Firefox and WebKit (issue 32 item 4)
@pytest.mark.parametrize(("path", "view"), [
    ("/examples/pyscript.html", "#answer"),                   # a PyScript page
    ("/tests/browser/pages/a11y-element.html", "streampace-view"),  # the custom element
    ("/examples/embed.html", "#answer"),                      # the embed tag
    ("/", "#paced"),                                          # the demo
])
def test_no_moderate_or_worse_violation_after_a_rich_run(
        driver: Any, axe_server: PageServer, path: str, view: str) -> None:
    check_page(driver, axe_server, path, view)


@pytest.mark.engines
def test_axe_sees_a_planted_violation_in_the_view(driver: Any, axe_server: PageServer) -> None:
    """The control: axe runs on the view's content (a check that could not fail
    would prove nothing)."""
    check_page(driver, axe_server, "/tests/browser/pages/a11y-element.html", "streampace-view")
    driver.execute_script(
        "const b = document.createElement('button');"
        " document.querySelector('streampace-view .sp-markdown').append(b);")
    assert [v["id"] for v in violations(driver)] == ["button-name"]
