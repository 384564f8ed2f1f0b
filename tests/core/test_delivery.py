"""DeliveryBuffer: max wait, thresholds, fast paths, compaction, requeue, through."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.session.delivery import (
    Batch,
    DeliveryBuffer,
    DeliveryClosedError,
    DeliveryConfig,
    compact,
    utf16_units,
)
from streampace.testing import ManualHost

# -- fixtures (module-local: tests/core/conftest.py belongs to another helper) --


class Sink:
    """publish() target recording batches with the virtual time they arrived."""

    def __init__(self, clock: ManualHost) -> None:
        self.clock = clock
        self.batches: list[Batch] = []
        self.times: list[float] = []
        self.fail_next: list[Any] = []  # False / an exception, consumed per call
        self.calls = 0

    def __call__(self, batch: Batch) -> bool | None:
        self.calls += 1
        if self.fail_next:
            outcome = self.fail_next.pop(0)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        self.batches.append(batch)
        self.times.append(self.clock.now())
        return True

    @property
    def events(self) -> list[dict]:
        return [e for b in self.batches for e in b.events]


def make(config: DeliveryConfig | None = None) -> tuple[DeliveryBuffer, ManualHost, Sink]:
    clock = ManualHost()
    sink = Sink(clock)
    return DeliveryBuffer(sink, clock, config), clock, sink


def content(mid: str, delta: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta}


def step(name: str) -> dict:
    return {"type": "STEP_STARTED", "stepName": name}


def start(mid: str, role: str = "assistant") -> dict:
    return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role}


def primed(config: DeliveryConfig | None = None) -> tuple[DeliveryBuffer, ManualHost, Sink]:
    """A buffer whose message "m" has already used its first-delta fast path.

    The start-of-message ramp is off, so windows are the steady-state ones at
    the seed's absolute times (the ramp has tests of its own).
    """
    buf, clock, sink = make(dataclasses.replace(config or DeliveryConfig(), ramp_batches=0))
    buf.enqueue([start("m"), content("m", "x")])
    assert len(sink.batches) == 1
    sink.batches.clear()
    sink.times.clear()
    return buf, clock, sink


# -- basics -------------------------------------------------------------------


def test_utf16_units_counts_astral_as_two() -> None:
    assert utf16_units("abc") == 3
    assert utf16_units("面接") == 2
    assert utf16_units("😀") == 2
    assert utf16_units("a😀b") == 4
    assert utf16_units("") == 0


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_events"):
        DeliveryConfig(max_events=0)
    with pytest.raises(ValueError, match="max_delta_units"):
        DeliveryConfig(max_delta_units=0)
    with pytest.raises(ValueError, match="max_wait_ms"):
        DeliveryConfig(max_wait_ms=-1)


def test_ramp_shortens_the_windows_right_after_a_first_delta() -> None:
    buf, clock, sink = make()
    buf.enqueue([start("m"), content("m", "H")])  # fast path at t=0
    buf.enqueue([content("m", "el")])
    clock.tick(39)
    assert sink.times == [0]
    clock.tick(1)  # first ramp window: 40 ms, not 150
    buf.enqueue([content("m", "lo")])
    clock.tick(40)  # second ramp window
    assert sink.times == [0, 40, 80]
    buf.enqueue([content("m", " world")])
    clock.tick(149)  # ramp spent: back to the full window
    assert sink.times == [0, 40, 80]
    clock.tick(1)
    assert sink.times == [0, 40, 80, 230]
    assert "".join(e.get("delta", "") for e in sink.events) == "Hello world"


def test_ramp_is_rearmed_by_the_next_message_and_can_be_turned_off() -> None:
    buf, clock, sink = make()
    buf.enqueue([start("m"), content("m", "x")])
    for _ in range(3):  # spend m's ramp, then one full window
        buf.enqueue([content("m", "y")])
        clock.tick(150)
    sink.batches.clear()
    buf.enqueue([{"type": "TEXT_MESSAGE_END", "messageId": "m"}, start("n"), content("n", "a")])
    buf.enqueue([content("n", "b")])
    clock.tick(40)
    assert len(sink.batches) == 2  # n's first delta at once, then a 40 ms window
    off, clock2, sink2 = make(DeliveryConfig(ramp_batches=0))
    off.enqueue([start("m"), content("m", "a")])
    off.enqueue([content("m", "b")])
    clock2.tick(149)
    assert len(sink2.batches) == 1
    clock2.tick(1)
    assert len(sink2.batches) == 2


def test_ramp_config_is_checked() -> None:
    with pytest.raises(ValueError, match="ramp_wait_ms"):
        DeliveryConfig(ramp_wait_ms=200)
    with pytest.raises(ValueError, match="ramp_batches"):
        DeliveryConfig(ramp_batches=-1)


def test_defaults_match_the_seed() -> None:
    cfg = DeliveryConfig()
    assert (cfg.max_wait_ms, cfg.max_delta_units, cfg.max_events) == (150, 4096, 64)


# -- timing -------------------------------------------------------------------


def test_max_wait_is_measured_from_first_event_not_a_debounce() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "a")])  # t=0: first event into the empty buffer
    for _ in range(14):  # keep feeding every 10 ms; a debounce would never fire
        clock.tick(10)
        buf.enqueue([content("m", "b")])
    assert sink.batches == []
    clock.tick(9)  # t=149
    assert sink.batches == []
    clock.tick(1)  # t=150
    assert sink.times == [150]
    assert sink.events == [content("m", "a" + "b" * 14)]


def test_next_window_starts_at_next_first_event() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "a")])
    clock.tick(150)
    assert sink.times == [150]
    clock.tick(500)  # idle: nothing armed, nothing published
    assert sink.times == [150]
    assert clock.pending_timeouts == 0
    buf.enqueue([content("m", "b")])  # t=650
    clock.tick(149)
    assert len(sink.batches) == 1
    clock.tick(1)
    assert sink.times == [150, 800]


def test_custom_max_wait() -> None:
    buf, clock, sink = primed(DeliveryConfig(max_wait_ms=40))
    buf.enqueue([step("s")])
    clock.tick(39)
    assert sink.batches == []
    clock.tick(1)
    assert sink.events == [step("s")]


# -- thresholds ---------------------------------------------------------------


def test_delta_units_threshold_4095_waits_4096_flushes() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "a" * 4095)])
    assert sink.batches == []
    assert buf.pending_units() == 4095
    buf.enqueue([content("m", "b")])  # reaches 4096 -> published at once
    assert sink.times == [0]
    assert sink.events == [content("m", "a" * 4095 + "b")]
    assert buf.pending_units() == 0
    assert clock.pending_timeouts == 0


def test_delta_units_count_utf16_not_bytes_or_code_points() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "😀" * 2047 + "a")])  # 4095 units, 2048 code points
    assert sink.batches == []
    buf.enqueue([content("m", "面")])  # CJK counts 1 -> 4096
    assert len(sink.batches) == 1
    buf2, _, sink2 = primed()
    buf2.enqueue([content("m", "面" * 4095)])  # 12285 bytes of UTF-8 but 4095 units
    assert sink2.batches == []


def test_tool_call_args_count_towards_delta_units() -> None:
    buf, clock, sink = primed()
    buf.enqueue([{"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "{" * 4096}])
    assert len(sink.batches) == 1


def test_event_threshold_63_waits_64_flushes() -> None:
    buf, clock, sink = primed()
    buf.enqueue([step(str(i)) for i in range(63)])
    assert sink.batches == []
    assert buf.pending_events() == 63
    buf.enqueue([step("63")])
    assert len(sink.batches) == 1
    assert [e["stepName"] for e in sink.events] == [str(i) for i in range(64)]


def test_event_threshold_counts_after_compaction() -> None:
    buf, clock, sink = primed()
    # 200 deltas of one message compact to a single event: no early flush.
    buf.enqueue([content("m", "x") for _ in range(200)])
    assert sink.batches == []
    assert buf.pending_events() == 1
    clock.tick(150)
    assert sink.events == [content("m", "x" * 200)]


def test_big_enqueue_is_split_into_batches_of_max_events() -> None:
    buf, clock, sink = primed()
    buf.enqueue([step(str(i)) for i in range(130)])
    assert [len(b.events) for b in sink.batches] == [64, 64]
    clock.tick(150)
    assert [len(b.events) for b in sink.batches] == [64, 64, 2]
    assert [e["stepName"] for e in sink.events] == [str(i) for i in range(130)]


# -- fast paths ---------------------------------------------------------------


def test_first_delta_after_run_started_is_published_at_once() -> None:
    buf, clock, sink = make()
    buf.enqueue([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}])
    assert sink.batches == []
    buf.enqueue([content("m", "H")])
    assert sink.times == [0]
    assert [e["type"] for e in sink.events] == ["RUN_STARTED", "TEXT_MESSAGE_CONTENT"]
    buf.enqueue([content("m", "i")])  # not first any more: waits
    assert len(sink.batches) == 1
    clock.tick(150)
    assert sink.events[-1] == content("m", "i")


def test_first_delta_of_every_message_is_published_at_once() -> None:
    buf, clock, sink = make()
    buf.enqueue([start("a")])
    assert sink.batches == []
    buf.enqueue([content("a", "")])  # empty: not visible, does not use the fast path
    assert sink.batches == []
    buf.enqueue([content("a", "one")])
    assert len(sink.batches) == 1
    buf.enqueue([content("a", " two")])
    assert len(sink.batches) == 1
    buf.enqueue([{"type": "TEXT_MESSAGE_END", "messageId": "a"}, start("b")])
    assert len(sink.batches) == 1
    buf.enqueue([content("b", "B")])  # a second message in the same run
    assert len(sink.batches) == 2
    assert sink.batches[1].events == [
        content("a", " two"),
        {"type": "TEXT_MESSAGE_END", "messageId": "a"},
        start("b"),
        content("b", "B"),
    ]
    assert sink.times == [0, 0]


@pytest.mark.parametrize(
    ("opener", "first"),
    [
        (
            {"type": "REASONING_START", "messageId": "phase"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "think"},
        ),
        (
            {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "think"},
        ),
        (
            {"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "search"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "t1", "delta": '{"q"'},
        ),
        (
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c1", "delta": "hi"},
        ),
    ],
)
def test_fast_path_armed_by_each_start_kind(opener: dict, first: dict) -> None:
    buf, clock, sink = make()
    buf.enqueue([opener])
    assert sink.batches == []
    buf.enqueue([first])
    assert len(sink.batches) == 1
    assert sink.events == compact([opener, first])  # an empty opening chunk merges


def test_chunk_message_first_seen_with_text_is_published_at_once() -> None:
    buf, clock, sink = make()
    chunk = {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "assistant", "delta": "Hi"}
    buf.enqueue([chunk])
    assert sink.events == [chunk]
    buf.enqueue([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "!"}])
    assert len(sink.batches) == 1


def test_whole_enqueue_call_goes_out_with_its_fast_path() -> None:
    buf, clock, sink = make()
    buf.enqueue([start("m"), content("m", "He"), content("m", "llo")])
    assert len(sink.batches) == 1
    assert sink.events == [start("m"), content("m", "Hello")]
    assert clock.pending_timeouts == 0


@pytest.mark.parametrize(
    "terminal",
    [
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        {"type": "RUN_ERROR", "message": "boom"},
    ],
)
def test_run_terminal_event_publishes_at_once(terminal: dict) -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "tail")])
    clock.tick(20)
    buf.enqueue([terminal])
    assert sink.times == [20]
    assert sink.events == [content("m", "tail"), terminal]
    assert clock.pending_timeouts == 0


def test_barrier_that_is_not_run_terminal_waits() -> None:
    buf, clock, sink = primed()
    buf.enqueue([{"type": "TEXT_MESSAGE_END", "messageId": "m"}])
    assert sink.batches == []
    clock.tick(150)
    assert len(sink.batches) == 1


# -- compaction ---------------------------------------------------------------


def test_empty_text_and_reasoning_deltas_are_dropped() -> None:
    buf, clock, sink = primed()
    buf.enqueue(
        [
            content("m", ""),
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": ""},
            step("s"),
        ]
    )
    clock.tick(150)
    assert sink.events == [step("s")]
    assert buf.stats()["dropped"] == 2


def test_adjacent_same_id_deltas_merge_and_others_stop_merging() -> None:
    buf, clock, sink = primed()
    buf.enqueue(
        [
            content("m", "a"),
            content("m", "b"),
            content("n", "X"),  # other id: new event
            content("n", "Y"),
            step("s"),  # anything in between stops merging
            content("n", "Z"),
            {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '{"a":'},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "1}"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "n", "delta": "r1"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "n", "delta": "r2"},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "u", "toolCallName": "f", "delta": "["},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "u", "delta": "]"},
        ]
    )
    clock.tick(150)
    assert sink.events == [
        content("m", "ab"),
        content("n", "XY"),
        step("s"),
        content("n", "Z"),
        {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '{"a":1}'},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "n", "delta": "r1r2"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "u", "toolCallName": "f", "delta": "[]"},
    ]


def test_text_chunks_merge_keeping_first_role_and_name() -> None:
    buf, clock, sink = make()
    first = {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "assistant",
             "name": "bot", "delta": ""}
    buf.enqueue([first])  # empty first chunk: opens the stream, nothing visible yet
    assert sink.batches == []
    buf.enqueue(
        [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "He"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "y",
             "role": "user", "name": "other"},
        ]
    )
    assert sink.events == [{"type": "TEXT_MESSAGE_CHUNK", "messageId": "c",
                            "role": "assistant", "name": "bot", "delta": "Hey"}]
    # Later chunks of the same message keep merging (no role of their own).
    buf.enqueue([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "!"}])
    buf.enqueue([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "?"}])
    clock.tick(150)
    assert sink.batches[-1].events == [
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "!?"}
    ]


def test_chunks_without_id_are_not_merged() -> None:
    evs = [
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "a"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
    ]
    assert compact(evs) == evs


def test_different_types_with_same_id_do_not_merge() -> None:
    evs = [content("x", "a"), {"type": "REASONING_MESSAGE_CONTENT", "messageId": "x", "delta": "b"}]
    assert compact(evs) == evs


def test_compaction_applies_across_enqueue_calls() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "a")])
    buf.enqueue([content("m", "b")])
    buf.enqueue([content("m", ""), content("m", "c")])
    assert buf.pending_events() == 1
    clock.tick(150)
    assert sink.events == [content("m", "abc")]


def test_callers_events_are_not_mutated() -> None:
    buf, clock, sink = primed()
    a, b = content("m", "a"), content("m", "b")
    buf.enqueue([a, b])
    clock.tick(150)
    assert a == content("m", "a") and b == content("m", "b")
    assert sink.events == [content("m", "ab")]


# -- failures -----------------------------------------------------------------


@pytest.mark.parametrize("failure", [False, RuntimeError("socket gone")])
def test_failed_publish_is_retried_before_newer_events(failure: Any) -> None:
    buf, clock, sink = primed()
    sink.fail_next = [failure]
    buf.enqueue([content("m", "a"), step("s")])
    clock.tick(150)  # first attempt fails
    assert sink.batches == []
    assert sink.calls == 2  # the priming publish + the failed one
    buf.enqueue([step("late")])
    clock.tick(150)  # retry publishes old + new, in order
    assert sink.events == [content("m", "a"), step("s"), step("late")]
    assert buf.stats()["failures"] == 1
    if isinstance(failure, BaseException):
        assert buf.last_error is failure


def test_requeued_batch_is_recompacted_with_what_arrived_meanwhile() -> None:
    buf, clock, sink = primed()

    def failing_publish_that_sees_more_text(batch: Batch) -> bool:
        # The producer keeps streaming while the sink is failing.
        buf.enqueue([content("m", "c")])
        return False

    original = buf._publish
    buf._publish = failing_publish_that_sees_more_text
    buf.enqueue([content("m", "a"), content("m", "b")])
    clock.tick(150)
    assert buf.pending_events() == 1  # "ab" + "c" re-merged at the seam
    buf._publish = original
    clock.tick(150)
    assert sink.events == [content("m", "abc")]
    assert len(sink.batches) == 1


def test_no_hammering_while_failing_then_explicit_flush_retries() -> None:
    buf, clock, sink = primed()
    sink.fail_next = [False]
    buf.enqueue([{"type": "RUN_ERROR", "message": "x"}])  # fast path -> fails
    calls = sink.calls
    buf.enqueue([step(str(i)) for i in range(100)])  # thresholds do not republish
    assert sink.calls == calls
    buf.flush()
    assert [e["type"] for e in sink.events][0] == "RUN_ERROR"
    assert len(sink.events) == 101
    assert buf.pending_events() == 0
    assert clock.pending_timeouts == 0


def test_repeated_failures_keep_everything_in_order() -> None:
    buf, clock, sink = primed()
    sink.fail_next = [False, RuntimeError("a"), False]
    buf.enqueue([content("m", "1")])
    for i in range(4):
        clock.tick(150)
        buf.enqueue([step(str(i)), content("m", str(i))])
    clock.tick(150)
    assert buf.pending_events() == 0
    assert compact(sink.events) == compact(
        [content("m", "1")] + [e for i in range(4) for e in (step(str(i)), content("m", str(i)))]
    )


# -- ordering, through, lifecycle ---------------------------------------------


def test_publishes_are_ordered_even_when_publish_reenters() -> None:
    buf, clock, sink = primed()
    seen: list[list[str]] = []

    def reentrant(batch: Batch) -> bool:
        seen.append([e["type"] for e in batch.events])
        if len(seen) == 1:
            buf.enqueue([{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
            assert len(seen) == 1  # not published from inside publish
        return True

    buf._publish = reentrant
    buf.enqueue([step("a")])
    clock.tick(150)
    assert seen == [["STEP_STARTED"], ["RUN_FINISHED"]]


def test_through_is_highest_included_seq() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "a")], through=5)
    buf.enqueue([content("m", "b")], through=7)
    buf.enqueue([step("s")])
    clock.tick(150)
    assert sink.batches[-1].through == 7
    buf.enqueue([step("t")])
    clock.tick(150)
    assert sink.batches[-1].through is None  # never given for these events


def test_through_of_a_split_call_counts_its_events() -> None:
    buf, clock, sink = primed()
    buf.enqueue([step("a")], through=1)
    buf.enqueue([step(str(i)) for i in range(100)], through=101)
    # The early flush at 64 events carries seqs 1..64 and says so: claiming less
    # (the previous call's 1) made clients drop it as a duplicate (issue 12).
    assert [b.through for b in sink.batches] == [64]
    clock.tick(150)
    assert [b.through for b in sink.batches] == [64, 101]


def test_through_of_an_early_flush_inside_one_call_is_its_own_last_seq() -> None:
    buf, clock, sink = primed()
    buf.enqueue([step("a")], through=10)
    buf.enqueue([start("m"), content("m", "x" * 5000), step("b")], through=13)
    # Threshold flush after the big delta (seq 12), then the first-delta fast path
    # publishes the rest (seq 13) at the end of the call.
    assert [(b.through, len(b.events)) for b in sink.batches] == [(12, 3), (13, 1)]


def test_through_of_dropped_events_is_not_lost() -> None:
    buf, clock, sink = primed()
    buf.enqueue([step("a")], through=3)
    buf.enqueue([content("m", "")], through=4)  # dropped, but seq 4 is covered
    clock.tick(150)
    assert sink.batches[-1].through == 4
    buf.enqueue([content("m", "")], through=5)  # nothing buffered: carried forward
    buf.enqueue([step("b")], through=6)
    clock.tick(150)
    assert sink.batches[-1].through == 6


def test_through_survives_requeue() -> None:
    buf, clock, sink = primed()
    sink.fail_next = [False]
    buf.enqueue([content("m", "a")], through=10)
    clock.tick(150)
    buf.enqueue([content("m", "b")], through=11)
    clock.tick(150)
    assert sink.batches[-1].events == [content("m", "ab")]
    assert sink.batches[-1].through == 11


def test_close_flushes_cancels_and_refuses_use() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "end")])
    assert clock.pending_timeouts == 1
    assert buf.close() == []
    assert sink.events == [content("m", "end")]
    assert clock.pending_timeouts == 0
    with pytest.raises(DeliveryClosedError, match="closed"):
        buf.enqueue([step("x")])
    with pytest.raises(DeliveryClosedError):
        buf.flush()
    assert buf.close() == []  # idempotent


def test_close_returns_what_could_not_be_published() -> None:
    buf, clock, sink = primed()
    sink.fail_next = [False]
    buf.enqueue([content("m", "a"), content("m", "b"), step("s")])
    assert buf.close() == [content("m", "ab"), step("s")]
    assert clock.pending_timeouts == 0


def test_bad_input_raises_and_keeps_buffer_intact() -> None:
    buf, clock, sink = primed()
    buf.enqueue([content("m", "ok")])
    with pytest.raises(TypeError, match=r"event \[1\]"):
        buf.enqueue([content("m", "x"), "not an event"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="type"):
        buf.enqueue([{"delta": "no type"}])
    with pytest.raises(TypeError, match="through"):
        buf.enqueue([], through="7")  # type: ignore[arg-type]
    clock.tick(150)
    assert sink.events == [content("m", "ok")]  # the rejected calls added nothing


def test_stale_timer_callback_is_ignored() -> None:
    clock = ManualHost(ignore_cancel=True)  # a host whose cancel is a no-op
    sink = Sink(clock)
    buf = DeliveryBuffer(sink, clock)
    buf.enqueue([step("a")])  # window timer due at 150
    clock.tick(60)
    buf.flush()  # cancels that timer, which fires anyway
    buf.enqueue([step("b")])  # a new window, due at 210
    clock.tick(90)
    assert clock.timeouts_run == 1  # the cancelled one fired at 150 ...
    assert [e["stepName"] for e in sink.events] == ["a"]  # ... and did nothing
    clock.tick(60)
    assert sink.times == [60, 210]
    assert [e["stepName"] for e in sink.events] == ["a", "b"]


# -- property -----------------------------------------------------------------

_TEXT = st.lists(st.sampled_from(["a", "面", "😀", "e\u0301", " "]), max_size=4).map("".join)
_IDS = st.sampled_from(["m1", "m2", "t1"])


@st.composite
def _event(draw: st.DrawFn) -> dict:
    kind = draw(st.integers(0, 9))
    ident = draw(_IDS)
    if kind <= 3:
        return content(ident, draw(_TEXT))
    if kind == 4:
        return {"type": "REASONING_MESSAGE_CONTENT", "messageId": ident, "delta": draw(_TEXT)}
    if kind == 5:
        return {"type": "TOOL_CALL_ARGS", "toolCallId": ident, "delta": draw(_TEXT)}
    if kind == 6:
        chunk = {"type": "TEXT_MESSAGE_CHUNK", "messageId": ident, "delta": draw(_TEXT)}
        if draw(st.booleans()):
            chunk["role"] = "assistant"
        return chunk
    if kind == 7:
        return start(ident)
    if kind == 8:
        return step(draw(st.sampled_from(["x", "y"])))
    return draw(
        st.sampled_from(
            [
                {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
                {"type": "RUN_ERROR", "message": "e"},
                {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            ]
        )
    )


def _per_stream_text(events: list[dict]) -> dict[tuple[str, str | None], str]:
    out: dict[tuple[str, str | None], str] = {}
    for e in events:
        if isinstance(e.get("delta"), str) and e["delta"]:
            key = (e["type"], e.get("messageId") or e.get("toolCallId"))
            out[key] = out.get(key, "") + e["delta"]
    return out


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(_event(), max_size=8),  # one enqueue call
            st.sampled_from([0, 0, 5, 60, 150, 400]),  # then advance the clock
            st.sampled_from([None, None, None, False, "raise"]),  # next publish outcome
        ),
        max_size=25,
    ),
    config=st.sampled_from(
        [
            DeliveryConfig(),
            DeliveryConfig(max_delta_units=8, max_events=3),
            DeliveryConfig(max_events=1),
        ]
    ),
)
def test_property_published_equals_compacted_input(steps: list, config: DeliveryConfig) -> None:
    buf, clock, sink = make(config)
    fed: list[dict] = []
    seq = 0
    last_kept_seq: int | None = None
    seq_of: dict[int, int] = {}  # id(event) -> its seq (unmerged events are published as is)
    for call, advance, outcome in steps:
        if outcome is not None:
            sink.fail_next.append(RuntimeError("x") if outcome == "raise" else False)
        call = [dict(e) for e in call]  # sampled_from may repeat one dict object
        for i, event in enumerate(call):
            seq_of[id(event)] = seq + 1 + i
        seq += len(call)
        if call and compact(call[-1:]):  # the call's through rides on its last event
            last_kept_seq = seq
        buf.enqueue(call, through=seq)
        fed.extend(call)
        clock.tick(advance)
    sink.fail_next.clear()
    assert buf.close() == []
    published = sink.events
    # Each batch is itself compacted and within the event limit.
    for batch in sink.batches:
        assert compact(batch.events) == batch.events
        assert len(batch.events) <= config.max_events
    # Across batch boundaries the stream is exactly the compaction of the input.
    assert compact(published) == compact(fed)
    assert _per_stream_text(published) == _per_stream_text(fed)
    non_mergeable = [e for e in fed if "delta" not in e]
    assert [e for e in published if "delta" not in e] == non_mergeable
    # through never goes backwards, and the final batch covers everything fed.
    throughs = [b.through for b in sink.batches if b.through is not None]
    assert throughs == sorted(throughs)
    if last_kept_seq is not None:
        assert last_kept_seq <= throughs[-1] <= seq
    # Each batch claims exactly its own events: every event it carries has a seq
    # above the previous batch's through and at most its own.
    previous: int | None = 0
    for batch in sink.batches:
        for event in batch.events:
            n = seq_of.get(id(event))
            if n is not None:
                assert previous is not None and batch.through is not None, (previous, batch)
                assert previous < n <= batch.through, (previous, n, batch.through)
        previous = batch.through
    assert clock.pending_timeouts == 0
