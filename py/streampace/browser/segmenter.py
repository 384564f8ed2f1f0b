"""Grapheme segmentation in the page via `Intl.Segmenter`, one FFI call per text.

The JS helper (`graphemeLengths` in js_shim/bridge.js) segments with one
`Intl.Segmenter` created once and returns the code-point length of every cluster
as a Uint32Array, so crossing cost is per delta, not per grapheme. Pure ASCII
without CR never needs the browser at all: each character is its own cluster
(CR LF is the only multi-character ASCII cluster). Without Intl.Segmenter the
core's pure-Python `FallbackSegmenter` segments instead.
"""

from __future__ import annotations

from typing import Any

from streampace.pacing.graphemes import FallbackSegmenter, rejoin_emoji_zwj

__all__ = ["IntlSegmenter", "split_with_lengths"]


def split_with_lengths(text: str, lengths: list[int]) -> list[str]:
    """Cut `text` into consecutive pieces of the given code-point lengths."""
    out: list[str] = []
    pos = 0
    for n in lengths:
        out.append(text[pos : pos + n])
        pos += n
    if pos != len(text):
        raise ValueError(f"cluster lengths cover {pos} of {len(text)} code points")
    return out


class IntlSegmenter:
    """`Segmenter` protocol (split(text) -> list[str]) backed by Intl.Segmenter."""

    def __init__(self, bridge: Any) -> None:
        self._lengths = bridge.graphemeLengths if bool(bridge.hasSegmenter()) else None
        self._fallback = FallbackSegmenter()
        self.js_calls = 0

    @property
    def uses_intl(self) -> bool:
        return self._lengths is not None

    def split(self, text: str) -> list[str]:
        if not text:
            return []
        if text.isascii() and "\r" not in text:
            return list(text)  # ASCII fast path
        if self._lengths is None:
            return self._fallback.split(text)
        self.js_calls += 1
        lengths = self._lengths(text)
        try:
            counts = lengths.to_py().tolist()
        finally:
            if hasattr(lengths, "destroy"):
                lengths.destroy()
        clusters = split_with_lengths(text, counts)
        if "\u200d" in text:
            clusters = rejoin_emoji_zwj(clusters)  # Intl.Segmenter misses U+2701 in GB11
        return clusters
