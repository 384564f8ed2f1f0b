"""Segmenters and the table-driven 'could this cluster still grow' classifier."""

from __future__ import annotations

import subprocess
import sys

import pytest
import regex
from streampace.pacing.graphemes import (
    CodePointSegmenter,
    FallbackSegmenter,
    RegexSegmenter,
    Segmenter,
    default_segmenter,
    is_control,
    is_extend_like,
    is_extended_pictographic,
    is_regional_indicator,
    may_extend,
    rejoin_emoji_zwj,
)

ALL_SCALARS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)

FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
FLAG_JP = "\U0001F1EF\U0001F1F5"
THUMB_MEDIUM = "\U0001F44D\U0001F3FD"
HEART_VS16 = "\u2764\uFE0F"
SCOTLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
HANGUL_JAMO = "\u1100\u1161\u11A8"  # L V T -> one syllable cluster


def _property_set(prop: str) -> set[int]:
    return {ord(m) for m in regex.findall(rf"\p{{{prop}}}", ALL_SCALARS)}


def test_extended_pictographic_table_covers_what_the_host_segmenter_joins() -> None:
    # The table is emoji-data.txt's Extended_Pictographic (3537 code points,
    # incl. reserved SMP blocks); `regex` ships a narrower set.  A superset is
    # the safe direction: at worst one emoji waits for the next delta.
    regex_set = _property_set("Extended_Pictographic")
    mine = {c for c in range(0x110000) if is_extended_pictographic(c)}
    assert regex_set <= mine
    assert len(mine) == 3537
    for cp in (0x00A9, 0x203C, 0x2605, 0x1F000, 0x1F3FA, 0x1F600, 0x1FAFF, 0x1FFFD):
        assert is_extended_pictographic(cp), hex(cp)
    for cp in (0x0041, 0x00AA, 0x1F3FB, 0x1F3FF, 0x1F1E6, 0x200D, 0xFE0F, 0x1FFFE):
        assert not is_extended_pictographic(cp), hex(cp)


def test_regional_indicator_table_matches_unicode_data() -> None:
    expected = _property_set("Regional_Indicator")
    assert {c for c in range(0x1F000, 0x1F300) if is_regional_indicator(c)} == expected


@pytest.mark.parametrize("hst", ["L", "V", "T"])
def test_hangul_jamo_are_held(hst: str) -> None:
    for cp in _property_set(f"Hangul_Syllable_Type={hst}"):
        assert may_extend(chr(cp)), hex(cp)


def test_regex_segmenter_is_uax29() -> None:
    seg = RegexSegmenter()
    text = f"a{FAMILY}{FLAG_JP}e\u0301{THUMB_MEDIUM}{HANGUL_JAMO}\r\n漢"
    assert seg.split(text) == ["a", FAMILY, FLAG_JP, "e\u0301", THUMB_MEDIUM, HANGUL_JAMO,
                               "\r\n", "漢"]
    assert isinstance(seg, Segmenter)


def test_default_segmenter_is_regex_on_host() -> None:
    assert isinstance(default_segmenter(), RegexSegmenter)


def test_default_segmenter_falls_back_to_uax29_in_python_without_regex(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Was code points (every flag, ZWJ sequence and accent cut); now FallbackSegmenter.
    monkeypatch.setitem(sys.modules, "regex", None)  # import regex -> ImportError
    seg = default_segmenter()
    assert isinstance(seg, FallbackSegmenter)
    assert seg.split(FLAG_JP + "a" + FAMILY) == [FLAG_JP, "a", FAMILY]


def test_code_point_segmenter_splits_at_code_points() -> None:
    assert CodePointSegmenter().split(FLAG_JP + "a") == ["\U0001F1EF", "\U0001F1F5", "a"]


def test_fallback_segmenter_passes_every_grapheme_break_test_vector(
        grapheme_vectors: list[list[str]]) -> None:
    seg = FallbackSegmenter()
    failed = [v for v in grapheme_vectors if seg.split("".join(v)) != v]
    assert failed == [], f"{len(failed)} of {len(grapheme_vectors)} vectors segmented wrongly"


def test_fallback_segmenter_agrees_with_regex_on_real_text() -> None:
    text = ("Zoë naïve café, e\u0301t\u00e9 \u0915\u094d\u0937\u093f \u0939\u093f\u0928"
            "\u094d\u0926\u0940 \u09b8\u09cd\u09ac \u0e01\u0e33 \uac01\u1100\u1161\u11a8 "
            f"{FAMILY} {FLAG_JP}{FLAG_JP}\U0001F1EF {THUMB_MEDIUM} {HEART_VS16} {SCOTLAND} "
            "\u0600\u0661 \u05e9\u05c1\u05b8 \u0644\u064e \r\n\t\u2701\u200d\u2701 "
            "\U0001F3F3\uFE0F\u200D\U0001F308 \u1000\u102c\u1038 漢字かな")
    assert FallbackSegmenter().split(text) == RegexSegmenter().split(text)


def test_core_modules_import_without_regex() -> None:
    code = (
        "import sys; sys.modules['regex'] = None\n"
        "import streampace.pacing.graphemes as g, streampace.pacing.scheduler as s\n"
        "assert type(g.default_segmenter()).__name__ == 'FallbackSegmenter'\n"
        "assert g.may_extend('\\U0001F468\\u200d')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("cluster", [
    "\U0001F468\u200D",             # ends with ZWJ
    "\U0001F1EF",                   # lone regional indicator
    "\U0001F44D",                   # emoji that may take a modifier / ZWJ
    THUMB_MEDIUM,                   # ... which may still take a ZWJ
    HEART_VS16,
    FAMILY,                         # a family may still grow (+ZWJ +child)
    "\U0001F3F4\U000E0067",         # unfinished tag sequence
    "\u1100", "\u1100\u1161",       # Hangul L, LV jamo
    "\u0915\u094D",                 # consonant + virama (conjunct may follow)
    "\r",                           # CR LF
    # Until issue 12 item 7 these were "final"; each can take a combining mark
    # (GB9), a SpacingMark (GB9a) or a ZWJ, so a later delta may extend them:
    "a", "e\u0301",                  # Latin base / decomposed Latin: + U+0301, + U+0323
    "\u0915",                       # Devanagari KA + vowel sign AA (SpacingMark)
    "가",                           # Hangul LV syllable + T jamo (GB8)
    "\uAC01",                       # LVT + T
    FLAG_JP,                        # a complete flag still takes Extend
    "漢", " ", "1", ".",            # any base takes a combining mark / ZWJ
    "\u0600",                       # Prepend joins whatever follows (GB9b)
])
def test_may_extend_true(cluster: str) -> None:
    assert may_extend(cluster)


@pytest.mark.parametrize("cluster", [
    "", "\n", "\r\n", "\t", "\x00", "\x1b", "\x7f", "\x85", "\u00ad", "\u200b", "\u2028",
    "\u2029", "\ufeff",
])
def test_may_extend_false_only_after_a_control(cluster: str) -> None:
    assert not may_extend(cluster)


def test_only_controls_are_final() -> None:
    """Every code point may_extend calls final is Control or LF (GB4) per `regex`."""
    final = {c for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and not may_extend(chr(c))}
    controls = _property_set("Grapheme_Cluster_Break=Control") | {0x0A}
    assert final <= controls
    assert set(range(0x20)) - {0x0D} <= final  # all of C0 but CR
    assert all(is_control(c) for c in range(0x7F, 0xA0))


def test_every_proper_prefix_of_a_vector_cluster_may_extend(
        multi_code_point_clusters: list[str]) -> None:
    """The holdback's premise, on Unicode's own vectors: a delta that ends inside
    a cluster ends in a cluster that may_extend says could still grow."""
    seg = RegexSegmenter()
    missed = []
    for cluster in multi_code_point_clusters:
        for cut in range(1, len(cluster)):
            head = seg.split(cluster[:cut])
            if not may_extend(head[-1]):
                missed.append(" ".join(f"{ord(c):04X}" for c in cluster[:cut]))
    assert missed == []


def test_regex_segmenter_passes_every_grapheme_break_test_vector(
        grapheme_vectors: list[list[str]]) -> None:
    seg = RegexSegmenter()
    failed = [v for v in grapheme_vectors if seg.split("".join(v)) != v]
    assert failed == [], f"{len(failed)} of {len(grapheme_vectors)} vectors segmented wrongly"


def test_regex_segmenter_closes_regex_gb11_gap() -> None:
    # U+2701 is Extended_Pictographic (emoji-data.txt) but not in regex's table.
    seg = RegexSegmenter()
    scissors = "\u2701\u200d\u2701"
    assert seg.split(scissors) == [scissors]
    assert seg.split("x\u2701\u0308\u200d\U0001F600!") == ["x", "\u2701\u0308\u200d\U0001F600", "!"]
    assert seg.split("a\u200d\u2701") == ["a\u200d", "\u2701"]  # GB11 needs an ExtPict
    assert seg.split(FAMILY + "\u200d\u2701") == [FAMILY + "\u200d\u2701"]


def test_may_extend_agrees_with_segmentation_for_single_code_points() -> None:
    """Any code point X that a real segmenter joins to a following code point
    (for the continuations that matter) must be classified as extendable."""
    seg = RegexSegmenter()
    followers = ["\u200D", "\U0001F3FD", "\uFE0F", "\U0001F1F5", "\u1161", "\u11A8",
                 "\U0001F469", "\u0915"]
    probe = [chr(c) for c in range(0x1F000, 0x1FB00)] + [chr(c) for c in range(0x1100, 0x1200)]
    for x in probe:
        for f in followers:
            if f == "\u200D":
                continue  # everything takes a ZWJ (GB9); only pictographs join onwards
            if len(seg.split(x + f)) == 1 and f not in "\U0001F3FD\uFE0F":
                assert may_extend(x), (hex(ord(x)), hex(ord(f)))


def test_ascii_fast_path_matches_uax29() -> None:
    seg = RegexSegmenter()
    ascii_all = "".join(chr(c) for c in range(128))
    for text in (ascii_all, "plain words", "a\r\nb\rc\n", "\r"):
        assert seg.split(text) == regex.findall(r"\X", text)


def test_is_extend_like_is_a_subset_of_grapheme_extend() -> None:
    extend = _property_set("Grapheme_Cluster_Break=Extend")
    like = {ord(ch) for ch in ALL_SCALARS if is_extend_like(ch)}
    # unicodedata and regex may follow different Unicode versions (CPython
    # 3.11: 14.0): U+1171E AHOM CONSONANT SIGN MEDIAL RA was Mn until 14.0.
    assert like - extend <= {0x1171E}
    assert {0x0301, 0xFE0F, 0x1F3FB, 0x20E3, 0xE0067, 0x200C} <= like
    assert len(like) > 0.9 * len(extend)


class _FakeLengths:
    def __init__(self, lengths: list[int]) -> None:
        self._lengths = lengths
        self.destroyed = False

    def to_py(self) -> _FakeLengths:
        return self

    def tolist(self) -> list[int]:
        return self._lengths

    def destroy(self) -> None:
        self.destroyed = True


class _FakeBridge:
    """js_shim/bridge.js as Pyodide sees it, segmenting like Chromium 156 does
    (which, like `regex`, splits 2701 200D 2701)."""

    def __init__(self) -> None:
        self._findall = regex.compile(r"\X").findall

    def hasSegmenter(self) -> bool:  # noqa: N802 (the JS name)
        return True

    def graphemeLengths(self, text: str) -> _FakeLengths:  # noqa: N802
        return _FakeLengths([len(c) for c in self._findall(text)])


def test_intl_segmenter_path_gets_the_gb11_fix_too() -> None:
    from streampace.browser.segmenter import IntlSegmenter

    seg = IntlSegmenter(_FakeBridge())
    assert seg.split("a\u2701\u200d\u2701b") == ["a", "\u2701\u200d\u2701", "b"]
    assert seg.split("\u2701\ufe0f\u200d\u2701") == ["\u2701\ufe0f\u200d\u2701"]
    assert seg.split("a\u200d\u2701") == ["a\u200d", "\u2701"]
    assert seg.split(FAMILY + FLAG_JP) == [FAMILY, FLAG_JP]


def test_rejoin_emoji_zwj_only_joins_adjacent_clusters() -> None:
    parts = ["x", "\u2701\u200d", "\u2701", "\u0308", "\u200d", "\U0001F600"]
    out = rejoin_emoji_zwj(parts)
    assert "".join(out) == "".join(parts)
    assert out == ["x", "\u2701\u200d\u2701", "\u0308", "\u200d", "\U0001F600"]
