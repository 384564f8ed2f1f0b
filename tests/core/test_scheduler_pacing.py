"""Budget, rate and arming behaviour of PacingScheduler on a virtual clock.

Tests that pin the seed's budget formula (``clamp(pending / 250 ms, 20, 800)``)
use ``seed_rig`` (``PacingConfig.seed()``); the others run against the default
law.  The adaptive law's own behaviour is in test_playout.py.
"""

from __future__ import annotations

import pytest
from streampace.pacing.drive import FRAMES_STOPPED_MS
from streampace.pacing.scheduler import PacingConfig

from .conftest import AG, Rig, RigFactory

F60 = 1000 / 60
F120 = 1000 / 120


def per_call_graphemes(rig: Rig) -> list[int]:
    return [sum(len(e.get("delta", "")) for e in c.events) for c in rig.accepted]


def test_mid_stream_batch_of_1000_chars_is_spread_over_more_than_70_frames(seed_rig: Rig,
                                                                           ag: type[AG]) -> None:
    seed_rig.sched.enqueue("s", [ag.start(), ag.content("a" * 1000)])
    frames = seed_rig.frames_until_idle(16)
    sizes = per_call_graphemes(seed_rig)
    assert frames > 70
    assert max(sizes) <= 13
    assert seed_rig.text() == "a" * 1000


def test_rate_is_backlog_over_tau(seed_rig: Rig, ag: type[AG]) -> None:
    # 100 pending -> 400 graphemes/s -> 6.4 per 16 ms frame: floor 6, carry .4
    seed_rig.sched.enqueue("s", [ag.content("b" * 100)])
    seed_rig.frames(1, 16)
    assert per_call_graphemes(seed_rig) == [6]
    assert seed_rig.sched.stats()["last_rate"] == pytest.approx(400)


def test_fraction_carries_to_next_frame(rig_factory: RigFactory, ag: type[AG]) -> None:
    # 50 g/s fixed (min == max): 0.8 per 16 ms frame; 1 at frames 2,3,4,5(4.0 total at 80 ms)
    rig = rig_factory(PacingConfig.seed(min_rate=50, max_rate=50, holdback_ms=0))
    rig.sched.enqueue("s", [ag.content("x" * 10)])
    delivered = []
    for _ in range(5):
        rig.host.frame(16)
        delivered.append(rig.sched.stats()["graphemes"])
    assert delivered == [0, 1, 2, 3, 4]


def test_budget_uses_real_elapsed_time_not_frame_count(seed_rig: Rig, ag: type[AG]) -> None:
    seed_rig.sched.enqueue("s", [ag.content("c" * 100)])
    seed_rig.host.frame(40)  # a slow frame: 400 g/s * 40 ms = 16
    assert per_call_graphemes(seed_rig) == [16]


def test_three_char_tail_drains_through_20_per_second_floor(seed_rig: Rig, ag: type[AG]) -> None:
    seed_rig.sched.enqueue("s", [ag.content("xyz")])
    frames = seed_rig.frames_until_idle(16)
    # 20/s = 0.32 per frame: 3 graphemes need 150 ms, i.e. 10 frames
    assert frames == 10
    assert per_call_graphemes(seed_rig) == [1, 1, 1]


def test_rate_capped_at_800_per_second(seed_rig: Rig, ag: type[AG]) -> None:
    seed_rig.sched.enqueue("s", [ag.content("d" * 4000)])
    seed_rig.frames(10, 10)
    assert max(per_call_graphemes(seed_rig)) == 8  # 800/s * 10 ms


@pytest.mark.parametrize("config", [PacingConfig(), PacingConfig.seed()], ids=["adaptive", "seed"])
def test_60hz_and_120hz_show_same_progress(
        rig_factory: RigFactory, ag: type[AG], config: PacingConfig) -> None:
    progress = {}
    for hz in (60, 120):
        rig = rig_factory(config)
        rig.sched.enqueue("s", [ag.content("e" * 1200)])
        per_100ms = hz // 10
        samples = []
        for _ in range(8):  # sample every 100 ms for 0.8 s
            rig.frames(per_100ms, 1000 / hz)
            samples.append(rig.sched.stats()["graphemes"])
        progress[hz] = samples
    assert progress[60][0] > 0 and progress[60][-1] < 1200  # still mid-stream
    for a, b in zip(progress[60], progress[120], strict=True):
        assert abs(a - b) <= 2, progress


def test_frame_and_fallback_timeout_are_armed_together(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("abc")])
    assert rig.host.pending_frames == 1
    assert rig.host.pending_timeouts == 1
    assert rig.host.next_timeout_at() == pytest.approx(1000 + 50)


def test_frame_first_cancels_the_fallback(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.custom()])
    rig.host.advance(16)
    rig.host.run_frame()
    assert rig.host.pending_timeouts == 0
    assert len(rig.calls) == 1
    rig.host.tick(100)
    assert len(rig.calls) == 1


def test_timeout_first_cancels_the_frame(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.custom()])
    rig.host.tick(50)
    assert len(rig.calls) == 1
    assert rig.host.pending_frames == 0
    assert rig.host.run_frame() == 0


def test_hidden_page_timeouts_alone_drain_the_queue(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("h" * 200)])
    for _ in range(200):
        if not rig.sched.queued_events():
            break
        rig.host.tick(50)
    assert rig.sched.queued_events() == 0
    assert rig.host.frames_run == 0
    assert rig.text() == "h" * 200
    assert all(c.at % 50 == 0 for c in rig.calls)


def test_no_burst_after_long_idle_gap(seed_rig: Rig, ag: type[AG]) -> None:
    rig = seed_rig
    rig.sched.enqueue("s", [ag.content("a" * 10)])
    rig.frames_until_idle(16)
    rig.host.tick(10_000)  # idle for 10 s
    n_before = len(rig.accepted)
    rig.sched.enqueue("s", [ag.content("b" * 500)])
    rig.host.frame(16)
    # baseline restarted at enqueue: 16 ms at 800/s -> 12, not 10 s worth
    assert per_call_graphemes(rig)[n_before:] == [12]


def test_no_burst_after_long_idle_gap_adaptive(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("a" * 10)])
    rig.frames_until_idle(16)
    rig.host.tick(10_000)  # idle for 10 s
    n_before = len(rig.accepted)
    rig.sched.enqueue("s", [ag.content("b" * 500)])
    rig.host.frame(16)
    # the first grapheme is owed at once, then 16 ms at most at the step
    # ceiling (840/s): not 10 s worth
    first = per_call_graphemes(rig)[n_before:]
    assert len(first) == 1 and 1 <= first[0] <= 1 + 16 * 0.84


def test_nothing_is_armed_when_idle(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("ab")])
    rig.frames_until_idle(16)
    assert rig.host.pending_frames == 0
    assert rig.host.pending_timeouts == 0


def test_one_apply_per_drain(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("z" * 300), ag.tool_start(), ag.end()])
    rig.sched.enqueue("t", [ag.start("m2"), ag.content("q" * 50, "m2")])
    before = 0
    while rig.sched.queued_events():
        rig.host.frame(F60)
        assert len(rig.calls) - before <= 1
        before = len(rig.calls)


def test_stats_counters_and_last_drain(seed_rig: Rig, ag: type[AG]) -> None:
    seed_rig.sched.enqueue("s", [ag.content("a" * 100)])
    seed_rig.host.frame(16)
    st = seed_rig.sched.stats()
    assert st["frames"] == 1 and st["applies"] == 1 and st["graphemes"] == 6
    assert seed_rig.sched.graphemes_delivered() == 6
    assert st["last_drain_graphemes"] == 6 and st["last_drain_at"] == seed_rig.host.now()
    assert st["last_drain_source"] == "frame" and st["pending"] == 94
    seed_rig.host.tick(FRAMES_STOPPED_MS)  # no frame comes any more (a hidden tab)
    assert seed_rig.sched.stats()["last_drain_source"] == "timeout"


def test_pending_graphemes_per_session(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("a", [ag.content("👍🏽ab", "x")])
    rig.sched.enqueue("b", [ag.content("漢字", "y")])
    assert rig.sched.pending_graphemes("a") == 3
    assert rig.sched.pending_graphemes("b") == 2
    assert rig.sched.pending_graphemes() == 5
    assert rig.sched.pending_graphemes("nobody") == 0


def test_segmentation_happens_once_per_event_at_enqueue(rig_factory: RigFactory,
                                                        ag: type[AG]) -> None:
    class Counting:
        calls = 0

        def split(self, text: str) -> list[str]:
            Counting.calls += 1
            return list(text)

    rig = rig_factory(PacingConfig(holdback_ms=0), Counting())
    rig.sched.enqueue("s", [ag.content("a" * 500), ag.content("b" * 500)])
    assert Counting.calls == 2
    rig.frames_until_idle(16)
    assert Counting.calls == 2


def test_queue_is_compacted(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(max_events_per_frame=100))
    for _ in range(50):
        rig.sched.enqueue("s", [ag.custom(i) for i in range(100)])
        rig.host.frame(F60)
    assert rig.sched.queued_events() == 0
    assert len(rig.sched._queue.entries) < 2048  # not 5000 dead entries


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        PacingConfig(law="fast")
    with pytest.raises(ValueError):
        PacingConfig(max_lag_ms=0)
    with pytest.raises(ValueError):
        PacingConfig(tau_ms=0)
    with pytest.raises(ValueError):
        PacingConfig(min_rate=10, max_rate=5)
    with pytest.raises(ValueError):
        PacingConfig(max_events_per_frame=0)


def test_stats_are_json_safe_even_after_overload(rig: Rig, ag: type[AG]) -> None:
    import json

    rig.sched.enqueue("s", [ag.content("o" * 5000)])
    rig.host.frame(16)
    st = rig.sched.stats()
    assert st["last_rate"] is None and st["overloads"] == 1
    assert json.loads(json.dumps(st, allow_nan=False)) == st
