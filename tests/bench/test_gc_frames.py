"""bench/gc_frames.py: V8's GC log read and put on the page's clock."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench.engines import browser, engine_missing
from bench.gc_frames import (
    frames_and_collections,
    on_page_clock,
    parse_line,
    parse_log,
    report_lines,
)

SCAVENGE = ("[10376:0x1024004e8000]      914 ms: Scavenge 2.7 (3.9) -> 2.1 (4.4) MB, pooled: "
            "0.0 MB, 3.75 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation "
            "failure; ")
REDUCE = ("[11564:0x3e6c004fc000]    38738 ms: Incremental Mark-Compact (reduce) 20.8 (26.7) "
          "-> 14.9 (16.7) MB, pooled: 0.0 MB, 115.67 / 0.05 ms (+ 5.1 ms in 4 steps since "
          "start of marking, biggest step 4.8 ms, walltime since start of marking 167 ms) "
          "(average mu = 0.987, current mu = 0.988) finalize incremental marking via task; "
          "GC in old space requested")
MARKER = ("[11564:0x3e6c004fc000]    29197 ms: Mark-Compact 17.4 (24.2) -> 14.7 (23.7) MB, "
          "pooled: 0.0 MB, 113.69 / 0.01 ms (average mu = 0.974, current mu = 0.797) testing; "
          "GC in old space requested")
NO_POOL = ("[7:0x1]   50 ms: Scavenge (during sweeping) 9.3 (11.1) -> 7.1 (10.8) MB, 0.48 / "
           "0.00 ms (average mu = 0.996, current mu = 0.996) allocation failure; ")


def test_a_gc_line_gives_its_kind_sizes_pause_and_reason() -> None:
    c = parse_line(REDUCE)
    assert c is not None
    assert (c.pid, c.isolate, c.v8_ms) == ("11564", "0x3e6c004fc000", 38738.0)
    assert c.kind == "Incremental Mark-Compact (reduce)"
    assert (c.before_mb, c.after_mb, c.pause_ms) == (20.8, 14.9, 115.67)
    assert c.reason == "finalize incremental marking via task"
    assert c.major and not c.marker
    s = parse_line(SCAVENGE)
    assert s is not None and s.kind == "Scavenge" and not s.major
    assert s.reason == "allocation failure" and s.pause_ms == 3.75
    m = parse_line(MARKER)
    assert m is not None and m.marker and m.pause_ms == 113.69
    old = parse_line(NO_POOL)  # V8 before the "pooled" field
    assert old is not None and old.kind == "Scavenge (during sweeping)" and old.pause_ms == 0.48


@pytest.mark.parametrize("line", [
    "", "Starting ChromeDriver 156.0", "[1796441942.938][INFO]: COMMAND ExecuteScript {",
    "[1:0x1]  12 ms: Scavenge lots -> of MB, x / y ms",
    "[1:0x1]  12 ms: Scavenge 2.7 (3.9) -> 2.1 (4.4) MB, no timing here",
])
def test_other_lines_are_not_collections(line: str) -> None:
    assert parse_line(line) is None


def test_the_play_is_put_on_the_page_clock_through_the_marker_of_its_process() -> None:
    other = REDUCE.replace("11564", "999")  # another renderer: not this page's
    log = parse_log("\n".join([SCAVENGE, MARKER, "noise", REDUCE, other]))
    # gc() returned at page ms 5000; the answer's origin is page ms 6000
    play = on_page_clock(log, marker_page_ms=5000.0, origin_ms=6000.0, seen=2)
    assert [(round(at), c.kind) for at, c in play] == [
        (5000 + (38738 - 29197) - 6000, "Incremental Mark-Compact (reduce)")]


def test_no_marker_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="no gc\\(\\) marker"):
        on_page_clock(parse_log(SCAVENGE), 0.0, 0.0, seen=1)


def test_a_long_frame_holds_the_collections_that_ended_inside_it() -> None:
    reduce, scavenge = parse_line(REDUCE), parse_line(SCAVENGE)
    assert reduce is not None and scavenge is not None
    play = [(9200.0, reduce), (9400.0, scavenge), (20.0, scavenge)]
    frame = {"at_ms": 9083.0, "ms": 133.0, "script_ms": 10.0, "waited_ms": 117.0}
    ((f, inside),) = frames_and_collections([frame], play)
    assert f is frame and [c for _at, c in inside] == [reduce]
    lines = report_lines("play 1 embed", play, [frame], answer_ms=30000.0)
    assert "3 collections" in lines[0] and "2 scavenges" in lines[0] and "1 major" in lines[0]
    assert "pause 115.7 ms" in lines[1]
    assert lines[2].endswith("collections in it: Incremental Mark-Compact (reduce) 115.7 ms")


@pytest.mark.browser
def test_chromium_writes_v8s_gc_log_line_by_line(tmp_path: Path) -> None:
    if missing := engine_missing("chromium"):
        pytest.fail(missing)
    log_path = tmp_path / "v8.log"
    with browser("chromium", prefix="streampace-gclog-", v8_log=log_path) as driver:
        driver.get("data:text/html,<p>x</p>")
        driver.execute_script("gc()")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the line is written as the collection ends
            if any(c.marker for c in parse_log(log_path.read_text(errors="replace"))):
                break
            time.sleep(0.1)
        markers = [c for c in parse_log(log_path.read_text(errors="replace")) if c.marker]
    assert markers, "the page's gc() is in the log while the browser runs"
