"""A host whose animation frames come late (issue 32): WebKitGTK runs frames 40–300 ms
apart while the page's text grows, later than the drive's 50 ms fallback timeout.
The drive must still commit once per frame, from the frame, and never drain from
timeouts between frames; timeouts drain only once frames stopped (a hidden tab)."""

from __future__ import annotations

import random

from streampace.pacing.drive import FRAMES_STOPPED_MS
from streampace.pacing.scheduler import PacingConfig, PacingScheduler
from streampace.testing import ManualHost

# Frame intervals (ms) of the demo's paced pane in WebKitGTK 2.50 under Xvfb,
# as recorded by a requestAnimationFrame probe during a "Fast model" run.
WEBKIT_GAPS = [84, 212, 189, 263, 92, 38, 157, 320, 212, 183, 181, 74, 161, 61, 200, 89]


class SlowFrames:
    """A scheduler on a ManualHost whose frames come `gaps` ms apart; the host's
    timeouts fire in between, as a browser's do."""

    def __init__(self, config: PacingConfig | None = None) -> None:
        self.host = ManualHost(1000.0)
        self.commits: list[tuple[float, str, int]] = []  # (when, source, graphemes)
        self.sched = PacingScheduler(self.host, self._apply, config)
        self._in_frame = False

    def _apply(self, _session: str, events: list[dict]) -> bool:
        shown = sum(len(e.get("delta", "")) for e in events)
        source = "frame" if self._in_frame else "timeout"
        self.commits.append((self.host.now(), source, shown))
        return True

    def run_frame(self) -> None:
        self._in_frame = True
        try:
            self.host.run_frame()
        finally:
            self._in_frame = False

    def frame_after(self, gap_ms: float) -> int:
        """Let `gap_ms` pass (timeouts firing) and run one frame; commits it made."""
        before = len(self.commits)
        self.host.tick(gap_ms)
        self.run_frame()
        return len(self.commits) - before


def enqueue_text(rig: SlowFrames, text: str) -> None:
    rig.sched.enqueue("s", [{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
                            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": text}])


def stream(rig: SlowFrames, text: str, gaps: list[int]) -> list[int]:
    enqueue_text(rig, text)
    rig.run_frame()  # the page's frames run: the host has shown it delivers them
    return [rig.frame_after(gap) for gap in gaps]


def test_late_frames_each_commit_once_and_no_timeout_drains_between_them() -> None:
    rig = SlowFrames()
    text = "word " * 600
    per_frame = stream(rig, text, WEBKIT_GAPS * 3)
    sources = {source for _at, source, _n in rig.commits}
    # Before the fix the 50 ms fallback beat every late frame: 2-6 timeout drains
    # per frame interval, and the frames found little or nothing left to show.
    assert sources == {"frame"}, rig.commits
    assert max(per_frame) == 1
    # While frames come the fallback is armed a second out: no timer wakes up
    # between them (it used to, 50 ms after every drain, only to re-arm itself).
    assert rig.host.timeouts_run == 0


def test_while_frames_come_the_fallback_is_armed_a_second_out() -> None:
    # A page's host keeps one platform timer for the earliest deadline and leaves
    # it armed when that timeout is cancelled (browser/host.py): a fallback armed
    # 50 ms out after every drain woke the page every ~50 ms to find nothing due.
    # Armed for the time it may drain, it wakes it at most once a second.
    rig = SlowFrames()
    before_frames = rig.host.now()
    enqueue_text(rig, "word " * 600)
    # No frame has come yet (a tab opened hidden): the fallback drains after 50 ms.
    assert rig.host.next_timeout_at() == before_frames + PacingConfig().fallback_ms
    rig.run_frame()
    for _ in range(120):
        rig.host.tick(16.7)
        rig.run_frame()
        assert rig.host.next_timeout_at() == rig.host.now() + FRAMES_STOPPED_MS
    assert rig.host.timeouts_run == 0 and rig.sched.drive_state.value == "armed"


def test_each_late_frame_shows_only_what_its_interval_earned() -> None:
    rig = SlowFrames(PacingConfig.seed())
    stream(rig, "x" * 3000, WEBKIT_GAPS)
    steps = [(n, at - before)
             for (before, _s, _n), (at, _s2, n) in zip(rig.commits, rig.commits[1:], strict=False)]
    # The seed law's ceiling: a frame shows at most what max_rate earned in its
    # interval, plus the one grapheme its carried fraction may complete.
    ceiling = PacingConfig.seed().max_rate
    assert len(steps) == len(WEBKIT_GAPS)
    assert [s for s in steps if s[0] > ceiling * s[1] / 1000 + 1] == []


def test_frames_that_stop_hand_over_to_the_fallback_after_a_second() -> None:
    rig = SlowFrames(PacingConfig.seed())  # 800 graphemes/s at most: text is left for each step
    stream(rig, "word " * 800, [16] * 5)
    frames_done = len(rig.commits)
    rig.host.tick(FRAMES_STOPPED_MS - 1)  # the tab is hidden: no more frames
    assert len(rig.commits) == frames_done
    rig.host.tick(1)
    assert rig.commits[-1][1] == "timeout"
    rig.host.tick(50)  # from then on the fallback paces every 50 ms, as before
    assert rig.commits[-1][1] == "timeout" and len(rig.commits) == frames_done + 2
    assert rig.frame_after(16) == 1  # the tab is shown again: frames are the clock at once
    assert rig.commits[-1][1] == "frame"
    rig.host.tick(60)
    assert rig.commits[-1][1] == "frame"  # a late frame again waits for its frame


def test_random_late_and_coalesced_frames_never_commit_twice_per_frame() -> None:
    rng = random.Random(32)
    rig = SlowFrames()
    gaps = [rng.choice([4, 16, 33, 70, 150, 400, 900]) for _ in range(300)]
    per_frame = stream(rig, "word " * 800, gaps)
    assert max(per_frame) == 1 and sum(per_frame) >= 10
    assert {source for _at, source, _n in rig.commits} == {"frame"}
