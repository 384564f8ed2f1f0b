"""Fixtures shared by every test directory: Unicode's GraphemeBreakTest vectors.

The vectors come from Debian's `unicode-data` (scripts/setup installs it with
apt when it is missing).  Without the file a local run skips the vector tests;
under CI=true it fails them, so a CI machine without the data cannot pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run ("repeatable": a seed derived
# from each test), so a run's result is the code's, not the draw's: a fresh clone's run
# once failed two Markdown display properties on examples other runs never drew.
# Searching for new examples is the fuzzers' job (tests/markdown/fuzz.py) and
# HYPOTHESIS_PROFILE=explore's (random draws, as Hypothesis does by default).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

GRAPHEME_BREAK_TEST = Path(os.environ.get(
    "STREAMPACE_GRAPHEME_BREAK_TEST", "/usr/share/unicode/auxiliary/GraphemeBreakTest.txt"))


def parse_grapheme_break_test(text: str) -> list[list[str]]:
    """Each vector as its expected clusters: `÷ 0020 × 0308 ÷ 0041 ÷` -> [' \\u0308', 'A']."""
    vectors: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        clusters: list[str] = []
        current = ""
        for tok in line.split()[1:]:  # the first token is the leading ÷
            if tok == "÷":
                clusters.append(current)
                current = ""
            elif tok != "×":
                current += chr(int(tok, 16))
        if current:
            raise ValueError(f"vector does not end with ÷: {raw!r}")
        vectors.append(clusters)
    return vectors


@pytest.fixture(scope="session")
def grapheme_vectors() -> list[list[str]]:
    if not GRAPHEME_BREAK_TEST.is_file():
        msg = (f"{GRAPHEME_BREAK_TEST} is missing: install Debian's unicode-data "
               "(scripts/setup --browser does, as root)")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    vectors = parse_grapheme_break_test(GRAPHEME_BREAK_TEST.read_text(encoding="utf-8"))
    if len(vectors) < 500:  # 602 in Unicode 15.0; more in later versions
        pytest.fail(f"{GRAPHEME_BREAK_TEST}: only {len(vectors)} vectors parsed")
    return vectors


@pytest.fixture(scope="session")
def multi_code_point_clusters(grapheme_vectors: list[list[str]]) -> list[str]:
    """Every distinct cluster of the vectors that is longer than one code point."""
    return sorted({c for v in grapheme_vectors for c in v if len(c) > 1})
