"""bench/boot.py's summary: medians, ratios to the PyScript baseline, phases from marks."""

from __future__ import annotations

from bench.boot import PHASES, markdown, summarise


def _run(ready: float, **marks: float) -> dict:
    return {"ready": ready, "marks": {"ready": ready, **marks}, "transferred": 1000,
            "decoded": 2000, "requests": 5, "firstTextAt": ready + 8, "framesAfterReady": 1,
            "snapshot": True, "fetched": {"wasm": 50.0, "stdlib": 40.0, "snapshot": None}}


def test_ratios_are_medians_over_the_baselines_median() -> None:
    runs = {
        "pyscript": [{"cold": _run(r), "warm": _run(r / 2)} for r in (1000, 3000, 2000)],
        "embed": [{"cold": _run(r, **{"boot-start": 100, "python-ready": r - 50,
                                      "runtime-module": 150, "package-ready": r - 10}),
                   "warm": _run(r / 4)} for r in (500, 700, 600)],
    }
    summary = summarise(runs)
    assert summary["pyscript"]["cold"]["ready_ms"] == 2000
    assert summary["embed"]["cold"]["ratio_to_pyscript"] == 600 / 2000
    assert summary["embed"]["warm"]["ratio_to_pyscript"] == 150 / 1000
    # Round by round: 500/1000, 700/3000, 600/2000 -> median 0.3.
    assert summary["embed"]["cold"]["ratio_per_round"] == 0.3
    phases = summary["embed"]["cold"]["phases_ms"]
    names = [name for name, _a, _b in PHASES]
    assert phases[names[0]] == 100  # navigation -> shim running
    assert phases[names[1]] == 50  # boot-start -> runtime-module
    assert phases[names[4]] == 40  # python-ready -> package-ready
    assert phases[names[5]] == 8  # ready -> first text
    assert phases[names[2]] is None  # no snapshot-fetched mark in these runs
    text = markdown(summary, {"date": "d", "machine": "m", "load": "1", "rounds": 3,
                              "network": "loopback"})
    assert "| our embed tag (snapshot) | 600 | 0.30 | 0.30 | 150 | 0.15 | 0.15 |" in text
