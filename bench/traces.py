"""Benchmark traces: what the model emits and what the browser receives.

Each trace starts from the simulated model (`streampace.sim.scenarios.simulate`), goes
through the core's real `DeliveryBuffer` on a virtual clock (150 ms max wait,
4096-unit / 64-event early flushes, first-delta and terminal fast paths), and
optionally through a network model:

* `jittery`: heavy-tailed (Pareto) transit delay per socket message plus one
  or two 1–2 s stalls mid-answer (head-of-line blocking: whatever was sent
  during a stall lands at its end), order preserved;
* `agentic`: the socket drops mid-run; messages sent while it is down are lost
  and the reconnect delivers a MESSAGES_SNAPSHOT of everything published so
  far, then the stream resumes;
* `batch40` / `batch300`: the delivery buffer with a 40 ms / 300 ms max wait;
* `poisson`: socket messages at Poisson instants (exponential gaps, mean
  100 ms), each carrying everything generated since the previous one;
* `provider`: no server batching; the provider itself sends a delta every
  20–60 ms (uniform) with an occasional 0.5 s pause, the model generating
  smoothly all along (so what a pause holds back lands at its end).

`ultra_fast` is the long answer generated four times faster (≈ 1800
graphemes/s, beyond the seed's 800/s ceiling), through the usual buffer.

Traces are saved as JSONL of timestamped AG-UI events (one line per event:
`{"stage": "model"|"arrival", "t_ms": …, "batch": k, "event": {…}}`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from streampace.session.delivery import Batch, DeliveryBuffer, DeliveryConfig
from streampace.sim import messages_snapshot, simulate
from streampace.testing import ManualHost

from bench.metrics import TraceTruth

Arrivals = list[tuple[float, list[dict[str, Any]]]]
Model = list[tuple[float, dict[str, Any]]]

# name -> (sim scenario, network model, what it stands for)
# Network models: "direct" (the 150 ms delivery buffer), "jittery",
# "reconnect", "batchN" (the buffer with an N ms max wait), "poisson",
# "provider"; a scenario "name@k" is generated k times faster.
TRACE_KINDS: dict[str, tuple[str, str, str]] = {
    "fast": ("fast", "direct", "fast model, ~110 tokens/s"),
    "slow": ("slow", "direct", "slow model, ~15 tokens/s"),
    "very_fast": ("very_fast", "direct", "very fast model, ~400 tokens/s"),
    "bursty": ("bursty", "direct", "bursty provider: 60–80 tokens per delta every ~450 ms"),
    "jittery": ("fast", "jittery", "fast model over a jittery network with 1–2 s stalls"),
    "cjk_emoji": ("cjk_emoji", "direct", "CJK + emoji, clusters split across deltas"),
    "agentic": ("agentic", "reconnect", "reasoning, tools, several messages, reconnect"),
    "long": ("long", "direct", "a long answer, ≥ 50 000 graphemes"),
    "paste": ("paste", "direct", "a 10 000-grapheme paste in one delta"),
    "batch40": ("fast", "batch40", "fast model, 40 ms max-wait batches"),
    "batch300": ("fast", "batch300", "fast model, 300 ms max-wait batches"),
    "ultra_fast": ("long@4", "direct", "a model at ≈ 1800 graphemes/s (long answer × 4)"),
    "poisson": ("fast", "poisson", "fast model, Poisson-timed socket messages (mean 100 ms)"),
    "provider": ("long", "provider",
                 "provider cadence: a delta every 20–60 ms, occasional 0.5 s pauses"),
    # Markdown answers (bench/traces_markdown.py builds these; not sim scenarios).
    "md_heavy": ("md_heavy", "direct", "Markdown-heavy answer: headings, lists, table, code"),
    "md_long": ("md_long", "direct", "long Markdown answer, >= 50 000 characters"),
    "md_plain": ("md_plain", "direct", "md_heavy's visible text without markup"),
    # From the field (bench/traces_field.py builds these): other stacks' cadences.
    "reasoning": ("very_fast", "direct", "reasoning model: silent thinking, then a fast answer"),
    "tool_pauses": ("fast", "direct", "fast answer pausing mid-message for tool calls"),
    "mobile": ("fast", "mobile", "mobile link: bursts after 300–800 ms gaps"),
    "char2000": ("char2000", "each", "one character per event at 2 000/s"),
    "paste50k": ("paste50k", "direct", "a 50 KB answer in one single delta"),
}
# Browser-only: a 100 000-grapheme answer (two long answers as one message,
# ≈ 1800 graphemes/s), for the per-frame cost's flatness over answer length.
EXTRA_TRACES: dict[str, str] = {
    "answer_100k": "a 100 000-grapheme answer at ≈ 1800 graphemes/s (flatness of frame cost)",
    "md_32k": "a ≥ 32 000-character Markdown answer (headings, lists, tables, code) at "
              "≈ 1 300 characters/s: the whole frame over a long answer",
    "md_nested": "a ≥ 16 000-character answer of numbered steps, each with a nested list "
                 "of 3-8 sub-points, at ≈ 1 300 characters/s",
    "md_steps_code": "a ≥ 16 000-character how-to of numbered steps, each with a code block "
                     "of 6-40 lines in its item, at ≈ 1 300 characters/s",
    "md_long_code": "a ≥ 20 000-character answer that is mostly two long code blocks (450 "
                    "lines of Python, 160 of plain text in a list item), at ≈ 1 300 characters/s",
}
# Traces whose transport is steady (the lag targets apply to these).
UNSTEADY_TRACES = frozenset({"jittery", "agentic", "paste", "bursty", "mobile", "paste50k"})
QUICK_TRACES = ("fast", "bursty", "jittery", "cjk_emoji", "agentic", "paste", "batch40", "poisson")
PROMPT = "Explain how streaming text should be displayed."


@dataclass
class Trace:
    name: str
    model: Model  # (t_ms after run start, event) as the model emits them
    arrivals: Arrivals  # (t_ms, socket batch) as the browser receives them
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def tracked(self) -> TraceTruth:
        return TraceTruth.build(self.model, self.arrivals)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for t, ev in self.model:
                fh.write(json.dumps({"stage": "model", "t_ms": t, "event": ev},
                                    ensure_ascii=False) + "\n")
            for k, (t, batch) in enumerate(self.arrivals):
                for ev in batch:
                    fh.write(json.dumps({"stage": "arrival", "t_ms": t, "batch": k, "event": ev},
                                        ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path, name: str | None = None) -> Trace:
        model: Model = []
        arrivals: Arrivals = []
        last_batch = None
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    stage, t, ev = row["stage"], float(row["t_ms"]), row["event"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path}:{n}: not a trace line ({exc})") from None
                if stage == "model":
                    model.append((t, ev))
                elif stage == "arrival":
                    if row.get("batch") != last_batch:
                        arrivals.append((t, []))
                        last_batch = row.get("batch")
                    arrivals[-1][1].append(ev)
                else:
                    raise ValueError(f"{path}:{n}: unknown stage {stage!r}")
        return cls(name or path.stem, model, arrivals)


def deliver(model: Model, max_wait_ms: float = 150.0) -> Arrivals:
    """Pass the model stream through the real DeliveryBuffer on a virtual clock."""
    clock = ManualHost()
    out: Arrivals = []

    def publish(batch: Batch) -> bool:
        out.append((clock.now(), [dict(e) for e in batch.events]))
        return True

    buf = DeliveryBuffer(publish, clock, DeliveryConfig(max_wait_ms=max_wait_ms))
    for t, ev in model:
        clock.run_until(t)
        buf.enqueue([ev])
    clock.run_all()
    buf.flush()
    clock.run_all()
    return out


def regroup(model: Model, instants: list[float]) -> Arrivals:
    """One socket message per instant, carrying every event generated since the last.

    Events generated after the last instant go out at the model's last event.
    """
    out: Arrivals = []
    i = 0
    for t in instants:
        batch = []
        while i < len(model) and model[i][0] <= t:
            batch.append(dict(model[i][1]))
            i += 1
        if batch:
            out.append((round(t, 3), batch))
    if i < len(model):
        out.append((model[-1][0], [dict(e) for _t, e in model[i:]]))
    return out


def poisson_instants(model: Model, seed: int, mean_ms: float = 100.0) -> list[float]:
    rng = random.Random(f"bench.poisson:{seed}")
    end = model[-1][0] if model else 0.0
    t = model[0][0] if model else 0.0
    out = [t]  # the first event (run start) goes out at once
    while t < end:
        t += rng.expovariate(1.0 / mean_ms)
        out.append(t)
    return out


def provider_instants(model: Model, seed: int) -> tuple[list[float], dict[str, Any]]:
    rng = random.Random(f"bench.provider:{seed}")
    end = model[-1][0] if model else 0.0
    t = model[0][0] if model else 0.0
    out = [t]
    pauses = 0
    while t < end:
        if rng.random() < 0.03:
            t += 500.0
            pauses += 1
        else:
            t += rng.uniform(20.0, 60.0)
        out.append(t)
    return out, {"pauses": pauses}


def jitter(arrivals: Arrivals, seed: int) -> tuple[Arrivals, dict[str, Any]]:
    """Heavy-tailed transit delay per socket message plus 1–2 long stalls."""
    if not arrivals:
        return [], {}
    rng = random.Random(f"bench.jitter:{seed}")
    start, end = arrivals[0][0], arrivals[-1][0]
    span = end - start
    stalls: list[tuple[float, float]] = []
    for _ in range(rng.randint(1, 2)):
        lo = start + rng.uniform(0.2, 0.7) * span
        if stalls and lo < stalls[-1][1] + 300.0:  # keep stalls apart: two events, not one
            lo = stalls[-1][1] + 300.0
        stalls.append((lo, lo + rng.uniform(1000.0, 2000.0)))
    out: Arrivals = []
    last = 0.0
    for t, batch in arrivals:
        delay = min(1500.0, 15.0 * rng.random() ** (-1.0 / 1.5))
        arrive = t + delay
        for lo, hi in stalls:
            if lo <= arrive < hi:
                arrive = hi
        last = max(last, arrive)
        out.append((round(last, 3), batch))
    return out, {"stalls_ms": [[round(lo, 1), round(hi, 1)] for lo, hi in stalls]}


def reconnect(arrivals: Arrivals, seed: int) -> tuple[Arrivals, dict[str, Any]]:
    """Drop the socket mid-run; catch up with a MESSAGES_SNAPSHOT, then resume."""
    if len(arrivals) < 4:
        return arrivals, {}
    rng = random.Random(f"bench.reconnect:{seed}")
    start, end = arrivals[0][0], arrivals[-1][0]
    # Drop the socket just before a mid-run batch that carries answer text, so
    # the snapshot really has to bring text the client never received.
    mid_text = [
        t for t, b in arrivals
        if start + 0.3 * (end - start) <= t <= start + 0.7 * (end - start)
        and any(e.get("type") == "TEXT_MESSAGE_CONTENT" for e in b)
    ]
    if mid_text:
        down = rng.choice(mid_text) - rng.uniform(1.0, 100.0)
    else:
        down = start + rng.uniform(0.4, 0.6) * (end - start)
    back = down + 350.0 + rng.uniform(50.0, 500.0)  # mosoo's fixed retry + handshake
    before = [(t, b) for t, b in arrivals if t < down]
    lost = [(t, b) for t, b in arrivals if down <= t < back]
    after = [(t, b) for t, b in arrivals if t >= back]
    snap = messages_snapshot([e for _t, b in before + lost for e in b])
    out = [*before, (round(back, 3), [snap]), *after]
    meta = {"down_ms": round(down, 1), "back_ms": round(back, 1),
            "lost_batches": len(lost), "lost_events": sum(len(b) for _t, b in lost)}
    return out, meta


def long_answer_model(seed: int = 1) -> Model:
    """Two `long@4` answers spliced into one message (≈ 100 000 graphemes)."""
    first = [(te.t_ms, dict(te.event)) for te in simulate(
        "long", seed=seed, prompt=PROMPT, run_id=f"run-answer_100k-{seed}", speed=4.0)]
    second = [(te.t_ms, dict(te.event)) for te in simulate(
        "long", seed=seed + 1, prompt=PROMPT, speed=4.0)]
    # The assistant's message is the last one to end (the user echo comes first).
    end_at = max(i for i, (_t, e) in enumerate(first) if e["type"] == "TEXT_MESSAGE_END")
    mid = first[end_at][1]["messageId"]
    other = next(e["messageId"] for _t, e in reversed(second) if e["type"] == "TEXT_MESSAGE_END")
    body = [(t, e) for t, e in second
            if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == other]
    shift = first[end_at - 1][0] + 5.0 - body[0][0]
    spliced = [(round(t + shift, 3), {**e, "messageId": mid}) for t, e in body]
    tail_shift = spliced[-1][0] + 2.0 - first[end_at][0]
    tail = [(round(t + tail_shift, 3), e) for t, e in first[end_at:]]
    return first[:end_at] + spliced + tail


def build_trace(name: str, seed: int = 1) -> Trace:
    if name in EXTRA_TRACES and name.startswith("md_"):
        from bench.traces_markdown import build_markdown_trace

        return build_markdown_trace(name, seed)
    if name == "answer_100k":
        model = long_answer_model(seed)
        arrivals = deliver(model)
        trace = Trace(name, model, arrivals, EXTRA_TRACES[name],
                      {"scenario": "long@4 ×2", "seed": seed, "network": "direct",
                       "socket_messages": len(arrivals)})
        trace.meta["graphemes"] = trace.tracked.total
        trace.meta["duration_ms"] = round(model[-1][0], 1)
        return trace
    if name not in TRACE_KINDS:
        raise ValueError(f"unknown trace {name!r}; choose from {', '.join(TRACE_KINDS)}")
    if name.startswith("md_"):
        from bench.traces_markdown import build_markdown_trace

        return build_markdown_trace(name, seed)
    from bench.traces_field import FIELD_TRACES, build_field_trace

    if name in FIELD_TRACES:
        return build_field_trace(name, seed)
    scenario, network, description = TRACE_KINDS[name]
    base, _at, speed = scenario.partition("@")
    timed = simulate(base, seed=seed, prompt=PROMPT, run_id=f"run-{name}-{seed}",
                     speed=float(speed or 1))
    model = [(te.t_ms, dict(te.event)) for te in timed]
    meta: dict[str, Any] = {"scenario": scenario, "seed": seed, "network": network}
    if network.startswith("batch"):
        arrivals = deliver(model, max_wait_ms=float(network[len("batch"):]))
    elif network == "poisson":
        arrivals = regroup(model, poisson_instants(model, seed))
    elif network == "provider":
        instants, extra = provider_instants(model, seed)
        arrivals = regroup(model, instants)
        meta.update(extra)
    else:
        arrivals = deliver(model)
    meta["socket_messages"] = len(arrivals)
    if network == "jittery":
        arrivals, extra = jitter(arrivals, seed)
        meta.update(extra)
    elif network == "reconnect":
        arrivals, extra = reconnect(arrivals, seed)
        meta.update(extra)
    trace = Trace(name, model, arrivals, description, meta)
    meta["graphemes"] = trace.tracked.total
    meta["duration_ms"] = round(model[-1][0], 1) if model else 0.0
    return trace
