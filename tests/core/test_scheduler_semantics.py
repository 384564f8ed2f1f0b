"""Barriers, overload, ordering, sessions, flush/clear and rejection."""

from __future__ import annotations

from typing import Any

import pytest
from streampace.conversation.events import EventError
from streampace.pacing.scheduler import PacingConfig

from .conftest import AG, Rig, RigFactory

F60 = 1000 / 60


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


# ---------------------------------------------------------------- barriers

def test_batch_already_followed_by_end_is_delivered_whole_in_one_frame(rig: Rig,
                                                                       ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("w" * 1000), ag.end()])
    rig.host.frame(16)
    assert len(rig.accepted) == 1
    assert types(rig.accepted[0].events) == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert rig.text() == "w" * 1000
    assert rig.sched.queued_events() == 0


def test_end_arriving_later_flushes_the_tail_next_frame(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("t" * 500)])
    rig.frames(3, 16)
    assert 0 < len(rig.text()) < 500
    rig.sched.enqueue("s", [ag.end()])
    rig.host.frame(16)
    assert rig.text() == "t" * 500
    assert rig.accepted[-1].events[-1]["type"] == "TEXT_MESSAGE_END"
    assert rig.sched.queued_events() == 0


@pytest.mark.parametrize("terminal", ["run_error", "run_finished", "state_snapshot",
                                      "messages_snapshot"])
def test_terminal_and_snapshot_events_dump_pending_text(
        rig: Rig, ag: type[AG], terminal: str) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("p" * 800)])
    rig.host.frame(16)
    rig.sched.enqueue("s", [getattr(ag, terminal)()])
    rig.host.frame(16)
    assert rig.text() == "p" * 800
    assert rig.accepted[-1].events[-1]["type"] == getattr(ag, terminal)()["type"]


@pytest.mark.parametrize("barrier", [
    {"type": "REASONING_END", "messageId": "r1"},
    {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
])
def test_reasoning_barriers(rig: Rig, ag: type[AG], barrier: dict[str, Any]) -> None:
    rig.sched.enqueue("s", [ag.reasoning("thinking " * 50), barrier])
    rig.host.frame(16)
    assert rig.text("r1") == "thinking " * 50


def test_reconnect_snapshot_after_partial_text_delivers_everything_before_it(rig: Rig,
                                                                             ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("partial " * 40)])
    rig.frames(2, 16)
    # reconnect: the server resends state as snapshots, followed by new text
    rig.sched.enqueue("s", [ag.state_snapshot({"n": 1}), ag.messages_snapshot([]),
                            ag.start("m2"), ag.content("fresh " * 40, "m2")])
    rig.host.frame(16)
    last = rig.accepted[-1].events
    assert rig.text() == "partial " * 40
    assert "MESSAGES_SNAPSHOT" in types(last)
    # text after the last barrier is paced again
    assert len(rig.text("m2")) < len("fresh " * 40)
    rig.frames_until_idle()
    assert rig.text("m2") == "fresh " * 40


@pytest.mark.parametrize("config", [PacingConfig(), PacingConfig.seed()], ids=["adaptive", "seed"])
def test_everything_up_to_the_last_barrier_is_unpaced(rig_factory: RigFactory, ag: type[AG],
                                                      config: PacingConfig) -> None:
    rig = rig_factory(config)
    rig.sched.enqueue("s", [ag.start("a"), ag.content("x" * 300, "a"), ag.end("a"),
                            ag.start("b"), ag.content("y" * 300, "b"), ag.end("b"),
                            ag.start("c"), ag.content("z" * 300, "c")])
    rig.host.frame(16)
    assert rig.text("a") == "x" * 300 and rig.text("b") == "y" * 300
    # "c" is paced: one frame's step (≤ 13 for the seed's 800/s; the adaptive
    # law's step ceiling is 840/s plus the grapheme owed to a first frame)
    assert 0 < len(rig.text("c")) <= 15


def test_tool_call_end_is_not_a_barrier(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("k" * 300), ag.tool_start(),
                            ag.tool_args('{"q":1}'), ag.tool_end()])
    rig.host.frame(16)
    assert len(rig.text()) < 300
    assert "TOOL_CALL_END" not in types(rig.delivered())


# ---------------------------------------------------------------- overload

def test_5000_pending_graphemes_are_delivered_in_one_frame(rig: Rig, ag: type[AG]) -> None:
    # Ends in LF: any other last cluster may still grow and waits for the next
    # delta even in an overload (test_holdback_vectors.py).
    rig.sched.enqueue("s", [ag.start(), ag.content("o" * 4999 + "\n")])
    rig.host.frame(16)
    assert rig.text() == "o" * 4999 + "\n"
    assert rig.sched.stats()["overloads"] == 1


def test_exactly_4096_pending_is_still_paced_4097_is_overload(seed_rig: Rig, ag: type[AG]) -> None:
    rig = seed_rig
    rig.sched.enqueue("s", [ag.content("o" * 4096)])
    rig.host.frame(16)
    assert len(rig.text()) == 12
    assert rig.sched.stats()["overloads"] == 0
    rig.sched.enqueue("s", [ag.content("o" * (4096 - rig.sched.pending_graphemes()))])
    assert rig.sched.pending_graphemes() == 4096
    rig.host.frame(16)
    assert rig.sched.stats()["overloads"] == 0
    assert len(rig.text()) == 25  # 12.8 + 12.8 with the fraction carried
    rig.sched.enqueue("s", [ag.content("o" * (4096 - rig.sched.pending_graphemes()) + "\n")])
    rig.host.frame(16)
    assert rig.sched.stats()["overloads"] == 1
    assert rig.sched.pending_graphemes() == 0


def test_overload_threshold_is_the_same_for_the_adaptive_law(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("o" * 4096)])
    rig.host.frame(16)
    assert rig.sched.stats()["overloads"] == 0 and 0 < len(rig.text()) < 4096
    # Ends in LF: any other last cluster may still grow and waits for the next delta.
    rig.sched.enqueue("s", [ag.content("o" * (4096 - rig.sched.pending_graphemes()) + "\n")])
    rig.host.frame(16)
    assert rig.sched.stats()["overloads"] == 1
    assert rig.sched.pending_graphemes() == 0
    rig.sched.enqueue("s", [ag.content("n" * 100)])
    rig.host.frame(16)
    assert 4097 < len(rig.text()) < 4097 + 100  # paced again, not dumped


def test_overload_resets_carry_and_resumes_pacing(seed_rig: Rig, ag: type[AG]) -> None:
    rig = seed_rig
    rig.sched.enqueue("s", [ag.content("o" * 5000)])
    rig.host.frame(16)
    rig.sched.enqueue("s", [ag.content("n" * 100)])
    rig.host.frame(16)
    assert len(rig.text()) == 5000 + 6


# ---------------------------------------------------------------- ordering

def test_structural_events_never_overtake_text(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("abcdefghij" * 20), ag.tool_start(),
                            ag.custom(1), ag.content("tail")])
    seen_tool = False
    while rig.sched.queued_events():
        rig.host.frame(F60)
        for e in rig.accepted[-1].events if rig.accepted else []:
            if e["type"] == "TOOL_CALL_START":
                seen_tool = True
                # all text queued before it was already shown
                assert rig.text().startswith("abcdefghij" * 20)
    assert seen_tool
    order = types(rig.delivered())
    assert order.index("TOOL_CALL_START") < order.index("CUSTOM")
    assert rig.text() == "abcdefghij" * 20 + "tail"


def test_601_events_go_out_as_512_then_89(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.custom(i) for i in range(601)])
    rig.host.frame(16)
    rig.host.frame(16)
    assert [len(c.events) for c in rig.accepted] == [512, 89]
    assert [e["value"] for c in rig.accepted for e in c.events] == list(range(601))


def test_only_the_head_sessions_contiguous_run_per_drain(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("a", [ag.custom(1), ag.custom(2)])
    rig.sched.enqueue("b", [ag.custom(3)])
    rig.sched.enqueue("a", [ag.custom(4)])
    rig.frames(3, 16)
    assert [(c.session, [e["value"] for e in c.events]) for c in rig.accepted] == [
        ("a", [1, 2]), ("b", [3]), ("a", [4])]


def test_user_echo_is_atomic(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start("u", role="user"), ag.content("hello " * 100, "u")])
    rig.host.frame(16)
    assert rig.text("u") == "hello " * 100
    assert rig.sched.pending_graphemes() == 0


def test_user_chunk_is_atomic_and_role_is_forgotten_at_end(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.chunk("q" * 200, "u", role="user")])
    rig.host.frame(16)
    assert rig.text("u") == "q" * 200
    # same id reused after END: not a user message any more -> paced
    rig.sched.enqueue("s", [ag.start("m", role="user"), ag.end("m"),
                            ag.content("r" * 200, "m")])
    rig.host.frame(16)
    assert 0 < len(rig.text("m")) < 200


def test_chunk_remainder_drops_role_and_name(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.chunk("c" * 100, "m1", role="assistant", name="bot")])
    rig.frames(3, 16)
    first, *rest = [e for e in rig.delivered() if e["type"] == "TEXT_MESSAGE_CHUNK"]
    assert first["role"] == "assistant" and first["name"] == "bot"
    assert rest and all("role" not in e and "name" not in e for e in rest)
    assert all(e["messageId"] == "m1" for e in rest)


def test_whole_event_is_delivered_as_the_same_dict(rig: Rig, ag: type[AG]) -> None:
    ev = ag.content("abc")
    rig.sched.enqueue("s", [ev, ag.end()])
    rig.host.frame(16)
    assert rig.accepted[0].events[0] is ev


def test_split_pieces_do_not_mutate_the_input_event(rig: Rig, ag: type[AG]) -> None:
    ev = ag.content("x" * 100)
    rig.sched.enqueue("s", [ev])
    rig.frames_until_idle()
    assert ev["delta"] == "x" * 100


# ---------------------------------------------------------------- flush, clear

def test_flush_now_delivers_the_remainder_exactly_once(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("f" * 300), ag.tool_start()])
    rig.frames(2, 16)
    rig.sched.flush_now("s")
    assert rig.text() == "f" * 300
    assert rig.sched.queued_events() == 0
    assert rig.sched.stats()["flushes"] == 1
    rig.frames(5, 16)
    assert rig.text() == "f" * 300
    assert types(rig.delivered()).count("TOOL_CALL_START") == 1


def test_flush_now_keeps_other_sessions_queued(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("a", [ag.content("a" * 100, "ma")])
    rig.sched.enqueue("b", [ag.content("b" * 100, "mb")])
    rig.sched.enqueue("a", [ag.custom()])
    rig.sched.flush_now("b")
    assert [c.session for c in rig.accepted] == ["b"]
    assert rig.text("mb") == "b" * 100
    assert rig.sched.queued_events("a") == 2
    rig.frames_until_idle()
    assert rig.text("ma") == "a" * 100


def test_flush_of_more_than_512_events_keeps_the_per_apply_cap(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.custom(i) for i in range(700)])
    rig.sched.flush_now("s")
    assert [len(c.events) for c in rig.accepted] == [512, 188]


def test_clear_one_session(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("a", [ag.content("a" * 50, "ma")])
    rig.sched.enqueue("b", [ag.content("b" * 50, "mb")])
    rig.sched.clear("a")
    assert rig.sched.pending_graphemes("a") == 0
    assert rig.sched.pending_graphemes() == 50
    rig.frames_until_idle()
    assert {c.session for c in rig.calls} == {"b"}


def test_clear_everything_disarms(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("a", [ag.content("a" * 50)])
    rig.sched.clear()
    assert rig.sched.queued_events() == 0 and rig.sched.pending_graphemes() == 0
    assert rig.host.pending_frames == 0 and rig.host.pending_timeouts == 0
    rig.host.tick(1000)
    assert rig.calls == []


# ---------------------------------------------------------------- rejection

def test_rejected_batches_lose_nothing(rig: Rig, ag: type[AG]) -> None:
    rejecting = {"on": True}
    rig.reject = lambda s, evs: rejecting["on"]
    rig.sched.enqueue("s", [ag.start(), ag.content("r" * 200), ag.end()])
    rig.frames(5, 16)
    assert rig.accepted == [] and rig.sched.stats()["rejects"] == 5
    assert rig.sched.queued_events() == 3
    rejecting["on"] = False
    rig.frames_until_idle()
    assert rig.text() == "r" * 200
    assert types(rig.delivered()) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                      "TEXT_MESSAGE_END"]


def test_rejected_piece_is_offered_again_not_skipped(rig: Rig, ag: type[AG]) -> None:
    flip = iter([False, True, False, False, False, False] + [False] * 100)
    rig.reject = lambda s, evs: next(flip)
    rig.sched.enqueue("s", [ag.content("abcdefghijklmnopqrstuvwxyz" * 4)])
    rig.frames_until_idle()
    assert rig.text() == "abcdefghijklmnopqrstuvwxyz" * 4


def test_apply_raising_counts_as_reject_and_keeps_the_loop_alive(rig: Rig, ag: type[AG]) -> None:
    boom = {"n": 1}

    def reject(s: str, evs: list[dict[str, Any]]) -> bool:
        if boom["n"]:
            boom["n"] -= 1
            raise RuntimeError("renderer failed")
        return False

    rig.reject = reject
    rig.sched.enqueue("s", [ag.custom()])
    with pytest.raises(RuntimeError):
        rig.host.frame(16)
    assert rig.sched.queued_events() == 1
    assert rig.host.pending_frames == 1  # re-armed despite the exception
    rig.host.frame(16)
    assert [c.events[0]["type"] for c in rig.accepted] == ["CUSTOM"]


def test_flush_now_rejected_keeps_everything(rig: Rig, ag: type[AG]) -> None:
    rig.reject = lambda s, evs: True
    rig.sched.enqueue("s", [ag.content("x" * 10)])
    rig.sched.flush_now("s")
    assert rig.sched.pending_graphemes() == 10
    assert rig.sched.stats()["flushes"] == 0


# ---------------------------------------------------------------- reentrancy, input

def test_apply_may_enqueue_flush_and_clear(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory()
    actions = iter([
        lambda: rig.sched.enqueue("s", [ag.custom("from-apply")]),
        lambda: rig.sched.flush_now("s"),
        lambda: rig.sched.clear("other"),
    ])

    def reject(s: str, evs: list[dict[str, Any]]) -> bool:
        act = next(actions, None)
        if act is not None:
            act()
        return False

    rig.reject = reject
    rig.sched.enqueue("other", [ag.custom("o")])
    rig.sched.enqueue("s", [ag.custom("a")])
    rig.host.frame(16)  # other: apply enqueues into s
    rig.host.frame(16)  # other: apply asks to flush s (deferred until apply returns)
    values = [e["value"] for c in rig.accepted for e in c.events]
    assert values == ["o", "a", "from-apply"]


def test_bad_input_raises_and_queues_nothing_from_that_call(rig: Rig, ag: type[AG]) -> None:
    with pytest.raises(EventError, match=r"\[1\]"):
        rig.sched.enqueue("s", [ag.custom(), {"no": "type"}])
    with pytest.raises(EventError, match="delta"):
        rig.sched.enqueue("s", [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 5}])
    assert rig.sched.queued_events() == 0
    rig.sched.enqueue("s", [ag.custom()])
    assert rig.sched.queued_events() == 1


def test_empty_delta_is_not_paced(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig())
    rig.sched.enqueue("s", [ag.content("")])
    assert rig.sched.pending_graphemes() == 0
    rig.host.frame(16)
    assert rig.delivered() == [ag.content("")]


def test_flush_requested_inside_a_flush_apply_delivers_nothing_twice(rig_factory: RigFactory,
                                                                     ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(max_events_per_frame=2))
    asked = {"n": 0}

    def reject(s: str, evs: list[dict[str, Any]]) -> bool:
        if asked["n"] == 0:
            asked["n"] += 1
            rig.sched.flush_now("s")  # deferred until this apply returns
        return False

    rig.reject = reject
    rig.sched.enqueue("s", [ag.custom(i) for i in range(5)])
    rig.sched.flush_now("s")
    values = [e["value"] for c in rig.accepted for e in c.events]
    assert values == [0, 1, 2, 3, 4]
    assert all(len(c.events) <= 2 for c in rig.calls)
