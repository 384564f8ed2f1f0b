"""Cross-delta cluster holdback: a cluster split by the provider is shown whole."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import regex
from streampace.pacing.graphemes import shows_incomplete
from streampace.pacing.scheduler import PacingConfig

from .conftest import AG, Rig, RigFactory

FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
KISS = "\U0001F469\u200D\u2764\uFE0F\u200D\U0001F48B\u200D\U0001F468"
FLAG_JP = "\U0001F1EF\U0001F1F5"
THUMB_MEDIUM = "\U0001F44D\U0001F3FD"
HEART_VS16 = "\u2764\uFE0F"
SCOTLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
RAINBOW_FLAG = "\U0001F3F3\uFE0F\u200D\U0001F308"
HANGUL_LVT = "\u1100\u1161\u11A8"
CONJUNCT = "\u0915\u094D\u0937"  # क्ष
CRLF = "\r\n"

HELD_CLUSTERS = [FAMILY, KISS, FLAG_JP, THUMB_MEDIUM, HEART_VS16, SCOTLAND, RAINBOW_FLAG,
                 HANGUL_LVT, CONJUNCT, CRLF]


def boundaries(text: str) -> set[int]:
    out, pos = {0}, 0
    for c in regex.findall(r"\X", text):
        pos += len(c)
        out.add(pos)
    return out


def visible_boundaries(text: str) -> set[int]:
    """Cluster boundaries, plus the cuts inside a cluster the hold rule lets show
    (a bare consonant before its virama, CR before LF)."""
    out, pos = {0}, 0
    for c in regex.findall(r"\X", text):
        out.update(pos + k for k in range(1, len(c))
                   if not shows_incomplete(regex.findall(r"\X", c[:k])[-1]))
        pos += len(c)
        out.add(pos)
    return out


def piece_ends(rig: Rig, mid: str = "m1") -> list[int]:
    ends, pos = [], 0
    for e in rig.delivered():
        if e.get("messageId") == mid and e["type"].endswith(("_CONTENT", "_CHUNK")):
            assert e["delta"], "empty delta delivered"
            pos += len(e["delta"])
            ends.append(pos)
    return ends


@pytest.mark.parametrize("gap_ms", [0, 16, 100, 140])
@pytest.mark.parametrize("cluster", HELD_CLUSTERS, ids=lambda c: "-".join(f"{ord(x):X}" for x in c))
def test_cluster_split_at_every_code_point_is_never_delivered_in_pieces(
        rig_factory: RigFactory, ag: type[AG], cluster: str, gap_ms: int) -> None:
    for cut in range(1, len(cluster)):
        rig = rig_factory()
        first, second = "ab" + cluster[:cut], cluster[cut:] + "cd"
        rig.sched.enqueue("s", [ag.start(), ag.content(first)])
        t = 0.0
        while t < gap_ms:  # frames keep running while the second half is in flight
            rig.host.frame(min(16, gap_ms - t))
            t += 16
        rig.sched.enqueue("s", [ag.content(second)])
        rig.frames(40, 16)
        rig.sched.enqueue("s", [ag.end()])
        rig.frames_until_idle(16)
        full = first + second
        assert rig.text() == full
        ok = visible_boundaries(full)
        bad = [p for p in piece_ends(rig) if p not in ok]
        assert not bad, (cut, gap_ms, [e["delta"] for e in rig.delivered() if "delta" in e])


def test_held_cluster_waits_without_spinning_frames(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    rig.sched.enqueue("s", [ag.content("hi \U0001F468\u200D")])
    rig.frames(20, 16)
    assert rig.text() == "hi "
    assert rig.host.pending_frames == 0  # idle until release, no busy frames
    assert rig.sched.stats()["held"] == 1
    assert rig.sched.pending_graphemes() == 1


def test_hold_expires_after_holdback_ms(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=150))
    t0 = rig.host.now()
    rig.sched.enqueue("s", [ag.content("\U0001F44D")])
    rig.host.tick(149)
    rig.host.run_frame()
    assert rig.text() == ""
    rig.host.tick(1)  # hold timer at t0 + 150
    rig.host.frame(16)
    assert rig.text() == "\U0001F44D"
    assert rig.accepted[0].at <= t0 + 150 + 16


def test_holdback_ms_is_configurable(rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=40))
    rig.sched.enqueue("s", [ag.content("\U0001F44D")])
    rig.host.tick(40)
    rig.host.frame(16)
    assert rig.text() == "\U0001F44D"


@pytest.mark.parametrize("release", ["end", "run_finished", "state_snapshot", "flush"])
def test_hold_is_released_by_barriers_and_flush(rig_factory: RigFactory, ag: type[AG],
                                                release: str) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    rig.sched.enqueue("s", [ag.start(), ag.content("ok \U0001F1EF")])
    rig.frames(10, 16)
    assert rig.text() == "ok "
    if release == "flush":
        rig.sched.flush_now("s")
    else:
        rig.sched.enqueue("s", [getattr(ag, release)()])
        rig.host.frame(16)
    assert rig.text() == "ok \U0001F1EF"
    assert rig.sched.queued_events() == 0


def test_next_delta_that_does_not_extend_releases_the_hold(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("\U0001F44D")])
    assert rig.sched.stats()["held"] == 1
    rig.sched.enqueue("s", [ag.content(" yes")])
    # The thumb is released; the "s" is not held (an "s" + U+0301 would show as
    # the same letter with its accent, not broken).
    assert rig.sched.stats()["held"] == 0
    rig.host.frame(16)
    assert rig.text().startswith("\U0001F44D")
    rig.frames_until_idle(16)
    assert rig.text() == "\U0001F44D yes"


def test_plain_letters_and_cjk_wait_only_for_their_last_cluster(rig_factory: RigFactory,
                                                                ag: type[AG]) -> None:
    # Until issue 12 item 7 these were never held, and "가" + U+11A8 (GB8) or
    # "c" + U+0301 split across deltas was shown broken.
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    rig.sched.enqueue("s", [ag.content("abc"), ag.content("漢字"), ag.content("가")])
    rig.frames(30, 16)
    assert rig.text() == "abc漢字"
    assert rig.sched.stats()["held"] == 1
    rig.frames(40, 16)  # past holdback_ms the hold expires
    assert rig.text() == "abc漢字가"
    assert rig.sched.stats()["held"] == 0


def test_deltas_entirely_absorbed_into_the_held_cluster(rig: Rig, ag: type[AG]) -> None:
    parts = ["\U0001F468", "\u200D", "\U0001F469", "\u200D", "\U0001F467"]
    for p in parts:
        rig.sched.enqueue("s", [ag.content(p)])
        rig.frames(3, 16)
    rig.sched.enqueue("s", [ag.end()])
    rig.frames_until_idle()
    assert [e["delta"] for e in rig.delivered() if "delta" in e] == [FAMILY]


def test_base_plus_combining_mark_is_merged_while_the_base_is_queued(rig: Rig,
                                                                     ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("cafe"), ag.content("\u0301!")])
    rig.sched.enqueue("s", [ag.end()])
    rig.frames_until_idle()
    assert 4 not in piece_ends(rig)
    assert rig.text() == "cafe\u0301!"


def test_completion_moves_earlier_and_nothing_overtakes(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start(), ag.content("a\U0001F468\u200D"), ag.tool_start()])
    rig.frames(3, 16)
    rig.sched.enqueue("s", [ag.content("\U0001F469 b"), ag.end()])
    rig.frames_until_idle()
    out: list[tuple[str, Any]] = [(e["type"], e.get("delta")) for e in rig.delivered()]
    assert ("TOOL_CALL_START", None) in out
    i = out.index(("TOOL_CALL_START", None))
    before = "".join(d for t, d in out[:i] if t == "TEXT_MESSAGE_CONTENT")
    after = "".join(d for t, d in out[i:] if t == "TEXT_MESSAGE_CONTENT")
    assert before == "a\U0001F468\u200D\U0001F469" and after == " b"


def test_chunk_hold_is_released_when_another_event_type_closes_the_chunk_message(
        rig_factory: RigFactory, ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=1000))
    rig.sched.enqueue("s", [ag.chunk("hey \U0001F44D", "c1", role="assistant")])
    rig.frames(20, 16)
    assert rig.text("c1") == "hey "
    rig.sched.enqueue("s", [ag.tool_start()])
    rig.frames(3, 16)
    assert rig.text("c1") == "hey \U0001F44D"


def test_hold_does_not_apply_across_messages(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("\U0001F468\u200D", "a"),
                            ag.content("\U0001F469", "b")])
    rig.host.tick(150)
    rig.frames_until_idle()
    assert rig.text("a") == "\U0001F468\u200D" and rig.text("b") == "\U0001F469"


def test_hidden_page_hold_is_released_by_timers_alone(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("x\U0001F1EF")])
    for _ in range(20):
        rig.host.tick(50)
    assert rig.text() == "x\U0001F1EF"
    assert rig.host.frames_run == 0


def test_holdback_zero_is_the_seeds_per_event_segmentation(rig_factory: RigFactory,
                                                           ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=0))
    rig.sched.enqueue("s", [ag.content("\U0001F468\u200D"), ag.content("\U0001F469")])
    rig.frames_until_idle()
    assert [e["delta"] for e in rig.delivered()] == ["\U0001F468\u200D", "\U0001F469"]
    assert rig.sched.stats()["held"] == 0


def test_user_echo_is_never_held(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.start("u", role="user"), ag.content("hi \U0001F44D", "u")])
    rig.host.frame(16)
    assert rig.text("u") == "hi \U0001F44D"


def test_reasoning_messages_get_holdback_too(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.reasoning("\U0001F914\u200D")])
    rig.frames(5, 16)
    rig.sched.enqueue("s", [ag.reasoning("\U0001F4A1"), ag.reasoning_end()])
    rig.frames_until_idle()
    assert [e["delta"] for e in rig.delivered() if "delta" in e] == [
        "\U0001F914\u200D\U0001F4A1"]


def test_all_pairs_of_cluster_split_positions_keep_text(rig_factory: RigFactory,
                                                        ag: type[AG]) -> None:
    text = FAMILY + FLAG_JP + "x" + THUMB_MEDIUM
    for i, j in itertools.combinations(range(1, len(text)), 2):
        rig = rig_factory()
        for part in (text[:i], text[i:j], text[j:]):
            rig.sched.enqueue("s", [ag.content(part)])
            rig.frames(2, 16)
        rig.sched.enqueue("s", [ag.end()])
        rig.frames_until_idle()
        assert rig.text() == text
        assert set(piece_ends(rig)) <= boundaries(text), (i, j)


def test_no_burst_when_a_hold_ends(seed_rig: Rig, ag: type[AG]) -> None:
    rig = seed_rig
    rig.sched.enqueue("s", [ag.content("\U0001F44D")])
    rig.host.tick(140)  # held: nothing armed, nothing shown
    assert rig.host.pending_frames == 0
    rig.sched.enqueue("s", [ag.content(" " + "w" * 400)])
    rig.host.frame(16)
    # the owed held cluster + 16 ms at 800/s (12.8); not 156 ms worth (~125)
    assert len(rig.accepted) == 1
    shown = "".join(e["delta"] for e in rig.accepted[0].events)
    assert shown == "\U0001F44D" + " " + "w" * 11  # floor(1 + 12.8) = 13 graphemes



def test_no_burst_when_a_hold_ends_adaptive(rig: Rig, ag: type[AG]) -> None:
    rig.sched.enqueue("s", [ag.content("\U0001F44D")])
    rig.host.tick(140)  # held: nothing armed, nothing shown
    assert rig.host.pending_frames == 0
    rig.sched.enqueue("s", [ag.content(" " + "w" * 400)])
    rig.host.frame(16)
    # the owed held cluster + 16 ms at this drain's rate; not 156 ms worth
    assert len(rig.accepted) == 1
    shown = "".join(e["delta"] for e in rig.accepted[0].events)
    rate = rig.sched.stats()["last_rate"]
    assert shown.startswith("\U0001F44D ")
    assert len(shown) <= 2 + rate * 0.016 < 2 + rate * 0.156 - 10
