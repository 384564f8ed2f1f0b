"""Property tests: random AG-UI streams under random drivers keep every invariant.

Invariants (issue 2): per message the delivered text equals the input text;
every event delivered exactly once and in order; at most one apply per drain;
at most ``max_events_per_frame`` events per apply; no delivered piece ends
inside a grapheme cluster; nothing left queued after a final flush.  Delivered
events must also be valid AG-UI 1.0 (checked with the official models).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import regex
from ag_ui.core.events import Event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from streampace.pacing.graphemes import shows_incomplete
from streampace.pacing.scheduler import PacingConfig, PacingScheduler
from streampace.testing import ManualHost

AGUI = TypeAdapter(Event)
# Moderate by default (shared 2-core machine); raise for a soak run.
EXAMPLES = int(os.environ.get("STREAMPACE_HYPOTHESIS_EXAMPLES", "150"))
TEXT_TYPES = ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK", "REASONING_MESSAGE_CONTENT")

FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
KISS = "\U0001F469\u200D\u2764\uFE0F\u200D\U0001F48B\u200D\U0001F468"
FLAG_JP = "\U0001F1EF\U0001F1F5"
FLAG_FR = "\U0001F1EB\U0001F1F7"
THUMB = "\U0001F44D\U0001F3FD"
HEART = "\u2764\uFE0F"
SCOTLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
HANGUL_LVT = "\u1100\u1161\u11A8"

# Clusters of every kind the hold rule knows, and some it deliberately does not
# hold (a base before its combining mark, CR before LF).
SAFE_TOKENS = ["a", "b", " ", "word ", "漢", "字", "。", "가", "\n", FAMILY, KISS, FLAG_JP,
               FLAG_FR, THUMB, HEART, SCOTLAND, HANGUL_LVT, "\U0001F600", "\r\n",
               "1\uFE0F\u20E3"]
ALL_TOKENS = SAFE_TOKENS + ["e\u0301", "\u0915\u094D\u0937"]


def clusters_bounds(text: str) -> set[int]:
    out, pos = {0}, 0
    for c in regex.findall(r"\X", text):
        pos += len(c)
        out.add(pos)
    return out


def visible_bounds(text: str) -> set[int]:
    """Where a shown piece may end under the hold rule: a cluster boundary, or
    inside a cluster where what is shown of it would not change visibly
    (a base before its mark, CR before LF), never where it would (half an
    emoji sequence or flag, a keycap base, Hangul jamo, consonant + virama)."""
    out = clusters_bounds(text)
    pos = 0
    for c in regex.findall(r"\X", text):
        for k in range(1, len(c)):
            if not shows_incomplete(regex.findall(r"\X", c[:k])[-1]):
                out.add(pos + k)
        pos += len(c)
    return out


@st.composite
def split_text(draw: st.DrawFn, tokens: list[str]=ALL_TOKENS, max_tokens: int=25) -> list[str]:
    text = "".join(draw(st.lists(st.sampled_from(tokens), min_size=1, max_size=max_tokens)))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))
    cuts = [c for c in cuts if 0 < c < len(text)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@st.composite
def session_stream(draw: st.DrawFn, sid: str) -> list[dict]:
    blocks: list[list[dict]] = []
    for k in range(draw(st.integers(1, 5))):
        mid = f"{sid}-m{k}"
        kind = draw(st.sampled_from(["assistant", "assistant", "user", "chunk", "reasoning",
                                     "tool", "snapshot", "custom", "state_delta"]))
        block: list[dict[str, Any]]
        if kind in ("assistant", "user"):
            ended = kind == "user" or draw(st.booleans())
            block = [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": kind}]
            block += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d}
                      for d in draw(split_text())]
            if ended:
                block.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        elif kind == "chunk":
            parts = draw(split_text())
            block = [{"type": "TEXT_MESSAGE_CHUNK", "messageId": mid, "delta": d,
                      **({"role": "assistant", "name": "bot"} if i == 0 else {})}
                     for i, d in enumerate(parts)]
        elif kind == "reasoning":
            block = [{"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"}]
            block += [{"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": d}
                      for d in draw(split_text(max_tokens=8))]
            block.append({"type": "REASONING_MESSAGE_END", "messageId": mid})
        elif kind == "tool":
            tid = f"{sid}-t{k}"
            block = [{"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": "f"},
                     {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": '{"q": 1}'},
                     {"type": "TOOL_CALL_END", "toolCallId": tid}]
        elif kind == "snapshot":
            block = [draw(st.sampled_from([
                {"type": "STATE_SNAPSHOT", "snapshot": {"k": k}},
                {"type": "MESSAGES_SNAPSHOT", "messages": []},
            ]))]
        elif kind == "state_delta":
            block = [{"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/x", "value": k}]}]
        else:
            block = [{"type": "CUSTOM", "name": "c", "value": k}]
        blocks.append(block)
    # Interleave blocks (each keeps its own order), as concurrent messages do.
    out: list[dict] = [{"type": "RUN_STARTED", "threadId": sid, "runId": "r"}]
    heads = [0] * len(blocks)
    while any(h < len(b) for h, b in zip(heads, blocks, strict=True)):
        open_ = [i for i, (h, b) in enumerate(zip(heads, blocks, strict=True)) if h < len(b)]
        i = draw(st.sampled_from(open_[:2]))
        out.append(blocks[i][heads[i]])
        heads[i] += 1
    if draw(st.booleans()):
        out.append({"type": "RUN_FINISHED", "threadId": sid, "runId": "r"})
    # Fresh dicts: identity is how "delivered exactly once" is checked.
    return [dict(e) for e in out]


ACTIONS = st.one_of(
    st.tuples(st.just("feed"), st.integers(0, 2), st.integers(1, 4)),
    st.tuples(st.just("frames"), st.sampled_from([60, 120, 144]), st.integers(1, 12),
              st.floats(-3, 3)),
    st.tuples(st.just("hidden"), st.integers(10, 400)),
    st.tuples(st.just("idle"), st.integers(500, 3000)),
    st.tuples(st.just("flush"), st.integers(0, 2)),
    st.tuples(st.just("feed_x"), st.integers(1, 3)),
    st.tuples(st.just("clear_x")),
    st.tuples(st.just("reject"), st.booleans()),
)

CONFIGS = st.sampled_from([
    PacingConfig(),
    PacingConfig.seed(),
    PacingConfig(max_lag_ms=60),
    PacingConfig(holdback_ms=0),
    PacingConfig(holdback_ms=40, max_events_per_frame=3),
    PacingConfig(overload_graphemes=30, max_events_per_frame=5),
])


@dataclass
class Recorder:
    host: ManualHost
    sched: PacingScheduler | None = None
    calls: list[tuple[str, list[dict], bool, int, bool]] = field(default_factory=list)
    rejecting: bool = False
    flip: int = 0
    in_flush: bool = False

    def apply(self, sid: str, events: list[dict]) -> bool:
        self.flip += 1
        ok = not (self.rejecting and self.flip % 2 == 0)
        assert self.sched is not None
        self.calls.append((sid, list(events), ok, self.sched.stats()["frames"], self.in_flush))
        return ok


def run_scenario(config: PacingConfig, streams: dict[str, list[dict]], x_stream: list[dict],
                 actions: list[tuple]) -> Recorder:
    host = ManualHost(10_000)
    rec = Recorder(host)
    sched = PacingScheduler(host, rec.apply, config)
    rec.sched = sched
    sids = sorted(streams)
    cursor = dict.fromkeys(sids, 0)
    x_cursor = 0

    def feed(sid: str, n: int) -> None:
        i = cursor[sid]
        if i < len(streams[sid]):
            sched.enqueue(sid, streams[sid][i:i + n])
            cursor[sid] = min(len(streams[sid]), i + n)

    for act in actions:
        kind = act[0]
        if kind == "feed":
            feed(sids[act[1] % len(sids)], act[2])
        elif kind == "frames":
            _, hz, n, jitter = act
            for _ in range(n):
                host.frame(max(1.0, 1000 / hz + jitter))
        elif kind == "hidden" or kind == "idle":
            host.tick(act[1])
        elif kind == "flush":
            rec.in_flush = True
            sched.flush_now(sids[act[1] % len(sids)])
            rec.in_flush = False
        elif kind == "feed_x":
            sched.enqueue("x", x_stream[x_cursor:x_cursor + act[1]])
            x_cursor += act[1]
        elif kind == "clear_x":
            sched.clear("x")
        elif kind == "reject":
            rec.rejecting = act[1]
    for sid in sids:
        feed(sid, len(streams[sid]))
    rec.rejecting = False
    for _ in range(5):
        host.frame(1000 / 60)
    sched.clear("x")
    rec.in_flush = True
    for sid in sids:
        sched.flush_now(sid)
    rec.in_flush = False
    assert sched.queued_events() == 0
    assert sched.pending_graphemes() == 0
    return rec


def check_invariants(rec: Recorder, config: PacingConfig, streams: dict[str, list[dict]],
                     strict_clusters: bool = False) -> None:
    drain_ids = [c[3] for c in rec.calls if not c[4]]
    assert len(drain_ids) == len(set(drain_ids)), "more than one apply in a drain"
    for _sid, events, _ok, _f, _fl in rec.calls:
        assert len(events) <= config.max_events_per_frame
        assert events, "empty apply"
    for sid, stream in streams.items():
        delivered = [e for s, evs, ok, _f, _fl in rec.calls if ok and s == sid for e in evs]
        for e in delivered:
            AGUI.validate_python(e)
        is_text = [e["type"] in TEXT_TYPES and e.get("delta") != "" for e in stream]
        full: dict[str, str] = {}
        delta_bounds: dict[str, set[int]] = {}
        before: list[dict[str, int]] = []  # text lengths queued before each other event
        others = []
        for e, text in zip(stream, is_text, strict=True):
            if text:
                mid = e["messageId"]
                start = len(full.get(mid, ""))
                full[mid] = full.get(mid, "") + e["delta"]
                # where the seed's per-event segmentation may cut
                delta_bounds.setdefault(mid, {0}).update(
                    start + b for b in clusters_bounds(e["delta"]))
            else:
                others.append(e)
                before.append({m: len(t) for m, t in full.items()})
        got_others = [e for e in delivered
                      if not (e["type"] in TEXT_TYPES and e.get("delta") != "")]
        assert len(got_others) == len(others)
        assert all(a is b for a, b in zip(got_others, others, strict=True)), "order/identity"
        shown: dict[str, str] = {}
        k = 0
        for e in delivered:
            if e["type"] in TEXT_TYPES and e.get("delta") != "":
                mid = e["messageId"]
                shown[mid] = shown.get(mid, "") + e["delta"]
                end = len(shown[mid])
                ok_bounds = (visible_bounds if strict_clusters else clusters_bounds)(full[mid])
                if not strict_clusters:
                    ok_bounds |= delta_bounds[mid]
                assert end in ok_bounds, (mid, end, full[mid])
            else:
                # Text queued before this event is all shown; at most the rest of
                # one cluster that started before it may have moved ahead of it.
                for mid, n in before[k].items():
                    got = len(shown.get(mid, ""))
                    if got != n:
                        assert got > n, ("text overtaken", mid, got, n)
                        nxt = min(b for b in clusters_bounds(full[mid]) if b > n)
                        assert got <= nxt, ("moved more than a cluster", mid, got, n)
                k += 1
        assert shown == full


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(config=CONFIGS, data=st.data())
def test_random_streams_under_random_drivers(config: PacingConfig, data: st.DataObject) -> None:
    n_sessions = data.draw(st.integers(1, 3), label="sessions")
    streams = {f"s{i}": data.draw(session_stream(f"s{i}"), label=f"s{i}")
               for i in range(n_sessions)}
    x_stream = data.draw(session_stream("x"), label="x")
    actions = data.draw(st.lists(ACTIONS, max_size=40), label="actions")
    rec = run_scenario(config, streams, x_stream, actions)
    check_invariants(rec, config, streams)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=split_text(tokens=ALL_TOKENS, max_tokens=30),
       gaps=st.lists(st.integers(0, 130), min_size=10, max_size=10),
       hz=st.sampled_from([60, 120, 144]), reject=st.booleans())
def test_holdback_never_shows_a_split_cluster(
        parts: list[str], gaps: list[int], hz: int, reject: bool) -> None:
    """Deltas of one message at most 130 ms apart (< holdback_ms): no piece
    shown ends where the rest of its cluster would change it visibly,
    whatever the provider's split points."""
    config = PacingConfig()
    host = ManualHost()
    rec = Recorder(host, rejecting=reject)
    sched = PacingScheduler(host, rec.apply, config)
    rec.sched = sched
    stream = [{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    sched.enqueue("s", stream[:1])
    for i, part in enumerate(parts):
        ev = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": part}
        stream.append(ev)
        sched.enqueue("s", [ev])
        gap: float = gaps[i % len(gaps)]
        while gap > 0:
            step = min(gap, 1000 / hz)
            host.frame(step)
            gap -= step
    end = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    stream.append(end)
    sched.enqueue("s", [end])
    rec.rejecting = False
    for _ in range(3):
        host.frame(1000 / hz)
    assert sched.queued_events() == 0
    check_invariants(rec, config, {"s": stream}, strict_clusters=True)
