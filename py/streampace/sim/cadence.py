"""How fast and how unevenly each scenario's simulated model emits tokens, and
how long each answer is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from streampace.sim import text as corpus


@dataclass(frozen=True)
class Cadence:
    tokens_per_s: float
    jitter: float = 0.5  # per-token gap is uniform in base * [1 - j, 1 + j]
    hiccup_p: float = 0.01  # chance that a gap is 3-6x longer
    ttft_ms: tuple[float, float] = (250.0, 600.0)
    think_p: float = 0.0  # chance of a think pause after a sentence
    think_ms: tuple[float, float] = (300.0, 1200.0)
    burst_p: float = 0.0  # chance per delta that the provider holds tokens back
    burst_tokens: tuple[int, int] = (5, 25)
    group: tuple[int, int] = (1, 1)  # tokens per delta outside bursts
    split_p: float = 0.0  # chance to cut a multi-code-point cluster between deltas


HICCUP_MEAN: Final = 4.5  # mean of uniform(3, 6)

CADENCE: Final[dict[str, Cadence]] = {
    "fast": Cadence(120.0, ttft_ms=(250.0, 600.0)),
    "slow": Cadence(15.0, jitter=0.4, ttft_ms=(600.0, 1500.0)),
    "very_fast": Cadence(400.0, ttft_ms=(150.0, 350.0)),
    "bursty": Cadence(155.0, jitter=0.3, hiccup_p=0.0, ttft_ms=(400.0, 900.0), group=(60, 80)),
    "cjk_emoji": Cadence(75.0, ttft_ms=(300.0, 700.0), split_p=0.4),
    "agentic": Cadence(90.0, ttft_ms=(300.0, 700.0), split_p=0.1),
    "long": Cadence(120.0, ttft_ms=(250.0, 600.0)),
    "paste": Cadence(120.0, ttft_ms=(300.0, 800.0)),
    "demo": Cadence(
        45.0,
        jitter=0.6,
        hiccup_p=0.02,
        ttft_ms=(400.0, 900.0),
        think_p=0.12,
        burst_p=0.02,
        split_p=0.25,
    ),
}
REASONING: Final = Cadence(85.0, ttft_ms=(300.0, 700.0), split_p=0.0)
TOOL_ARGS: Final = Cadence(60.0, jitter=0.5, ttft_ms=(150.0, 400.0))

TARGET_GRAPHEMES: Final[dict[str, int]] = {
    "fast": 1500,
    "slow": 400,
    "very_fast": 3000,
    "bursty": 4000,
    "cjk_emoji": 1000,
    "long": 50_000,
    "paste": 10_000,
}
DEMO_TARGET_MS: Final = (21_000.0, 25_500.0)

_SENTENCE_END: Final = re.compile(r"(?<=[.!?;:])\s+")


def split_sentences(paragraph: str) -> list[str]:
    return _SENTENCE_END.split(paragraph)


EN_SENTENCES: Final[tuple[str, ...]] = tuple(
    s for p in corpus.EN_PARAGRAPHS for s in split_sentences(p)
)
INTL_LINES: Final[tuple[str, ...]] = (
    corpus.JA_LINES + corpus.ZH_LINES + corpus.KO_LINES + corpus.FR_LINES + corpus.MIXED_LINES
)


