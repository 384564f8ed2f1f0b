"""A simulated LLM: complete AG-UI 1.0 runs with realistic, seeded timing.

Sans-IO and deterministic: nothing here sleeps, reads a clock or touches the
network, and all variation comes from one ``random.Random`` seeded from
(scenario, seed).  The result is a list of ``TimedEvent`` — each AG-UI event
(camelCase dict) with the moment, in ms after run start, at which the model or
provider emits it, i.e. *before* any delivery buffer.  Servers replay it on
real timers, benches on a virtual clock, tests just read it.

Only the stdlib ``random``, ``unicodedata`` and ``json`` are used so the same
module runs in the page under Pyodide, where ``regex`` is not loaded.  The
built-in cluster splitter is therefore a small one that knows the sequences
the corpus contains (tests check it against ``regex``'s ``\\X``); it is not a
general UAX #29 implementation.

Scenarios (token = one delta unless said otherwise; figures for seed 0):

=========  ==========================================================  =======
demo       reasoning, a tool call, then a multilingual answer at ~45     ~22 s
           tokens/s with jitter, think pauses and provider bursts
fast       ~120 tokens/s, ~1500 graphemes                                ~4 s
slow       ~15 tokens/s, ~400 graphemes                                  ~8 s
very_fast  ~400 tokens/s, ~3000 graphemes                                ~2.4 s
bursty     60-80 tokens per delta every ~450 ms, ~4000 graphemes         ~7.6 s
cjk_emoji  CJK + emoji at ~75 tokens/s, clusters split across deltas     ~9 s
agentic    reasoning, 2 tool calls, state snapshot + deltas, steps,      ~11 s
           4 assistant messages
long       >= 50 000 graphemes at ~120 tokens/s                          ~112 s
paste      10 000 graphemes in one delta                                 ~0.5 s
=========  ==========================================================  =======
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, Final

from streampace.sim import text as corpus
from streampace.sim.cadence import (
    CADENCE,
    DEMO_TARGET_MS,
    INTL_LINES,
    REASONING,
    TARGET_GRAPHEMES,
    split_sentences,
)
from streampace.sim.clusters import clusters
from streampace.sim.run_builder import RunBuilder, TimedEvent

__all__ = ["SCENARIOS", "simulate", "iter_simulate"]

SCENARIOS: Final[tuple[str, ...]] = (
    "demo",
    "fast",
    "slow",
    "very_fast",
    "bursty",
    "cjk_emoji",
    "agentic",
    "long",
    "paste",
)



# ---------------------------------------------------------------------------
# Scenarios


def _until_graphemes(target: int) -> Callable[[int, float], bool]:
    return lambda graphemes, _t: graphemes >= target


def _plain(run: RunBuilder) -> Iterator[TimedEvent]:
    """fast, slow, very_fast, bursty, long: one English answer."""
    cad = CADENCE[run.scenario]
    yield from run.run_started()
    extras = corpus.FR_LINES + corpus.MIXED_LINES[:3] if run.scenario == "long" else ()
    units = run.english_units(
        lead=run.prompt_intro(), extras=extras, extra_every=(4, 6), blocks=True
    )
    yield from run.stream_text(
        units,
        cad,
        stop=_until_graphemes(TARGET_GRAPHEMES[run.scenario]),
        message_id=run.new_id("msg"),
    )
    yield from run.run_finished()


def _cjk_emoji(run: RunBuilder) -> Iterator[TimedEvent]:
    yield from run.run_started()
    units = run.intl_units(lead=run.prompt_intro(cjk=True))
    yield from run.stream_text(
        units,
        CADENCE["cjk_emoji"],
        stop=_until_graphemes(TARGET_GRAPHEMES["cjk_emoji"]),
        message_id=run.new_id("msg"),
    )
    yield from run.run_finished()


def _paste(run: RunBuilder) -> Iterator[TimedEvent]:
    target = TARGET_GRAPHEMES["paste"]
    units = run.english_units(
        lead=run.prompt_intro(), extras=INTL_LINES, extra_every=(2, 4), blocks=True
    )
    cls: list[str] = []
    for unit in units:
        cls.extend(clusters(unit))
        if len(cls) >= target:
            break
    text = "".join(cls[:target])
    yield from run.run_started()
    run.wait(CADENCE["paste"].ttft_ms)
    mid = run.new_id("msg")
    yield run.at({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
    yield run.at({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text})
    run.wait((2.0, 25.0))
    yield run.at({"type": "TEXT_MESSAGE_END", "messageId": mid})
    yield from run.run_finished()


def _reasoning(run: RunBuilder, n_lines: tuple[int, int]) -> Iterator[TimedEvent]:
    lines = list(corpus.REASONING_LINES)
    run.rng.shuffle(lines)
    chosen = lines[: run.rng.randint(*n_lines)]
    units = [line if k == 0 else " " + line for k, line in enumerate(chosen)]
    yield from run.stream_text(
        units,
        REASONING,
        stop=lambda _g, _t: False,
        message_id=run.new_id("reasoning"),
        reasoning=True,
    )


def _search_tool(run: RunBuilder, parent: str | None) -> Iterator[TimedEvent]:
    rng = run.rng
    query = rng.choice(corpus.TOOL_QUERIES)
    picks = rng.sample(range(len(corpus.TOOL_SOURCES)), 2)
    result = {
        "query": query,
        "results": [
            {"path": corpus.TOOL_SOURCES[k][0], "snippet": corpus.TOOL_SOURCES[k][1]} for k in picks
        ],
    }
    args = {"query": query, "languages": ["en", "ja", "ko", "zh"], "max_results": 2}
    yield from run.tool_call("search_docs", args, result, parent)


def _preamble_and_search(run: RunBuilder, message_id: str) -> Iterator[TimedEvent]:
    """A one-line assistant message, then the search tool call it announces."""
    yield from run.stream_text(
        [run.rng.choice(corpus.PREAMBLE_LINES)],
        CADENCE["agentic"],
        stop=lambda _g, _t: False,
        message_id=message_id,
    )
    yield from _search_tool(run, message_id)


def _agentic(run: RunBuilder) -> Iterator[TimedEvent]:
    rng = run.rng
    yield from run.run_started()
    run.wait((100.0, 300.0))
    yield run.step("plan")
    yield from _reasoning(run, (3, 5))
    yield run.step("plan", finished=True)
    yield run.at(
        {
            "type": "STATE_SNAPSHOT",
            "snapshot": {
                "plan": {"steps": ["plan", "search", "answer"], "current": "search"},
                "sources": [],
                "progress": 0.33,
            },
        }
    )
    yield run.step("search")
    pre = run.new_id("msg")
    yield from _preamble_and_search(run, pre)
    path, snippet = rng.choice(corpus.TOOL_SOURCES)
    note = " ".join([snippet, *split_sentences(rng.choice(corpus.EN_PARAGRAPHS))[:2]])
    yield from run.tool_call(
        "read_note", {"path": path, "max_chars": 2000}, {"path": path, "text": note}, pre
    )
    run.wait((20.0, 80.0))
    yield run.at(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/plan/current", "value": "answer"},
                {"op": "add", "path": "/sources/-", "value": {"path": path, "used": True}},
                {"op": "replace", "path": "/progress", "value": 0.66},
            ],
        }
    )
    yield run.step("search", finished=True)
    yield run.step("answer")
    cad = CADENCE["agentic"]
    yield from run.stream_text(
        run.english_units(
            lead=run.prompt_intro() + [rng.choice(corpus.FOLLOW_UP_LINES)],
            extras=corpus.MIXED_LINES,
            extra_every=(1, 2),
            blocks=False,
        ),
        cad,
        stop=_until_graphemes(700),
        message_id=run.new_id("msg"),
    )
    yield from run.stream_text(
        [rng.choice(corpus.EN_BLOCKS)], cad, stop=lambda _g, _t: False, message_id=run.new_id("msg")
    )
    yield from run.stream_text(
        [rng.choice(corpus.FOLLOW_UP_LINES[3:])],
        cad,
        stop=lambda _g, _t: False,
        message_id=run.new_id("msg"),
    )
    run.wait((20.0, 80.0))
    yield run.at(
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/progress", "value": 1}]}
    )
    yield run.step("answer", finished=True)
    yield from run.run_finished()


def _demo(run: RunBuilder) -> Iterator[TimedEvent]:
    rng = run.rng
    target_ms = rng.uniform(*DEMO_TARGET_MS)
    yield from run.run_started()
    run.wait((100.0, 300.0))
    yield run.step("think")
    yield from _reasoning(run, (2, 3))
    yield run.step("think", finished=True)
    yield run.step("search")
    pre = run.new_id("msg")
    yield from _preamble_and_search(run, pre)
    yield run.step("search", finished=True)
    yield run.step("answer")
    # Every script and emoji kind shows up early in the answer, then the rest.
    pick = rng.choice
    extras = [
        pick(corpus.MIXED_LINES[:3]),
        pick(corpus.JA_LINES),
        pick(corpus.KO_LINES),
        pick(corpus.MIXED_LINES[3:]),
        pick(corpus.ZH_LINES),
        pick(corpus.FR_LINES),
    ]
    rest = [line for line in INTL_LINES if line not in extras]
    rng.shuffle(rest)
    yield from run.stream_text(
        run.english_units(
            lead=run.prompt_intro(),
            extras=tuple(extras + rest),
            extra_every=(1, 2),
            shuffle_extras=False,
        ),
        CADENCE["demo"],
        stop=lambda _g, t: t >= target_ms,
        message_id=run.new_id("msg"),
    )
    yield run.step("answer", finished=True)
    yield from run.run_finished()


_BUILDERS: Final[dict[str, Callable[[RunBuilder], Iterator[TimedEvent]]]] = {
    "demo": _demo,
    "fast": _plain,
    "slow": _plain,
    "very_fast": _plain,
    "bursty": _plain,
    "long": _plain,
    "cjk_emoji": _cjk_emoji,
    "agentic": _agentic,
    "paste": _paste,
}


# ---------------------------------------------------------------------------
# Public API


def _check_text_arg(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must be a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{name} contains a lone surrogate at index {exc.start}") from None


def iter_simulate(
    scenario: str = "demo",
    *,
    seed: int = 0,
    speed: float = 1.0,
    prompt: str | None = None,
    thread_id: str = "thread-1",
    run_id: str | None = None,
) -> Iterator[TimedEvent]:
    """simulate(), producing the events lazily (the arguments are checked now)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose one of: {', '.join(SCENARIOS)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {type(seed).__name__}")
    if (
        isinstance(speed, bool)
        or not isinstance(speed, (int, float))
        or not math.isfinite(speed)
        or speed <= 0
    ):
        raise ValueError(f"speed must be a finite number > 0 (2.0 = twice as fast), got {speed!r}")
    if prompt is not None:
        _check_text_arg("prompt", prompt)
    _check_text_arg("thread_id", thread_id)
    if run_id is None:
        run_id = f"run-{scenario}-{seed}"
    _check_text_arg("run_id", run_id)
    run = RunBuilder(scenario, seed, float(speed), prompt, thread_id, run_id)
    return _BUILDERS[scenario](run)


def simulate(scenario: str = "demo", **options: Any) -> list[TimedEvent]:
    """One complete AG-UI run as the simulated model emits it.

    Options are iter_simulate's: ``seed``, ``speed``, ``prompt``, ``thread_id``,
    ``run_id`` (keyword only; an unknown one is a TypeError).

    The same arguments always give the same list.  ``speed`` only divides
    the timestamps (2.0 = twice as fast); the events do not change with it.
    ``run_id`` defaults to ``run-<scenario>-<seed>``; callers that start
    several runs in one thread should pass distinct ones, since message and
    tool-call ids are derived from it.
    """
    return list(iter_simulate(scenario, **options))


