"""bench/ffi_glue.py: a sampling heap profile summed by the function that allocated."""

from __future__ import annotations

from typing import Any

import pytest

from bench.engines import browser, engine_missing
from bench.ffi_glue import SAMPLING_BYTES, allocations, report, sampled_allocations


def _node(name: str, url: str, self_size: int, *children: dict[str, Any]) -> dict[str, Any]:
    return {"callFrame": {"functionName": name, "url": url}, "selfSize": self_size,
            "children": list(children)}


PROFILE = {"head": _node("(root)", "", 0,
                         _node("apply", "https://x/pyodide.asm.mjs", 100,
                               _node("pyproxy_Check", "https://x/pyodide.asm.mjs", 700),
                               _node("", "https://x/page.js", 50)),
                         _node("pyproxy_Check", "https://x/pyodide.asm.mjs", 300))}


def test_allocations_are_summed_by_the_function_that_made_them() -> None:
    total, by_function = allocations(PROFILE)
    assert total == 1150
    assert by_function == [("pyproxy_Check pyodide.asm.mjs", 1000),
                           ("apply pyodide.asm.mjs", 100), ("(anonymous) page.js", 50)]


def test_a_deep_call_tree_is_walked_without_recursion() -> None:
    head = leaf = _node("f", "a.js", 1)
    for _ in range(5000):  # deeper than Python's recursion limit
        leaf["children"] = [_node("f", "a.js", 1)]
        leaf = leaf["children"][0]
    assert allocations({"head": head}) == (5001, [("f a.js", 5001)])


def test_the_report_lists_the_top_functions_and_the_checks_per_part() -> None:
    result = {"profile": PROFILE,
              "counts": {"total": 90, "parts": {"frame callbacks": [10, 60],
                                                "timer callbacks": [0, 0]}}}
    text = report("embed", "bursty", result, top=2)
    assert "0.0 MB" in text.splitlines()[0] and f"every {SAMPLING_BYTES} bytes" in text
    assert "| pyproxy_Check pyodide.asm.mjs | 0.00 | 87% |" in text
    assert "page.js" not in text  # third: beyond top=2
    assert "| frame callbacks | 10 | 60 | 6.0 |" in text
    assert "timer callbacks" not in text  # never called


def test_chromium_samples_what_a_page_allocates() -> None:
    if missing := engine_missing("chromium"):
        pytest.fail(missing)
    with browser("chromium", prefix="streampace-ffiglue-") as driver:
        driver.get("data:text/html,<p>x</p>")
        out: dict[str, Any] = {}
        with sampled_allocations(driver, out):
            # The objects are kept in an array until the loop ends: garbage that never
            # escapes its iteration is what V8's optimiser may not allocate at all.
            driver.execute_script(
                "function makeGarbage() { const kept = []; for (let i = 0; i < 20000; i++)"
                " { kept.push({i, pair: [i, i + 1]}); } return kept.length; }"
                " return makeGarbage();")
    total, by_function = allocations(out["profile"])
    assert total > 100_000  # ~20 000 arrays and objects, freed or not
    assert any(name.startswith("makeGarbage") for name, _size in by_function[:3])
