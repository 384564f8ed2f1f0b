"""Grapheme clusters: the only unit the pacer ever slices text at.

A segmenter is any object with ``split(text) -> list[str]`` returning extended
grapheme clusters (UAX #29) whose concatenation is ``text``.  On the host the
default is the ``regex`` module's ``\\X`` (with its one known gap closed: see
:class:`RegexSegmenter`); the browser adapter injects one backed by
``Intl.Segmenter`` because ``regex`` is not available in Pyodide.  Without
either, :class:`FallbackSegmenter` does UAX #29 from ``unicodedata`` and small
tables (:class:`CodePointSegmenter` remains for tests and benchmarks).

:func:`may_extend` says whether a cluster that ends a provider delta could still
grow when the next delta arrives.  Under UAX #29 almost every cluster can (a
combining mark, a spacing vowel sign or a ZWJ may follow any base), so only
clusters that end in a control character are final.

:func:`shows_incomplete` is the pacer's hold rule, a small subset of that: would
code points that may still arrive change this cluster *visibly* — half an emoji
sequence, an odd regional indicator, a digit waiting for its keycap, conjoining
Hangul jamo, an Indic consonant + virama waiting for its conjunct, a Prepend
waiting for its base?  A Latin letter, an ideograph or a space that later gains
a combining mark is shown again as the same glyph with its mark, so those are
never held.  Both must give the same answer whichever segmenter is injected,
and must not need ``regex``.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = [
    "utf16_units",
    "Segmenter",
    "RegexSegmenter",
    "CodePointSegmenter",
    "FallbackSegmenter",
    "default_segmenter",
    "rejoin_emoji_zwj",
    "is_extend_like",
    "may_extend",
    "shows_incomplete",
    "is_extended_pictographic",
    "is_regional_indicator",
    "is_control",
]


def utf16_units(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (astral characters count 2): the
    unit of JavaScript string lengths and DOM text offsets."""
    # Only code points above U+FFFF need a second unit; the ASCII/BMP case is
    # just len(), and the encode is skipped when the string has no astral char.
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


@runtime_checkable
class Segmenter(Protocol):
    def split(self, text: str) -> list[str]: ...


class CodePointSegmenter:
    """One cluster per code point (never cuts a surrogate pair; not UAX #29)."""

    name = "codepoint"

    def split(self, text: str) -> list[str]:
        return list(text)


class RegexSegmenter:
    """UAX #29 extended grapheme clusters via the ``regex`` module's ``\\X``.

    ``regex`` ships a narrower Extended_Pictographic set than emoji-data.txt
    (U+2701 is missing, so GraphemeBreakTest's ``2701 200D 2701`` comes out
    split), hence :func:`rejoin_emoji_zwj` over its output.
    """

    name = "regex"

    def __init__(self) -> None:
        import regex  # deferred: absent in the browser, where Intl.Segmenter is injected

        self._findall = regex.compile(r"\X").findall
        match_extend = regex.compile(r"\p{Grapheme_Cluster_Break=Extend}").match
        self._is_extend = lambda ch: match_extend(ch) is not None

    def split(self, text: str) -> list[str]:
        if text.isascii() and "\r" not in text:
            # Every ASCII character but CR (CR LF) is its own cluster; ~35x faster.
            return list(text)
        clusters = self._findall(text)
        if "\u200d" in text:
            clusters = rejoin_emoji_zwj(clusters, self._is_extend)
        return clusters


def rejoin_emoji_zwj(clusters: list[str],
                     is_extend: Callable[[str], bool] | None = None) -> list[str]:
    """Apply GB11 (ExtPict Extend* ZWJ x ExtPict) again with this module's table.

    Both ``regex`` and Chromium's Intl.Segmenter (156) miss U+2701 (emoji-data
    15.0: ``26FE..2701 ; Extended_Pictographic``) and split ``2701 200D 2701``.
    Only adjacent clusters are joined, so this can never cut one.  ``is_extend``
    is Grapheme_Cluster_Break=Extend; without it :func:`is_extend_like`.
    """
    if len(clusters) < 2:
        return clusters
    ext = is_extend if is_extend is not None else is_extend_like
    out: list[str] = []
    for c in clusters:
        if out and is_extended_pictographic(ord(c[0])) and _ends_emoji_zwj(out[-1], ext):
            out[-1] += c
        else:
            out.append(c)
    return out


def _ends_emoji_zwj(cluster: str, is_extend: Callable[[str], bool]) -> bool:
    """Does ``cluster`` end in ExtPict Extend* ZWJ (the left side of GB11)?"""
    if cluster[-1] != "\u200d":
        return False
    for ch in reversed(cluster[:-1]):
        if is_extended_pictographic(ord(ch)):
            return True
        if not is_extend(ch):
            return False
    return False


def is_extend_like(ch: str) -> bool:
    """Grapheme_Cluster_Break=Extend from ``unicodedata`` alone (no ``regex``).

    Nonspacing and enclosing marks, emoji modifiers, ZWNJ and tag characters;
    the few Extend code points outside those (some Mc, U+FF9E/F) answer False,
    which only makes :func:`rejoin_emoji_zwj` keep a segmenter's split.
    """
    cp = ord(ch)
    return (unicodedata.category(ch) in ("Mn", "Me") or 0x1F3FB <= cp <= 0x1F3FF
            or cp == 0x200C or 0xE0020 <= cp <= 0xE007F)


def default_segmenter() -> Segmenter:
    """``regex`` ``\\X`` when importable, else :class:`FallbackSegmenter`."""
    try:
        return RegexSegmenter()
    except ImportError:
        return FallbackSegmenter()


# Extended_Pictographic, from Unicode emoji-data.txt (stable since 13.0; the
# large reserved blocks in the SMP are included there on purpose so future
# emoji already segment correctly).  Inclusive (start, end) pairs, sorted.
# The `regex` module ships a narrower set; a superset only means that such a
# symbol at the very end of a delta waits for the next delta (<= holdback_ms).
_EXT_PICT: tuple[tuple[int, int], ...] = (
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049),
    (0x2122, 0x2122), (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA),
    (0x231A, 0x231B), (0x2328, 0x2328), (0x2388, 0x2388), (0x23CF, 0x23CF),
    (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2), (0x25AA, 0x25AB),
    (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712),
    (0x2714, 0x2714), (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721),
    (0x2728, 0x2728), (0x2733, 0x2734), (0x2744, 0x2744), (0x2747, 0x2747),
    (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755), (0x2757, 0x2757),
    (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50), (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D),
    (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F),
    (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171), (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5), (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A), (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA),
    (0x1F400, 0x1F53D), (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF), (0x1F774, 0x1F77F),
    (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F), (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F),
    (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945),
    (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD),
)
_EXT_PICT_STARTS = tuple(r[0] for r in _EXT_PICT)

_RI_FIRST, _RI_LAST = 0x1F1E6, 0x1F1FF

# Grapheme_Cluster_Break=Control (GB4: always a break after one), assigned
# code points only, all stable since Unicode 6.  LF is here too; CR is not (it
# can still take an LF).  Missing a Control only costs one held cluster.
_CONTROL: tuple[tuple[int, int], ...] = (
    (0x0000, 0x000C), (0x000E, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD),
    (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200B), (0x200E, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
)


# --- FallbackSegmenter's Grapheme_Cluster_Break, beyond General_Category.
(_OTHER, _CR, _LF, _CONTROL_GCB, _EXTEND, _ZWJ, _RI, _PREPEND, _SPACING, _L, _V, _T, _LV,
 _LVT) = range(14)
_PREPEND_RANGES: tuple[tuple[int, int], ...] = (
    (0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2),
    (0x0D4E, 0x0D4E), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x111C2, 0x111C3),
    (0x113D1, 0x113D1), (0x1193F, 0x1193F), (0x11941, 0x11941), (0x11A3A, 0x11A3A),
    (0x11A84, 0x11A89),
    (0x11D46, 0x11D46), (0x11F02, 0x11F02),
)
# Spacing marks (Mc) that UAX #29 counts as Extend (Other_Grapheme_Extend etc.),
# and the Lo/Mc exceptions around SpacingMark.
_EXTEND_MC = frozenset({
    0x09BE, 0x09D7, 0x0B3E, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC0, 0x0CC2, 0x0CC7, 0x0CC8, 0x0CCA,
    0x0CCB, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57, 0x0DCF, 0x0DDF, 0x1715, 0x1734, 0x1B35, 0x1B3B,
    0x1B3D, 0x1B43, 0x1B44, 0x1BAA, 0x1BF2, 0x1BF3, 0x302E, 0x302F, 0xA953, 0xA9C0, 0xFF9E,
    0xFF9F, 0x1133E, 0x1134D, 0x11357, 0x114B0, 0x114BD, 0x115AF, 0x116B6, 0x11930, 0x1193D,
    0x1D165, 0x1D16D, 0x1D16E, 0x1D16F, 0x1D170, 0x1D171, 0x1D172,
})
_SPACING_EXTRA = frozenset({0x0CF3, 0x0E33, 0x0EB3})
# Mc that UAX #29 leaves as Other (Myanmar, Tai Tham, Tai Viet, Ahom).
_MC_OTHER: tuple[tuple[int, int], ...] = (
    (0x102B, 0x102C), (0x1038, 0x1038), (0x1062, 0x1064), (0x1067, 0x106D), (0x1083, 0x1083),
    (0x1087, 0x108C), (0x108F, 0x108F), (0x109A, 0x109C), (0x1A61, 0x1A61), (0x1A63, 0x1A64),
    (0xAA7B, 0xAA7B), (0xAA7D, 0xAA7D), (0x11720, 0x11721),
)
# InCB (Unicode 15.1, GB9c): the consonants and viramas of Devanagari, Bengali,
# Gujarati, Oriya, Telugu and Malayalam.
_INCB_CONSONANTS: tuple[tuple[int, int], ...] = (
    (0x0915, 0x0939), (0x0958, 0x095F), (0x0978, 0x097F), (0x0995, 0x09A8), (0x09AA, 0x09B0),
    (0x09B2, 0x09B2), (0x09B6, 0x09B9), (0x09DC, 0x09DD), (0x09DF, 0x09DF), (0x09F0, 0x09F1),
    (0x0A95, 0x0AA8), (0x0AAA, 0x0AB0), (0x0AB2, 0x0AB3), (0x0AB5, 0x0AB9), (0x0AF9, 0x0AF9),
    (0x0B15, 0x0B28), (0x0B2A, 0x0B30), (0x0B32, 0x0B33), (0x0B35, 0x0B39), (0x0B5C, 0x0B5D),
    (0x0B5F, 0x0B5F), (0x0B71, 0x0B71), (0x0C15, 0x0C28), (0x0C2A, 0x0C39), (0x0C58, 0x0C5A),
    (0x0D15, 0x0D3A),
)
_INCB_LINKERS = frozenset({0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D})


def _is_incb_consonant(cp: int) -> bool:
    return 0x0915 <= cp <= 0x0D3A and _in_ranges(cp, _INCB_CONSONANTS)


def _gcb(ch: str) -> int:
    cp = ord(ch)
    if cp < 0x7F:
        if cp >= 0x20:
            return _OTHER
        return _CR if cp == 0x0D else _LF if cp == 0x0A else _CONTROL_GCB
    if cp == 0x200D:
        return _ZWJ
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return _L
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return _V
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return _T
    if 0xAC00 <= cp <= 0xD7A3:
        return _LV if (cp - 0xAC00) % 28 == 0 else _LVT
    if _RI_FIRST <= cp <= _RI_LAST:
        return _RI
    cat = unicodedata.category(ch)
    if cat in ("Mn", "Me") or cp in _EXTEND_MC or is_extend_like(ch):
        return _EXTEND
    if (cat == "Mc" and not _in_ranges(cp, _MC_OTHER)) or cp in _SPACING_EXTRA:
        return _SPACING
    if _in_ranges(cp, _PREPEND_RANGES):
        return _PREPEND
    if is_control(cp) or cat in ("Cc", "Zl", "Zp") or (cat == "Cf" and cp != 0x200C
                                                       and not 0xE0020 <= cp <= 0xE007F):
        return _CONTROL_GCB
    return _OTHER


def _breaks(prev: int, cur: int, ri_odd: bool, gb11: bool, gb9c: bool) -> bool:
    """Is there a grapheme break between a code point of class prev and one of cur?"""
    if prev == _CR and cur == _LF:
        return False  # GB3
    if prev in (_CR, _LF, _CONTROL_GCB) or cur in (_CR, _LF, _CONTROL_GCB):
        return True  # GB4, GB5
    if prev == _L and cur in (_L, _V, _LV, _LVT):
        return False  # GB6
    if prev in (_LV, _V) and cur in (_V, _T):
        return False  # GB7
    if prev in (_LVT, _T) and cur == _T:
        return False  # GB8
    if cur in (_EXTEND, _ZWJ, _SPACING) or prev == _PREPEND:
        return False  # GB9, GB9a, GB9b
    if gb9c or gb11:
        return False  # GB9c, GB11
    return not (prev == _RI and cur == _RI and ri_odd)  # GB12, GB13; else GB999


class FallbackSegmenter:
    """UAX #29 from ``unicodedata`` and small tables, for when neither ``regex``
    nor ``Intl.Segmenter`` is there (Pyodide in a browser without it).

    Marks come from the General_Category of whatever Unicode version the
    running Python has; the exceptions are tables below.  Where it is
    approximate (a mark newer than the tables, GB9c beyond the six Indic
    scripts of Unicode 15.1) it mostly joins rather than splits.
    Passes Unicode 15.0's GraphemeBreakTest (tests/core/test_graphemes.py).
    """

    name = "fallback"

    def split(self, text: str) -> list[str]:
        if text.isascii() and "\r" not in text:
            return list(text)
        out: list[str] = []
        start = 0
        prev = _OTHER
        ri_odd = False  # an odd run of regional indicators ends at prev
        emoji = 0  # 1: after ExtPict Extend*; 2: after ExtPict Extend* ZWJ (GB11)
        conjunct = 0  # 1: after an InCB consonant [Extend]*; 2: ... with a linker (GB9c)
        for i, ch in enumerate(text):
            cp = ord(ch)
            cur = _gcb(ch)
            if i and _breaks(prev, cur, ri_odd, emoji == 2 and is_extended_pictographic(cp),
                             conjunct == 2 and _is_incb_consonant(cp)):
                out.append(text[start:i])
                start = i
            ri_odd = cur == _RI and not ri_odd
            if is_extended_pictographic(cp):
                emoji = 1
            elif emoji == 1 and cur == _ZWJ:
                emoji = 2
            elif not (emoji == 1 and cur == _EXTEND):
                emoji = 0
            if _is_incb_consonant(cp):
                conjunct = 1
            elif conjunct and cp in _INCB_LINKERS:
                conjunct = 2
            elif not (conjunct and cur in (_EXTEND, _ZWJ)):
                conjunct = 0
            prev = cur
        if start < len(text):
            out.append(text[start:])
        return out


def _in_ranges(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def is_extended_pictographic(cp: int) -> bool:
    i = bisect_right(_EXT_PICT_STARTS, cp) - 1
    return i >= 0 and cp <= _EXT_PICT[i][1]


def is_regional_indicator(cp: int) -> bool:
    return _RI_FIRST <= cp <= _RI_LAST


def is_control(cp: int) -> bool:
    """Grapheme_Cluster_Break Control or LF (a subset: see ``_CONTROL``)."""
    return (cp < 0x20 and cp != 0x0D) or (cp >= 0x7F and _in_ranges(cp, _CONTROL))


def may_extend(cluster: str) -> bool:
    """Could code points arriving later still join this (last) cluster?

    Yes for every cluster that does not end in a control: GB9/GB9a let an
    Extend (combining mark), ZWJ or SpacingMark follow any of them -- a space,
    a Latin letter waiting for U+0301, a Devanagari consonant waiting for its
    vowel sign, a complete flag or syllable.  The narrower cases (Prepend,
    Hangul L/V/LV/LVT, half a flag, ExtPict ZWJ, a virama) are all inside that.
    A lone CR may still take an LF (GB3).  No for LF, CR LF and other controls
    (GB4), and for the empty string.  Holding every other last cluster costs
    at most one grapheme per delta, and only when the pacer has caught up.
    """
    if not cluster:
        return False
    last = ord(cluster[-1])
    return last == 0x0D or not is_control(last)


# --- The hold rule (shows_incomplete) -----------------------------------------

# Indic_Conjunct_Break=Linker (Unicode 17): the viramas after which the next
# consonant forms a conjunct (GB9c).  Broader than the six the segmenters of
# Unicode 15.1 know; holding a Khmer coeng or a Myanmar virama for the next
# delta is right even where the platform's segmenter does not join them.
_LINKERS = frozenset({
    0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D, 0x1039, 0x17D2, 0x1A60, 0x1B44, 0x1BAB,
    0x1CF5, 0x1CF6, 0xA9C0, 0xAAF6, 0x10A3F, 0x11133, 0x113D0, 0x1193E, 0x11A3A, 0x11A47,
    0x11A99, 0x11F42,
})
_KEYCAP_BASES = frozenset("0123456789#*")


def shows_incomplete(cluster: str) -> bool:
    """Would code points that may still arrive change this (last) cluster visibly?

    True — the pacer holds it until the next delta, a barrier, a flush, an
    overload or ``holdback_ms`` — for:

    * an emoji sequence still open: Extended_Pictographic last, or followed
      only by Extend (VS16, a skin tone modifier, tag characters, marks) and
      ZWJ — a family in the making, a skin tone, a subdivision flag, ``❤``
      waiting for VS16 (GB9, GB11);
    * a keycap in the making: ``[0-9#*]``, alone or + VS16 (waiting for
      U+20E3: a digit turning into an emoji square is not the digit with a mark);
    * an odd number of regional indicators (half a flag);
    * conjoining Hangul: a leading consonant (L), a vowel (V) or an LV
      syllable last, waiting for its vowel or trailing consonant;
    * an Indic consonant + virama or other InCB linker (optionally + ZWJ/ZWNJ),
      waiting for the consonant of its conjunct;
    * a Prepend character waiting for its base.

    False for everything else: a base that later takes a combining mark or a
    vowel sign is shown again as the same glyph with its mark, which is not a
    broken rendering.
    """
    if not cluster:
        return False
    last = ord(cluster[-1])
    if _gcb_hangul(last) or _in_ranges(last, _PREPEND_RANGES):
        return True
    ri = sum(1 for ch in cluster if _RI_FIRST <= ord(ch) <= _RI_LAST)
    if ri % 2:
        return True
    if is_extended_pictographic(last):
        return True
    if last == 0x200D or is_extend_like(cluster[-1]):
        # ExtPict Extend* [ZWJ]: GB11 may still join another pictograph — but only
        # while nothing else (a SpacingMark, say) stands after the pictograph.
        for ch in reversed(cluster):
            if is_extended_pictographic(ord(ch)):
                return True
            if ch != "\u200d" and not is_extend_like(ch):
                break
    if cluster[0] in _KEYCAP_BASES and cluster[1:] in ("", "\ufe0f"):
        return True  # may become a keycap: + VS16 + U+20E3
    i = len(cluster) - 1
    while i > 0 and ord(cluster[i]) in (0x200C, 0x200D):
        i -= 1
    return ord(cluster[i]) in _LINKERS


def _gcb_hangul(cp: int) -> bool:
    """Hangul L, V or LV: a syllable that a later jamo still changes."""
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return True  # L
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return True  # V
    return 0xAC00 <= cp <= 0xD7A3 and (cp - 0xAC00) % 28 == 0  # LV
