"""The simulated model: conformance, determinism, cadence and the hard text cases."""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from typing import Any

import pytest
import regex
from ag_ui.core import Event
from ag_ui_validate import PatchOk, ValidatorOptions, apply_patch, create_validator
from pydantic import TypeAdapter
from streampace.conversation.events import validate_event
from streampace.sim import (
    SCENARIOS,
    TimedEvent,
    iter_simulate,
    messages_snapshot,
    simulate,
    stamped,
    summarize,
    visible_text,
    with_network_jitter,
    with_snapshot,
)
from streampace.sim import text as sim_text
from streampace.sim.clusters import clusters as _clusters

EVENT_ADAPTER = TypeAdapter(Event)
QUICK = [s for s in SCENARIOS if s != "long"]


def graphemes(text: str) -> list[str]:
    return regex.findall(r"\X", text)


def answer_ids(timed: list[TimedEvent]) -> list[str]:
    return [
        t.event["messageId"]
        for t in timed
        if t.event["type"] == "TEXT_MESSAGE_START" and t.event["role"] == "assistant"
    ]


def deltas_of(timed: list[TimedEvent], message_id: str) -> list[TimedEvent]:
    return [
        t
        for t in timed
        if t.event["type"] == "TEXT_MESSAGE_CONTENT" and t.event["messageId"] == message_id
    ]


def check_nesting(timed: list[TimedEvent], prompt: str | None) -> None:
    """Run framing, START/CONTENT/END nesting and id uniqueness, by hand."""
    events = [t.event for t in timed]
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["runId"] == events[0]["runId"]
    assert not any(e["type"] in ("RUN_STARTED", "RUN_FINISHED") for e in events[1:-1])
    if prompt is not None:
        assert [e["type"] for e in events[1:4]] == [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
        ]
        assert events[1]["role"] == "user"
        assert events[2]["delta"] == prompt
    open_text: set[str] = set()
    open_reasoning: set[str] = set()
    open_blocks: set[str] = set()
    open_calls: set[str] = set()
    open_steps: list[str] = []
    seen_messages: set[str] = set()
    seen_calls: set[str] = set()
    ended_calls: set[str] = set()
    for e in events:
        et = e["type"]
        if et in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"):
            assert e["delta"], "deltas are never empty"
        if et == "TEXT_MESSAGE_START":
            assert e["messageId"] not in seen_messages
            seen_messages.add(e["messageId"])
            open_text.add(e["messageId"])
        elif et == "TEXT_MESSAGE_CONTENT":
            assert e["messageId"] in open_text
        elif et == "TEXT_MESSAGE_END":
            open_text.remove(e["messageId"])
        elif et == "REASONING_START":
            open_blocks.add(e["messageId"])
        elif et == "REASONING_MESSAGE_START":
            assert e["messageId"] not in seen_messages
            seen_messages.add(e["messageId"])
            open_reasoning.add(e["messageId"])
        elif et == "REASONING_MESSAGE_CONTENT":
            assert e["messageId"] in open_reasoning
        elif et == "REASONING_MESSAGE_END":
            open_reasoning.remove(e["messageId"])
        elif et == "REASONING_END":
            assert not open_reasoning
            open_blocks.remove(e["messageId"])
        elif et == "TOOL_CALL_START":
            assert e["toolCallId"] not in seen_calls
            seen_calls.add(e["toolCallId"])
            open_calls.add(e["toolCallId"])
        elif et == "TOOL_CALL_ARGS":
            assert e["toolCallId"] in open_calls
        elif et == "TOOL_CALL_END":
            open_calls.remove(e["toolCallId"])
            ended_calls.add(e["toolCallId"])
        elif et == "TOOL_CALL_RESULT":
            assert e["toolCallId"] in ended_calls
            assert e["messageId"] not in seen_messages
            seen_messages.add(e["messageId"])
        elif et == "STEP_STARTED":
            open_steps.append(e["stepName"])
        elif et == "STEP_FINISHED":
            assert open_steps.pop() == e["stepName"]
    assert not (open_text or open_reasoning or open_blocks or open_calls or open_steps)


def check_validator(timed: list[TimedEvent]) -> None:
    # Declaring shared-state turns on the check that state deltas follow a snapshot.
    has_state = any(t.event["type"] == "STATE_SNAPSHOT" for t in timed)
    validator = create_validator(ValidatorOptions(features=["shared-state"] if has_state else []))
    for t in timed:
        validator.feed(t.event)
    validator.finalize()
    report = validator.report()
    bad = [d for d in report.diagnostics if d.severity in ("error", "warning")]
    assert not bad, bad[:3]
    assert not report.internal_errors
    assert report.event_count == len(timed)


@pytest.mark.parametrize("scenario", QUICK)
@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("prompt", [None, "Explain pacing, please \U0001f469\u200d\U0001f4bb"])
def test_every_scenario_is_a_conformant_run(scenario: str, seed: int, prompt: str | None) -> None:
    timed = simulate(scenario, seed=seed, prompt=prompt)
    for t in timed:
        validate_event(t.event)
        EVENT_ADAPTER.validate_python(t.event)
        # Wire shape: JSON round trip is lossless (plain dicts, no objects).
        assert json.loads(json.dumps(t.event)) == t.event
    check_nesting(timed, prompt)
    check_validator(timed)


def test_long_is_a_conformant_run() -> None:
    timed = simulate("long", prompt="a long one")
    for t in timed:
        validate_event(t.event)
    check_nesting(timed, "a long one")
    check_validator(timed)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_timestamps_start_at_zero_and_never_decrease(scenario: str) -> None:
    for seed in (0, 3):
        times = [t.t_ms for t in simulate(scenario, seed=seed)]
        assert times[0] == 0.0
        assert all(b >= a for a, b in zip(times, times[1:], strict=False))
        assert times[-1] > 0


@pytest.mark.parametrize("scenario", QUICK)
def test_same_arguments_give_identical_runs(scenario: str) -> None:
    args: dict[str, Any] = {"seed": 5, "speed": 1.5, "prompt": "hi", "thread_id": "t",
                            "run_id": "r"}
    assert simulate(scenario, **args) == simulate(scenario, **args)
    assert list(iter_simulate(scenario, **args)) == simulate(scenario, **args)


@pytest.mark.parametrize("scenario", QUICK)
def test_different_seeds_differ(scenario: str) -> None:
    a, b = simulate(scenario, seed=0), simulate(scenario, seed=1)
    assert [t.t_ms for t in a] != [t.t_ms for t in b]
    if scenario != "paste":
        assert [t.event for t in a] != [t.event for t in b]


@pytest.mark.parametrize("scenario", ["demo", "fast", "agentic"])
def test_speed_divides_time_and_changes_nothing_else(scenario: str) -> None:
    base = simulate(scenario, seed=2)
    for speed in (0.5, 2.0, 4.0):
        scaled = simulate(scenario, seed=2, speed=speed)
        assert [t.event for t in scaled] == [t.event for t in base]
        for s, b in zip(scaled, base, strict=True):
            assert s.t_ms == pytest.approx(b.t_ms / speed, abs=0.002)


def test_ids_derive_from_run_id_and_differ_between_runs() -> None:
    a = simulate("agentic", run_id="run-a")
    b = simulate("agentic", run_id="run-b")
    ids = lambda timed: {  # noqa: E731
        v for t in timed for k, v in t.event.items() if k in ("messageId", "toolCallId")
    }
    assert ids(a) and ids(b)
    assert not ids(a) & ids(b)
    assert all(i.startswith("run-a") for i in ids(a))
    assert a[0].event["runId"] == "run-a" and a[0].event["threadId"] == "thread-1"


# -- cadence, computed from the returned timestamps ------------------------------------


def answer_rate(timed: list[TimedEvent]) -> tuple[float, int]:
    """(deltas per second over the answer, graphemes of the answer)."""
    (mid,) = answer_ids(timed)
    ds = deltas_of(timed, mid)
    span_s = (ds[-1].t_ms - ds[0].t_ms) / 1000
    text = "".join(d.event["delta"] for d in ds)
    return (len(ds) - 1) / span_s, len(graphemes(text))


@pytest.mark.parametrize(
    ("scenario", "rate", "lo_g", "hi_g"),
    [
        ("fast", 120, 1400, 1900),
        ("slow", 15, 350, 600),
        ("very_fast", 400, 2800, 3500),
        ("cjk_emoji", 75, 900, 1300),
    ],
)
def test_token_rate_and_length(scenario: str, rate: float, lo_g: int, hi_g: int) -> None:
    for seed in (0, 1, 2):
        measured, n = answer_rate(simulate(scenario, seed=seed))
        assert rate * 0.8 <= measured <= rate * 1.2, (seed, measured)
        assert lo_g <= n <= hi_g, (seed, n)


def test_latin_tokens_are_1_to_6_chars_and_cjk_tokens_1_to_2() -> None:
    timed = simulate("fast")
    (mid,) = answer_ids(timed)
    lengths = [len(graphemes(d.event["delta"])) for d in deltas_of(timed, mid)]
    assert max(lengths) <= 6 and min(lengths) >= 1
    assert 2.5 <= statistics.mean(lengths) <= 5.5
    timed = simulate("cjk_emoji")
    (mid,) = answer_ids(timed)
    cjk = regex.compile(r"^[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+$")
    cjk_tokens = [d.event["delta"] for d in deltas_of(timed, mid) if cjk.match(d.event["delta"])]
    assert len(cjk_tokens) > 200
    assert {len(graphemes(t)) for t in cjk_tokens} == {1, 2}


def test_bursty_sends_large_deltas_about_every_450_ms() -> None:
    for seed in (0, 1, 2):
        timed = simulate("bursty", seed=seed)
        (mid,) = answer_ids(timed)
        ds = deltas_of(timed, mid)
        assert len(ds) >= 10
        gaps = [b.t_ms - a.t_ms for a, b in zip(ds, ds[1:], strict=False)]
        assert 400 <= statistics.mean(gaps[:-1]) <= 500
        assert all(300 <= g <= 650 for g in gaps[:-1])
        # 60-80 tokens of 1-6 characters each (the last delta may be a remainder).
        for d in ds[:-1]:
            assert 60 <= len(graphemes(d.event["delta"])) <= 480


def test_long_answer_is_at_least_50k_graphemes_at_about_120_tokens_per_s() -> None:
    timed = simulate("long")
    measured, n = answer_rate(timed)
    assert n >= 50_000
    assert 96 <= measured <= 144
    assert summarize(timed)["graphemes"] == n


def test_paste_is_one_delta_of_10k_graphemes() -> None:
    for seed in (0, 4):
        timed = simulate("paste", seed=seed)
        (mid,) = answer_ids(timed)
        (delta,) = deltas_of(timed, mid)
        assert len(graphemes(delta.event["delta"])) == 10_000


def test_demo_has_reasoning_tool_call_pauses_bursts_and_lasts_20_to_30_s() -> None:
    for seed in range(4):
        timed = simulate("demo", seed=seed)
        types = [t.event["type"] for t in timed]
        assert 20_000 <= timed[-1].t_ms <= 30_000, (seed, timed[-1].t_ms)
        for needed in ("REASONING_START", "TOOL_CALL_START", "TOOL_CALL_RESULT", "STEP_STARTED"):
            assert needed in types
        answer = answer_ids(timed)[-1]
        ds = deltas_of(timed, answer)
        gaps = [b.t_ms - a.t_ms for a, b in zip(ds, ds[1:], strict=False)]
        assert sum(1 for g in gaps if g >= 300) >= 2, "think pauses"
        assert any(len(graphemes(d.event["delta"])) >= 15 for d in ds), "provider bursts"
        text = visible_text(timed)[answer]
        assert regex.search(r"\p{Han}|\p{Hiragana}|\p{Hangul}", text)
        assert regex.search(r"\p{Extended_Pictographic}", text)


def test_agentic_flow() -> None:
    timed = simulate("agentic", seed=3)
    events = [t.event for t in timed]
    types = [e["type"] for e in events]
    assert types.index("REASONING_START") < types.index("TOOL_CALL_START")
    assert types.index("STATE_SNAPSHOT") < types.index("STATE_DELTA")
    assert len(answer_ids(timed)) >= 3
    calls: dict[str, str] = {}
    for e in events:
        if e["type"] == "TOOL_CALL_START":
            assert e["toolCallName"]
            calls[e["toolCallId"]] = ""
        elif e["type"] == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]] += e["delta"]
    assert len(calls) >= 1
    for args in calls.values():
        assert isinstance(json.loads(args), dict)
    assert sum(1 for e in events if e["type"] == "TOOL_CALL_ARGS") >= 2 * len(calls)
    state = next(e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT")
    for e in events:
        if e["type"] == "STATE_DELTA":
            result = apply_patch(state, e["delta"])
            assert isinstance(result, PatchOk), result
            state = result.result
    assert state["plan"]["current"] == "answer"


# -- grapheme clusters split across deltas ---------------------------------------------


def split_clusters(timed: list[TimedEvent], message_id: str) -> list[str]:
    """Clusters (per regex \\X) that straddle a boundary between two deltas."""
    ds = [d.event["delta"] for d in deltas_of(timed, message_id)]
    text = "".join(ds)
    starts: set[int] = set()
    pos = 0
    bounds = []
    for g in graphemes(text):
        starts.add(pos)
        bounds.append((pos, g))
        pos += len(g)
    cut_points = []
    pos = 0
    for d in ds[:-1]:
        pos += len(d)
        cut_points.append(pos)
    out = []
    for cut in cut_points:
        if cut not in starts:
            out.append(next(g for p, g in bounds if p < cut < p + len(g)))
    return out


def test_cjk_emoji_splits_every_kind_of_cluster_across_deltas() -> None:
    for seed in (0, 1, 2, 3):
        timed = simulate("cjk_emoji", seed=seed)
        (mid,) = answer_ids(timed)
        broken = split_clusters(timed, mid)
        assert len(broken) >= 10, seed
        joined = "".join(broken)
        assert "\u200d" in joined  # ZWJ sequences
        assert regex.search(r"\p{Regional_Indicator}{2}", joined)  # flags
        assert regex.search(r"[\U0001F3FB-\U0001F3FF]", joined)  # skin tones
        assert "\ufe0f" in joined  # VS16
        assert "\u0301" in joined  # combining acute
        assert regex.search(r"[\u1100-\u11FF]", joined)  # decomposed Hangul
        # The delta texts still join to the full, well-formed message.
        assert visible_text(timed)[mid].count(sim_text.EMOJI["family"]) >= 1


def test_demo_splits_some_clusters_and_plain_scenarios_do_not() -> None:
    timed = simulate("demo")
    assert split_clusters(timed, answer_ids(timed)[-1])
    timed = simulate("fast")
    assert not split_clusters(timed, answer_ids(timed)[0])


def test_builtin_cluster_splitter_matches_regex_on_the_corpus_and_outputs() -> None:
    texts = [
        *sim_text.EN_PARAGRAPHS,
        *sim_text.EN_BLOCKS,
        *sim_text.FR_LINES,
        *sim_text.JA_LINES,
        *sim_text.ZH_LINES,
        *sim_text.KO_LINES,
        *sim_text.MIXED_LINES,
        *sim_text.EMOJI.values(),
        *(s for _, s in sim_text.TOOL_SOURCES),
    ]
    for scenario in ("demo", "cjk_emoji", "paste"):
        texts.extend(visible_text(simulate(scenario, seed=1)).values())
    for text in texts:
        assert _clusters(text) == graphemes(text), text[:40]


# -- helpers and bad input ---------------------------------------------------------------


def test_visible_text_per_message_including_chunks_and_reasoning() -> None:
    prompt = "Bonjour \U0001f1eb\U0001f1f7"
    timed = simulate("demo", prompt=prompt, seed=1)
    text = visible_text(timed)
    assert text["run-demo-1-user"] == prompt
    reasoning = [k for k in text if "reasoning" in k]
    assert reasoning and text[reasoning[0]].strip()
    assert prompt in text[answer_ids(timed)[-1]]  # the prompt is echoed lightly
    # Plain dicts and CHUNK events (continuations may omit messageId).
    events = [
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "role": "assistant", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r1", "delta": "hm"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "assistant"},
    ]
    assert visible_text(events) == {"m1": "Hello", "r1": "hm", "m2": ""}


def test_iter_simulate_is_lazy() -> None:
    it = iter_simulate("long")
    first = next(it)
    assert first.event["type"] == "RUN_STARTED" and first.t_ms == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scenario": "nope"}, "demo, fast, slow"),
        ({"speed": 0}, "speed"),
        ({"speed": -1.0}, "speed"),
        ({"speed": math.nan}, "speed"),
        ({"speed": math.inf}, "speed"),
        ({"seed": "1"}, "seed"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "bad \ud83d half"}, "lone surrogate"),
        ({"prompt": 3}, "prompt"),
        ({"thread_id": ""}, "thread_id"),
        ({"run_id": ""}, "run_id"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        simulate(**kwargs)
    with pytest.raises(ValueError, match=message):
        iter_simulate(**kwargs)  # checked at call time, not on first next()


def test_network_jitter_keeps_order_and_adds_heavy_tail_and_stalls() -> None:
    timed = simulate("fast")
    jittered = with_network_jitter(timed, seed=1)
    assert [t.event for t in jittered] == [t.event for t in timed]
    assert all(j.t_ms >= t.t_ms for j, t in zip(jittered, timed, strict=True))
    times = [t.t_ms for t in jittered]
    assert all(b >= a for a, b in zip(times, times[1:], strict=False))
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert max(gaps) >= 900, "a stall of 1-2 s shows as a long gap"
    assert with_network_jitter(timed, seed=1) == jittered
    assert with_network_jitter(timed, seed=2) != jittered


def test_stamped_events_carry_numeric_timestamps_and_stay_valid() -> None:
    timed = simulate("slow")
    events = stamped(timed, start_ms=1_700_000_000_000)
    assert [e["timestamp"] for e in events] == sorted(e["timestamp"] for e in events)
    assert events[0]["timestamp"] == 1_700_000_000_000
    for e in events:
        validate_event(e)
        EVENT_ADAPTER.validate_python(e)


def test_summarize_figures() -> None:
    timed = simulate("paste")
    fig = summarize(timed)
    assert fig["deltas"] == 1 and fig["graphemes"] == 10_000
    assert fig["duration_ms"] == timed[-1].t_ms and fig["events"] == len(timed)


@pytest.mark.parametrize("scenario", ["agentic", "demo"])
@pytest.mark.parametrize("fraction", [0.3, 0.7])
def test_snapshot_inserted_mid_run_is_conformant_and_consistent(
    scenario: str, fraction: float
) -> None:
    timed = simulate(scenario, seed=1, prompt="hi")
    out = with_snapshot(timed, timed[-1].t_ms * fraction)
    assert len(out) in (len(timed) + 1, len(timed) + 2)
    for t in out:
        validate_event(t.event)
        EVENT_ADAPTER.validate_python(t.event)
    times = [t.t_ms for t in out]
    assert all(b >= a for a, b in zip(times, times[1:], strict=False))
    check_nesting(out, "hi")
    check_validator(out)
    i = next(k for k, t in enumerate(out) if t.event["type"] == "MESSAGES_SNAPSHOT")
    snapshot = {m["id"]: m for m in out[i].event["messages"]}
    full = visible_text(timed)
    after = visible_text(out[i + 1 :])
    # Snapshot text + the deltas that follow = the whole message, for every message.
    for mid, text in full.items():
        if mid in snapshot:
            assert snapshot[mid]["content"] + after.get(mid, "") == text
        else:
            assert after[mid] == text
    assert snapshot[f"run-{scenario}-1-user"]["role"] == "user"


def test_snapshot_carries_tool_calls_and_current_state() -> None:
    timed = simulate("agentic", seed=2)
    last_delta = max(k for k, t in enumerate(timed) if t.event["type"] == "STATE_DELTA")
    first_delta = next(k for k, t in enumerate(timed) if t.event["type"] == "STATE_DELTA")
    after_delta = next(t.t_ms for t in timed if t.t_ms > timed[first_delta].t_ms)
    out = with_snapshot(timed, after_delta)
    i = next(k for k, t in enumerate(out) if t.event["type"] == "MESSAGES_SNAPSHOT")
    assert out[i + 1].event["type"] == "STATE_SNAPSHOT"
    state = out[i + 1].event["snapshot"]
    assert state["plan"]["current"] == "answer" and len(state["sources"]) == 1
    assert last_delta > first_delta
    messages = out[i].event["messages"]
    calls = [c for m in messages for c in m.get("toolCalls", [])]
    assert len(calls) == 2
    for call in calls:
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    tool_results = [m for m in messages if m["role"] == "tool"]
    assert {m["toolCallId"] for m in tool_results} == {c["id"] for c in calls}
    # Chunks and orphan tool calls are represented too.
    snap = messages_snapshot(
        [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        ]
    )
    EVENT_ADAPTER.validate_python(snap)
    assert snap["messages"][0] == {"id": "m", "role": "assistant", "content": "ab"}
    assert snap["messages"][1]["toolCalls"][0]["function"] == {"name": "f", "arguments": "{}"}


# Pinned fingerprints: the runs must be identical on every Python the project
# supports (3.11 here, 3.14 in Pyodide), because benches, servers and pages
# compare traces by seed.  The same values were seen on CPython 3.11-3.13 and
# Pyodide 314.0.7 (Python 3.14.2).  Update deliberately when the corpus or
# the cadence model changes.
@pytest.mark.parametrize(
    ("scenario", "digest"),
    [
        ("demo", "b1a98cd76a40fca4"),
        ("cjk_emoji", "9368bdca7b668c9c"),
        ("agentic", "1b300236c6200f00"),
    ],
)
def test_runs_are_reproducible_across_python_versions(scenario: str, digest: str) -> None:
    h = hashlib.sha256()
    for t in simulate(scenario, seed=0):
        h.update(json.dumps([t.t_ms, t.event], ensure_ascii=False).encode())
    assert h.hexdigest()[:16] == digest
