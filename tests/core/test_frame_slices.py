"""`FrameSlices`: the demo's "as delivered" pane, shown per frame within a budget."""

from __future__ import annotations

from streampace.browser.frame_slices import FrameSlices


def _delta(text: str, mid: str = "m1") -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text}


def _drain(slices: FrameSlices) -> list[list[dict]]:
    frames = []
    while len(slices):
        events, chars = slices.take()
        assert events, "a frame with work waiting took nothing"
        assert chars == sum(len(e.get("delta", "")) for e in events
                            if e["type"] == "TEXT_MESSAGE_CONTENT")
        frames.append(events)
    return frames


def test_a_big_batch_is_cut_after_line_breaks_in_order_and_whole() -> None:
    lines = [f"line {i} " + "x" * (i % 7) + "\n" for i in range(200)]
    text = "".join(lines)
    slices = FrameSlices(budget_ms=1.0, min_chars=10, ms_per_char=0.01)  # 100 chars a frame
    slices.push([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                 {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
                 _delta(text)])
    frames = _drain(slices)
    pieces = [e["delta"] for f in frames for e in f if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(pieces) == text
    assert len(frames) > 10 and slices.cuts == len(pieces) - 1
    # Every cut is right after a line break (a grapheme boundary), every frame within
    # the budget: no line here is longer than it.
    assert all(p.endswith("\n") for p in pieces)
    assert all(len(p) <= 100 for p in pieces)
    assert [e["type"] for e in frames[0][:2]] == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    assert all(e["messageId"] == "m1" for f in frames for e in f if "delta" in e)


def test_a_line_longer_than_the_budget_goes_whole_and_small_batches_are_not_cut() -> None:
    slices = FrameSlices(budget_ms=1.0, min_chars=10, ms_per_char=0.01)
    long_line = "y" * 500
    slices.push([_delta(long_line + "\nshort\n")])
    events, chars = slices.take()
    assert [e["delta"] for e in events] == [long_line + "\n"] and chars == 501
    assert [e["delta"] for e in slices.take()[0]] == ["short\n"]
    slices.push([_delta("a few words"), _delta(" and more")])
    assert [e["delta"] for e in slices.take()[0]] == ["a few words", " and more"]
    assert len(slices) == 0


def test_a_barrier_does_not_take_a_backlog_at_once() -> None:
    slices = FrameSlices(budget_ms=1.0, min_chars=10, ms_per_char=0.01)
    text = "word\n" * 400
    slices.push([_delta(text), {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
                 {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    frames = _drain(slices)
    assert len(frames) == 20 and all(sum(len(e.get("delta", "")) for e in f) <= 100
                                     for f in frames)
    assert [e["type"] for e in frames[-1]][-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]


def test_the_cost_per_character_is_learnt_from_the_frames() -> None:
    slices = FrameSlices(budget_ms=8.0, min_chars=64, ms_per_char=0.02)
    assert slices.chars_per_frame() == 400
    for _ in range(20):
        slices.spent(40.0, 400)  # a slow device: 0.1 ms per character
    assert 75 <= slices.chars_per_frame() <= 90
    slices.spent(500.0, 10)  # too few characters to say anything: ignored
    assert 75 <= slices.chars_per_frame() <= 90
    for _ in range(50):
        slices.spent(1000.0, 100)
    assert slices.chars_per_frame() == 64  # never below the floor: work always moves


def test_the_fixed_part_of_an_apply_is_not_charged_per_character() -> None:
    """Applies cost 6 ms + 0.03 ms a character (the demo's pane at 4x CPU): the
    slices hold what 8 ms of the part per character affords, not what 8 ms of the
    whole apply would (a cut pays the fixed part once more)."""
    slices = FrameSlices(budget_ms=8.0, min_chars=64, ms_per_char=0.02)
    for i in range(40):
        chars = 60 + (i * 37) % 200
        slices.spent(6.0 + 0.03 * chars, chars)
    assert abs(slices.fixed_ms - 6.0) < 0.01 and abs(slices.ms_per_char - 0.03) < 1e-4
    assert slices.chars_per_frame() == 266  # 8 / 0.03; one rate for the whole would give ~64
    # Sizes too alike to tell the parts apart: no fixed part is assumed.
    alike = FrameSlices(budget_ms=8.0, min_chars=64, ms_per_char=0.02)
    for _ in range(40):
        alike.spent(6.0 + 0.03 * 100, 100)
    assert alike.fixed_ms == 0.0 and abs(alike.ms_per_char - 0.09) < 1e-4


def test_a_batch_within_the_budget_beyond_the_fixed_part_is_not_cut() -> None:
    slices = FrameSlices(budget_ms=8.0, min_chars=64)
    for i in range(40):
        chars = 60 + (i * 37) % 200
        slices.spent(6.0 + 0.03 * chars, chars)
    text = "a line of text\n" * 16  # 240 characters: one apply of ~13 ms, not two of ~10
    slices.push([_delta(text)])
    assert [e["delta"] for e in slices.take()[0]] == [text] and slices.cuts == 0


def test_a_slice_waits_for_the_next_frame_once_when_the_frame_is_taken() -> None:
    slices = FrameSlices(yield_after_ms=8.0)
    assert not slices.waits_for_next_frame(2.0)  # the frame has time left
    assert slices.waits_for_next_frame(8.0)  # the paced view took the frame's time
    # Never two frames in a row: at most one frame late, however busy the next.
    assert not slices.waits_for_next_frame(30.0)
    assert slices.waits_for_next_frame(30.0)
    assert not slices.waits_for_next_frame(30.0)
    assert not slices.waits_for_next_frame(0.0) and not slices.waits_for_next_frame(0.0)
    assert slices.waits == 2
