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
    named = {(a, b): name for name, a, b in PHASES}
    assert phases[named[None, "boot-start"]] == 100  # navigation -> shim running
    assert phases[named["boot-start", "runtime-module"]] == 50
    assert phases[named["python-ready", "package-ready"]] == 40
    assert phases[named["ready", "firstText"]] == 8
    # No snapshot-fetched or wasm marks in these runs.
    assert phases[named["runtime-module", "snapshot-fetched"]] is None
    assert phases[named["wasm-instantiate", "wasm-instantiated"]] is None
    # First-visit bytes per big file: none recorded in these runs.
    assert summary["embed"]["cold"]["wire_bytes"][".snap.gz"] is None
    text = markdown(summary, {"date": "d", "machine": "m", "load": "1", "rounds": 3,
                              "network": "loopback"})
    assert "| our embed tag (snapshot) | 600 | 0.30 | 0.30 | 150 | 0.15 | 0.15 |" in text
