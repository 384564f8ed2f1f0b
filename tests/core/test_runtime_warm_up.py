"""The snapshot's warm-up (browser/runtime.py): the page's per-frame Python run
once over a sample answer while the snapshot is made, leaving nothing behind."""

from __future__ import annotations

import gc
import json

import pytest
from streampace.browser import runtime
from streampace.markdown import render_html


def test_the_snapshot_report_says_the_page_code_was_warmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_snapshot_key", None)
    report = json.loads(runtime.prepare_snapshot("test-key"))
    assert "warm_up" not in report["skipped"]
    assert isinstance(report["warmed_ms"], float) and report["warmed_ms"] > 0


def test_the_warm_up_leaves_no_definition_or_state_behind() -> None:
    # The sample defines a footnote and links; a later answer that only refers
    # to them must not find them (the parser is shared by every view).
    later = "A claim[^1] and a [link][r].\n\n- item\n\n| a |\n|---|\n| 1 |\n"
    before = render_html(later, id_prefix="spmd9-")
    runtime.warm_up()
    assert render_html(later, id_prefix="spmd9-") == before
    assert "<sup" not in before and "[^1]" in before


def test_freezing_the_heap_moves_every_tracked_object_to_the_permanent_generation() -> None:
    gc.collect()
    tracked = len(gc.get_objects())
    try:
        frozen = runtime.freeze_heap()
        # What was tracked is frozen (and little else: the call's own objects);
        # collections no longer see any of it.
        assert frozen == gc.get_freeze_count() >= tracked * 0.9
        assert len(gc.get_objects()) < tracked // 10
    finally:
        gc.unfreeze()  # this test process is not a snapshot: give the collector its heap back
    assert gc.get_freeze_count() == 0
