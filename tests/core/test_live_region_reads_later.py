"""browser/announce.py: the live region reads what grew out of the frame, in a
timeout FEED_DELAY_MS later, and at once on a run's start or end (CPython, a
stand-in DOM and renderer; what a screen reader hears in the page:
tests/browser/test_reading_browser.py)."""

from __future__ import annotations

from typing import Any

import pytest
from streampace.browser import announce
from streampace.browser.announce import FEED_DELAY_MS, LiveRegion
from streampace.browser.labels import labels_for
from streampace.conversation.live_state import Changes, LiveState
from streampace.conversation.view_plan import status_text
from streampace.testing import ManualHost


class Anything:
    """A DOM stand-in: every attribute, call and assignment is accepted."""

    childElementCount = 0

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __call__(self, *_args: Any, **_kwargs: Any) -> Anything:
        return Anything()


class Renderer:
    """What the region reads: the live state, the item nodes (plain text here)."""

    def __init__(self) -> None:
        self.state = LiveState()
        self.root = Anything()
        self.labels = labels_for("en")
        self._nodes: dict[Any, Any] = {}
        self.failures: list[BaseException] = []
        self.reader: LiveRegion | None = None

    def reader_failed(self, exc: BaseException) -> None:
        self.failures.append(exc)


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> tuple[Renderer, LiveRegion, ManualHost, list[str]]:
    monkeypatch.setattr(announce, "js", Anything())
    monkeypatch.setattr(announce, "create_proxy", lambda fn: Anything())
    renderer, timers = Renderer(), ManualHost()
    region = LiveRegion(renderer, timers)  # type: ignore[arg-type]
    renderer.reader = region
    said: list[str] = []
    monkeypatch.setattr(region, "_say", said.append)
    return renderer, region, timers, said


def later(timers: ManualHost, ms: float) -> None:
    """`ms` on the virtual clock, running the timeouts that come due."""
    timers.run_until(timers.now() + ms)


def commit(renderer: Renderer, region: LiveRegion, *events: dict[str, Any]) -> Changes:
    changes = renderer.state.apply(list(events))
    region.after_commit(changes)
    return changes


def started(rig: tuple[Renderer, LiveRegion, ManualHost, list[str]]
            ) -> tuple[Renderer, LiveRegion, ManualHost, list[str]]:
    """A run started and its start said: what is said next is the answer's."""
    renderer, region, timers, said = rig
    commit(renderer, region, *START)
    later(timers, 1000)
    said.clear()
    return rig


def text(delta: str) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": delta}


START = ({"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
END = ({"type": "TEXT_MESSAGE_END", "messageId": "m1"},
       {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})


def test_text_is_read_once_for_the_frames_of_the_delay_not_in_each(
        rig: tuple[Renderer, LiveRegion, ManualHost, list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    renderer, region, timers, said = rig
    commit(renderer, region, *START)
    fed: list[tuple[float, str]] = []
    update = region.announcer.update

    def recorded(key: Any, finals: Any, open_text: str, ended: bool) -> None:
        fed.append((timers.now(), open_text))
        update(key, finals, open_text, ended)

    monkeypatch.setattr(region.announcer, "update", recorded)
    for piece in ("The first sen", "tence is here. ", "The second one", " is too. And"):
        commit(renderer, region, text(piece))
        later(timers, 1000 / 60)  # a frame apart
    assert fed == []  # nothing read in the frames
    later(timers, FEED_DELAY_MS)
    # One read for all four frames, of what the item shows then.
    assert fed == [(FEED_DELAY_MS, "The first sentence is here. The second one is too. And")]
    later(timers, 1000)  # the announcer's gap after the run's start
    assert "The first sentence is here. The second one is too." in " ".join(said)


def test_a_run_end_reads_what_grew_first_and_is_said_after_it(
        rig: tuple[Renderer, LiveRegion, ManualHost, list[str]]) -> None:
    renderer, region, timers, said = started(rig)
    commit(renderer, region, text("Only this sentence, said before the end"))
    commit(renderer, region, *END)  # in the next frame: read at once
    assert timers.pending_timeouts <= 1  # at most the announcer's gap
    later(timers, 5000)
    end = status_text(renderer.state.run, renderer.labels)
    # One announcement, the answer's rest first and the run's end after it.
    assert said[-1] == f"Only this sentence, said before the end. {end}."


def test_a_snapshot_drops_what_was_waiting_to_be_read(
        rig: tuple[Renderer, LiveRegion, ManualHost, list[str]]) -> None:
    renderer, region, timers, said = started(rig)
    commit(renderer, region, text("Shown before the snapshot. "))
    commit(renderer, region, {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "m1", "role": "assistant", "content": "Shown before the snapshot. "}]})
    later(timers, 5000)
    assert said == []  # what a snapshot shows counts as said


def test_a_failure_in_the_timeout_turns_the_region_off_through_the_renderer(
        rig: tuple[Renderer, LiveRegion, ManualHost, list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    renderer, region, timers, _said = rig
    commit(renderer, region, *START)

    def broken(*_args: Any) -> None:
        raise ValueError("spoken text failed")

    monkeypatch.setattr(region, "_feed", broken)
    commit(renderer, region, text("Anything."))
    later(timers, FEED_DELAY_MS)
    assert [str(e) for e in renderer.failures] == ["spoken text failed"]


def test_closing_cancels_the_read(
        rig: tuple[Renderer, LiveRegion, ManualHost, list[str]]) -> None:
    renderer, region, timers, said = started(rig)
    commit(renderer, region, text("Never said. "))
    region.close()
    later(timers, 5000)
    assert said == [] and timers.pending_timeouts == 0
