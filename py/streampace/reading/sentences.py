"""Sentence ends in text that is still growing, found by one linear scan.

A boundary is announced only when it is certain: a Latin full stop, question
or exclamation mark counts once whitespace and the next word have arrived
(``3.5`` has no space after its point; ``e.g. the`` continues in lower case;
``Dr. Smith`` and ``J. Smith`` end in a known abbreviation or an initial).
CJK, Devanagari and Arabic full stops need no space after them, only one more
character (a closing bracket or quote stays with its sentence). A line break
in spoken text (see `spoken`) separates blocks and is a boundary too. No
regular expressions: the text is untrusted and the scan never backtracks.
"""

from __future__ import annotations

__all__ = ["boundaries", "last_boundary", "scan", "split_sentences"]

# Close a sentence when followed by whitespace.
_SPACED_STOPS = frozenset(".!?…")
# Close a sentence on their own (no spaces between sentences in these scripts).
_FULL_STOPS = frozenset("。！？｡．।॥؟۔")
_STOPS = _SPACED_STOPS | _FULL_STOPS
# Closing quotes and brackets that belong to the sentence they follow.
_CLOSERS = frozenset("\"')]}”’»」』）】〉》〕")
# Words that end in a point without ending a sentence (compared in lower case,
# inner points kept: "e.g", "i.e").  Not "etc" or "no": both often end one.
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "cf", "fig", "figs",
    "approx", "al", "e.g", "i.e", "viz", "inc", "ltd", "co", "corp", "dept", "est", "ca",
    "resp", "eq", "eqs", "sec", "ch", "vol", "pp",
})
_WORD_LOOKBACK = 12  # characters looked at before a point (the longest abbreviation fits)


def _word_before(text: str, end: int) -> str:
    """The letters and inner points right before `end` (bounded), in lower case."""
    start = end
    stop = max(0, end - _WORD_LOOKBACK)
    while start > stop and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    return text[start:end].lower()


def _is_abbreviation(text: str, point: int) -> bool:
    word = _word_before(text, point)
    if not word:
        return False
    if len(word) == 1 and word.isalpha():
        return True  # an initial: "J. Smith"
    return word in _ABBREVIATIONS


def scan(text: str, start: int = 0) -> tuple[list[int], int]:
    """The certain sentence ends in ``text[start:]`` (each the index after the
    sentence and the whitespace that follows it), and where a later scan of
    the same text grown longer may resume: the first character whose role is
    still undecided (so growing text is scanned once, not once per frame)."""
    ends: list[int] = []
    n = len(text)
    i = start
    while i < n:
        ch = text[i]
        if ch == "\n":
            if i + 1 >= n:
                return ends, i  # a block's end, if something follows
            ends.append(i + 1)
            i += 1
            continue
        if ch not in _STOPS:
            i += 1
            continue
        j = i + 1
        while j < n and text[j] in _STOPS:
            j += 1
        full_stop = any(text[k] in _FULL_STOPS for k in range(i, j))
        while j < n and text[j] in _CLOSERS:
            j += 1
        if j >= n:
            return ends, i  # the next character decides
        if not text[j].isspace():
            if full_stop:
                ends.append(j)
            i = j  # else "3.5", "example.com": inside a word
            continue
        k = j
        while k < n and text[k].isspace() and text[k] != "\n":
            k += 1
        if k >= n:
            return ends, i  # the next word decides
        if text[k] == "\n" or full_stop:
            ends.append(k)
        elif text[k].islower() and ch in ".…":
            pass  # "e.g. the", "Wait... what": the sentence goes on
        elif not (j == i + 1 and ch == "." and _is_abbreviation(text, i)):
            ends.append(k)  # not "Dr. Smith", "J. Smith"
        i = k
    return ends, n


def boundaries(text: str, start: int = 0) -> list[int]:
    """The certain sentence ends in ``text[start:]``, in order (see `scan`)."""
    return scan(text, start)[0]


def last_boundary(text: str, start: int = 0) -> int:
    """The end of the last certain sentence in ``text[start:]``, or `start` if none."""
    ends = boundaries(text, start)
    return ends[-1] if ends else start


def split_sentences(text: str) -> list[str]:
    """`text` cut at its certain sentence ends (the last piece may be unfinished)."""
    out: list[str] = []
    start = 0
    for end in [*boundaries(text), len(text)]:
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out
