"""The hold rule (issue 20) on real sequences: what a reader sees between two deltas.

Each sequence is cut at every code point and streamed as ``"ab" + head`` then
``tail + "cd"`` 100 ms later, frames running.  Between the two deltas the
screen shows either ``"ab"`` (the head is held: the tail would change it
visibly) or ``"ab" + head`` (shown at once: the tail only adds a mark to it).
The expectations are written out per cut, not derived from the rule.
"""

from __future__ import annotations

import pytest
from streampace.pacing.graphemes import (
    FallbackSegmenter,
    RegexSegmenter,
    may_extend,
    shows_incomplete,
)

from .conftest import AG, Rig, RigFactory

FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467"  # 👨‍👩‍👧
THUMB_DARK = "\U0001F44D\U0001F3FF"  # 👍🏿
HEART = "\u2764\uFE0F"  # ❤️
FIRE_HEART = "\u2764\uFE0F\u200D\U0001F525"  # ❤️‍🔥
FLAG_JP = "\U0001F1EF\U0001F1F5"
SCOTLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
KEYCAP_1 = "1\uFE0F\u20E3"
KEYCAP_HASH = "#\uFE0F\u20E3"
HAN_NFD = "\u1112\u1161\u11AB"  # 한 as L V T jamo
GUL_NFD = "\u1100\u1173\u11AF"  # 글
KSSA = "\u0915\u094D\u0937"  # क्ष
STE = "\u0938\u094D\u0924\u0947"  # स्ते (in नमस्ते)
E_ACUTE = "e\u0301"  # é decomposed
KA_I = "\u0915\u093F"  # कि: the vowel sign is drawn before the consonant, but it is one glyph

# (sequence, cuts at which the head is held)
CASES = [
    (FAMILY, {1, 2, 3, 4, 5, 6, 7}),  # every cut: ZWJ or pictograph last
    (THUMB_DARK, {1, 2}),
    (HEART, {1}),
    (FIRE_HEART, {1, 2, 3, 4}),
    (FLAG_JP, {1}),  # half a flag
    (SCOTLAND, set(range(1, len(SCOTLAND)))),
    (KEYCAP_1, {1, 2}),
    (KEYCAP_HASH, {1, 2}),
    (HAN_NFD, {1, 2}),  # L, then L V: the syllable is not there yet
    (GUL_NFD, {1, 2}),
    (KSSA, {2}),  # क alone is a letter; क् waits for its conjunct
    (STE, {2}),  # स alone shown, स् held; स्त + े is a letter + vowel sign
    (E_ACUTE, set()),
    (KA_I, set()),
]


def _stream(rig: Rig, ag: type[AG], seq: str, cut: int) -> str:
    """Between-delta screen text for `seq` cut at `cut` (in code units)."""
    rig.sched.enqueue("s", [ag.start(), ag.content("ab" + seq[:cut])])
    rig.frames(6, 1000 / 60)  # 100 ms: the pacer catches up with the first delta
    between = rig.text()
    rig.sched.enqueue("s", [ag.content(seq[cut:] + "cd")])
    rig.frames(6, 1000 / 60)
    rig.sched.enqueue("s", [ag.end()])
    rig.frames_until_idle()
    assert rig.text() == "ab" + seq + "cd"
    return between


@pytest.mark.parametrize(("seq", "held"), CASES,
                         ids=lambda v: "-".join(f"{ord(c):X}" for c in v)
                         if isinstance(v, str) else None)
def test_each_cut_shows_what_the_reader_may_see(rig_factory: RigFactory, ag: type[AG], seq: str,
                                                held: set[int]) -> None:
    for cut in range(1, len(seq)):
        rig = rig_factory()
        between = _stream(rig, ag, seq, cut)
        expected = "ab" if cut in held else "ab" + seq[:cut]
        assert between == expected, (cut, between)


@pytest.mark.parametrize(("seq", "held"), CASES,
                         ids=lambda v: "-".join(f"{ord(c):X}" for c in v)
                         if isinstance(v, str) else None)
def test_the_rule_on_the_cluster_the_segmenters_leave_last(seq: str, held: set[int]) -> None:
    """The same verdicts from the rule itself, whichever segmenter cut the head."""
    for seg in (RegexSegmenter(), FallbackSegmenter()):
        for cut in range(1, len(seq)):
            last = seg.split(seq[:cut])[-1]
            assert shows_incomplete(last) is (cut in held), (seg.name, cut, last)


def test_a_lone_continuation_of_a_cluster_on_screen_is_held(rig: Rig, ag: type[AG]) -> None:
    """क shown, then a delta of just the virama: what the reader would see is
    क्, which still waits for its consonant."""
    rig.sched.enqueue("s", [ag.start(), ag.content("ab\u0915")])
    rig.frames(6)
    assert rig.text() == "ab\u0915"
    rig.sched.enqueue("s", [ag.content("\u094D")])
    rig.frames(6)
    assert rig.text() == "ab\u0915"
    rig.sched.enqueue("s", [ag.content("\u0937 cd"), ag.end()])
    rig.frames_until_idle()
    assert rig.text() == "ab" + KSSA + " cd"


@pytest.mark.parametrize("text", ["a", "Hello", "漢字", "。", " ", "\n", "e\u0301", "\u0915",
                                  "\u0915\u093F", FLAG_JP, "\uAC01", "\u1100\u1161\u11A8",
                                  "\r", "\r\n", "",
                                  # a SpacingMark after the pictograph ends GB11's chance
                                  "\u231A\u0903\u0308", "\u231A\u0903\u0903\u0308"])
def test_complete_or_mark_ready_clusters_are_not_held(text: str) -> None:
    clusters = RegexSegmenter().split(text) or [""]
    assert not shows_incomplete(clusters[-1])


@pytest.mark.parametrize("cluster", ["\U0001F600", "\u00A9", "\u2764", HEART, THUMB_DARK,
                                     "\U0001F468\u200D", "\U0001F1EF", "1", "#", "*",
                                     "1\uFE0F", "\u1100", "\u1160", "\uAC00",
                                     "\u1100\u1161", "\u0915\u094D", "\u0915\u094D\u200D",
                                     "\u17D2", "\u1780\u17D2", "\u0600", "\U000110BD",
                                     "\u231A\u0308", "\u231A\u0308\u200D"])
def test_incomplete_clusters_are_held(cluster: str) -> None:
    assert shows_incomplete(cluster)


def test_the_hold_rule_is_inside_the_segmentation_rule() -> None:
    """Whatever the rule holds could still grow under UAX #29 (it is never a
    reason to hold something complete)."""
    sample = [chr(c) for c in range(0x20, 0x3400)] + [chr(c) for c in range(0x1F000, 0x1FB00)]
    for ch in sample:
        if shows_incomplete(ch):
            assert may_extend(ch), hex(ord(ch))
