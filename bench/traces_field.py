"""Traces from the field: transports and models unlike the simulated server's own.

So that the playout law is not tuned to one cadence (the delivery buffer's
150 ms batches of a steady model), these reproduce what other stacks send:

* `reasoning` — a reasoning model: a silent thinking phase of 4–8 s
  (REASONING_START … REASONING_END, no text), then a fast answer
  (~400 tokens/s) through the usual delivery buffer.
* `tool_pauses` — a fast answer that stops two or three times mid-message while
  a tool call runs (TOOL_CALL_START / ARGS / END, 0.8–2.5 s, TOOL_CALL_RESULT),
  then goes on in the same message.
* `mobile` — the fast answer over a mobile radio: the link wakes up every
  300–800 ms and delivers in one burst everything the server sent meanwhile.
* `char2000` — a provider that sends one character per event at 2 000 events/s,
  forwarded one socket message per event (no server batching).
* `paste50k` — a 50 KB answer in one single delta.

Each builder is deterministic for a seed, like the other traces.
"""

from __future__ import annotations

import random
from typing import Any

import regex
from streampace.sim import simulate

from bench.traces import PROMPT, Arrivals, Model, Trace, deliver

__all__ = ["FIELD_TRACES", "build_field_trace"]

FIELD_TRACES: dict[str, str] = {
    "reasoning": "reasoning model: 4–8 s of silent thinking, then a fast answer",
    "tool_pauses": "fast answer pausing 0.8–2.5 s mid-message for tool calls",
    "mobile": "fast answer over a mobile link: bursts after 300–800 ms gaps",
    "char2000": "one character per event at 2 000 events/s, one socket message each",
    "paste50k": "a 50 KB answer in one single delta",
}

_GRAPHEME = regex.compile(r"\X")


def _sim(scenario: str, name: str, seed: int) -> Model:
    return [(te.t_ms, dict(te.event)) for te in simulate(
        scenario, seed=seed, prompt=PROMPT, run_id=f"run-{name}-{seed}")]


def _answer_id(model: Model) -> str:
    return next(e["messageId"] for _t, e in model
                if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "assistant")


def _shift_from(model: Model, index: int, by: float) -> Model:
    return [*model[:index], *((round(t + by, 3), e) for t, e in model[index:])]


def reasoning_model(seed: int) -> tuple[Model, dict[str, Any]]:
    rng = random.Random(f"bench.reasoning:{seed}")
    model = _sim("very_fast", "reasoning", seed)
    mid = _answer_id(model)
    at = next(i for i, (_t, e) in enumerate(model)
              if e["type"] == "TEXT_MESSAGE_START" and e["messageId"] == mid)
    think = rng.uniform(4000.0, 8000.0)
    t0 = model[at][0]
    rid = f"think-{seed}"
    model = _shift_from(model, at, think)
    model[at:at] = [(t0, {"type": "REASONING_START", "messageId": rid}),
                    (round(t0 + think - 5.0, 3), {"type": "REASONING_END", "messageId": rid})]
    return model, {"thinking_ms": round(think, 1)}


def tool_pauses_model(seed: int) -> tuple[Model, dict[str, Any]]:
    rng = random.Random(f"bench.tool_pauses:{seed}")
    model = _sim("fast", "tool_pauses", seed)
    mid = _answer_id(model)
    content = [i for i, (_t, e) in enumerate(model)
               if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == mid]
    n = rng.randint(2, 3)
    cuts = sorted(rng.sample(content[len(content) // 5: 4 * len(content) // 5], n))
    pauses = []
    for k, cut in enumerate(reversed(cuts)):  # from the back: earlier indexes stay valid
        t = model[cut - 1][0] + 5.0
        pause = rng.uniform(800.0, 2500.0)
        call = f"call-pause-{k}"
        args = '{"query": "streaming display", "max_results": 3}'
        tool = [
            (t, {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "search_docs",
                 "parentMessageId": mid}),
            *((round(t + 10.0 + 8.0 * j, 3), {"type": "TOOL_CALL_ARGS", "toolCallId": call,
                                              "delta": args[j * 8:(j + 1) * 8]})
              for j in range((len(args) + 7) // 8)),
            (round(t + 100.0, 3), {"type": "TOOL_CALL_END", "toolCallId": call}),
            (round(t + pause - 20.0, 3), {"type": "TOOL_CALL_RESULT", "messageId": f"tool-{k}",
                                          "toolCallId": call, "role": "tool",
                                          "content": '{"results": 3}'}),
        ]
        model = _shift_from(model, cut, pause)
        model[cut:cut] = tool
        pauses.append(round(pause, 1))
    return model, {"pauses_ms": list(reversed(pauses))}


def mobile_network(arrivals: Arrivals, seed: int) -> tuple[Arrivals, dict[str, Any]]:
    """The radio wakes every 300–800 ms; what was sent meanwhile lands in one burst."""
    rng = random.Random(f"bench.mobile:{seed}")
    if not arrivals:
        return [], {}
    out: Arrivals = []
    wake = arrivals[0][0]
    wakes = 0
    for t, batch in arrivals:
        while wake < t:
            wake += rng.uniform(300.0, 800.0)
            wakes += 1
        land = round(wake + rng.uniform(5.0, 30.0), 3)
        if out and out[-1][0] >= land:
            land = out[-1][0]
        out.append((land, batch))
    return out, {"wakes": wakes}


def _answer_text(seed: int, graphemes: int) -> str:
    model = _sim("long", "text", seed)
    mid = _answer_id(model)
    text = "".join(e["delta"] for _t, e in model
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == mid)
    return "".join(_GRAPHEME.findall(text)[:graphemes])


def _envelope(run_id: str, mid: str, body: Model, end: float) -> Model:
    return [
        (0.0, {"type": "RUN_STARTED", "threadId": "bench", "runId": run_id}),
        (0.0, {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}),
        *body,
        (round(end, 3), {"type": "TEXT_MESSAGE_END", "messageId": mid}),
        (round(end + 10.0, 3), {"type": "RUN_FINISHED", "threadId": "bench", "runId": run_id}),
    ]


def char2000_model(seed: int) -> Model:
    mid = f"run-char2000-{seed}-m1"
    clusters = _GRAPHEME.findall(_answer_text(seed, 6000))
    t0 = 300.0
    body = [(round(t0 + 0.5 * i, 3), {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid,
                                      "delta": c}) for i, c in enumerate(clusters)]
    return _envelope(f"run-char2000-{seed}", mid, body, t0 + 0.5 * len(clusters) + 2.0)


def paste50k_model(seed: int) -> Model:
    mid = f"run-paste50k-{seed}-m1"
    text, size = [], 0
    for c in _GRAPHEME.findall(_answer_text(seed, 60_000)):
        size += len(c.encode("utf-8"))
        if size > 50_000:
            break
        text.append(c)
    rng = random.Random(f"bench.paste50k:{seed}")
    t = rng.uniform(300.0, 800.0)
    body = [(round(t, 3), {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid,
                           "delta": "".join(text)})]
    return _envelope(f"run-paste50k-{seed}", mid, body, t + rng.uniform(2.0, 25.0))


def build_field_trace(name: str, seed: int = 1) -> Trace:
    meta: dict[str, Any] = {"scenario": name, "seed": seed}
    if name == "reasoning":
        model, extra = reasoning_model(seed)
        arrivals = deliver(model)
        meta.update(extra, network="direct")
    elif name == "tool_pauses":
        model, extra = tool_pauses_model(seed)
        arrivals = deliver(model)
        meta.update(extra, network="direct")
    elif name == "mobile":
        model = _sim("fast", name, seed)
        arrivals, extra = mobile_network(deliver(model), seed)
        meta.update(extra, network="mobile")
    elif name == "char2000":
        model = char2000_model(seed)
        arrivals = [(t, [dict(e)]) for t, e in model]  # one socket message per event
        meta["network"] = "one message per event"
    elif name == "paste50k":
        model = paste50k_model(seed)
        arrivals = deliver(model)
        meta["network"] = "direct"
    else:
        raise ValueError(f"unknown field trace {name!r}")
    meta["socket_messages"] = len(arrivals)
    trace = Trace(name, model, arrivals, FIELD_TRACES[name], meta)
    meta["graphemes"] = trace.tracked.total
    meta["duration_ms"] = round(model[-1][0], 1)
    return trace
