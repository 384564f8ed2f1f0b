"""Grapheme clusters for the simulated model: enough of UAX #29 for the corpus
and typical prompts.

Not streampace.pacing.graphemes.default_segmenter: that one depends on whether
`regex` is importable (not in Pyodide), and a run must be identical on the host
and in the page for the same seed.  Tests check it against `regex`'s ``\\X``
on the corpus.
"""

from __future__ import annotations

import unicodedata

__all__ = ["clusters", "cluster_kind", "split_kind", "is_regional"]

def is_extend(cp: int) -> bool:
    if (
        cp == 0x200D  # ZWJ
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0x1F3FB <= cp <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (subdivision flags)
        or 0x1160 <= cp <= 0x11FF  # Hangul medial vowels and final consonants
    ):
        return True
    return cp >= 0x300 and unicodedata.category(chr(cp)) in ("Mn", "Me", "Mc")


def is_regional(cp: int) -> bool:
    return 0x1F1E6 <= cp <= 0x1F1FF


def clusters(text: str) -> list[str]:
    if text.isascii() and "\r" not in text:
        return list(text)
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if out:
            prev = out[-1]
            if (
                is_extend(cp)
                or prev[-1] == "\u200d"
                or (is_regional(cp) and len(prev) == 1 and is_regional(ord(prev)))
                or (prev == "\r" and ch == "\n")
            ):
                out[-1] = prev + ch
                continue
        out.append(ch)
    return out


def cluster_kind(cluster: str) -> str:
    c = cluster[0]
    if c == "\n":
        return "nl"
    if c == " ":
        return "space"
    cp = ord(c)
    if (
        0x1100 <= cp <= 0x11FF
        or 0x2E80 <= cp <= 0x9FFF
        or 0xAC00 <= cp <= 0xD7AF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF00 <= cp <= 0xFFEF
    ):
        return "cjk"
    if len(cluster) == 1 and (c.isalnum() or c == "'"):
        return "word"
    if len(cluster) > 1 and c.isalpha():
        return "word"  # a letter with combining marks stays inside its word
    return "other"




def split_kind(cluster: str) -> str:
    if "\u200d" in cluster:
        return "zwj"
    cp0 = ord(cluster[0])
    if is_regional(cp0):
        return "flag"
    if any(0x1F3FB <= ord(c) <= 0x1F3FF for c in cluster):
        return "skin_tone"
    if any(0xE0020 <= ord(c) <= 0xE007F for c in cluster):
        return "tag_flag"
    if "\u20e3" in cluster:
        return "keycap"
    if "\ufe0f" in cluster:
        return "vs16"
    if 0x1100 <= cp0 <= 0x11FF:
        return "hangul_jamo"
    return "combining"


