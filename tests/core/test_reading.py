"""What the live region says (streampace.reading): sentences, summaries, timing, outline."""

from __future__ import annotations

import pytest
from streampace.markdown.stream import MarkdownStream
from streampace.reading.announcer import MAX_UNSAID, Announcer
from streampace.reading.outline import HeadingOutline, base_below
from streampace.reading.sentences import last_boundary, scan, split_sentences
from streampace.reading.spoken import spoken_block


# ---------------------------------------------------------------- sentences
@pytest.mark.parametrize(("text", "want"), [
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ("It costs 3.5 dollars. Then 2.0 more.", ["It costs 3.5 dollars.", "Then 2.0 more."]),
    ("Ask Dr. Smith and Mr. Jones. They know.", ["Ask Dr. Smith and Mr. Jones.", "They know."]),
    ("Fruit, e.g. apples, i.e. Malus. Next.", ["Fruit, e.g. apples, i.e. Malus.", "Next."]),
    ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
    ("See example.com/a.b for more. Ok", ["See example.com/a.b for more.", "Ok"]),
    ("Wait... what? Really!? Yes.", ["Wait... what?", "Really!?", "Yes."]),
    ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
    ("(Done.) Next one.", ["(Done.)", "Next one."]),
    ("これはペンです。あれは本です。「はい。」次",
     ["これはペンです。", "あれは本です。", "「はい。」", "次"]),
    ("你好！你好吗？我很好。", ["你好！", "你好吗？", "我很好。"]),
    ("नमस्ते। ठीक", ["नमस्ते।", "ठीक"]),
    ("line one\nline two", ["line one", "line two"]),
    ("Version 2. Released in 2024. Good", ["Version 2.", "Released in 2024.", "Good"]),
])
def test_sentences(text: str, want: list[str]) -> None:
    assert split_sentences(text) == want


@pytest.mark.parametrize("text", [
    "It costs 3.", "It costs 3. ", "Done.", "Done!", "終わり。", "Line\n", "He said \"no.\"",
])
def test_an_end_is_not_certain_until_what_follows_has_arrived(text: str) -> None:
    # "3." may become "3.5"; "Done." may be followed by a closer or a lower-case word.
    assert last_boundary(text) == 0


def test_last_boundary_starts_where_told() -> None:
    text = "One. Two. Thr"
    assert text[:last_boundary(text)] == "One. Two. "
    assert last_boundary(text, len("One. Two. ")) == len("One. Two. ")


def test_a_long_text_is_scanned_in_linear_time() -> None:
    # No backtracking: a hostile text of stops and spaces is one pass.
    text = ". " * 200_000 + "X"
    assert last_boundary(text) == len(text) - 1


# ---------------------------------------------------------------- spoken form
def blocks(source: str) -> list[str]:
    stream = MarkdownStream()
    stream.feed(source)
    stream.close()
    # Lines with whitespace folded, as the announcer says them.
    return ["\n".join(" ".join(line.split()) for line in spoken_block(node).split("\n")
                      if line.strip()) for node in stream.blocks]


def test_prose_is_its_text_and_soft_breaks_are_spaces() -> None:
    assert blocks("# A *title*\n\nOne **two**\nthree `four`.\n") == [
        "A title", "One two three four."]


def test_code_tables_and_math_are_one_summary() -> None:
    code = "```python\n" + "".join(f"x = {i}\n" for i in range(12)) + "```\n"
    assert blocks(code) == ["code block, Python, 12 lines"]
    assert blocks("```\none\n```\n") == ["code block, 1 line"]
    assert blocks("```weird-lang\na\nb\n```\n") == ["code block, weird-lang, 2 lines"]
    table = "| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n"
    assert blocks(table) == ["table, 3 columns, 2 rows"]
    assert blocks("$$\nE = mc^2\n$$\n") == ["math block"]
    assert blocks("So $x^2 + 1$ grows.\n") == ["So formula grows."]


def test_lists_and_quotes_say_each_item_on_its_own_line() -> None:
    assert blocks("- one\n- two\n  - nested *em*\n") == ["one\ntwo\nnested em"]
    assert blocks("> quoted\n>\n> again\n") == ["quoted\nagain"]
    assert blocks("- [x] done\n- [ ] open\n") == ["checked done\nunchecked open"]


def test_a_deep_tree_is_walked_without_recursion() -> None:
    node: object = "deep"
    for _ in range(50_000):
        node = ("blockquote", (), (node,))
    assert spoken_block(node) == "deep"  # type: ignore[arg-type]


# ---------------------------------------------------------------- announcer
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def announcer(**kw: float) -> tuple[Announcer, Clock]:
    clock = Clock()
    return Announcer(clock, **kw), clock


def test_sentences_are_said_once_their_end_is_certain() -> None:
    a, clock = announcer(min_gap_ms=0)
    said = []
    text = ""
    for piece in ["Hel", "lo the", "re. Sec", "ond one", ". Th", "ird"]:
        text += piece
        clock.now += 16
        a.update("m", [], text, ended=False)
        said += a.take()
    assert said == ["Hello there.", "Second one."]
    a.update("m", [], text, ended=True)
    assert a.take() == ["Third."]


def test_a_block_end_says_its_rest_and_nothing_twice() -> None:
    a, clock = announcer(min_gap_ms=0)
    a.update("m", [], "First. Second half", ended=False)
    assert a.take() == ["First."]
    a.update("m", [], "First. Second half of it\nNext", ended=False)
    assert a.take() == ["Second half of it."]
    a.update("m", ["First. Second half of it"], "Next para", ended=False)
    assert a.take() == []
    a.update("m", ["Next paragraph."], "", ended=True)
    assert a.take() == ["Next paragraph."]


def test_at_its_deadline_what_was_due_is_taken() -> None:
    """A caller woken at `deadline()` finds it due: at these frame times
    `(t + wait) - t < wait` in floating point, and a check written as
    `now - t >= wait` found nothing due and asked again at once, for ever
    (a live region's 0 ms timer looped on the cjk_emoji trace)."""
    frame = 1000 / 60
    a, clock = announcer(pause_ms=1000, min_gap_ms=400)
    clock.now = 2 * frame  # (t + 1000) - t < 1000 here
    a.update("m", [], "Thinking about it", ended=False)
    deadline = a.deadline()
    assert deadline is not None and deadline - clock.now < 1000
    clock.now = deadline
    assert a.take() == ["Thinking about it."]
    assert a.deadline() is None
    # The gap between two announcements, likewise.
    a, clock = announcer(pause_ms=1000, min_gap_ms=400)
    clock.now = 7 * frame  # (t + 400) - t < 400 here
    a.update("n", [], "One. Two", ended=False)
    assert a.take() == ["One."]
    a.update("n", [], "One. Two. Three", ended=False)
    assert a.take() == []  # within the gap
    deadline = a.deadline()
    assert deadline is not None and deadline - clock.now < 400
    clock.now = deadline
    assert a.take() == ["Two."]


def test_a_pause_says_what_waits() -> None:
    a, clock = announcer(pause_ms=1000, min_gap_ms=0)
    a.update("m", [], "Thinking about it", ended=False)
    assert a.take() == []
    assert a.deadline() == 1000
    clock.now = 999
    assert a.take() == []
    clock.now = 1000
    assert a.take() == ["Thinking about it."]
    assert a.deadline() is None
    clock.now = 1500
    a.update("m", [], "Thinking about it some more. Ok", ended=False)
    assert a.take() == ["some more."]


def test_growth_postpones_the_pause() -> None:
    a, clock = announcer(pause_ms=1000, min_gap_ms=0)
    text = ""
    for i in range(100):  # a long sentence arriving for 1.6 s: no pause
        text += "word "
        clock.now = i * 16.0
        a.update("m", [], text.strip(), ended=False)
        assert a.take() == []


def test_announcements_keep_a_gap_and_join_what_came_meanwhile() -> None:
    a, clock = announcer(min_gap_ms=400, pause_ms=10_000)
    a.update("m", [], "One. Two", ended=False)
    assert a.take() == ["One."]
    clock.now = 100
    a.update("m", [], "One. Two. Three", ended=False)
    assert a.take() == []
    clock.now = 200
    a.update("m", [], "One. Two. Three. Four", ended=False)
    assert a.take() == []
    assert a.deadline() == 400
    clock.now = 400
    assert a.take() == ["Two. Three."]


def test_summaries_and_headings_end_as_sentences() -> None:
    a, _ = announcer(min_gap_ms=0)
    a.update("m", ["Setup", "code block, Python, 3 lines", "one\ntwo"], "", ended=True)
    assert a.take() == ["Setup. code block, Python, 3 lines. one. two."]


def test_a_changed_summary_is_not_said_again() -> None:
    a, clock = announcer(pause_ms=1000, min_gap_ms=0)
    a.update("m", [], "Intro\ncode block, 2 lines", ended=False)
    clock.now = 1000
    assert a.take() == ["Intro. code block, 2 lines."]
    a.update("m", [], "Intro\ncode block, 5 lines\nAfter it. Yes", ended=False)
    assert a.take() == ["After it."]


def test_the_run_end_says_the_rest_then_the_end_once() -> None:
    a, clock = announcer(min_gap_ms=400, pause_ms=10_000)
    a.run_started("Generating…")
    assert a.take() == ["Generating…"]
    a.run_started("Generating…")
    a.update("m", [], "Half a sent", ended=False)
    clock.now = 10
    a.run_ended("Done")
    assert a.take() == ["Half a sent. Done."]  # at once, gap or not
    a.run_ended("Done")
    assert a.take() == []
    assert a.count == 2
    clock.now = 1000
    a.run_started("Generating…")  # the next run (agents reuse run ids: none needed)
    a.run_ended("Stopped")
    assert a.take() == ["Generating… Stopped."]


def test_a_run_over_before_it_was_shown_is_not_said() -> None:
    a, _ = announcer()
    a.run_ended("Done", quiet=True)
    a.run_ended("Done")
    assert a.take() == []


def test_skipped_text_is_never_said() -> None:
    a, clock = announcer(min_gap_ms=0, pause_ms=1000)
    a.skip("m", "Old history. All of it")
    clock.now = 5000
    assert a.take() == []
    a.update("m", [], "Old history. All of it. New one. And", ended=False)
    assert a.take() == ["New one."]


def test_twelve_sentences_streamed_in_small_pieces() -> None:
    sentences = [f"Sentence number {i} says something useful." for i in range(12)]
    text = " ".join(sentences)
    a, clock = announcer()
    said: list[str] = []
    for end in range(0, len(text) + 1, 3):  # 3 characters per 16 ms frame
        clock.now += 16
        a.update("m", [], text[:end], ended=False)
        said += a.take()
    a.update("m", [], text, ended=True)
    clock.now += 1000
    said += a.take()
    heard = " ".join(said)
    assert all(s in heard for s in sentences)
    assert len(said) <= len(sentences)


# ---------------------------------------------------------------- outline
def test_the_highest_level_becomes_the_base_and_none_is_skipped() -> None:
    outline = HeadingOutline(2)
    assert [outline.add(level) for level in (3, 4, 6, 4, 3, 1, 2, 5)] == [2, 3, 4, 3, 2, 2, 3, 4]


def test_a_level_is_peeked_without_changing_the_outline() -> None:
    outline = HeadingOutline(3)
    outline.add(1)
    assert outline.level(2) == 4
    assert outline.level(2) == 4
    assert outline.add(4) == 4
    assert outline.level(1) == 3


def test_levels_stop_at_six_and_the_base_follows_the_host() -> None:
    outline = HeadingOutline(5)
    assert [outline.add(level) for level in (1, 2, 3, 4)] == [5, 6, 6, 6]
    assert base_below(1) == 2 and base_below(None) == 2 and base_below(6) == 6
    with pytest.raises(ValueError):
        HeadingOutline(0)


def test_streaming_one_character_a_frame_says_every_sentence_once() -> None:
    text = ("Ask Dr. Smith about 3.5 ms. Then e.g. the rest! 「はい。」次の文。"
            "Is it (really) done? Yes.\nA new line here. Last one")
    a, clock = announcer(min_gap_ms=0, pause_ms=10_000)
    said: list[str] = []
    for end in range(len(text) + 1):
        clock.now += 16
        a.update("m", [], text[:end], ended=False)
        said += a.take()
    a.update("m", [], text, ended=True)
    said += a.take()
    assert " ".join(said) == " ".join(
        s if s[-1] in ".!?。」" else s + "." for s in split_sentences(text))


def test_a_run_on_text_is_said_in_bounded_pieces() -> None:
    words = [f"word{i}" for i in range(3000)]
    text = " ".join(words)  # no sentence end anywhere
    a, clock = announcer(min_gap_ms=0, pause_ms=10_000)
    said: list[str] = []
    for end in range(0, len(text) + 1, 7):
        clock.now += 16
        a.update("m", [], text[:end], ended=False)
        said += a.take()
    a.update("m", [], text, ended=True)
    said += a.take()
    assert " ".join(said).replace(".", "").split() == words
    assert max(len(s) for s in said) <= MAX_UNSAID + 10
    assert len(said) >= len(text) // (MAX_UNSAID + 10)


def test_scan_resumes_where_the_text_was_undecided() -> None:
    ends, resume = scan("One. Two. Thr")
    assert ends == [5, 10] and resume == len("One. Two. Thr")
    ends, resume = scan("One. Two.")
    assert ends == [5] and resume == len("One. Two")  # "." waits for what follows
    assert scan("One. Two. And", resume)[0] == [10]
