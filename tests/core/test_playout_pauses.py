"""The default law when the source announces a pause (a tool call starts).

On a virtual clock (no wall-clock timing): a fast answer in 150 ms batches,
a tool call whose start lands with the last text before it, a 2 s pause, then
more text.  ASCII text and ``holdback_ms=0`` keep graphemes = characters.
"""

from __future__ import annotations

from streampace.pacing.playout import AdaptiveLaw
from streampace.pacing.scheduler import PacingConfig

from .conftest import AG, Rig, RigFactory

F60 = 1000 / 60
ADAPTIVE = PacingConfig(holdback_ms=0)
GAP = 150.0
RATE = 480.0  # graphemes/s
PAUSE_AT = 1505.0  # the last text before the tool call lands here
PAUSE_MS = 2000.0


def answer(ag: type[AG], announce: bool, flush_ms: float = 0.0
           ) -> list[tuple[float, list[dict]]]:
    """(t_ms, events) deliveries: steady text, then the delivery that ends the
    text before a tool call (``flush_ms`` after the previous one: a buffer
    flushing early for the tool call; 0: on the cadence), with the tool call's
    start when ``announce``, a pause, then the answer resumes."""
    per = int(RATE * GAP / 1000)
    out: list[tuple[float, list[dict]]] = [(5.0, [ag.start(), ag.content("x" * per)])]
    out += [(5.0 + k * GAP, [ag.content("x" * per)]) for k in range(1, 10)]
    last = out[-1][0] + (flush_ms if flush_ms else GAP)  # PAUSE_AT on the cadence
    tail: list[dict] = [ag.content("y" * (8 if flush_ms else per))]
    if announce:
        tail += [ag.tool_start(), ag.tool_args("{}"), ag.tool_end()]
    out.append((last, tail))
    t = last + PAUSE_MS
    for _ in range(8):
        out.append((t, [ag.content("z" * per)]))
        t += GAP
    return out


def run(rig: Rig, deliveries: list[tuple[float, list[dict]]], until_ms: float = 6000.0
        ) -> list[tuple[float, int]]:
    """Play the deliveries between 60 Hz frames; (frame time, graphemes shown) per frame."""
    host, sched = rig.host, rig.sched
    start = host.now()
    frames: list[tuple[float, int]] = []
    shown, i, k = 0, 0, 1
    while start + k * F60 <= start + until_ms:
        t_frame = start + k * F60
        while i < len(deliveries) and start + deliveries[i][0] <= t_frame:
            host.tick(start + deliveries[i][0] - host.now())
            sched.enqueue("s", deliveries[i][1])
            i += 1
        host.tick(t_frame - host.now())
        host.run_frame()
        total = sched.stats()["graphemes"]
        frames.append((t_frame - start, total - shown))
        shown = total
        k += 1
    return frames


def text_frames_after(frames: list[tuple[float, int]], t0: float, t1: float) -> list[int]:
    return [n for t, n in frames if t0 <= t < t1 and n > 0]


def tool_start_at(rig: Rig) -> float:
    return next(c.at for c in rig.accepted if any(e["type"] == "TOOL_CALL_START"
                                                  for e in c.events))


def test_text_before_a_tool_call_winds_down_instead_of_running_dry(rig_factory: RigFactory,
                                                                   ag: type[AG]) -> None:
    silent = run(rig_factory(ADAPTIVE), answer(ag, announce=False))
    rig = rig_factory(ADAPTIVE)
    announced = run(rig, answer(ag, announce=True))
    start = rig.host.now() - 6000.0
    pause_end = PAUSE_AT + PAUSE_MS
    before = text_frames_after(announced, PAUSE_AT - 600, PAUSE_AT)
    after_silent = text_frames_after(silent, PAUSE_AT, pause_end)
    after = text_frames_after(announced, PAUSE_AT, pause_end)
    # A silent pause: the queue runs out within about a cushion, at full speed.
    assert len(after_silent) * F60 <= 2 * GAP
    # Announced: the same text is spread over several times as many frames, in
    # smaller steps than the steady play-out's.
    assert sum(after) == sum(after_silent)
    assert len(after) >= 3 * len(after_silent)
    assert max(after[3:]) < min(before)
    # Nothing overtakes: the tool call is shown once the text before it is out,
    # within the wind-down's bound (1 s) of its arrival, well before the pause ends.
    shown_at = tool_start_at(rig) - start
    last_text = max(t for t, n in announced if t < pause_end and n > 0)
    assert last_text <= shown_at <= PAUSE_AT + 1000 + F60
    # The answer resumes at its steady pace after the pause.
    resumed = text_frames_after(announced, pause_end + 2 * F60, pause_end + 1000)
    assert min(before) - 1 <= min(resumed) <= max(resumed) <= max(before) + 1


def test_text_after_the_tool_call_in_the_same_delivery_is_paced_as_usual(
        rig_factory: RigFactory, ag: type[AG]) -> None:
    def with_tool(resumed: bool) -> list[tuple[float, list[dict]]]:
        out = answer(ag, announce=False)
        t, events = out[-9]
        extra = [ag.tool_start(), ag.tool_end()] + ([ag.content("w")] if resumed else [])
        out[-9] = (t, events + extra)
        return out

    plain = run(rig_factory(ADAPTIVE), with_tool(resumed=True))
    wound = run(rig_factory(ADAPTIVE), with_tool(resumed=False))
    # Text after the tool call's start: the source is writing again, no wind-down
    # (one grapheme more, at the very end of the run-out).
    window = (PAUSE_AT, PAUSE_AT + PAUSE_MS)
    assert len(text_frames_after(plain, *window)) < len(text_frames_after(wound, *window)) / 2


def test_a_flush_cut_short_by_a_tool_call_is_no_cadence_sample() -> None:
    def cushion_after(announce: bool) -> float:
        law = AdaptiveLaw()
        tr = law.new_track()
        t = 0.0
        for _ in range(12):
            law.on_arrival(tr, t, 72)
            t += GAP
        law.on_arrival(tr, t - GAP + 33.0, 8)  # the buffer flushes early for a tool call
        if announce:
            law.on_pause(tr, t - GAP + 33.0)
        t += PAUSE_MS
        for _ in range(3):
            law.on_arrival(tr, t, 72)
            t += GAP
        return law.cushion_ms(tr, t)

    # Read as a gap of the cadence, 33 ms shortens the cushion the answer is
    # played out with after the pause; announced, the flush teaches nothing.
    assert cushion_after(announce=True) >= 0.95 * GAP
    assert cushion_after(announce=False) < 0.9 * cushion_after(announce=True)


def test_max_lag_knob_still_bounds_the_lag_of_wound_down_text(rig_factory: RigFactory,
                                                              ag: type[AG]) -> None:
    rig = rig_factory(PacingConfig(holdback_ms=0, max_lag_ms=200))
    frames = run(rig, answer(ag, announce=True))
    # Everything queued at the tool call is out by its arrival + max_lag_ms (+ a frame).
    last_text = max(t for t, n in frames if t < PAUSE_AT + PAUSE_MS and n > 0)
    assert last_text <= PAUSE_AT + 200 + F60
