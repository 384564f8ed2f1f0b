"""The measuring instrument itself: oracle, freeze, tail, TTFT, broken frames, I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.metrics import TraceTruth, compute_metrics
from bench.strategies import STRATEGIES
from bench.traces import Trace, build_trace
from bench.virtual import run_virtual

from .helpers_bench import MID, direct, text

FRAME = 1000 / 60
START = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": MID, "role": "assistant"},
]
FINISH = [
    {"type": "TEXT_MESSAGE_END", "messageId": MID},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def test_oracle_is_the_smallest_constant_delay_after_generation() -> None:
    model = [(0.0, START[0]), (0.0, START[1]), (0.0, text("a")), (100.0, text("b")),
             (200.0, text("c")), (200.0, FINISH[0]), (200.0, FINISH[1])]
    arrivals = [(0.0, START), (150.0, [text("ab")]), (350.0, [text("c"), *FINISH])]
    truth = TraceTruth.build(model, arrivals)
    assert truth.oracle_delay_ms == pytest.approx(150.0)
    # shown at gen + 150 = 150, 250, 350 → lag after arrival 0, 100, 0
    assert list(truth.oracle_lag_ms) == pytest.approx([0.0, 100.0, 0.0])
    assert truth.terminal_ms == 350.0


def test_naive_ttft_is_the_wait_for_the_next_paint() -> None:
    trace = direct("t", [(0.0, START), (5.0, [text("hi")]), (40.0, FINISH)])
    m = compute_metrics(run_virtual(trace, "naive", 60).recorder)
    assert m["ttft_visible_ms"] == pytest.approx(FRAME - 5.0)
    assert m["tail_ms"] == pytest.approx(0.0)


def test_freeze_counts_pending_text_that_is_not_shown() -> None:
    # smoothStream only emits a word once whitespace follows it.
    trace = direct("t", [(0.0, START), (0.0, [text("abcdef")]), (500.0, [text(" x ")]),
                         (900.0, FINISH)])
    m = compute_metrics(run_virtual(trace, "smoothstream_word", 60).recorder)
    assert 500.0 <= m["longest_freeze_ms"] <= 500.0 + FRAME
    naive = compute_metrics(run_virtual(trace, "naive", 60).recorder)
    assert naive["longest_freeze_ms"] <= FRAME


def test_tail_after_terminal_event() -> None:
    trace = direct("t", [(0.0, START), (0.0, [text("x" * 100), *FINISH])])
    typed = compute_metrics(run_virtual(trace, "typewriter", 60).recorder)
    assert typed["tail_ms"] == pytest.approx(1600.0, abs=FRAME)
    seed = compute_metrics(run_virtual(trace, "mosoo_450", 60).recorder)
    assert seed["tail_ms"] <= FRAME  # barrier: everything in the next frame
    assert seed["largest_reveal"] == 0  # that one flush is excluded from jumps


def test_broken_frames_counted_for_a_cut_cluster() -> None:
    flag = "\U0001F1EF\U0001F1F5"
    trace = direct("t", [(0.0, START), (0.0, [text("a" + flag[0])]),
                         (100.0, [text(flag[1] + "b")]), (200.0, FINISH)])
    m = compute_metrics(run_virtual(trace, "naive", 60).recorder)
    assert m["broken_reveals"] == 1
    assert m["faithful"]


@pytest.mark.parametrize("trace_name", ["agentic", "cjk_emoji"])
def test_every_strategy_ends_with_exactly_what_arrived(trace_name: str) -> None:
    trace = build_trace(trace_name, seed=2)
    for name in STRATEGIES:
        res = run_virtual(trace, name, 60)
        m = compute_metrics(res.recorder)
        assert res.finished, name
        assert m["faithful"], name
        assert m["missing"] == 0, name


def test_agentic_trace_loses_batches_and_catches_up_by_snapshot() -> None:
    trace = build_trace("agentic", seed=1)
    assert trace.meta["lost_batches"] >= 1
    snaps = [b for _t, b in trace.arrivals if b[0]["type"] == "MESSAGES_SNAPSHOT"]
    assert len(snaps) == 1
    m = compute_metrics(run_virtual(trace, "naive", 60).recorder)
    assert m["faithful"]


def test_jittery_trace_has_long_stalls() -> None:
    trace = build_trace("jittery", seed=1)
    gaps = [b[0] - a[0] for a, b in zip(trace.arrivals, trace.arrivals[1:], strict=False)]
    assert max(gaps) >= 1000.0
    assert all(g >= 0 for g in gaps)


def test_trace_jsonl_round_trip(tmp_path: Path) -> None:
    trace = build_trace("agentic", seed=1)
    path = tmp_path / "agentic.jsonl"
    trace.save(path)
    back = Trace.load(path)
    assert back.model == trace.model
    assert back.arrivals == trace.arrivals
    assert back.tracked.final == trace.tracked.final


def test_trace_load_rejects_garbage(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"stage": "model", "t_ms": 0, "event": {"type": "RUN_STARTED"}}\nnope\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        Trace.load(path)


def test_virtual_host_orders_data_timers_then_frames_on_a_vsync_grid() -> None:
    from bench.virtual import VirtualHost

    host = VirtualHost(60)
    log: list[tuple[str, float]] = []

    def frame() -> None:
        log.append(("frame", host.now()))

    host.at(FRAME, lambda: log.append(("data", host.now())))
    host.at(1.0, lambda: host.request_frame(frame))
    host.at(2.0, lambda: host.request_timeout(lambda: log.append(("timer", host.now())),
                                              FRAME - 2.0))
    cancelled = []
    host.at(3.0, lambda: cancelled.append(host.request_frame(lambda: log.append(("x", 0.0)))))
    host.at(4.0, lambda: host.cancel_frame(cancelled[0]))
    assert host.run(10_000.0)
    assert [k for k, _t in log] == ["data", "timer", "frame"]
    assert all(t == pytest.approx(FRAME) for _k, t in log)


def test_virtual_host_gives_up_on_a_strategy_that_never_idles() -> None:
    from bench.virtual import VirtualHost

    host = VirtualHost(120)

    def again() -> None:
        host.request_frame(again)

    host.request_frame(again)
    assert host.run(100.0) is False
    assert host.now() <= 100.0
