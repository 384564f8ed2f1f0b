"""StreamCoalescer: seed 003 semantics, in the article's own form (schedule and
cancel callables, its fake clock) and on a host (ManualHost)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streampace.pacing.coalescer import CoalescerClosedError, StreamCoalescer
from streampace.testing import ManualHost


class FakeClock:
    """The article's fakeClock, line for line: tasks due by ``now`` run in
    insertion order over a snapshot of the map, each removed before it runs."""

    def __init__(self) -> None:
        self.now = 0.0
        self.next = 0
        self.tasks: dict[int, tuple[float, Callable[[], object]]] = {}

    def schedule(self, task: Callable[[], object], delay_ms: float) -> int:
        id_ = self.next
        self.next += 1
        self.tasks[id_] = (self.now + delay_ms, task)
        return id_

    def cancel(self, id_: int) -> None:
        self.tasks.pop(id_, None)

    def advance(self, ms: float) -> None:
        self.now += ms
        for id_, (at, task) in list(self.tasks.items()):
            if at <= self.now:
                del self.tasks[id_]
                task()


def test_the_articles_own_fake_clock_test() -> None:
    rendered: list[str] = []
    clock = FakeClock()
    stream = StreamCoalescer(
        lambda batch: rendered.append(batch),
        lambda task, delay: clock.schedule(task, delay),
        lambda id_: clock.cancel(id_),
    )

    stream.push("面")
    clock.advance(10)
    stream.push("接")
    stream.push("で")

    assert rendered == ["面"]

    clock.advance(30)
    assert rendered == ["面", "接で"]

    stream.push("す")
    stream.push("。")
    stream.close()

    assert rendered == ["面", "接で", "す", "。"]


def test_the_seed_form_takes_window_ms_and_cancels_on_close() -> None:
    rendered: list[str] = []
    clock = FakeClock()
    stream = StreamCoalescer(rendered.append, clock.schedule, clock.cancel, 100)
    stream.push("a")
    clock.advance(40)
    stream.push("b")
    clock.advance(40)
    assert rendered == ["a"]  # a 100 ms window, not 40
    clock.advance(20)
    assert rendered == ["a", "b"]
    stream.push("c")
    assert clock.tasks  # the new window's timer
    stream.close()
    assert clock.tasks == {} and rendered == ["a", "b", "c"]


def test_both_forms_refuse_a_mixed_call() -> None:
    with pytest.raises(TypeError, match="own cancel"):
        StreamCoalescer(print, ManualHost(), lambda h: None)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="schedule and cancel"):
        StreamCoalescer(print, lambda t, d: 0)  # type: ignore[call-overload]


def make(window_ms: float = 40) -> tuple[StreamCoalescer, ManualHost, list[str]]:
    clock = ManualHost()
    rendered: list[str] = []
    stream = StreamCoalescer(rendered.append, clock, window_ms=window_ms)
    return stream, clock, rendered


def test_seed_scenario() -> None:
    stream, clock, rendered = make()
    stream.push("面")
    clock.tick(10)
    stream.push("接")
    stream.push("で")
    assert rendered == ["面"]
    clock.tick(30)
    assert rendered == ["面", "接で"]
    stream.push("す")
    stream.push("。")
    stream.close()
    assert rendered == ["面", "接で", "す", "。"]
    assert clock.pending_timeouts == 0  # close() cancelled the window timer


def test_one_render_per_window_while_tokens_keep_coming() -> None:
    stream, clock, rendered = make()
    stream.push("a")  # t=0 rendered at once, window until 40
    for token in "bcd":
        clock.tick(10)
        stream.push(token)
    assert rendered == ["a"]
    clock.tick(10)  # t=40: the window closes, pending goes out in one render
    assert rendered == ["a", "bcd"]
    # The timer is not re-armed by itself: the next token is again immediate.
    clock.tick(100)
    assert rendered == ["a", "bcd"]
    stream.push("e")
    assert rendered == ["a", "bcd", "e"]


def test_window_with_nothing_pending_renders_nothing() -> None:
    stream, clock, rendered = make()
    stream.push("x")
    clock.tick(40)
    assert rendered == ["x"]
    assert stream.renders == 1


def test_empty_tokens_never_render_empty_strings() -> None:
    stream, clock, rendered = make()
    stream.push("")
    stream.push("")
    clock.tick(40)
    stream.close()
    assert rendered == []


def test_close_is_idempotent_and_push_after_close_raises() -> None:
    stream, clock, rendered = make()
    stream.push("a")
    stream.close()
    stream.close()
    assert rendered == ["a"]
    with pytest.raises(CoalescerClosedError, match="closed"):
        stream.push("b")


def test_non_string_token_is_refused_without_losing_pending() -> None:
    stream, clock, rendered = make()
    stream.push("a")
    stream.push("b")
    with pytest.raises(TypeError, match="str"):
        stream.push(3)  # type: ignore[arg-type]
    stream.close()
    assert rendered == ["a", "b"]


def test_render_failure_keeps_the_text_for_the_next_attempt() -> None:
    clock = ManualHost()
    rendered: list[str] = []
    fail = [False, True]

    def render(text: str) -> None:
        if fail.pop(0) if fail else False:
            raise RuntimeError("dom gone")
        rendered.append(text)

    stream = StreamCoalescer(render, clock)
    stream.push("a")
    stream.push("b")
    with pytest.raises(RuntimeError):
        clock.tick(40)
    stream.push("c")
    stream.close()
    assert rendered == ["a", "bc"]


def test_stale_timer_from_a_host_without_real_cancel_is_ignored() -> None:
    clock = ManualHost(ignore_cancel=True)
    rendered: list[str] = []
    stream = StreamCoalescer(rendered.append, clock)
    stream.push("a")
    stream.push("b")
    stream.close()
    clock.tick(40)  # the cancelled window timer fires after close: nothing happens
    assert clock.timeouts_run == 1
    assert rendered == ["a", "b"]


def test_zero_window_still_renders_first_token_at_once() -> None:
    stream, clock, rendered = make(window_ms=0)
    stream.push("a")
    stream.push("b")
    assert rendered == ["a"]
    clock.tick(0)
    assert rendered == ["a", "b"]
    with pytest.raises(ValueError):
        make(window_ms=-1)
