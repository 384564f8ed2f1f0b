"""Streamed Markdown through the real embed in headless Chromium.

The page is served WITHOUT a CSP here, so an injected script or handler would
really run: the XSS corpus must produce zero calls of `window.__xss`.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from streampace.markdown import render_html

from tests.markdown.commonmark_spec import normalise
from tests.markdown.xss_corpus import PAYLOADS

from .browser_harness import (
    BOOT_TIMEOUT_S,
    PageServer,
    ScriptedSessions,
    add_init_script,
    build_app,
    serve_app,
    wait_for,
)

pytestmark = pytest.mark.browser

DOC = """# Streamed *Markdown*

Paced text with **bold**, `code`, ~~old~~ and a [link](https://example.com/a "A").
A bare URL: https://example.org/x.

- one
- two with *em*
  - nested

1. first
2. second

| event | paced? |
|:------|-------:|
| TEXT  | yes    |
| TOOL  | no     |

```python
def f(x):
    return x * 2
```

> quoted **text**

- [ ] open task
- [x] done task

Final paragraph.
"""


@pytest.fixture(scope="module")
def open_server(runtime_ready: None, engine: str) -> Iterator[PageServer]:
    sessions = ScriptedSessions()
    with serve_app(build_app(sessions, None)) as port:
        yield PageServer(port, sessions)


@pytest.fixture(scope="module")
def md_page(driver: Any, open_server: PageServer) -> Any:
    # Counts any payload that runs; installed before any page script.
    # (In WebKit it runs once the page has loaded, before Python has rendered anything.)
    add_init_script(driver, (
        "() => { window.__xssHits = []; window.__xss = (n) => window.__xssHits.push(n);"
        " window.alert = (m) => window.__xssHits.push('alert:' + m); }"))
    # Source heading levels (heading=off): the DOM is compared with the one-shot
    # render; test_reading_browser.py tests the levels under the page's outline.
    driver.get(open_server.url(
        "/tests/browser/pages/stream.html?sid=md-boot&format=markdown&heading=off"))
    wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
    return open_server


def ev_run(sid: str) -> dict:
    return {"type": "RUN_STARTED", "threadId": sid, "runId": "r1"}


def ev_end(sid: str) -> dict:
    return {"type": "RUN_FINISHED", "threadId": sid, "runId": "r1"}


def message(mid: str, text: str, pieces: int, rng: random.Random) -> list[list[dict]]:
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(pieces - 1))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    batches = [[{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}]]
    batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": p}]
                for p in parts if p]
    batches.append([{"type": "TEXT_MESSAGE_END", "messageId": mid}])
    return batches


def switch(driver: Any, sid: str) -> None:
    driver.execute_script("window.streampace.switchSession(arguments[0]);", f"/ws/sessions/{sid}")


def body_html(driver: Any, mid: str) -> str:
    # Without the presentation the renderer adds to blocks (dir="auto", and CSSOM
    # styles that make code blocks and tables scroll inside), without the copy
    # buttons (view chrome), the sections blocks are grouped in and the boxes a code
    # block's lines are grouped in: the tree itself.
    return driver.execute_script(
        "const n = document.querySelector(`#answer [data-id='${arguments[0]}'] .sp-markdown`);"
        "if (!n) return null; const c = n.cloneNode(true);"
        "for (const b of c.querySelectorAll('button.sp-copy')) b.remove();"
        "for (const s of c.querySelectorAll(':scope > .sp-section')) {"
        " s.replaceWith(...s.firstElementChild.childNodes); }"
        "for (const s of c.querySelectorAll('pre > code > .sp-code-lines')) {"
        " s.replaceWith(...s.childNodes); }"
        "for (const e of c.querySelectorAll('[dir], [style]')) {"
        " e.removeAttribute('dir'); e.removeAttribute('style'); }"
        "return c.innerHTML;", mid)


def record_copies(driver: Any) -> None:
    """The Clipboard API needs a user gesture and permission: record the calls instead
    (in window.__copied)."""
    driver.execute_script(
        "window.__copied = [];"
        "Object.defineProperty(navigator, 'clipboard', {configurable: true,"
        " value: {writeText: (t) => { window.__copied.push(t); return Promise.resolve(); }}});")


def wait_done(driver: Any, mid: str, timeout: float = 60) -> None:
    wait_for(driver, "const n = document.querySelector(`#answer [data-id='${arguments[0]}']`);"
             " return n && n.getAttribute('data-state') === 'done'", timeout, mid)


def play_run(md_page: Any, driver: Any, sid: str, mid: str, text: str, pieces: int,
             seed: int, gap_ms: int = 15) -> None:
    """Stream `text` as one run of message `mid` in `pieces` parts `gap_ms` apart,
    and wait until the page has shown the run's end."""
    batches = message(mid, text, pieces, random.Random(seed))
    batches[0] = [ev_run(sid), *batches[0]]
    batches[-1] = [*batches[-1], ev_end(sid)]
    md_page.sessions.push_spaced(sid, batches, gap_ms)
    wait_done(driver, mid)


@pytest.mark.engines
def test_the_warm_up_lays_a_markdown_sample_out_and_leaves_nothing(driver: Any,
                                                                    md_page: Any) -> None:
    """browser/warm.py's first step: the sample built as the view builds an
    answer's Markdown, laid out in the mount (the page's fonts), taken out in the
    same task: nothing of it left in the document."""
    wait_for(driver, "const w = window.streampace.stats().warmUp; return !!(w && w.done)",
             BOOT_TIMEOUT_S)
    warm = driver.execute_script("return window.streampace.stats().warmUp")
    assert warm["laidOut"] and not warm["failed"]
    left = driver.execute_script(
        "return {hidden: document.querySelectorAll('.sp-view[aria-hidden], [inert]').length,"
        " views: document.querySelectorAll('#answer > .sp-view').length,"
        " sample: document.body.textContent.includes('A heading')}")
    assert left == {"hidden": 0, "views": 1, "sample": False}


@pytest.mark.engines
def test_streamed_markdown_dom_equals_the_one_shot_render(driver: Any, md_page: Any) -> None:
    sid = "md-render"
    switch(driver, sid)
    play_run(md_page, driver, sid, "m1", DOC, 40, 3)
    shown = body_html(driver, "m1")
    assert normalise(shown) == normalise(render_html(DOC))
    facts = driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='m1'] .sp-markdown\");"
        "return {h1: b.querySelectorAll('h1').length, th: b.querySelectorAll('th').length,"
        " code: b.querySelector('pre > code').className,"
        " rel: b.querySelector('a').getAttribute('rel'),"
        " boxes: b.querySelectorAll('input[type=checkbox][disabled]').length,"
        " format: b.parentNode.getAttribute('data-format'), raw: b.textContent.includes('**')}")
    assert facts == {"h1": 1, "th": 2, "code": "language-python",
                     "rel": "noopener noreferrer nofollow", "boxes": 2, "format": "markdown",
                     "raw": False}


# An indented code block and a display formula, both read line by line while
# open (markdown/indented.py, open_math.py), then the same in list items
# (item_leaf.py): the code grows before its last line break (insertData),
# non-ASCII and astral text in nodes of its own (UTF-16 offsets).
LEAVES = "Before.\n\n" + "".join(
    f"    line {i}: x = `a` **b** 👩‍💻 𝔸 日本語\n" + ("\n" if i % 5 == 4 else "")
    for i in range(24)) + "\nBetween.\n\n$$\n" + "".join(
    f"r_{i} = \\frac{{a_{i}}}{{b}} * x \\\\\n" for i in range(12)) + "$$\n\nAfter.\n" + (
    "\n1. Run:\n\n" + "".join(f"       item {i}: x[`a` **b** 𝔸 日本\n" for i in range(10))
    + "2. The sum:\n   $$\n" + "".join(f"   s_{i} = [a, *b \\\\\n" for i in range(8))
    + "   $$\n\nEnd.\n")


@pytest.mark.engines
def test_streamed_indented_code_and_formula_equal_the_one_shot_render(driver: Any,
                                                                       md_page: Any) -> None:
    sid = "md-leaves"
    switch(driver, sid)
    play_run(md_page, driver, sid, "m1", LEAVES, 90, 5)
    assert normalise(body_html(driver, "m1")) == normalise(render_html(LEAVES))


def test_final_block_keeps_its_node_and_selection_for_100_more_frames(
        driver: Any, md_page: Any) -> None:
    sid = "md-stable"
    switch(driver, sid)
    sessions = md_page.sessions
    sessions.push(sid, [ev_run(sid),
                        {"type": "TEXT_MESSAGE_START", "messageId": "s1", "role": "assistant"},
                        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "s1",
                         "delta": "# Stable title\n\nA first paragraph that is final.\n\n"}])
    wait_for(driver, "return document.querySelectorAll(\"#answer [data-id='s1'] p\").length"
             " === 1 && document.querySelector(\"#answer [data-id='s1'] p\").textContent"
             ".endsWith('final.')", 30)
    driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='s1'] .sp-markdown\");"
        "const blocks = b.querySelectorAll('.sp-section-blocks > *');"
        "window.__h = blocks[0]; window.__p = blocks[1];"
        "const r = document.createRange(); r.selectNodeContents(window.__p);"
        "const s = getSelection(); s.removeAllRanges(); s.addRange(r);"
        "window.__frames0 = window.__rec.frames.length;")
    words = [f"word{i} **b{i}** " if i % 12 else "\n\nNew paragraph " for i in range(160)]
    batches = [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": "s1", "delta": w}] for w in words]
    sessions.push_spaced(sid, batches, 20)
    wait_for(driver, "return window.__rec.frames.length - window.__frames0 > 100", 60)
    same = driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='s1'] .sp-markdown\");"
        "const blocks = b.querySelectorAll('.sp-section-blocks > *');"
        "return [blocks[0] === window.__h, blocks[1] === window.__p,"
        " window.__p.isConnected, getSelection().toString()]")
    assert same == [True, True, True, "A first paragraph that is final."]
    sessions.push(sid, [{"type": "TEXT_MESSAGE_END", "messageId": "s1"}, ev_end(sid)])
    wait_done(driver, "s1")
    stats = driver.execute_script("return window.streampace.stats().markdownDom")
    assert stats["created"] > 0


def test_xss_corpus_never_executes_and_reads_literally(driver: Any, md_page: Any) -> None:
    sid = "md-xss"
    switch(driver, sid)
    rng = random.Random(5)
    batches: list[list[dict]] = [[ev_run(sid)]]
    for i, payload in enumerate(PAYLOADS):
        batches += message(f"x{i}", payload, 4, rng)
    batches.append([ev_end(sid)])
    md_page.sessions.push_spaced(sid, batches, 5)
    wait_done(driver, f"x{len(PAYLOADS) - 1}", 90)
    time.sleep(0.5)  # an onerror / onload would fire by now
    result = driver.execute_script(
        "const root = document.querySelector('#answer');"
        "const bad = [];"
        "for (const el of root.querySelectorAll('*')) {"
        "  for (const a of el.attributes)"
        "    if (/^on/i.test(a.name)) bad.push(el.tagName + ' ' + a.name);"
        "  if (/^(SCRIPT|IFRAME|SVG|STYLE|FORM|BUTTON|DETAILS|OBJECT|EMBED)$/i.test(el.tagName)"
        "      && !el.classList.contains('sp-reasoning')"  # ours: reasoning, jump, copy
        "      && !el.classList.contains('sp-jump-button')"
        "      && !el.classList.contains('sp-copy')) bad.push(el.tagName);"
        "}"
        # What the browser itself would open: the resolved URL's scheme.
        "const hrefs = [...root.querySelectorAll('[href],[src],[formaction]')]"
        "  .map(e => new URL(e.getAttribute('href') || e.getAttribute('src') || '',"
        "                    location.href).protocol);"
        "return {hits: window.__xssHits, bad, hrefs,"
        " imgs: [...root.querySelectorAll('img')].map(i => i.getAttribute('src')),"
        " texts: [...root.querySelectorAll('.sp-markdown')].map(n => n.textContent)};")
    assert result["hits"] == []
    assert result["bad"] == []
    assert result["hrefs"] and set(result["hrefs"]) <= {"http:", "https:", "mailto:"}
    assert result["imgs"] == []  # no image from another origin loads by default
    assert len(result["texts"]) == len(PAYLOADS)
    # Raw HTML payloads read literally, tags and all.
    for payload, text in zip(PAYLOADS, result["texts"], strict=True):
        if payload.startswith("<script>") or payload.startswith("<img src=x"):
            assert payload in text, (payload, text)


def test_text_format_shows_the_source_and_reasoning_stays_plain(driver: Any,
                                                                 md_page: Any) -> None:
    sid = "md-text"
    driver.execute_script(
        "const d = document.createElement('div'); d.id = 'plain'; document.body.append(d);"
        "window.__plain = window.streampace.mount({target: d, stream: arguments[0],"
        " format: 'text'});", f"/ws/sessions/{sid}")
    wait_for(driver, "return window.__plain.controller !== null", 30)
    src = "**not bold** and `not code`"
    md_page.sessions.push(sid, [
        ev_run(sid),
        {"type": "TEXT_MESSAGE_START", "messageId": "p1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "p1", "delta": src},
        {"type": "TEXT_MESSAGE_END", "messageId": "p1"}, ev_end(sid)])
    wait_for(driver, "const n = document.querySelector('#plain .sp-message .sp-text');"
             " return n && n.textContent === arguments[0]", 30, src)
    assert driver.execute_script("return document.querySelectorAll('#plain strong').length") == 0
    driver.execute_script("window.__plain.destroy()")

    sid = "md-reason"
    switch(driver, sid)
    md_page.sessions.push(sid, [
        ev_run(sid),
        {"type": "REASONING_START", "messageId": "rs"},
        {"type": "REASONING_MESSAGE_START", "messageId": "rm", "role": "assistant"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "rm", "delta": "think **hard**"},
        {"type": "REASONING_MESSAGE_END", "messageId": "rm"},
        {"type": "REASONING_END", "messageId": "rs"},
        {"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "t1", "delta": '{"q": "**x**"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "t1"}, ev_end(sid)])
    wait_for(driver, "const n = document.querySelector('#answer .sp-tool-args');"
             " return n && n.textContent === '{\"q\": \"**x**\"}'", 30)
    reasoning = driver.execute_script(
        "return document.querySelector('#answer .sp-reasoning .sp-text').textContent")
    assert reasoning == "think **hard**"
    assert driver.execute_script("return document.querySelector('#answer .sp-tool-args')"
                                 ".tagName") == "PRE"


RICH = """Code, math and prices:

```python
def area(r: float) -> float:
    return 3.14 * r ** 2  # circle
```

Inline $e^{i\\pi} + 1 = 0$, and it costs $5 or $10.

$$
\\frac{a}{b} = \\sqrt{x^2 + 1}
$$

Done.
"""


def test_highlighted_code_copy_button_and_math_in_chromium(driver: Any, md_page: Any) -> None:
    sid = "md-rich"
    switch(driver, sid)
    record_copies(driver)
    play_run(md_page, driver, sid, "r1", RICH, 30, 8)
    assert normalise(body_html(driver, "r1")) == normalise(render_html(RICH))
    facts = driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='r1'] .sp-markdown\");"
        "const maths = [...b.querySelectorAll('math')];"
        "const boxes = maths.map(m => { const r = m.getBoundingClientRect();"
        "  return [m.namespaceURI, m.getAttribute('display'), r.width, r.height]; });"
        "const kw = b.querySelector('pre code .sp-hl-k');"
        "const btn = b.querySelector('pre > button.sp-copy'); btn.click();"
        "return {boxes, kw: kw && kw.textContent, kwColor: kw && getComputedStyle(kw).color,"
        " classes: [...new Set([...b.querySelectorAll('pre code span')].map(s => s.className))],"
        " copied: window.__copied, code: b.querySelector('pre code').textContent,"
        " prices: b.textContent.includes('$5 or $10'), mfrac: !!b.querySelector('mfrac')};")
    assert [(ns, disp) for ns, disp, _w, _h in facts["boxes"]] == [
        ("http://www.w3.org/1998/Math/MathML", None),
        ("http://www.w3.org/1998/Math/MathML", "block")]
    assert all(w > 0 and h > 0 for _ns, _d, w, h in facts["boxes"]), facts["boxes"]
    assert facts["kw"] == "def" and facts["mfrac"] and facts["prices"]
    assert {"sp-hl-k", "sp-hl-t", "sp-hl-n", "sp-hl-c", "sp-hl-f"} <= set(facts["classes"])
    assert facts["copied"] == [facts["code"]]
    assert facts["code"] == ("def area(r: float) -> float:\n"
                             "    return 3.14 * r ** 2  # circle\n")


HIDDEN = ("Paste this:\n\n```\necho safe\x1b[201~\x08rm -rf x\r\n"
          "access = \"user\u202e \u2066// admin\u2069 \u2066\"\n```\n")


def test_the_copy_button_copies_what_the_block_shows(driver: Any, md_page: Any) -> None:
    """Issue 33 item 8: ESC (the end of a terminal's bracketed paste), backspace and
    bidi overrides went to the clipboard without showing in the block."""
    sid = "md-hidden"
    switch(driver, sid)
    record_copies(driver)
    play_run(md_page, driver, sid, "h1", HIDDEN, 5, 9)
    facts = driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='h1'] .sp-markdown\");"
        "b.querySelector('pre > button.sp-copy').click();"
        "return {copied: window.__copied, code: b.querySelector('pre code').textContent};")
    assert "\x1b" in facts["code"] and "\u202e" in facts["code"]  # the block has them ...
    assert facts["copied"] == ["echo safe[201~rm -rf x\naccess = \"user // admin \"\n"]


NOTES = """A claim[^1] and a second one[^src].

Repeated[^1].

[^1]: The first note, with `code`.

[^src]: A source
    on two lines.
"""


def test_footnotes_link_both_ways_with_ids_private_to_the_message(driver: Any,
                                                                    md_page: Any) -> None:
    sid = "md-notes"
    switch(driver, sid)
    play_run(md_page, driver, sid, "n1", NOTES, 25, 4)
    facts = driver.execute_script(
        "const b = document.querySelector(\"#answer [data-id='n1'] .sp-markdown\");"
        "const refs = [...b.querySelectorAll('sup.footnote-ref a')];"
        "const target = (a) => document.getElementById(a.getAttribute('href').slice(1));"
        "const back = [...b.querySelectorAll('a.footnote-backref')];"
        "return {refs: refs.map(a => [a.textContent, !!target(a) && b.contains(target(a)),"
        "  target(a) && target(a).tagName]),"
        " back: back.map(a => [!!target(a), target(a) && target(a).closest('sup') !== null]),"
        " last: b.lastElementChild.tagName, ids: [...b.querySelectorAll('[id]')].map(e => e.id),"
        " notes: [...b.querySelectorAll('section.footnotes li')].map(li => li.textContent)};")
    assert facts["refs"] == [["1", True, "LI"], ["src", True, "LI"], ["1", True, "LI"]]
    assert facts["back"] == [[True, True], [True, True]]
    assert facts["last"] == "SECTION"
    assert facts["ids"] and all(i.startswith("spmd") for i in facts["ids"])
    assert facts["notes"][0].startswith("The first note, with code.")
    assert "on two lines." in facts["notes"][1]


LONG = "".join(
    f"## Part {i}\n\nSome *words* in part {i}.\n\n- one {i}\n- two {i}\n\n"
    f"```text\nline {i}\n```\n\n" if i % 4 == 0 else
    f"Paragraph {i}: words that wrap across the line, with **bold** and `code`.\n\n"
    for i in range(48))

_SECTIONS_JS = """
const b = document.querySelector("#answer [data-id='l1'] .sp-markdown");
const sections = [...b.children].filter(e => e.classList.contains('sp-section'));
const holders = sections.map(s => s.firstElementChild);
// The same blocks without sections, beside it (same width, same styles).
const flat = b.cloneNode(true);
for (const s of flat.querySelectorAll(':scope > .sp-section')) {
  s.replaceWith(...s.firstElementChild.childNodes);
}
b.after(flat);
const tops = (body) => {
  const top = body.getBoundingClientRect().top;
  return [...body.querySelectorAll('h2, p, ul, pre')].map(
    e => Math.round(e.getBoundingClientRect().top - top));
};
const select = (node) => {
  const r = document.createRange(); r.selectNodeContents(node);
  const s = getSelection(); s.removeAllRanges(); s.addRange(r);
  const text = s.toString(); s.removeAllRanges(); return text;
};
const sealed = sections.filter(s => s.classList.contains('sp-sealed'));
const out = {
  blocks: holders.map(h => h.children.length),
  positions: [...new Set(holders.map(h => getComputedStyle(h).position))],
  sealed: sealed.length,
  tops: tops(b), flatTops: tops(flat),
  height: b.getBoundingClientRect().height, flatHeight: flat.getBoundingClientRect().height,
  text: select(b), flatText: select(flat), content: b.textContent,
  flatContent: flat.textContent, flatInner: flat.innerText};
// innerText leaves out what a sealed section far from the view skips (CSS
// Containment: skipped contents are not rendered text); shown, the same text.
for (const s of sealed) s.classList.remove('sp-sealed');
out.inner = b.innerText;
for (const s of sealed) s.classList.add('sp-sealed');
flat.remove();
holders[0].querySelector('pre > button.sp-copy').click();
out.copied = window.__copied;
return out;
"""


@contextlib.contextmanager
def page_stylesheet(driver: Any) -> Iterator[None]:
    """The page's real stylesheet (js_shim/streampace.css) while the block runs."""
    driver.execute_script(
        "const l = document.createElement('link'); l.rel = 'stylesheet'; l.id = 'sp-css';"
        " l.href = '/js_shim/streampace.css'; document.head.append(l);")
    try:
        wait_for(driver, "const l = document.getElementById('sp-css');"
                 " return !!(l && l.sheet && l.sheet.cssRules.length)", 30)
        yield
    finally:
        driver.execute_script("document.getElementById('sp-css').remove();")


def played_in_page_style(md_page: Any, driver: Any, sid: str, mid: str, text: str,
                         pieces: int, seed: int, facts_js: str) -> Any:
    """`text` played as message `mid` under the page's stylesheet, copies recorded; its
    tree checked against the one-shot render; what `facts_js` returns then."""
    switch(driver, sid)
    record_copies(driver)
    with page_stylesheet(driver):
        play_run(md_page, driver, sid, mid, text, pieces, seed, gap_ms=10)
        assert normalise(body_html(driver, mid)) == normalise(render_html(text))
        return driver.execute_script(facts_js)


def test_a_long_answer_in_sections_reads_selects_and_lays_out_as_one_flow(
        driver: Any, md_page: Any) -> None:
    """The page groups an answer's blocks in sections of 16 (markdown_dom.py): the
    text, its selection, copying and where every block sits are as without them."""
    facts = played_in_page_style(md_page, driver, "md-sections", "l1", LONG, 40, 8,
                                 _SECTIONS_JS)
    # 48 parts, every fourth of four blocks: 84 blocks, 16 (or, when more than one
    # block was open as one filled, a few more) to a section.
    blocks = facts["blocks"]
    assert sum(blocks) == 84 and len(blocks) >= 5 and min(blocks[:-1]) >= 16
    assert facts["positions"] == ["relative"]
    assert facts["sealed"] == len(blocks) - 2  # all but the first and the open one
    assert facts["tops"] == facts["flatTops"] and len(facts["tops"]) == 84
    assert facts["height"] == facts["flatHeight"]
    assert facts["text"] == facts["flatText"] and "Paragraph 47:" in facts["text"]
    assert facts["content"] == facts["flatContent"]
    assert facts["inner"] == facts["flatInner"]
    assert facts["copied"] == ["line 0\n"]


# A long code block, highlighted, then a plain one in a list item: lines in boxes.
_CODE_LINES = ["def frame(pending):", "    rate = clamp(pending / 250, 20, 800)  # step",
               "    if rate > 400:", "        return 'fast'", "", "class A:",
               "    x = \"日本 👩‍💻\"", "\tcount += 1"]
BOXED = ("Code:\n\n```python\n" + "\n".join(_CODE_LINES[i % 8] for i in range(70))
         + "\n```\n\n1. And:\n\n   ```\n"
         + "".join(f"   plain line {i}\n" for i in range(40)) + "   ```\n\nDone.\n")

_CODE_BOXES_JS = """
const b = document.querySelector("#answer [data-id='c1'] .sp-markdown");
const codes = [...b.querySelectorAll('pre > code')];
const flat = b.cloneNode(true);
for (const s of flat.querySelectorAll('pre > code > .sp-code-lines')) {
  s.replaceWith(...s.childNodes);
}
b.after(flat);
const flatCodes = [...flat.querySelectorAll('pre > code')];
const select = (node) => {
  const r = document.createRange(); r.selectNodeContents(node);
  const s = getSelection(); s.removeAllRanges(); s.addRange(r);
  const text = s.toString(); s.removeAllRanges(); return text;
};
const size = (e) => { const r = e.getBoundingClientRect(); return [r.width, r.height]; };
const out = {
  boxes: codes.map(c => c.querySelectorAll(':scope > .sp-code-lines').length),
  display: [...new Set([...b.querySelectorAll('.sp-code-lines')].map(
    e => getComputedStyle(e).display))],
  sizes: codes.map(size), flatSizes: flatCodes.map(size),
  text: codes.map(select), flatText: flatCodes.map(select),
  content: codes.map(c => c.textContent)};
flat.remove();
codes[0].parentNode.querySelector('button.sp-copy').click();
out.copied = window.__copied;
return out;
"""


@pytest.mark.engines
def test_a_long_code_block_in_line_boxes_lays_out_selects_and_copies_as_one(
        driver: Any, md_page: Any) -> None:
    """The page puts a code block's lines in boxes of 16 (markdown_dom.py): its text,
    its size, what a selection of it holds and what its copy button copies are as
    without them."""
    facts = played_in_page_style(md_page, driver, "md-code-boxes", "c1", BOXED, 60, 6,
                                 _CODE_BOXES_JS)
    assert facts["boxes"][0] >= 70 // 16 // 2 and facts["boxes"][1] >= 40 // 16 // 2
    assert facts["display"] == ["block"]
    assert facts["sizes"] == facts["flatSizes"]
    assert facts["content"][0].count("\n") == 70 and facts["content"][1].count("\n") == 40
    assert facts["text"] == facts["flatText"]
    assert facts["copied"] == [facts["content"][0]]


# Every kind of block at section edges: headings, code, tables, rules, quotes,
# loose lists (a paragraph's margin inside), math.
MIXED = "".join(
    (f"## Part {i}\n\nSome *words* in part {i}.\n\n",
     f"- one {i}\n\n- two {i}, a loose list\n\n",
     f"```text\nline {i}\n```\n\n",
     f"| a | b |\n|---|---|\n| {i} | x |\n\n",
     "---\n\n",
     f"> quoted {i}\n>\n> and more\n\n",
     f"$$\nx_{i} = 1\n$$\n\n",
     f"Paragraph {i}: words that wrap across the line, with **bold** and `code`.\n\n",
     )[i % 8] + ("" if i % 3 else f"Closing words of part {i}.\n\n")
    for i in range(200))

_SCROLL_UP_JS = """
const done = arguments[arguments.length - 1];
const frames = (n) => new Promise(r => { const f = () => n-- ? requestAnimationFrame(f) : r();
                                          requestAnimationFrame(f); });
(async () => {
  // Until a quarter of the answer shows, then read from the top: the sections
  // finished from now on are finished (and sealed) far below the view.
  const body = () => document.querySelector("#answer [data-id='u1'] .sp-markdown");
  while (!body() || body().querySelectorAll('.sp-section').length < 4) await frames(1);
  window.scrollTo(0, 0);
  const atTop = [];
  while (document.querySelector("#answer [data-id='u1']").getAttribute('data-state') !== 'done') {
    window.scrollTo(0, 0); atTop.push(window.scrollY); await frames(1);
  }
  await frames(4);
  done(atTop.every(y => y === 0));
})();
"""

_SEALED_JS = """
const b = document.querySelector("#answer [data-id='u1'] .sp-markdown");
const sections = [...b.querySelectorAll(':scope > .sp-section')];
const top = () => b.getBoundingClientRect().top;
// The sections as they are (sealed ones far below the view skipped): their own
// boxes only, which does not make the browser lay out a skipped one's blocks.
const box = (e) => { const r = e.getBoundingClientRect(); return [Math.round(r.top - top()),
                                                                 Math.round(r.bottom - top())]; };
const skipped = sections.map(s => !s.firstElementChild.checkVisibility(
  {contentVisibilityAuto: true}));
const sealed = sections.map(s => s.classList.contains('sp-sealed'));
const boxes = sections.map(box);
const height = b.getBoundingClientRect().height;
// The same blocks without sections, beside it: where each section's last block ends.
const flat = b.cloneNode(true);
for (const s of flat.querySelectorAll(':scope > .sp-section')) {
  s.replaceWith(...s.firstElementChild.childNodes);
}
b.after(flat);
const flatTop = flat.getBoundingClientRect().top;
const flatKids = [...flat.children];
let at = 0;
const flatEnds = sections.map(s => {
  at += s.firstElementChild.children.length;
  return Math.round(flatKids[at - 1].getBoundingClientRect().bottom - flatTop);
});
const flatHeight = flat.getBoundingClientRect().height;
flat.remove();
return {skipped, sealed, ends: boxes.map(b => b[1]), flatEnds, height, flatHeight};
"""

_SCROLL_DOWN_JS = """
const done = arguments[arguments.length - 1];
const b = document.querySelector("#answer [data-id='u1'] .sp-markdown");
const sections = [...b.querySelectorAll(':scope > .sp-section')];
const frames = (n) => new Promise(r => { const f = () => n-- ? requestAnimationFrame(f) : r();
                                          requestAnimationFrame(f); });
(async () => {
  // Down through the answer a view at a time: every section is shown on the way.
  const heights = [];
  const seen = new Set();
  for (let y = 0; y <= document.documentElement.scrollHeight; y += innerHeight / 2) {
    window.scrollTo(0, y); await frames(2);
    sections.forEach((s, i) => { if (s.firstElementChild.checkVisibility(
      {contentVisibilityAuto: true})) seen.add(i); });
    heights.push(b.getBoundingClientRect().height);
  }
  done({heights, seen: seen.size, sections: sections.length,
        ends: sections.map(s => Math.round(s.getBoundingClientRect().bottom
                                           - b.getBoundingClientRect().top))});
})();
"""


@pytest.mark.engines
def test_sections_sealed_below_a_reader_scrolled_up_keep_their_size(
        driver: Any, md_page: Any) -> None:
    """While the reader is at the top, the sections finished far below are sealed
    (content-visibility: auto, markdown_dom.py): skipped, each keeps the size it
    was laid out at, so the answer is as tall as without sections, every section
    ends where its last block does without them, and scrolling down through it
    moves nothing."""
    sid = "md-sealed"
    switch(driver, sid)
    try:
        with page_stylesheet(driver):
            batches = message("u1", MIXED, 120, random.Random(11))
            batches[0] = [ev_run(sid), *batches[0]]
            batches[-1] = [*batches[-1], ev_end(sid)]
            md_page.sessions.push_spaced(sid, batches, 25)
            assert driver.execute_async_script(_SCROLL_UP_JS)  # the reader stayed at the top
            assert normalise(body_html(driver, "u1")) == normalise(render_html(MIXED))
            facts = driver.execute_script(_SEALED_JS)
            down = driver.execute_async_script(_SCROLL_DOWN_JS)
    finally:
        driver.execute_script("window.scrollTo(0, 0);")
    sealed, skipped = facts["sealed"], facts["skipped"]
    # Every section but the first and the last is sealed; far below the view, skipped.
    assert sealed == [False] + [True] * (len(sealed) - 2) + [False]
    assert sum(skipped) >= len(sealed) // 2 and not skipped[0]
    assert facts["ends"] == facts["flatEnds"]
    assert facts["height"] == facts["flatHeight"]
    # Shown again on the way down: the same size, the answer never grows or shrinks.
    assert down["seen"] == down["sections"]
    assert set(down["heights"]) == {facts["height"]}
    assert down["ends"] == facts["ends"]
