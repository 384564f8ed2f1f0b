"""`FrameSlices`: the demo's "as delivered" pane, a line at a time within a frame's budget."""

from __future__ import annotations

from streampace.browser.frame_slices import FrameSlices


def _delta(text: str, mid: str = "m1") -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text}


def _texts(events: list[dict]) -> list[str]:
    return [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]


def _drain(slices: FrameSlices) -> list[list[dict]]:
    taken = []
    while len(slices):
        events = slices.take()
        assert events, "a slice with work waiting took nothing"
        taken.append(events)
    return taken


def test_a_batch_goes_a_line_at_a_time_in_order_and_whole() -> None:
    lines = [f"line {i} " + "x" * (i % 7) + "\n" for i in range(200)]
    text = "".join(lines)
    slices = FrameSlices()
    slices.push([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                 {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
                 _delta(text)])
    taken = _drain(slices)
    # Each slice is one line, cut right after its line break (a grapheme
    # boundary); the events before the text go with the first.
    assert [p for s in taken for p in _texts(s)] == lines
    assert [e["type"] for e in taken[0]] == ["RUN_STARTED", "TEXT_MESSAGE_START",
                                             "TEXT_MESSAGE_CONTENT"]
    assert len(taken) == 200 and slices.cuts == 199
    assert all(e["messageId"] == "m1" for s in taken for e in s if "delta" in e)


def test_a_line_runs_across_deltas_to_its_break_or_to_what_is_waiting() -> None:
    slices = FrameSlices()
    long_line = "y" * 5000
    slices.push([_delta("a few words"), _delta(" and the line's end\nnext"),
                 _delta(" line" + long_line + "\n")])
    assert _texts(slices.take()) == ["a few words", " and the line's end\n"]
    assert _texts(slices.take()) == ["next", " line" + long_line + "\n"]  # whole, however long
    slices.push([_delta("no break yet"), _delta(", still none")])
    assert _texts(slices.take()) == ["no break yet", ", still none"]
    assert len(slices) == 0 and slices.cuts == 1


def test_a_barrier_does_not_take_a_backlog_at_once() -> None:
    slices = FrameSlices()
    slices.push([_delta("word\n" * 400), {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
                 {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    taken = _drain(slices)
    assert len(taken) == 401 and all(_texts(s) == ["word\n"] for s in taken[:400])
    assert [e["type"] for e in taken[400]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]


def test_everything_waiting_goes_in_one_slice_when_no_frames_come() -> None:
    slices = FrameSlices()
    events = [_delta("one\ntwo\n"), {"type": "TEXT_MESSAGE_END", "messageId": "m1"}]
    slices.push(events)
    assert slices.take_all() == events and len(slices) == 0 and slices.cuts == 0


def test_lines_go_while_the_frame_is_under_its_budget() -> None:
    slices = FrameSlices(frame_budget_ms=6.0)
    assert slices.has_time(0.0) and slices.has_time(5.9)
    assert not slices.has_time(6.0) and not slices.has_time(40.0)


def test_a_frame_taken_by_the_paced_view_shows_no_line_up_to_max_waits_in_a_row() -> None:
    slices = FrameSlices(frame_budget_ms=6.0, max_waits=3)
    assert not slices.waits_for_next_frame(2.0)  # the frame has time left
    # The paced view took the frame's time: the line waits, at most three frames
    # in a row; the fourth shows one however busy it is.
    assert [slices.waits_for_next_frame(30.0) for _ in range(5)] == [
        True, True, True, False, True]
    assert not slices.waits_for_next_frame(0.0)  # a frame with time: the count starts over
    assert [slices.waits_for_next_frame(6.0) for _ in range(4)] == [True, True, True, False]
    assert slices.waits == 7
