"""The clock protocol: clock.Timeout and the ManualHost every test and the bench use."""

from __future__ import annotations

import pytest
from streampace.clock import Timeout
from streampace.testing import ManualHost


def test_timeout_fires_once_and_rearming_replaces_it() -> None:
    host = ManualHost()
    fired: list[float] = []
    t = Timeout(host, lambda: fired.append(host.now()))
    t.arm(100)
    host.tick(50)
    t.arm(100)  # cancels the first: one armed timeout on the host
    assert t.armed and host.pending_timeouts == 1
    host.tick(100)
    assert fired == [150] and not t.armed
    host.tick(500)
    assert fired == [150]


def test_timeout_ignores_a_fire_the_host_could_not_cancel() -> None:
    host = ManualHost(ignore_cancel=True)
    fired: list[float] = []
    t = Timeout(host, lambda: fired.append(host.now()))
    t.arm(10)
    t.cancel()
    t.arm(30)
    host.tick(100)
    assert host.timeouts_run == 2 and fired == [30]


def test_cancel_is_idempotent_and_reaches_the_host() -> None:
    host = ManualHost()
    t = Timeout(host, lambda: pytest.fail("cancelled"))
    t.arm(5)
    t.cancel()
    t.cancel()
    assert host.pending_timeouts == 0 and host.next_timeout_at() is None
    host.tick(10)


def test_run_until_fires_in_deadline_order_at_each_deadline() -> None:
    host = ManualHost()
    log: list[tuple[str, float]] = []
    host.request_timeout(lambda: log.append(("b", host.now())), 20)
    host.request_timeout(lambda: log.append(("a", host.now())), 10)
    same = host.request_timeout(lambda: log.append(("x", host.now())), 10)
    host.cancel_timeout(same)
    host.request_timeout(
        lambda: host.request_timeout(lambda: log.append(("c", host.now())), 0), 20)
    assert host.run_until(20) == 4  # a, b, the re-arming one and the 0 ms one it armed
    assert log == [("a", 10), ("b", 20), ("c", 20)]
    host.run_until(5)  # never backwards
    assert host.now() == 20


def test_run_all_follows_timeouts_that_arm_more() -> None:
    host = ManualHost()
    seen: list[float] = []

    def again() -> None:
        seen.append(host.now())
        if len(seen) < 3:
            host.request_timeout(again, 100)

    host.request_timeout(again, 100)
    assert host.run_all() == 3 and seen == [100, 200, 300] and host.pending_timeouts == 0


def test_fire_next_timeout_runs_only_the_earliest_due() -> None:
    host = ManualHost()
    log: list[str] = []
    host.request_timeout(lambda: log.append("a"), 0)
    host.request_timeout(lambda: log.append("b"), 0)
    host.request_timeout(lambda: log.append("late"), 1)
    assert host.fire_next_timeout() and log == ["a"]
    assert host.fire_next_timeout() and log == ["a", "b"]
    assert not host.fire_next_timeout()  # "late" is not due yet


def test_a_frame_callback_cancelled_within_the_same_frame_does_not_run() -> None:
    host = ManualHost()
    log: list[str] = []
    later: list[int] = []
    host.request_frame(lambda: host.cancel_frame(later[0]))
    later.append(host.request_frame(lambda: log.append("cancelled")))
    host.request_frame(lambda: host.request_frame(lambda: log.append("next frame")))
    assert host.run_frame() == 2
    assert log == [] and host.pending_frames == 1
    host.frame()
    assert log == ["next frame"]
