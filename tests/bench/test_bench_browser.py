"""`python -m bench --browser` end to end on a tiny trace (headless Chromium, and
with --engine in Firefox and WebKit).

Asserts what the mode produced, never how fast: the machine is shared.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench import browser_bench
from bench.engines import browser, engine_missing, fresh_tab

from .helpers_bench import delivered, steady_model

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def _missing(engine: str = "chromium") -> str | None:
    if not (ROOT / "vendor/pyodide/pyodide.mjs").exists():
        return "vendor/pyodide/pyodide.mjs missing: run scripts/setup --browser"
    return engine_missing(engine)


def test_browser_mode_plays_a_trace_through_the_page(tmp_path: Path) -> None:
    if missing := _missing():
        pytest.fail(missing)
    model = steady_model(150, 1.5, unit="ab🇯🇵 ")
    trace = delivered("tiny", model)
    data = browser_bench.run_browser([trace], ["streampace", "naive", "store"], cold_runs=0,
                                     out=tmp_path)
    runs = {r["strategy"]: r for r in data["runs"]}
    assert set(runs) == {"streampace", "naive", "store"}
    for name, r in runs.items():
        assert r["faithful"], name
        assert r["missing"] == 0, name
        assert r["frames_logged"] > 10, name
        assert r["py_ms_p50"] is not None and r["py_ms_p50"] >= 0, name
        assert r["longtask_observer_error"] is None, name
        # The whole-frame probe ran: every frame's cost, long frames observed.
        assert r["probe_errors"] == [], name
        assert r["frame_n"] > 10 and r["frame_p50_ms"] > 0, name
        assert r["loaf_n"] >= 0 and r["page"] == "bench", name
    assert runs["streampace"]["broken_reveals"] == 0
    # naive paints each socket message whole; the pacer spreads each over many frames
    assert runs["naive"]["commits"] == runs["naive"]["client"]["batches"]
    assert runs["streampace"]["scheduler"]["applies"] > 3 * runs["naive"]["client"]["batches"]
    # The headless store is paced the same way (no DOM view).
    assert runs["store"]["scheduler"]["applies"] > 3 * runs["naive"]["client"]["batches"]
    assert data["boot"]["warm_ms"], "every page load is a boot sample"
    assert (tmp_path / "browser.md").is_file() and (tmp_path / "browser.json").is_file()


def test_browser_mode_plays_a_trace_into_the_demo_and_the_embed_throttled(
        tmp_path: Path) -> None:
    if missing := _missing():
        pytest.fail(missing)
    model = steady_model(150, 1.5, unit="ab ")
    trace = delivered("tiny", model)
    data = browser_bench.run_browser([trace], ["streampace"], cold_runs=0, out=tmp_path,
                                     cpu=2.0, pages=("demo", "embed"))
    assert not data["runs"], "no bench-page runs when only the demo and the embed are asked"
    pages = {r["page"]: r for r in data["pages"]}
    assert set(pages) == {"demo", "embed"}
    for page, r in pages.items():
        assert r["probe_errors"] == [], page
        assert r["frame_n"] > 10, page
        assert r["answer_chars"] == 3 * 225, page
    assert data["meta"]["cpu"] == 2.0
    assert "Whole frame at 2× CPU" in (tmp_path / "browser.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("engine", ["firefox", "webkit"])
def test_browser_mode_in_another_engine_paces_on_its_frames(tmp_path: Path, engine: str) -> None:
    if missing := _missing(engine):
        pytest.fail(missing)
    trace = delivered("tiny", steady_model(150, 1.5, unit="ab🇯🇵 "))
    data = browser_bench.run_browser([trace], ["streampace"], cold_runs=0, out=tmp_path,
                                     engine=engine)
    (run,) = data["runs"]
    assert run["faithful"] and run["missing"] == 0 and run["broken_reveals"] == 0
    # Grown on many frames, from frames: the fallback timeout never drained.
    assert run["growth_frames"] > 10 and run["largest_step"] > 0
    assert run["scheduler"]["fallback_drains"] == 0
    assert data["meta"]["engine"] == engine
    assert (tmp_path / f"browser-{engine}.md").is_file()
    side = browser_bench.engines_markdown({engine: data})
    assert "tiny" in side and "growth frames" in side


def test_settle_is_the_benchs_unless_given_and_zero_asks_at_once() -> None:
    from types import SimpleNamespace

    from bench.whole_frame import SETTLE_S

    assert browser_bench._settle(SimpleNamespace(settle=None)) == SETTLE_S
    assert browser_bench._settle(SimpleNamespace()) == SETTLE_S
    assert browser_bench._settle(SimpleNamespace(settle=0.0)) == 0.0
    assert browser_bench._settle(SimpleNamespace(settle=2)) == 2.0
    with pytest.raises(SystemExit, match="at least 0"):
        browser_bench._settle(SimpleNamespace(settle=-1.0))


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _served(root: Path) -> Iterator[str]:
    handler = functools.partial(_QuietFiles, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(5)


_KEEP_JS = "window.kept = Array.from({length: 400000}, (_, i) => ({i, s: 'x' + i}));"


def _heap_mb(driver: Any) -> float:
    return float(driver.execute_cdp_cmd("Runtime.getHeapUsage", {})["usedSize"]) / 1e6


def test_a_page_in_a_fresh_tab_has_a_heap_of_its_own(tmp_path: Path) -> None:
    """The bench plays each page in a fresh tab: in the tab of an earlier page of the
    same site, the earlier page's objects stay in the heap the next page's garbage
    collections work on."""
    if missing := _missing():
        pytest.fail(missing)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.html").write_text(f"<!doctype html><p>{name}</p>",
                                               encoding="utf-8")
    with _served(tmp_path) as base, browser("chromium", prefix="streampace-tab-") as driver:
        driver.get(f"{base}/a.html")
        driver.execute_script(_KEEP_JS)
        kept = _heap_mb(driver)
        assert kept > 15
        driver.get(f"{base}/b.html")  # the same tab: a's objects are still there
        assert _heap_mb(driver) > kept / 2
        earlier = set(driver.window_handles)
        fresh_tab(driver)
        driver.get(f"{base}/c.html")
        assert len(driver.window_handles) == 1
        assert driver.current_window_handle not in earlier
        assert driver.execute_script("return document.body.textContent") == "c"
        assert _heap_mb(driver) < kept / 4
