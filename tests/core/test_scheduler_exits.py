"""The seed's exits deliver everything, held clusters included (issue 20), and
one commit per frame whatever the host: stale timers, pacing off."""

from __future__ import annotations

import pytest
from streampace.pacing.drive import DriveState
from streampace.pacing.scheduler import PacingConfig, PacingScheduler
from streampace.testing import ManualHost

from .conftest import AG, Rig, RigFactory

F60 = 1000 / 60
FAMILY_HALF = "\U0001F468\u200D"


# ---------------------------------------------------------------- exits

@pytest.mark.parametrize("config", [PacingConfig(), PacingConfig.seed()], ids=["adaptive", "seed"])
def test_overload_dumps_5000_graphemes_in_one_frame_last_cluster_included(
        rig_factory: RigFactory, ag: type[AG], config: PacingConfig) -> None:
    rig = rig_factory(config)
    text = "o" * 4999 + "\U0001F44D"  # the last cluster is one the rule holds
    rig.sched.enqueue("s", [ag.start(), ag.content(text)])
    rig.host.frame(16)
    assert rig.text() == text
    assert len(rig.accepted) == 1
    assert rig.sched.stats()["overloads"] == 1
    assert rig.sched.queued_events() == 0


@pytest.mark.parametrize("barrier", ["end", "run_finished", "run_error", "state_snapshot",
                                     "messages_snapshot"])
def test_a_barrier_delivers_the_held_cluster_with_everything_before_it(rig: Rig, ag: type[AG],
                                                                       barrier: str) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("ok " + FAMILY_HALF)])
    rig.frames(10)
    assert rig.text() == "ok "
    rig.sched.enqueue("s", [getattr(ag, barrier)()])
    rig.host.frame(16)
    assert rig.text() == "ok " + FAMILY_HALF
    assert rig.sched.queued_events() == 0


def test_flush_now_delivers_the_held_cluster(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("ok " + FAMILY_HALF)])
    rig.frames(10)
    rig.sched.flush_now("s")
    assert rig.text() == "ok " + FAMILY_HALF
    assert rig.sched.stats()["held"] == 0


def test_flush_of_one_session_leaves_the_others_draining_on_frames(rig: Rig, ag: type[AG]) -> None:
    """Before issue 20 session b's one-letter delta waited for a hold timer."""
    rig.sched.enqueue("a", [ag.content("a" * 100, "ma")])
    rig.sched.enqueue("b", [ag.content("x", "mb")])
    rig.sched.flush_now("a")
    assert rig.text("ma") == "a" * 100
    assert rig.host.pending_frames == 1  # b is drained by the next frame, not a timer
    rig.host.frame(F60)
    assert rig.text("mb") == "x"
    assert rig.sched.queued_events() == 0


def test_flush_of_each_session_delivers_its_own_held_text(rig_factory: RigFactory,
                                                          ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    rig.sched.enqueue("b", [ag.content("b\U0001F1EF", "mb")])
    rig.sched.enqueue("a", [ag.content("a" + FAMILY_HALF, "ma")])
    rig.frames(10)
    # b's held flag is the head: FIFO, so a waits behind it
    assert rig.text("mb") == "b" and rig.text("ma") == ""
    rig.sched.flush_now("b")
    assert rig.text("mb") == "b\U0001F1EF"
    rig.frames(10)
    assert rig.text("ma") == "a"  # a drains on frames; its own family is held
    rig.sched.flush_now("a")
    assert rig.text("ma") == "a" + FAMILY_HALF
    assert rig.sched.queued_events() == 0


@pytest.mark.parametrize("tail", ["abc", "漢字。", "x y"])
def test_a_short_tail_drains_on_frames_alone(
        rig_factory: RigFactory, ag: type[AG], tail: str) -> None:
    """A 3-grapheme tail drains through the 20/s floor on frames; no timer is
    needed (the hold rule holds none of its clusters)."""
    rig = rig_factory(PacingConfig.seed())
    rig.sched.enqueue("s", [ag.start(), ag.content(tail)])
    for _ in range(30):
        rig.host.advance(F60)
        rig.host.run_frame()  # frames only: no timeout fires
    assert rig.text() == tail
    assert rig.host.timeouts_run == 0


def test_first_text_shows_on_the_next_frame_cjk_and_emoji_included(rig_factory: RigFactory,
                                                                   ag: type[AG]) -> None:
    for first in ("H", "你", "。", "\U0001F44D\U0001F3FD "):
        rig = rig_factory()
        rig.host.tick(5)  # lands 5 ms into a frame
        rig.sched.enqueue("s", [ag.start(), ag.content(first)])
        rig.host.frame(F60 - 5)
        assert rig.text() != "", first


# ---------------------------------------------------------------- one commit per frame

class _StaleHost(ManualHost):
    """A host whose cancels are best-effort: cancelled timeouts and frames still fire."""

    def __init__(self) -> None:
        super().__init__(1000.0, ignore_cancel=True)

    def cancel_frame(self, handle: object) -> None:
        pass


def test_a_host_that_fires_cancelled_timers_gets_one_commit_per_frame(ag: type[AG]) -> None:
    host = _StaleHost()
    applies: list[float] = []

    def apply(session: str, events: list[dict]) -> bool:
        applies.append(host.now())
        return True

    sched = PacingScheduler(host, apply)
    per_frame = []
    for k in range(60):
        if k % 9 == 0:
            sched.enqueue("s", [ag.content("word " * 30)])
        before = len(applies)
        host.frame(F60)  # stale fallback timeouts fire in here, cancelled long ago
        per_frame.append(len(applies) - before)
    assert host.timeouts_run > 0  # the host did fire cancelled timers
    assert sum(per_frame) > 30
    assert max(per_frame) == 1, per_frame


def test_the_stale_host_would_double_commit_without_generations(ag: type[AG]) -> None:
    """The check above can fail: a bare host callback (no guard) runs twice."""
    host = _StaleHost()
    fired = []
    handle = host.request_timeout(lambda: fired.append(1), 10)
    host.cancel_timeout(handle)
    host.tick(20)
    assert fired == [1]


def test_unpaced_batches_are_committed_on_the_next_frame_one_per_frame(ag: type[AG]) -> None:
    host = ManualHost(1000.0)
    calls: list[tuple[float, list[dict]]] = []

    def apply(session: str, events: list[dict]) -> bool:
        calls.append((host.now(), events))
        return True

    sched = PacingScheduler(host, apply, PacingConfig.unpaced())
    sched.enqueue("s", [ag.start(), ag.content("x" * 300)])
    sched.enqueue("s", [ag.content("y" * 300)])  # a second socket batch, same frame
    assert calls == []  # never outside a frame
    host.frame(F60)
    assert len(calls) == 1
    assert "".join(e.get("delta", "") for e in calls[0][1]) == "x" * 300 + "y" * 300
    sched.enqueue("s", [ag.content("z" + FAMILY_HALF)])  # nothing held back either
    host.frame(F60)
    assert len(calls) == 2 and calls[1][1][0]["delta"] == "z" + FAMILY_HALF
    assert sched.stats()["overloads"] == 0


def test_unpaced_in_a_hidden_tab_drains_on_the_fallback_timeout(ag: type[AG]) -> None:
    host = ManualHost(1000.0)
    calls: list[list[dict]] = []

    def apply(session: str, events: list[dict]) -> bool:
        calls.append(events)
        return True

    sched = PacingScheduler(host, apply, PacingConfig.unpaced())
    sched.enqueue("s", [ag.content("hidden")])
    host.tick(50)
    assert len(calls) == 1 and host.frames_run == 0


# ---------------------------------------------------------------- the drive machine

def drive_state(rig: Rig) -> DriveState:
    """Read afresh: mypy keeps `sched.drive_state` narrowed by an earlier assert."""
    return rig.sched.drive_state


def test_drive_states_as_the_scheduler_moves(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    assert drive_state(rig) is DriveState.IDLE
    rig.sched.enqueue("s", [ag.content("ab\U0001F44D")])
    assert drive_state(rig) is DriveState.ARMED
    rig.frames(20)
    assert drive_state(rig) is DriveState.HELD  # only the thumb left, held
    assert rig.host.pending_frames == 0
    rig.sched.enqueue("s", [ag.content(" ok")])
    assert drive_state(rig) is DriveState.ARMED
    rig.frames_until_idle()
    assert drive_state(rig) is DriveState.IDLE
    assert rig.host.pending_frames == 0 and rig.host.pending_timeouts == 0
