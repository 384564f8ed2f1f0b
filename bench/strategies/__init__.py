"""All strategies behind one interface (`Strategy.receive` + `commit(events, reason)`)."""

from __future__ import annotations

from bench.strategies.assistant_ui import AssistantUI
from bench.strategies.base import Commit, FifoPacer, Host, Strategy
from bench.strategies.cherry_jitter import CherryJitter
from bench.strategies.coalescer import Coalescer40
from bench.strategies.hf_deadline import HFDeadline
from bench.strategies.naive import Naive
from bench.strategies.pacing import Mosoo450, Streampace
from bench.strategies.raf_all import RafAll
from bench.strategies.smoothstream_word import SmoothStreamWord
from bench.strategies.typewriter import Typewriter

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls
    for cls in (
        Streampace,
        Mosoo450,
        Naive,
        RafAll,
        Typewriter,
        Coalescer40,
        AssistantUI,
        CherryJitter,
        HFDeadline,
        SmoothStreamWord,
    )
}


def make_strategy(name: str, host: Host, commit: Commit) -> Strategy:
    try:
        cls = STRATEGIES[name]
    except KeyError:
        choices = ", ".join(STRATEGIES)
        raise ValueError(f"unknown strategy {name!r}; choose from {choices}") from None
    return cls(host, commit)


__all__ = ["STRATEGIES", "Commit", "FifoPacer", "Host", "Strategy", "make_strategy"]
