"""`RunBuilder`: one simulated run's clock, ids and event builders.

The scenarios (`streampace.sim.scenarios`) describe what a run says; this class
turns text into timed AG-UI events at a cadence — deltas, pauses, bursts,
clusters cut between deltas, tool calls, state — from one seeded RNG.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from streampace.sim import text as corpus
from streampace.sim.cadence import (
    EN_SENTENCES,
    HICCUP_MEAN,
    INTL_LINES,
    TOOL_ARGS,
    Cadence,
    split_sentences,
)
from streampace.sim.clusters import cluster_kind, clusters, split_kind

__all__ = ["RunBuilder", "TimedEvent", "prompt_excerpt"]


@dataclass(frozen=True)
class TimedEvent:
    """An AG-UI event and when it is emitted, in ms from run start."""

    t_ms: float
    event: dict[str, Any]




def prompt_excerpt(prompt: str, limit: int = 60) -> str:
    flat = " ".join(prompt.split())
    cls = clusters(flat)
    if len(cls) <= limit:
        return flat
    return "".join(cls[:limit]).rstrip() + "\u2026"




class RunBuilder:
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

    def gap(self, cad: Cadence) -> float:
        rng = self.rng
        g = 1000.0 / cad.tokens_per_s * (1.0 - cad.jitter + 2.0 * cad.jitter * rng.random())
        if cad.hiccup_p and rng.random() < cad.hiccup_p:
            g *= rng.uniform(3.0, 6.0)
        # Scaled so hiccups do not drag the mean rate below tokens_per_s.
        return g / (1.0 + cad.hiccup_p * (HICCUP_MEAN - 1.0))

    # -- tokens ---------------------------------------------------------------

    def tokens(self, text: str, split_p: float) -> tuple[list[str], int]:
        """Cut text into model tokens; return (tokens, grapheme count).

        Latin tokens are 1-6 characters (whole short words with their leading
        space, long words in pieces), CJK tokens 1-2 characters.  With split_p,
        a multi-code-point cluster is sometimes cut at a code-point boundary so
        that its halves land in different deltas, as byte-level tokenizers do.
        """
        rng = self.rng
        cls = clusters(text)
        kinds = [cluster_kind(c) for c in cls]
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
        kind = split_kind(cluster)
        if kind not in self.split_kinds_seen:
            self.split_kinds_seen.add(kind)
            return True
        return self.rng.random() < split_p

    # -- event helpers --------------------------------------------------------

    def stream_text(
        self,
        units: Iterable[str],
        cad: Cadence,
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
        self.wait(TOOL_ARGS.ttft_ms)
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
            self.t += self.gap(TOOL_ARGS)
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
        excerpt = prompt_excerpt(self.prompt)
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
                sentences = split_sentences(paragraphs.pop())
            else:
                sentences = [rng.choice(EN_SENTENCES) for _ in range(rng.randint(3, 5))]
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
            pool = list(corpus.MIXED_LINES) * 2 + list(INTL_LINES)
            rng.shuffle(pool)
            while pool:
                lines = [pool.pop() for _ in range(min(len(pool), rng.randint(2, 4)))]
                for k, line in enumerate(lines):
                    if k == 0:
                        yield line if first else "\n\n" + line
                        first = False
                    else:
                        yield line if lines[k - 1].endswith("\u3002") else " " + line


