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

import json
import math
import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from streampace.conversation.json_patch import apply_patch
from streampace.conversation.transcript import Transcript
from streampace.sim import text as corpus

__all__ = [
    "SCENARIOS",
    "TimedEvent",
    "simulate",
    "iter_simulate",
    "visible_text",
    "summarize",
    "with_network_jitter",
    "messages_snapshot",
    "with_snapshot",
    "stamped",
]

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


@dataclass(frozen=True)
class TimedEvent:
    """An AG-UI event and when it is emitted, in ms from run start."""

    t_ms: float
    event: dict[str, Any]


# ---------------------------------------------------------------------------
# Grapheme clusters (enough of UAX #29 for the corpus and typical prompts).
# Not streampace.pacing.graphemes.default_segmenter: that one depends on whether
# `regex` is importable (not in Pyodide), and a run must be identical on the
# host and in the page for the same seed.


def _is_extend(cp: int) -> bool:
    if (
        cp == 0x200D  # ZWJ
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0x1F3FB <= cp <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (subdivision flags)
        or 0x1160 <= cp <= 0x11FF  # Hangul medial vowels and final consonants
    ):
        return True
    return cp >= 0x300 and unicodedata.category(chr(cp)) in ("Mn", "Me", "Mc")


def _is_regional(cp: int) -> bool:
    return 0x1F1E6 <= cp <= 0x1F1FF


def _clusters(text: str) -> list[str]:
    if text.isascii() and "\r" not in text:
        return list(text)
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if out:
            prev = out[-1]
            if (
                _is_extend(cp)
                or prev[-1] == "\u200d"
                or (_is_regional(cp) and len(prev) == 1 and _is_regional(ord(prev)))
                or (prev == "\r" and ch == "\n")
            ):
                out[-1] = prev + ch
                continue
        out.append(ch)
    return out


def _cluster_kind(cluster: str) -> str:
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


# ---------------------------------------------------------------------------
# Cadence


@dataclass(frozen=True)
class _Cadence:
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


_HICCUP_MEAN: Final = 4.5  # mean of uniform(3, 6)

_CADENCE: Final[dict[str, _Cadence]] = {
    "fast": _Cadence(120.0, ttft_ms=(250.0, 600.0)),
    "slow": _Cadence(15.0, jitter=0.4, ttft_ms=(600.0, 1500.0)),
    "very_fast": _Cadence(400.0, ttft_ms=(150.0, 350.0)),
    "bursty": _Cadence(155.0, jitter=0.3, hiccup_p=0.0, ttft_ms=(400.0, 900.0), group=(60, 80)),
    "cjk_emoji": _Cadence(75.0, ttft_ms=(300.0, 700.0), split_p=0.4),
    "agentic": _Cadence(90.0, ttft_ms=(300.0, 700.0), split_p=0.1),
    "long": _Cadence(120.0, ttft_ms=(250.0, 600.0)),
    "paste": _Cadence(120.0, ttft_ms=(300.0, 800.0)),
    "demo": _Cadence(
        45.0,
        jitter=0.6,
        hiccup_p=0.02,
        ttft_ms=(400.0, 900.0),
        think_p=0.12,
        burst_p=0.02,
        split_p=0.25,
    ),
}
_REASONING: Final = _Cadence(85.0, ttft_ms=(300.0, 700.0), split_p=0.0)
_TOOL_ARGS: Final = _Cadence(60.0, jitter=0.5, ttft_ms=(150.0, 400.0))

_TARGET_GRAPHEMES: Final[dict[str, int]] = {
    "fast": 1500,
    "slow": 400,
    "very_fast": 3000,
    "bursty": 4000,
    "cjk_emoji": 1000,
    "long": 50_000,
    "paste": 10_000,
}
_DEMO_TARGET_MS: Final = (21_000.0, 25_500.0)

_SENTENCE_END: Final = re.compile(r"(?<=[.!?;:])\s+")


def _sentences(paragraph: str) -> list[str]:
    return _SENTENCE_END.split(paragraph)


_EN_SENTENCES: Final[tuple[str, ...]] = tuple(
    s for p in corpus.EN_PARAGRAPHS for s in _sentences(p)
)
_INTL_LINES: Final[tuple[str, ...]] = (
    corpus.JA_LINES + corpus.ZH_LINES + corpus.KO_LINES + corpus.FR_LINES + corpus.MIXED_LINES
)


# ---------------------------------------------------------------------------
# The run builder


class _Run:
    def __init__(
        self,
        scenario: str,
        seed: int,
        speed: float,
        prompt: str | None,
        thread_id: str,
        run_id: str,
    ) -> None:
        self.scenario = scenario
        self.rng = random.Random(f"streampace.sim:{scenario}:{seed}")
        self.speed = speed
        self.prompt = prompt
        self.thread_id = thread_id
        self.run_id = run_id
        self.t = 0.0  # model time in ms at speed 1
        self.counters: dict[str, int] = {}
        self.split_kinds_seen: set[str] = set()

    # -- small utilities ---------------------------------------------------

    def new_id(self, kind: str) -> str:
        n = self.counters.get(kind, 0) + 1
        self.counters[kind] = n
        return f"{self.run_id}-{kind}{n}"

    def at(self, event: dict[str, Any]) -> TimedEvent:
        return TimedEvent(round(self.t / self.speed, 3), event)

    def wait(self, span: tuple[float, float]) -> None:
        self.t += self.rng.uniform(*span)

    def gap(self, cad: _Cadence) -> float:
        rng = self.rng
        g = 1000.0 / cad.tokens_per_s * (1.0 - cad.jitter + 2.0 * cad.jitter * rng.random())
        if cad.hiccup_p and rng.random() < cad.hiccup_p:
            g *= rng.uniform(3.0, 6.0)
        # Scaled so hiccups do not drag the mean rate below tokens_per_s.
        return g / (1.0 + cad.hiccup_p * (_HICCUP_MEAN - 1.0))

    # -- tokens ---------------------------------------------------------------

    def tokens(self, text: str, split_p: float) -> tuple[list[str], int]:
        """Cut text into model tokens; return (tokens, grapheme count).

        Latin tokens are 1-6 characters (whole short words with their leading
        space, long words in pieces), CJK tokens 1-2 characters.  With split_p,
        a multi-code-point cluster is sometimes cut at a code-point boundary so
        that its halves land in different deltas, as byte-level tokenizers do.
        """
        rng = self.rng
        cls = _clusters(text)
        kinds = [_cluster_kind(c) for c in cls]
        groups: list[list[str]] = []
        i, n = 0, len(cls)
        while i < n:
            k = kinds[i]
            if k == "nl":
                j = i + 1
                if j < n and kinds[j] == "nl":
                    j += 1
            elif k == "cjk":
                j = i + 1
                if j < n and kinds[j] == "cjk" and rng.random() < 0.5:
                    j += 1
            elif k == "word" or (k == "space" and i + 1 < n and kinds[i + 1] == "word"):
                j = i + 1
                while j < n and kinds[j] == "word":
                    j += 1
                while j - i > 6:
                    step = rng.randint(3, 6)
                    groups.append(cls[i : i + step])
                    i += step
            elif k == "other" and len(cls[i]) == 1 and cls[i] in "*#`|-=":
                j = i + 1
                while j < n and j - i < 3 and cls[j] == cls[i]:
                    j += 1
            else:
                j = i + 1
            groups.append(cls[i:j])
            i = j

        out: list[str] = []
        cur = ""
        for group in groups:
            for cl in group:
                if split_p and len(cl) > 1 and self.should_split(cl, split_p):
                    cut = rng.randint(1, len(cl) - 1)
                    out.append(cur + cl[:cut])
                    cur = cl[cut:]
                else:
                    cur += cl
            out.append(cur)
            cur = ""
        return out, n

    def should_split(self, cluster: str, split_p: float) -> bool:
        # The first cluster of each kind is always split so every run of a
        # splitting scenario really exercises each kind; later ones by chance.
        kind = _split_kind(cluster)
        if kind not in self.split_kinds_seen:
            self.split_kinds_seen.add(kind)
            return True
        return self.rng.random() < split_p

    # -- event helpers --------------------------------------------------------

    def stream_text(
        self,
        units: Iterable[str],
        cad: _Cadence,
        *,
        stop: Callable[[int, float], bool],
        message_id: str,
        reasoning: bool = False,
    ) -> Iterator[TimedEvent]:
        """Stream one message (text or reasoning) built from units.

        A unit is a sentence or line; stop(graphemes_so_far, t) is asked after
        each unit, so messages always end on a sentence boundary.
        """
        rng = self.rng
        self.wait(cad.ttft_ms)
        started = False
        graphemes = 0
        pending: list[str] = []
        group_left = 0
        content_type = "REASONING_MESSAGE_CONTENT" if reasoning else "TEXT_MESSAGE_CONTENT"

        def start() -> Iterator[TimedEvent]:
            if reasoning:
                yield self.at({"type": "REASONING_START", "messageId": message_id})
                yield self.at(
                    {
                        "type": "REASONING_MESSAGE_START",
                        "messageId": message_id,
                        "role": "reasoning",
                    }
                )
            else:
                yield self.at(
                    {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
                )

        for unit in units:
            toks, count = self.tokens(unit, cad.split_p)
            for tok in toks:
                if not started:
                    yield from start()
                    started = True
                else:
                    self.t += self.gap(cad)
                pending.append(tok)
                if group_left == 0:
                    if cad.burst_p and rng.random() < cad.burst_p:
                        group_left = rng.randint(*cad.burst_tokens)
                    else:
                        group_left = rng.randint(*cad.group)
                group_left -= 1
                if group_left == 0:
                    yield self.at(
                        {"type": content_type, "messageId": message_id, "delta": "".join(pending)}
                    )
                    pending = []
            graphemes += count
            if stop(graphemes, self.t):
                break
            if cad.think_p and rng.random() < cad.think_p:
                if pending:
                    yield self.at(
                        {"type": content_type, "messageId": message_id, "delta": "".join(pending)}
                    )
                    pending, group_left = [], 0
                self.wait(cad.think_ms)
        if not started:
            raise AssertionError("simulated message produced no text")  # corpus bug
        if pending:
            yield self.at(
                {"type": content_type, "messageId": message_id, "delta": "".join(pending)}
            )
        self.wait((2.0, 25.0))
        if reasoning:
            yield self.at({"type": "REASONING_MESSAGE_END", "messageId": message_id})
            yield self.at({"type": "REASONING_END", "messageId": message_id})
        else:
            yield self.at({"type": "TEXT_MESSAGE_END", "messageId": message_id})

    def run_started(self) -> Iterator[TimedEvent]:
        yield self.at({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id})
        if self.prompt is not None:
            mid = f"{self.run_id}-user"
            yield self.at({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "user"})
            yield self.at({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": self.prompt})
            yield self.at({"type": "TEXT_MESSAGE_END", "messageId": mid})

    def run_finished(self) -> Iterator[TimedEvent]:
        self.wait((10.0, 60.0))
        yield self.at({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id})

    def step(self, name: str, finished: bool = False) -> TimedEvent:
        return self.at({"type": "STEP_FINISHED" if finished else "STEP_STARTED", "stepName": name})

    def tool_call(
        self, name: str, args: dict[str, Any], result: Any, parent_message_id: str | None
    ) -> Iterator[TimedEvent]:
        rng = self.rng
        call_id = self.new_id("call")
        self.wait(_TOOL_ARGS.ttft_ms)
        start: dict[str, Any] = {
            "type": "TOOL_CALL_START",
            "toolCallId": call_id,
            "toolCallName": name,
        }
        if parent_message_id is not None:
            start["parentMessageId"] = parent_message_id
        yield self.at(start)
        text = json.dumps(args, ensure_ascii=False)
        i = 0
        while i < len(text):
            step = rng.randint(2, 8)
            self.t += self.gap(_TOOL_ARGS)
            yield self.at(
                {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": text[i : i + step]}
            )
            i += step
        self.wait((5.0, 30.0))
        yield self.at({"type": "TOOL_CALL_END", "toolCallId": call_id})
        self.wait((600.0, 1500.0))  # the tool runs
        yield self.at(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": self.new_id("tool"),
                "toolCallId": call_id,
                "content": json.dumps(result, ensure_ascii=False),
                "role": "tool",
            }
        )

    # -- text sources ---------------------------------------------------------

    def prompt_intro(self, cjk: bool = False) -> list[str]:
        if self.prompt is None:
            return []
        excerpt = _excerpt(self.prompt)
        if cjk:
            return [f"「{excerpt}」について、短くお答えします。"]
        return [f"You asked: \u201c{excerpt}\u201d Here is how I see it."]

    def english_units(
        self,
        *,
        lead: list[str],
        extras: tuple[str, ...] = (),
        extra_every: tuple[int, int] = (2, 3),
        shuffle_extras: bool = True,
        blocks: bool = True,
    ) -> Iterator[str]:
        """Endless paragraphs: the corpus once in shuffled order, then new
        paragraphs recombined from its sentences, with headings, markdown
        blocks and (optionally) multilingual lines mixed in."""
        rng = self.rng
        first = True

        def para(sentences: list[str]) -> Iterator[str]:
            nonlocal first
            for k, s in enumerate(sentences):
                if k == 0:
                    yield s if first else "\n\n" + s
                    first = False
                else:
                    yield " " + s

        if lead:
            yield from para(lead)
        extra_pool = list(extras)
        if shuffle_extras:
            rng.shuffle(extra_pool)
        n_extra = 0
        block_pool = list(corpus.EN_BLOCKS)
        rng.shuffle(block_pool)
        heads = list(corpus.HEADINGS)
        rng.shuffle(heads)
        until_extra = rng.randint(*extra_every) if extras else -1
        until_block = rng.randint(3, 5)
        paragraphs = list(corpus.EN_PARAGRAPHS)
        rng.shuffle(paragraphs)
        n_para = 0
        while True:
            if paragraphs:
                sentences = _sentences(paragraphs.pop())
            else:
                sentences = [rng.choice(_EN_SENTENCES) for _ in range(rng.randint(3, 5))]
            if n_para and n_para % 7 == 0:
                yield from para([heads[(n_para // 7 - 1) % len(heads)]])
            yield from para(sentences)
            n_para += 1
            until_extra -= 1
            if until_extra == 0:
                until_extra = rng.randint(*extra_every)
                yield from para([extra_pool[n_extra % len(extra_pool)]])
                n_extra += 1
            until_block -= 1
            if blocks and until_block == 0:
                until_block = rng.randint(4, 7)
                yield from para([block_pool[n_para % len(block_pool)]])

    def intl_units(self, *, lead: list[str]) -> Iterator[str]:
        """Endless CJK/emoji-heavy paragraphs of 2-4 lines."""
        rng = self.rng
        first = True
        if lead:
            yield lead[0]
            first = False
        while True:
            pool = list(corpus.MIXED_LINES) * 2 + list(_INTL_LINES)
            rng.shuffle(pool)
            while pool:
                lines = [pool.pop() for _ in range(min(len(pool), rng.randint(2, 4)))]
                for k, line in enumerate(lines):
                    if k == 0:
                        yield line if first else "\n\n" + line
                        first = False
                    else:
                        yield line if lines[k - 1].endswith("\u3002") else " " + line


def _split_kind(cluster: str) -> str:
    if "\u200d" in cluster:
        return "zwj"
    cp0 = ord(cluster[0])
    if _is_regional(cp0):
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


def _excerpt(prompt: str, limit: int = 60) -> str:
    flat = " ".join(prompt.split())
    cls = _clusters(flat)
    if len(cls) <= limit:
        return flat
    return "".join(cls[:limit]).rstrip() + "\u2026"


# ---------------------------------------------------------------------------
# Scenarios


def _until_graphemes(target: int) -> Callable[[int, float], bool]:
    return lambda graphemes, _t: graphemes >= target


def _plain(run: _Run) -> Iterator[TimedEvent]:
    """fast, slow, very_fast, bursty, long: one English answer."""
    cad = _CADENCE[run.scenario]
    yield from run.run_started()
    extras = corpus.FR_LINES + corpus.MIXED_LINES[:3] if run.scenario == "long" else ()
    units = run.english_units(
        lead=run.prompt_intro(), extras=extras, extra_every=(4, 6), blocks=True
    )
    yield from run.stream_text(
        units,
        cad,
        stop=_until_graphemes(_TARGET_GRAPHEMES[run.scenario]),
        message_id=run.new_id("msg"),
    )
    yield from run.run_finished()


def _cjk_emoji(run: _Run) -> Iterator[TimedEvent]:
    yield from run.run_started()
    units = run.intl_units(lead=run.prompt_intro(cjk=True))
    yield from run.stream_text(
        units,
        _CADENCE["cjk_emoji"],
        stop=_until_graphemes(_TARGET_GRAPHEMES["cjk_emoji"]),
        message_id=run.new_id("msg"),
    )
    yield from run.run_finished()


def _paste(run: _Run) -> Iterator[TimedEvent]:
    target = _TARGET_GRAPHEMES["paste"]
    units = run.english_units(
        lead=run.prompt_intro(), extras=_INTL_LINES, extra_every=(2, 4), blocks=True
    )
    cls: list[str] = []
    for unit in units:
        cls.extend(_clusters(unit))
        if len(cls) >= target:
            break
    text = "".join(cls[:target])
    yield from run.run_started()
    run.wait(_CADENCE["paste"].ttft_ms)
    mid = run.new_id("msg")
    yield run.at({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
    yield run.at({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text})
    run.wait((2.0, 25.0))
    yield run.at({"type": "TEXT_MESSAGE_END", "messageId": mid})
    yield from run.run_finished()


def _reasoning(run: _Run, n_lines: tuple[int, int]) -> Iterator[TimedEvent]:
    lines = list(corpus.REASONING_LINES)
    run.rng.shuffle(lines)
    chosen = lines[: run.rng.randint(*n_lines)]
    units = [line if k == 0 else " " + line for k, line in enumerate(chosen)]
    yield from run.stream_text(
        units,
        _REASONING,
        stop=lambda _g, _t: False,
        message_id=run.new_id("reasoning"),
        reasoning=True,
    )


def _search_tool(run: _Run, parent: str | None) -> Iterator[TimedEvent]:
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


def _preamble_and_search(run: _Run, message_id: str) -> Iterator[TimedEvent]:
    """A one-line assistant message, then the search tool call it announces."""
    yield from run.stream_text(
        [run.rng.choice(corpus.PREAMBLE_LINES)],
        _CADENCE["agentic"],
        stop=lambda _g, _t: False,
        message_id=message_id,
    )
    yield from _search_tool(run, message_id)


def _agentic(run: _Run) -> Iterator[TimedEvent]:
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
    note = " ".join([snippet, *_sentences(rng.choice(corpus.EN_PARAGRAPHS))[:2]])
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
    cad = _CADENCE["agentic"]
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


def _demo(run: _Run) -> Iterator[TimedEvent]:
    rng = run.rng
    target_ms = rng.uniform(*_DEMO_TARGET_MS)
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
    rest = [line for line in _INTL_LINES if line not in extras]
    rng.shuffle(rest)
    yield from run.stream_text(
        run.english_units(
            lead=run.prompt_intro(),
            extras=tuple(extras + rest),
            extra_every=(1, 2),
            shuffle_extras=False,
        ),
        _CADENCE["demo"],
        stop=lambda _g, t: t >= target_ms,
        message_id=run.new_id("msg"),
    )
    yield run.step("answer", finished=True)
    yield from run.run_finished()


_BUILDERS: Final[dict[str, Callable[[_Run], Iterator[TimedEvent]]]] = {
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
    run = _Run(scenario, seed, float(speed), prompt, thread_id, run_id)
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


def _events_of(items: Iterable[TimedEvent | Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for item in items:
        yield item.event if isinstance(item, TimedEvent) else item


def _transcript(events: Iterable[TimedEvent | Mapping[str, Any]]) -> Transcript:
    transcript = Transcript()
    transcript.apply(_events_of(events))
    return transcript


def visible_text(events: Iterable[TimedEvent | Mapping[str, Any]]) -> dict[str, str]:
    """Text per message id (assistant, user and reasoning), as the transcript has it.

    Accepts TimedEvents or plain event dicts, so the same function can read
    what a source produced and what a client was handed.
    """
    return _transcript(events).texts()


def summarize(timed: Iterable[TimedEvent]) -> dict[str, Any]:
    """Figures about a run: events, duration_ms, graphemes and deltas.

    graphemes and deltas cover text and reasoning messages (user echo
    included), not tool-call arguments.

    Grapheme counts use this module's small cluster splitter, exact for the
    built-in corpus.
    """
    items = list(timed)
    deltas = 0
    graphemes = 0
    for item in items:
        ev = item.event
        if ev.get("type") in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            deltas += 1
    for text in visible_text(items).values():
        graphemes += len(_clusters(text))
    return {
        "events": len(items),
        "duration_ms": items[-1].t_ms if items else 0.0,
        "graphemes": graphemes,
        "deltas": deltas,
    }


def with_network_jitter(
    timed: Iterable[TimedEvent],
    *,
    seed: int = 0,
    base_ms: float = 15.0,
    tail_alpha: float = 1.6,
    max_delay_ms: float = 900.0,
    stalls: tuple[int, int] = (1, 2),
    stall_ms: tuple[float, float] = (1000.0, 2000.0),
) -> list[TimedEvent]:
    """Delay a run as a jittery network would, keeping order.

    Each event gets a heavy-tailed (Pareto) transit delay of at least
    ``base_ms``, capped at ``max_delay_ms``; in addition, 1-2 stalls of
    1-2 s are placed mid-answer, during which nothing arrives and after
    which everything held arrives together.  Arrival times never decrease.
    Deterministic per seed.
    """
    items = list(timed)
    if not items:
        return []
    rng = random.Random(f"streampace.sim.jitter:{seed}")
    end = items[-1].t_ms
    n_stalls = rng.randint(*stalls)
    windows = sorted(
        (start, start + rng.uniform(*stall_ms))
        for start in (rng.uniform(0.2 * end, 0.8 * end) for _ in range(n_stalls))
    )
    out: list[TimedEvent] = []
    last = 0.0
    for item in items:
        delay = min(max_delay_ms, base_ms * rng.random() ** (-1.0 / tail_alpha))
        arrive = item.t_ms + delay
        for lo, hi in windows:
            if lo <= arrive < hi:
                arrive = hi
        last = max(last, arrive)
        out.append(TimedEvent(round(last, 3), item.event))
    return out


def stamped(timed: Iterable[TimedEvent], start_ms: int = 0) -> list[dict[str, Any]]:
    """Events with an AG-UI ``timestamp`` (ms) = start_ms + t_ms, as replay files carry."""
    return [{**item.event, "timestamp": start_ms + int(round(item.t_ms))} for item in timed]


def messages_snapshot(events: Iterable[TimedEvent | Mapping[str, Any]]) -> dict[str, Any]:
    """A MESSAGES_SNAPSHOT event of everything the events so far say.

    Messages still streaming appear with the text received so far (the
    transcript's ``as_messages`` view).  What a server sends when a
    reconnecting client asks for events its log no longer holds.
    """
    return {"type": "MESSAGES_SNAPSHOT", "messages": _transcript(events).as_messages()}


def with_snapshot(timed: Iterable[TimedEvent], at_ms: float) -> list[TimedEvent]:
    """The run with a reconnect-style snapshot inserted at ``at_ms``.

    Before the first event at or after ``at_ms`` (never before RUN_STARTED,
    never after RUN_FINISHED) a MESSAGES_SNAPSHOT of everything so far is
    inserted, followed by a STATE_SNAPSHOT when the run has state by then —
    what a client that resumed past the server's log receives mid-run.
    """
    items = list(timed)
    if len(items) < 2:
        raise ValueError("with_snapshot needs a run of at least two events")
    cut = next((i for i, t in enumerate(items) if t.t_ms >= at_ms), len(items) - 1)
    cut = min(max(cut, 1), len(items) - 1)
    before = items[:cut]
    t = items[cut].t_ms
    inserted = [TimedEvent(t, messages_snapshot(before))]
    state: Any = None
    has_state = False
    for item in before:
        ev = item.event
        if ev["type"] == "STATE_SNAPSHOT":
            state, has_state = ev["snapshot"], True
        elif ev["type"] == "STATE_DELTA" and has_state:
            state = apply_patch(state, ev["delta"])
    if has_state:
        # A copy: apply_patch shares unchanged parts with the run's own events.
        snapshot = json.loads(json.dumps(state))
        inserted.append(TimedEvent(t, {"type": "STATE_SNAPSHOT", "snapshot": snapshot}))
    return before + inserted + items[cut:]
