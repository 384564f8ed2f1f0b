"""bench/wasm_tiering.py: which compiles are the interpreter loop's (synthetic
trace events; the tool itself runs a browser)."""

from __future__ import annotations

from typing import Any

from bench.frame_trace import MARK
from bench.wasm_tiering import interpreter_compiles


def _compile(ts_us: float, index: int, size: int, dur_us: float = 5000.0) -> dict[str, Any]:
    return {"name": "wasm.CompileBaseline", "ph": "X", "ts": ts_us, "dur": dur_us,
            "args": {"funcIndex": index, "bodySize": size}}


def test_only_the_largest_function_counts_in_ms_from_the_question() -> None:
    events = [
        _compile(1_000_000, 7, 78_952, 11_000),  # its first compile, in the boot
        _compile(1_100_000, 3, 900),  # another function: not counted
        {"name": MARK, "ph": "R", "ts": 2_000_000},
        _compile(2_305_000, 7, 78_952, 5_800),
        _compile(2_400_000, 12, 20_000),
    ]
    assert interpreter_compiles(events) == [(-1000.0, 11.0), (305.0, 5.8)]


def test_no_mark_or_no_compile_gives_nothing() -> None:
    assert interpreter_compiles([_compile(1.0, 1, 10)]) == []
    assert interpreter_compiles([{"name": MARK, "ph": "R", "ts": 1.0}]) == []
