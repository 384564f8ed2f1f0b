"""What a screen reader hears, and the answer's place in the page's outline.

The view's polite live region (`.sp-announce`) is watched by a MutationObserver
the test installs: every paragraph added to it is one announcement, recorded
with the answer's visible text at that moment, so the test sees both what is
said and that it follows the paced text, not the network.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streampace.reading.sentences import split_sentences

from .browser_harness import BOOT_TIMEOUT_S, PageServer, wait_for

pytestmark = pytest.mark.browser

# Twelve sentences, with an abbreviation, decimals and a quotation in them.
SENTENCES = [
    "Streamed text arrives in bursts.",
    "Dr. Rivera measured 3.5 ms between the bursts on a fast link.",
    "A reader who listens needs whole sentences, not fragments.",
    "Each sentence is said once, after it is shown.",
    "The pacing keeps the text readable for the eye.",
    "The live region keeps it readable for the ear.",
    "Long answers take a while, e.g. a minute or two.",
    "Nothing is said per token or per frame.",
    "Paragraph ends count as sentence ends too.",
    "A pause of a second says what waits.",
    'The last words are "heard in order."',
    "Then the run's end is said once.",
]
ANSWER = (" ".join(SENTENCES[:4]) + "\n\n" + " ".join(SENTENCES[4:8]) + "\n\n"
          + " ".join(SENTENCES[8:]) + "\n")

# Installed after boot: one record per announcement (a node added to the region).
WATCH = """
const root = document.querySelector(arguments[0]);
const region = root.querySelector('.sp-announce');
const said = (window.__said = []);
const visible = () => [...root.querySelectorAll('.sp-message[data-role=assistant] .sp-text')]
  .map((n) => n.textContent).join(' ');
window.__watch = new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    said.push({t: performance.now(), text: n.textContent, visible: visible()});
  }
});
window.__watch.observe(region, {childList: true});
"""


def fold(text: str) -> str:
    return " ".join(text.split())


def run_events(sid: str, mid: str, text: str, piece: int = 9) -> list[list[dict]]:
    batches = [[{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
                {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}]]
    batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text[i:i + piece]}]
                for i in range(0, len(text), piece)]
    batches.append([{"type": "TEXT_MESSAGE_END", "messageId": mid},
                    {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    return batches


def one_batch(sid: str, mid: str, text: str, piece: int = 9) -> list[dict]:
    """A whole run as one batch."""
    return [event for batch in run_events(sid, mid, text, piece) for event in batch]


def regions_and_levels(driver: Any, root: str) -> list:
    """[live regions in the view at `root`, the tags of its answer's headings]."""
    return driver.execute_script(
        "const v = document.querySelector(arguments[0] + ' .sp-view');"
        " return [v.querySelectorAll('[aria-live]').length,"
        " [...v.querySelectorAll('.sp-markdown :is(h1,h2,h3,h4,h5,h6)')]"
        ".map((h) => h.tagName)]", root)


@pytest.fixture(scope="module")
def reading_page(driver: Any, page_server: PageServer) -> Iterator[PageServer]:
    driver.get(page_server.url("/tests/browser/pages/stream.html?format=markdown"))
    wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
    yield page_server


def start(driver: Any, server: PageServer, sid: str) -> None:
    """Show session `sid` in the page's view and watch its live region afresh."""
    driver.execute_script("window.streampace.switchSession(arguments[0]);",
                          f"/ws/sessions/{sid}")
    wait_for(driver, "return ['open', 'attached'].includes("
             "window.streampace.stats().connection.state)", 30)
    driver.execute_script("if (window.__watch) window.__watch.disconnect();" + WATCH, "#answer")


def said(driver: Any) -> list[dict]:
    return driver.execute_script("return window.__said")


def wait_run_end(driver: Any, root: str = "#answer") -> None:
    wait_for(driver, "const v = document.querySelector(arguments[0] + ' .sp-view');"
             " return v && v.getAttribute('data-run') === 'finished'", 60, root)


@pytest.mark.engines  # also in Firefox ESR and WebKitGTK (STREAMPACE_ENGINES selects)
def test_a_twelve_sentence_answer_is_heard_sentence_by_sentence(
        driver: Any, reading_page: PageServer) -> None:
    sid = "read-12"
    start(driver, reading_page, sid)
    region = driver.execute_script(
        "const r = document.querySelector('#answer .sp-announce');"
        " return [r.getAttribute('aria-live'), r.closest('.sp-timeline') === null,"
        " document.querySelector('#answer .sp-timeline').hasAttribute('aria-live'),"
        " document.querySelector('#answer .sp-status').getAttribute('role')]")
    assert region == ["polite", True, False, None]
    driver.execute_script(
        "window.__frames = 0; let last = 0; const tick = () => {"
        " const n = window.__rec.visibleText().length;"
        " if (n !== last) { window.__frames++; last = n; } requestAnimationFrame(tick); };"
        " requestAnimationFrame(tick);")
    reading_page.sessions.push_spaced(sid, run_events(sid, "a1", ANSWER), 25)
    wait_run_end(driver)
    wait_for(driver, "return window.__said.some((s) => s.text.includes('Done'))", 10)
    heard = said(driver)
    texts = [h["text"] for h in heard]
    joined = fold(" ".join(texts))
    found = [s for s in SENTENCES if s in joined]
    growth_frames = driver.execute_script("return window.__frames")
    assert len(found) >= 0.8 * len(SENTENCES), (texts, set(SENTENCES) - set(found))
    assert len(texts) <= len(SENTENCES) + 5, texts
    assert len(texts) < growth_frames / 3, \
        f"announced nearly per frame: {len(texts)} times, text grew on {growth_frames} frames"
    # Each sentence once; the run's end once, last.
    assert all(joined.count(s) == 1 for s in found), texts
    assert joined.count("Done") == 1 and texts[-1].endswith("Done."), texts
    # Said after it was shown: every sentence of an announcement was on screen.
    for record in heard:
        shown = fold(record["visible"])
        for sentence in split_sentences(record["text"]):
            if sentence not in ("Generating…", "Done."):
                assert sentence in shown, (sentence, shown[-200:])
    # The region keeps only the last few announcements.
    assert driver.execute_script(
        "return document.querySelector('#answer .sp-announce').children.length") <= 3


RICH = """## Setup

Install it first. Then run it.

- one item
- another item

```python
""" + "".join(f"print({i})\n" for i in range(12)) + """```

| name | value |
|------|-------|
| a    | 1     |
| b    | 2     |

$$
E = mc^2
$$

That is all.
"""


def test_code_tables_and_math_are_summaries_and_headings_sit_under_the_page(
        driver: Any, reading_page: PageServer) -> None:
    sid = "read-rich"
    start(driver, reading_page, sid)
    reading_page.sessions.push_spaced(sid, run_events(sid, "r1", RICH, piece=12), 15)
    wait_run_end(driver)
    wait_for(driver, "return window.__said.some((s) => s.text.includes('Done'))", 10)
    joined = fold(" ".join(h["text"] for h in said(driver)))
    for summary in ("code block, Python, 12 lines", "table, 2 columns, 2 rows", "math block"):
        assert joined.count(summary) == 1, joined
    for symbols in ("print(", "|", "mc", "```"):
        assert symbols not in joined, joined
    for words in ("Setup.", "Install it first.", "one item.", "That is all."):
        assert words in joined, joined
    # The test page's h1 is the nearest heading before the view: "##" (the
    # answer's highest level) becomes h2.
    levels = driver.execute_script(
        "return [...document.querySelectorAll('#answer .sp-markdown :is(h1,h2,h3,h4,h5,h6)')]"
        ".map((h) => h.tagName)")
    assert levels == ["H2"]


def test_reasoning_is_heard_only_once_opened(driver: Any, reading_page: PageServer) -> None:
    sid = "read-reason"
    start(driver, reading_page, sid)
    push = reading_page.sessions.push

    def reasoning(text: str) -> dict:
        return {"type": "REASONING_MESSAGE_CONTENT", "messageId": "rm", "delta": text}

    push(sid, [{"type": "RUN_STARTED", "threadId": sid, "runId": "r1"},
               {"type": "REASONING_START", "messageId": "rs"},
               {"type": "REASONING_MESSAGE_START", "messageId": "rm", "role": "assistant"},
               reasoning("Hidden thought one. Hidden thought two. ")])
    wait_for(driver, "const n = document.querySelector('#answer .sp-reasoning .sp-text');"
             " return n && n.textContent.includes('two.')", 30)
    driver.execute_script("return new Promise((r) => setTimeout(r, 1300))")  # past a pause
    assert "Hidden" not in " ".join(h["text"] for h in said(driver))
    # The reader closes and opens it again (keyboard: Enter on the summary).
    summary = driver.find_element("css selector", "#answer .sp-reasoning summary")
    summary.click()
    summary.click()
    assert driver.execute_script("return document.querySelector('#answer .sp-reasoning').open")
    push(sid, [reasoning("Heard thought three. Heard thought four. And")])
    wait_for(driver, "return window.__said.some((s) => s.text.includes('Heard thought three.'))",
             20)
    push(sid, [{"type": "REASONING_MESSAGE_END", "messageId": "rm"},
               {"type": "REASONING_END", "messageId": "rs"},
               {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}])
    wait_run_end(driver)
    wait_for(driver, "return window.__said.some((s) => s.text.includes('Done'))", 10)
    joined = fold(" ".join(h["text"] for h in said(driver)))
    assert "Hidden" not in joined and "Heard thought four." in joined, joined


def mount_extra(driver: Any, name: str, sid: str, options: str) -> None:
    """Another view on the page, in `div#name` after an `h3`, with mount `options` (JS)."""
    driver.execute_script(
        "const s = document.createElement('section'); const h = document.createElement('h3');"
        " h.textContent = 'A host section'; const d = document.createElement('div');"
        " d.id = arguments[0]; s.append(h, d); document.body.append(s);"
        " window['__' + arguments[0]] = window.streampace.mount("
        " Object.assign({target: d, stream: arguments[1], format: 'markdown'},"
        " JSON.parse(arguments[2])));", name, f"/ws/sessions/{sid}", options)
    wait_for(driver, "return window['__' + arguments[0]].controller !== null", 30, name)


OUTLINE = "# A\n\nText.\n\n### B\n\nText.\n\n## C\n\n#### D\n\nEnd.\n"


@pytest.mark.parametrize(("option", "levels"), [
    ("{}", ["H4", "H5", "H5", "H6"]),  # auto: one below the host's h3
    ('{"headingBase": "2"}', ["H2", "H3", "H3", "H4"]),
    ('{"headingBase": "off"}', ["H1", "H3", "H2", "H4"]),
])
def test_heading_levels_follow_the_host_outline(driver: Any, reading_page: PageServer,
                                                 option: str, levels: list[str]) -> None:
    name = "outline" + str(abs(hash(option)) % 10_000)
    sid = "read-" + name
    mount_extra(driver, name, sid, option)
    try:
        reading_page.sessions.push(sid, one_batch(sid, "h1", OUTLINE, 5))
        wait_run_end(driver, "#" + name)
        assert regions_and_levels(driver, "#" + name)[1] == levels
    finally:
        driver.execute_script("window['__' + arguments[0]].destroy();"
                              " document.getElementById(arguments[0]).parentElement.remove()",
                              name)


def test_announce_off_has_no_live_region(driver: Any, reading_page: PageServer) -> None:
    name = "quiet"
    sid = "read-quiet"
    mount_extra(driver, name, sid, '{"announce": false}')
    try:
        reading_page.sessions.push(sid, one_batch(sid, "q1", "One. Two. Three."))
        wait_run_end(driver, "#quiet")
        found = driver.execute_script(
            "const v = document.querySelector('#quiet .sp-view');"
            " return [v.querySelectorAll('[aria-live]').length,"
            " v.querySelector('.sp-status').getAttribute('role')]")
        assert found == [0, "status"]  # the status line says start and end, as before
    finally:
        driver.execute_script("window.__quiet.destroy();"
                              " document.getElementById('quiet').parentElement.remove()")


def test_the_custom_element_takes_announce_and_heading_base(
        driver: Any, reading_page: PageServer) -> None:
    sid = "read-element"
    driver.execute_script(
        "const e = document.createElement('streampace-view'); e.id = 'element-view';"
        " e.setAttribute('announce', 'off'); e.setAttribute('heading-base', '4');"
        " e.setAttribute('format', 'markdown'); e.setAttribute('stream', arguments[0]);"
        " document.body.append(e);", f"/ws/sessions/{sid}")
    try:
        wait_for(driver, "return !!document.querySelector('#element-view .sp-view')", 30)
        reading_page.sessions.push(sid, one_batch(sid, "e1", OUTLINE, 7))
        wait_run_end(driver, "#element-view")
        assert regions_and_levels(driver, "#element-view") == [0, ["H4", "H5", "H5", "H6"]]
    finally:
        driver.execute_script("document.getElementById('element-view').remove()")


def test_a_reconnect_mid_answer_says_nothing_twice(driver: Any,
                                                   reading_page: PageServer) -> None:
    sid = "read-drop"
    start(driver, reading_page, sid)
    batches = run_events(sid, "d1", ANSWER, piece=15)
    half = len(batches) // 2
    sessions = reading_page.sessions
    sessions.push_spaced(sid, batches[:half], 25)
    wait_for(driver, "return window.__said.length >= 2", 30)
    opens = driver.execute_script("return window.streampace.stats().connection.opens")
    sessions.drop(sid)
    for batch in batches[half:]:  # logged while the page is away: replayed on resume
        sessions.push(sid, batch)
    wait_for(driver, "return window.streampace.stats().connection.opens > arguments[0]", 30,
             opens)
    wait_run_end(driver)
    wait_for(driver, "return window.__said.some((s) => s.text.includes('Done'))", 10)
    joined = fold(" ".join(h["text"] for h in said(driver)))
    found = [s for s in SENTENCES if s in joined]
    assert len(found) >= 0.8 * len(SENTENCES), joined
    assert all(joined.count(s) == 1 for s in found), joined


def test_the_tag_reads_data_announce_and_data_heading_base(
        driver: Any, page_server: PageServer) -> None:
    sid = "read-tag"  # the session the page's tag names
    page_server.sessions.push(sid, one_batch(sid, "t1", OUTLINE, 9))
    driver.get(page_server.url("/tests/browser/pages/tag-options.html"))
    try:
        wait_run_end(driver)
        assert regions_and_levels(driver, "#answer") == [0, ["H5", "H6", "H6", "H6"]]
    finally:  # back to the page the module's other tests share
        driver.get(page_server.url("/tests/browser/pages/stream.html?format=markdown"))
        wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
