"""Grapheme clusters: the only unit the pacer ever slices text at.

A segmenter is any object with ``split(text) -> list[str]`` returning extended
grapheme clusters (UAX #29) whose concatenation is ``text``.  On the host the
default is the ``regex`` module's ``\\X``; the browser adapter injects one backed
by ``Intl.Segmenter`` because ``regex`` is not available in Pyodide.  Without
either, :class:`CodePointSegmenter` at least never cuts a surrogate pair (a
Python str has none) and keeps the engine working.

:func:`may_extend` says whether a cluster that ends a provider delta could still
grow when the next delta arrives (ZWJ sequences, flags, emoji modifiers,
Hangul jamo, ...).  It is table-driven on purpose: it must give the same answer
whichever segmenter is injected, and must not need ``regex``.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Protocol, runtime_checkable

__all__ = [
    "Segmenter",
    "RegexSegmenter",
    "CodePointSegmenter",
    "default_segmenter",
    "may_extend",
    "is_extended_pictographic",
    "is_regional_indicator",
]


@runtime_checkable
class Segmenter(Protocol):
    def split(self, text: str) -> list[str]: ...


class CodePointSegmenter:
    """Fallback: one cluster per code point (no UAX #29 library available)."""

    name = "codepoint"

    def split(self, text: str) -> list[str]:
        return list(text)


class RegexSegmenter:
    """UAX #29 extended grapheme clusters via the ``regex`` module's ``\\X``."""

    name = "regex"

    def __init__(self) -> None:
        import regex  # deferred: absent in the browser, where Intl.Segmenter is injected

        self._findall = regex.compile(r"\X").findall

    def split(self, text: str) -> list[str]:
        if text.isascii() and "\r" not in text:
            # Every ASCII character but CR (CR LF) is its own cluster; ~35x faster.
            return list(text)
        return self._findall(text)


def default_segmenter() -> Segmenter:
    """``regex`` ``\\X`` when importable, else code points."""
    try:
        return RegexSegmenter()
    except ImportError:
        return CodePointSegmenter()


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

_ZWJ = 0x200D
_RI_FIRST, _RI_LAST = 0x1F1E6, 0x1F1FF

# Code points that may follow an emoji inside its cluster and still leave it
# open to a ZWJ: skin-tone modifiers, variation selectors, tag characters
# (subdivision flags) and the combining enclosing keycap.
_EMOJI_TRAILERS: tuple[tuple[int, int], ...] = (
    (0x1F3FB, 0x1F3FF), (0xFE00, 0xFE0F), (0xE0020, 0xE007F), (0x20E3, 0x20E3),
)

# Hangul conjoining jamo (Hangul_Syllable_Type L, V, T): L x (L|V|LV|LVT),
# (LV|V) x (V|T), (LVT|T) x T.  Precomposed syllables are not held back: they
# are how every provider sends Korean, and a following loose jamo is rare.
_HANGUL_JAMO: tuple[tuple[int, int], ...] = (
    (0x1100, 0x115F), (0xA960, 0xA97C),  # L
    (0x1160, 0x11A7), (0xD7B0, 0xD7C6),  # V
    (0x11A8, 0x11FF), (0xD7CB, 0xD7FB),  # T
)

# Indic_Conjunct_Break=Linker (Unicode 15.1, GB9c): a consonant + virama joins
# the next consonant into one cluster.
_INCB_LINKERS = frozenset({0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D})


def _in_ranges(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def is_extended_pictographic(cp: int) -> bool:
    i = bisect_right(_EXT_PICT_STARTS, cp) - 1
    return i >= 0 and cp <= _EXT_PICT[i][1]


def is_regional_indicator(cp: int) -> bool:
    return _RI_FIRST <= cp <= _RI_LAST


def may_extend(cluster: str) -> bool:
    """Could code points arriving later still join this (last) cluster?

    True for: a trailing ZWJ; an odd run of regional indicators (half a flag);
    an Extended_Pictographic optionally followed by modifiers/VS/tags (it can
    still take a modifier, VS16 or ZWJ); a conjoining Hangul jamo; a trailing
    virama (Indic conjunct); a lone CR (CR LF).  A plain base letter that
    might take a combining mark is deliberately not held back: that would
    delay almost every character of ordinary text.
    """
    if not cluster:
        return False
    last = ord(cluster[-1])
    if last == _ZWJ or last in _INCB_LINKERS:
        return True
    if is_regional_indicator(last):
        run = 0
        for ch in reversed(cluster):
            if not is_regional_indicator(ord(ch)):
                break
            run += 1
        return run % 2 == 1
    if is_extended_pictographic(last):
        return True
    if _in_ranges(last, _EMOJI_TRAILERS):
        for ch in reversed(cluster):
            cp = ord(ch)
            if is_extended_pictographic(cp):
                return True
            if not _in_ranges(cp, _EMOJI_TRAILERS):
                return False
        return False
    if _in_ranges(last, _HANGUL_JAMO):
        return True
    return cluster == "\r"
