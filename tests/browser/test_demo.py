"""The demo page (index.html, a PyScript page) the way a newcomer runs it.

1. Static files: `python3 -m http.server` in the repo root. The page finds no
   streampace server and streams from the in-page simulated source.
2. `streampace serve`: the same page on the server's WebSocket session stream,
   under the server's CSP.

Both through PyScript (vendor/pyscript/), with Python restored from the memory
snapshot by our interpreter module (js_shim/pyscript.js).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .browser_harness import (
    BOOT_TIMEOUT_S,
    INIT_SCRIPTS_RUN_FIRST,
    ROOT,
    add_init_script,
    console_errors,
    engine_of,
    free_port,
    make_driver,
    remove_init_script,
    requested_urls,
    serving,
    wait_for,
)

pytestmark = pytest.mark.browser

# Both panes show the run's end (the "as delivered" pane shows its batches from
# animation frames, in slices each frame affords: it may end a frame or two later).
RUN_DONE = ("return ['#paced', '#delivered'].every((p) => document.querySelector(p + ' .sp-view')"
            ".getAttribute('data-run') === arguments[0])")


@pytest.fixture(scope="module")
def static_origin() -> Iterator[str]:
    port = free_port()
    with serving([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                 port) as origin:
        yield origin


@pytest.fixture(scope="module")
def demo(driver: Any, static_origin: str) -> Any:
    requested_urls(driver)
    # Boot progress is visible instead of a blank area while Python loads.  Read at
    # DOMContentLoaded (recorded by a script the browser runs before the page's):
    # a snapshot boot can be done before driver.get() returns and a test could look.
    script = add_init_script(driver, (
        "() => document.addEventListener('DOMContentLoaded', () => {"
        " const b = document.getElementById('boot');"
        " window.__bootShown = b && !b.hidden ?"
        " document.getElementById('boot-text').textContent : null; })"))
    driver.get(static_origin + "/?speed=3")
    wait_for(driver, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
             BOOT_TIMEOUT_S)
    boot_text = driver.execute_script("return window.__bootShown")
    urls = requested_urls(driver)
    remove_init_script(driver, script)
    return {"boot_text": boot_text, "urls": urls}


def demo_stats(driver: Any) -> dict:
    return driver.execute_script("return window.streampaceDemo.stats()")


def run_scenario(driver: Any, label: str, timeout: float = 90) -> None:
    Select(driver.find_element(By.ID, "scenario")).select_by_visible_text(label)
    prompt = driver.find_element(By.ID, "prompt")
    prompt.clear()
    prompt.send_keys(f"Demo run: {label}")
    # Keyboard only: Ctrl+Enter in the prompt runs.
    prompt.send_keys(Keys.CONTROL, Keys.ENTER)
    wait_for(driver, "return document.querySelector('#paced .sp-view')"
             ".getAttribute('data-run') === 'running'", 30)
    wait_for(driver, "return ['#paced', '#delivered'].every((p) => ['finished', 'error',"
             " 'stopped'].includes(document.querySelector(p + ' .sp-view')"
             ".getAttribute('data-run')))", timeout)


def pane_text(driver: Any, pane: str) -> str:
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' .sp-message .sp-text')]"
        ".map(n => n.textContent).join('\\n')", f"#{pane}")


def booted_through_pyscript(driver: Any, urls: list[str], origin: str) -> None:
    """PyScript's core ran the page's Python, on the snapshot our interpreter restored."""
    for path in ("/js_shim/pyscript.js", "/vendor/pyscript/core.js", "/pyscript.toml",
                 "/vendor/snapshot/streampace.snap.gz"):
        assert origin + path in urls, path
    assert driver.execute_script(
        "return document.querySelector('script[type=py]').target !== undefined")
    assert driver.execute_script("return window.streampaceDemo.snapshot") is True


@pytest.mark.engines
def test_boot_progress_is_shown_while_python_loads(driver: Any, demo: Any) -> None:
    if not INIT_SCRIPTS_RUN_FIRST[engine_of(driver)]:
        pytest.skip("WebKitGTK's WebDriver cannot run a script before the page's own "
                    "(no CDP, no BiDi preload scripts): DOMContentLoaded is not observable")
    assert demo["boot_text"], "no boot progress was shown"


_CHART_STATE_JS = """
const done = arguments[arguments.length - 1];
import(new URL('demo/demo.js', location.href).href).then(
  ({ chart }) => done({ colors: chart.colors, pushed: chart.pushed }));
"""


def test_chart_reads_its_colours_before_the_first_answer(driver: Any, demo: Any) -> None:
    """Read in the first draw, in a frame the views had just changed, the colours
    forced a style recalculation of the page; they are read while it is idle."""
    wait_for(driver, "return import(new URL('demo/demo.js', location.href).href)"
             ".then(({ chart }) => chart.colors !== null)", 30)
    state = driver.execute_async_script(_CHART_STATE_JS)
    assert state["pushed"] == 0  # no answer has drawn it yet
    assert all(state["colors"][k] for k in ("shown", "backlog", "lag")), state


@pytest.mark.engines
def test_static_files_boot_to_simulated_source(driver: Any, demo: Any, static_origin: str) -> None:
    booted_through_pyscript(driver, demo["urls"], static_origin)
    assert driver.execute_script("return window.streampaceDemo.mode") == "sim"
    assert driver.find_element(By.ID, "boot").get_attribute("hidden") is not None
    assert "in-page simulation" in driver.find_element(By.ID, "source").text
    run_scenario(driver, "Fast model")
    paced, delivered = pane_text(driver, "paced"), pane_text(driver, "delivered")
    assert len(paced) > 500 and paced == delivered
    assert driver.execute_script(RUN_DONE, "finished")
    # The run opens with the server's echo of the prompt (the RunFramer's), not the
    # model's own "You asked…".
    user = driver.execute_script(
        "return [...document.querySelectorAll('#paced .sp-message[data-role=user] .sp-text')]"
        ".map((e) => e.textContent)")
    assert user == ["Demo run: Fast model"] and "You asked" not in paced
    # The paced pane committed on animation frames only (never the fallback timeout:
    # the tab is visible), so its commits are bounded by the engine's frame rate.
    st = demo_stats(driver)
    assert st["scheduler"]["fallback_drains"] == 0
    demo["fast_run"] = st
    # The live chart is drawn (some non-transparent pixels on the canvas) once it is
    # on the screen: below the panes in a small window, it is not drawn until then.
    driver.execute_script("document.getElementById('chart').scrollIntoView()")
    wait_for(driver,
             "const c = document.getElementById('chart');"
             "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
             "let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n > 100;",
             10)


# The demo's chart class on a strip of its own in a window (as in index.html):
# samples pushed one by one, each drawn at once (incrementally), then the whole
# chart redrawn; both images of what the window shows returned, with how many
# draws redrew everything, how often the strip's end was reached, and where the
# strip stands under its window after the incremental draws.
_CHART_JS = """
const done = arguments[arguments.length - 1];
import(new URL('demo/demo.js', location.href).href).then((m) => {
  const frame = document.createElement('div');
  frame.style.cssText = 'width: 480px; height: 120px; overflow: hidden';
  const canvas = document.createElement('canvas');
  canvas.style.cssText = 'display: block; width: 200%; height: 100%';
  frame.append(canvas);
  document.body.append(frame);
  const chart = new m.Chart(canvas, 160);
  chart.colors = { shown: '#3366cc', backlog: '#cc6600', lag: '#aa2288' };
  chart.width = 480;
  chart.height = 120;
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const draws = 400;
  for (let i = 0; i < draws; i++) {
    // Values under the scales' floors (8, 50, 300): the scales never change.
    chart.push(Math.floor(rand() * 8), Math.floor(rand() * 50), rand() * 300);
    chart.draw();
  }
  const read = () => chart.shownImage().data;
  const incremental = read();
  const fullDraws = chart.fullDraws;
  const copies = chart.copies;
  // The strip's pixel at the left edge of what shownImage reads, in CSS pixels
  // from the strip's left; and how far left of the window the strip stands.
  const dpr = window.devicePixelRatio || 1;
  const readFrom = (chart.end - canvas.width / 2) / dpr;
  const moved = frame.getBoundingClientRect().left - canvas.getBoundingClientRect().left;
  const stripWidth = canvas.getBoundingClientRect().width;
  chart.draw(true);
  const whole = read();
  frame.remove();
  // Pixels painted in the whole redraw; pixels whose colour differs visibly.
  let painted = 0, differ = 0;
  for (let i = 0; i < whole.length; i += 4) {
    if (whole[i + 3]) painted++;
    let d = 0;
    for (let k = 0; k < 4; k++) d = Math.max(d, Math.abs(whole[i + k] - incremental[i + k]));
    if (d > 48) differ++;
  }
  done({ painted, differ, fullDraws, draws, copies, readFrom, moved, stripWidth });
});
"""


def test_chart_draws_only_new_samples_and_matches_a_whole_redraw(
        driver: Any, demo: Any) -> None:
    """The chart draws each frame's new samples only (the rest is moved, not
    redrawn: a whole redraw per frame was rasterised in the frame's commit, and a
    copy of the drawn bitmap per frame cost a millisecond at 4x CPU), and what
    it shows is what drawing the whole history at once shows."""
    got = driver.execute_async_script(_CHART_JS)
    assert got["painted"] > 2000, got  # the bars and lines are there
    # Only the first draw redrew everything (no scale, size or colour changed after).
    assert got["fullDraws"] == 1, got
    # The strip (twice the window's 480 pixels, three pixels a sample) reached
    # its end once in 160 samples: copied twice over 399 incremental draws.
    assert got["copies"] == 2, got
    # What is compared below is what the window shows: the strip stands moved
    # left by the pixels before that region.
    assert got["stripWidth"] == 960 and abs(got["moved"] - got["readFrom"]) < 0.5, got
    # Same picture: pixels whose colour differs visibly are a small share of what is
    # painted (anti-aliased line edges at a redrawn region's border may differ by a
    # shade: ~1 % in Chromium; a wrong shift or a lost sample differs on most of it).
    assert got["differ"] <= got["painted"] * 3 // 100, got


# The chart class on a canvas far below the screen: samples pushed while it is
# off the screen, then the canvas moved into view. (Each step waits for frames:
# an IntersectionObserver reports at the next rendering.)
_CHART_OFF_SCREEN_JS = """
const done = arguments[arguments.length - 1];
const frames = (n) => new Promise((go) => {
  const step = () => (n-- > 0 ? requestAnimationFrame(step) : go());
  step();
});
import(new URL('demo/demo.js', location.href).href).then(async (m) => {
  const frame = document.createElement('div');
  // Fixed: off and then on the screen wherever the page is scrolled.
  frame.style.cssText = 'position: fixed; left: 0; top: 20000px; width: 480px; height: 120px;'
    + ' overflow: hidden';
  const canvas = document.createElement('canvas');
  canvas.style.cssText = 'display: block; width: 200%; height: 100%';
  frame.append(canvas);
  document.body.append(frame);
  const chart = new m.Chart(canvas, 160);
  chart.colors = { shown: '#3366cc', backlog: '#cc6600', lag: '#aa2288' };
  let draws = 0;
  const draw = chart.draw.bind(chart);
  chart.draw = (whole) => { draws++; return draw(whole); };
  await frames(3);
  for (let i = 0; i < 50; i++) {
    chart.push(i % 8, i % 50, i * 5);
    await frames(1);
  }
  const hidden = draws;
  frame.style.top = '0px';
  await frames(4);
  const d = chart.shownImage().data;
  let painted = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i]) painted++;
  frame.remove();
  done({ hidden, shown: draws, painted });
});
"""


def test_chart_off_the_screen_is_drawn_once_it_shows(driver: Any, demo: Any) -> None:
    """Off the screen (below the panes on a phone) the chart draws nothing while
    samples come; once it shows, it is drawn with them."""
    got = driver.execute_async_script(_CHART_OFF_SCREEN_JS)
    assert got["hidden"] == 0, got
    assert got["shown"] == 1, got
    assert got["painted"] > 500, got


def test_each_pane_is_a_layout_boundary_of_fixed_size(driver: Any, demo: Any) -> None:
    """The panes do not grow with the answer: each is contained (its text lays out
    and paints within it, not the page and the other pane) and scrolls inside,
    following the text to its end, and
    each seals its finished Markdown sections (the "as delivered" pane too: far from
    its view they are neither laid out nor painted)."""
    run_scenario(driver, "Long answer", timeout=180)
    # The long answer's sections (the pane may show an earlier run's answer above it).
    read = ("return ['paced', 'delivered'].map((id) => { const p = document.getElementById(id);"
            " const answer = [...p.querySelectorAll('.sp-markdown')].pop();"
            " const sections = [...answer.querySelectorAll(':scope > .sp-section')];"
            " return { contain: getComputedStyle(p).contain, height: p.offsetHeight,"
            " scrolls: p.scrollHeight > p.clientHeight, sections: sections.length,"
            " below: p.querySelector('.sp-view').getBoundingClientRect().bottom"
            " - p.getBoundingClientRect().top - p.clientTop - p.clientHeight,"
            " sealed: sections.filter((s) => s.classList.contains('sp-sealed')"
            " && getComputedStyle(s).contentVisibility === 'auto').length }; })")
    # A section is sealed two frames after it was finished: those the run's end
    # finished are sealed a few frames after the run shows "finished".
    for _ in range(100):  # bounded: 100 reads, 50 ms apart
        panes = driver.execute_script(read)
        if all(p["sections"] > 3 and p["sealed"] >= p["sections"] - 2 for p in panes):
            break
        time.sleep(0.05)
    assert all(p["contain"] == "strict" for p in panes), panes
    # Every section of the answer but the first and the last (the open one) is sealed.
    assert all(p["sections"] > 3 and p["sealed"] >= p["sections"] - 2 for p in panes), panes
    assert panes[0]["height"] == panes[1]["height"] and panes[0]["height"] > 100, panes
    assert all(p["scrolls"] for p in panes), panes
    # Each pane followed its text to the end: its view's bottom is in sight (the
    # two views' followers share one ResizeObserver: browser/scroll.py).
    assert all(p["below"] <= 1 for p in panes), panes
    assert pane_text(driver, "paced") == pane_text(driver, "delivered")


@pytest.mark.engines
def test_paced_pane_commits_on_more_frames_than_the_batches(driver: Any, demo: Any) -> None:
    """Same stream, two renderings: the paced one committed on many more frames than
    the socket delivered batches (which "as delivered" paints, each on the next frame,
    or in slices over a few frames on a slow engine: its commits are not the batches)."""
    if "fast_run" not in demo:
        run_scenario(driver, "Fast model")
        demo["fast_run"] = demo_stats(driver)
    st = demo["fast_run"]
    assert st["commits"] > st["client"]["batches"], (
        engine_of(driver), st["commits"], st["client"], st["deliveredCommits"])


def test_pyscript_reads_pyscript_toml_as_setup_does(driver: Any, demo: Any) -> None:
    """PyScript's own small TOML parser and tomllib (scripts/setup_runtime) agree
    on the one configuration, comments and table included."""
    import tomllib

    seen = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/vendor/pyscript/core.js').then((m) => done(m.config.py));")
    assert seen == tomllib.loads((ROOT / "pyscript.toml").read_text(encoding="utf-8"))


def test_stop_cancels_the_run(driver: Any, demo: Any) -> None:
    Select(driver.find_element(By.ID, "scenario")).select_by_visible_text("Long answer")
    driver.find_element(By.ID, "run").click()
    wait_for(driver, "return !document.getElementById('cancel').disabled", 30)
    driver.find_element(By.ID, "cancel").click()
    wait_for(driver, RUN_DONE, 30, "stopped")  # a stop is not an error (issue 23)
    status = driver.execute_script(
        "return document.querySelector('#paced .sp-status').textContent")
    assert status == "Stopped"
    assert pane_text(driver, "paced") == pane_text(driver, "delivered")


def test_dark_and_light_follow_the_color_scheme(driver: Any, demo: Any) -> None:
    colors = []
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})
        colors.append(driver.execute_script(
            "return [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert colors[0] != colors[1]


@pytest.mark.engines
def test_demo_requests_stay_on_the_origin(driver: Any, demo: Any, static_origin: str) -> None:
    urls = demo["urls"] + requested_urls(driver)
    assert any(u.endswith("/vendor/pyodide/pyodide.asm.wasm") for u in urls)
    ws_origin = static_origin.replace("http://", "ws://")
    foreign = [u for u in urls if not (u.startswith(static_origin + "/") or
                                       u.startswith(ws_origin + "/") or
                                       u.startswith(("data:", "blob:")))]
    assert foreign == []
    # PyScript's py-editor plugin is left out (pyscript.toml and index.html's
    # <mpy-config>): once loaded it polls the whole document every 250 ms.
    assert any("/vendor/pyscript/error-" in u for u in urls)  # its other plugins load
    assert not any("/vendor/pyscript/py-editor-" in u for u in urls)


def test_reasoning_tool_calls_and_status_have_their_own_elements(driver: Any, demo: Any) -> None:
    run_scenario(driver, "Tool call + reasoning")
    counts = driver.execute_script(
        "const p = document.querySelector('#paced');"
        "return [p.querySelectorAll('.sp-reasoning').length, p.querySelectorAll('.sp-tool').length,"
        " p.querySelector('.sp-status').textContent,"
        " p.querySelector('.sp-timeline').getAttribute('aria-busy'),"
        " p.querySelectorAll('.sp-tool-result:not([hidden])').length]")
    reasoning, tools, status, busy, results = counts
    assert reasoning >= 1 and tools >= 2 and results >= 1
    assert status == "Done" and busy == "false"
    assert pane_text(driver, "paced") == pane_text(driver, "delivered")


@pytest.mark.engines
def test_forced_reconnect_in_page_loses_and_duplicates_nothing(driver: Any, demo: Any) -> None:
    run_scenario(driver, "Forced reconnect", timeout=120)
    st = demo_stats(driver)
    assert st["connection"]["opens"] >= 3  # first connect + two forced drops
    assert st["client"]["duplicates"] == 0
    assert pane_text(driver, "paced") == pane_text(driver, "delivered")


def test_selection_survives_streaming(driver: Any, demo: Any) -> None:
    Select(driver.find_element(By.ID, "scenario")).select_by_visible_text("Slow model")
    driver.find_element(By.ID, "run").click()
    streaming = "#paced .sp-message[data-role=assistant][data-state=streaming] .sp-text"
    wait_for(driver, "const n = document.querySelector(arguments[0]);"
             " return n && n.textContent.length > 40", 30, streaming)
    # The first 30 characters, across however many Text nodes hold them (a
    # delta may be its own Text node).
    selected = driver.execute_script(
        "const box = document.querySelector(arguments[0]);"
        "const w = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);"
        "const r = document.createRange(); let left = 30, n = w.nextNode();"
        "r.setStart(n, 0);"
        "while (n && n.length < left) { left -= n.length; n = w.nextNode(); }"
        "r.setEnd(n, left);"
        "const s = getSelection(); s.removeAllRanges(); s.addRange(r); return s.toString();",
        streaming)
    wait_for(driver, RUN_DONE, 60, "finished")
    assert driver.execute_script("return getSelection().toString()") == selected
    assert len(selected) == 30


def test_demo_warm_boot_starts_the_simulation(driver: Any, demo: Any, static_origin: str) -> None:
    driver.get(static_origin + "/?speed=3")
    wait_for(driver, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
             BOOT_TIMEOUT_S)
    assert driver.execute_script("return window.streampaceDemo.mode") == "sim"


def script_src(url: str) -> str:
    """The script-src directive of the CSP `url` is served with."""
    with urllib.request.urlopen(url, timeout=10) as response:
        csp = response.headers["Content-Security-Policy"]
    return next(d for d in csp.split(";") if d.strip().startswith("script-src"))


@pytest.mark.engines
def test_demo_on_streampace_serve(runtime_ready: None, engine: str) -> None:
    probe = subprocess.run([sys.executable, "-m", "streampace", "serve", "--help"],
                           cwd=ROOT, capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("`streampace serve` is not available in this checkout")
    port = free_port()
    cmd = [sys.executable, "-m", "streampace", "serve", "--port", str(port), "--speed", "2"]
    with serving(cmd, port) as origin:
        # 'unsafe-eval' (PyScript's core needs it) on PyScript pages' documents only.
        assert "'unsafe-eval'" in script_src(origin + "/")
        for path in ("/examples/embed.html", "/js_shim/pyscript.js", "/vendor/pyscript/core.js"):
            assert "'unsafe-eval'" not in script_src(origin + path), path
        drv = make_driver(engine)
        try:
            drv.get(origin + "/")
            not_found = ("return performance.getEntriesByType('resource').filter(e =>"
                         " e.responseStatus === 404 && !e.name.includes('favicon'))"
                         ".map(e => e.name)")
            wait_for(drv, "return (window.streampaceDemo && window.streampaceDemo.ready) ||"
                     " (" + not_found[len("return "):] + ").length > 0", BOOT_TIMEOUT_S)
            missing = drv.execute_script(not_found)
            assert missing == [], f"streampace serve does not serve these page files: {missing}"
            assert drv.execute_script("return window.streampaceDemo.mode") == "server"
            urls = requested_urls(drv)
            booted_through_pyscript(drv, urls, origin)
            run_scenario(drv, "Fast model")
            assert drv.execute_script(RUN_DONE, "finished")
            paced = pane_text(drv, "paced")
            assert len(paced) > 500 and paced == pane_text(drv, "delivered")
            ws_origin = origin.replace("http://", "ws://")
            urls += requested_urls(drv)
            assert urls and all(u.startswith((origin + "/", ws_origin + "/", "data:", "blob:"))
                                for u in urls), urls
            severe = [e for e in console_errors(drv) if "favicon" not in e]
            assert severe == [], json.dumps(severe, indent=1)
        finally:
            drv.quit()
