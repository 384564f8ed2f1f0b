"""browser/warm.py: the page's warm-up run, stepped on the page's timers (CPython,
a stand-in view; the real stack in the page: tests/browser/test_embed.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streampace.browser import warm
from streampace.browser.runtime import WARM_ANSWER
from streampace.browser.warm import PageWarmUp, warm_batches, warm_page_once
from streampace.testing import ManualHost


class Doc:
    def createElement(self, tag: str) -> dict[str, str]:  # noqa: N802 (DOM name)
        return {"tag": tag}


class View:
    """What the warm-up drives: records the transport's reports; each message
    keeps asking for `frames_per_message` frames on its clock (as pacing does)."""

    def __init__(self, mount: Any, clock: ManualHost, frames_per_message: int = 0,
                 fail_on: int | None = None) -> None:
        self.mount = mount
        self.clock = clock
        self.frames_per_message = frames_per_message
        self.fail_on = fail_on
        self.reports: list[tuple[str, Any]] = []
        self.frames = 0
        self.owed = 0
        self.closed = False

    def connect(self, socket: Any) -> None:
        socket.attach(self.handle)

    def handle(self, kind: str, data: Any = None) -> None:
        self.reports.append((kind, data))
        if kind == "message":
            if self.fail_on is not None and len(self.reports) - 1 == self.fail_on:
                raise ValueError("sample run failed")
            asked = self.owed > 0
            self.owed += self.frames_per_message
            if self.owed and not asked:
                self.clock.request_frame(self.frame)

    def frame(self) -> None:
        self.frames += 1
        self.owed -= 1
        if self.owed:
            self.clock.request_frame(self.frame)

    def close(self) -> None:
        self.closed = True


def _start(views: list[View], **kwargs: Any) -> tuple[PageWarmUp, ManualHost]:
    timers = ManualHost()
    on_error = kwargs.pop("on_error", None)
    lay_out = kwargs.pop("lay_out", None)

    def make_view(mount: Any, clock: Any) -> View:
        views.append(View(mount, clock, **kwargs))
        return views[-1]

    warm_up = PageWarmUp(Doc(), timers, make_view, batches=warm_batches(chunk=200),
                         on_error=on_error, lay_out=lay_out)
    warm_up.start()
    return warm_up, timers


def test_one_sample_message_per_timer_of_the_page_then_the_view_is_closed() -> None:
    views: list[View] = []
    warm_up, timers = _start(views)
    view = views[0]
    assert view.mount == {"tag": "div"}  # its own element, never the page's
    assert view.reports == [("open", None)]  # nothing before the page's first timer
    batches = warm_batches(chunk=200)
    for fed in range(1, len(batches) + 1):
        assert timers.pending_timeouts == 1
        timers.run_until(timers.next_timeout_at() or 0.0)
        messages = [json.loads(d) for k, d in view.reports if k == "message"]
        assert len(messages) == fed
        assert messages[-1] == {"through": fed, "events": batches[fed - 1]}
    assert warm_up.done and view.closed
    assert timers.pending_timeouts == 0
    assert warm_up.stats() == {"laidOut": False, "fed": len(batches), "of": len(batches),
                               "steps": len(batches), "done": True, "failed": False,
                               "cancelled": False}


def test_the_sample_is_laid_out_first_in_a_step_of_its_own() -> None:
    """The page's fonts: the sample's text laid out once, on the first timer,
    before any message reaches the throwaway view; then the messages as before."""
    views: list[View] = []
    laid: list[str] = []

    def lay_out(sample: str) -> bool:
        laid.append(sample)
        return True

    warm_up, timers = _start(views, lay_out=lay_out)
    assert laid == []  # not inside start(): the page's boot pays nothing for it
    timers.run_until(timers.next_timeout_at() or 0.0)
    assert len(laid) == 1 and laid[0].startswith(WARM_ANSWER) and not laid[0].isascii()
    assert [k for k, _d in views[0].reports] == ["open"]  # no message in that step
    assert timers.pending_timeouts == 1
    timers.run_all()
    batches = warm_batches(chunk=200)
    assert len(laid) == 1
    assert warm_up.stats() == {"laidOut": True, "fed": len(batches), "of": len(batches),
                               "steps": len(batches) + 1, "done": True, "failed": False,
                               "cancelled": False}


def test_a_sample_not_laid_out_is_said_and_the_run_goes_on() -> None:
    views: list[View] = []
    warm_up, timers = _start(views, lay_out=lambda _sample: False)  # e.g. a detached mount
    timers.run_all()
    assert warm_up.done and not warm_up.stats()["laidOut"] and not warm_up.stats()["failed"]
    assert warm_up.stats()["fed"] == warm_up.stats()["of"]


def test_a_failing_layout_is_told_and_stops_the_warm_up() -> None:
    views: list[View] = []
    told: list[BaseException] = []

    def lay_out(_sample: str) -> bool:
        raise RuntimeError("no layout")

    warm_up, timers = _start(views, lay_out=lay_out, on_error=told.append)
    timers.run_all()
    assert [str(e) for e in told] == ["no layout"]
    assert warm_up.stats()["failed"] and views[0].closed
    assert [k for k, _d in views[0].reports] == ["open"]


def test_an_answer_before_the_first_step_cancels_the_layout_too() -> None:
    views: list[View] = []
    laid: list[str] = []
    warm_up, timers = _start(views, lay_out=laid.append)
    warm_up.cancel()
    timers.run_all()
    assert laid == [] and warm_up.stats()["cancelled"] and not warm_up.stats()["laidOut"]


def test_it_runs_the_view_s_frames_until_nothing_is_left_to_show() -> None:
    views: list[View] = []
    warm_up, timers = _start(views, frames_per_message=20)
    timers.run_all()
    view = views[0]
    batches = warm_batches(chunk=200)
    assert view.frames == 20 * len(batches) and view.owed == 0
    assert warm_up.done and view.closed
    assert warm_up.stats()["steps"] > len(batches)  # a few frames a step, not all at once


def test_cancel_stops_the_steps_and_closes_the_throwaway_view() -> None:
    views: list[View] = []
    warm_up, timers = _start(views)
    timers.run_until(timers.next_timeout_at() or 0.0)
    warm_up.cancel()
    assert views[0].closed and warm_up.done and warm_up.stats()["cancelled"]
    assert timers.pending_timeouts == 0
    timers.run_all()
    assert len([k for k, _d in views[0].reports if k == "message"]) == 1


def test_a_failing_sample_run_is_told_and_stops() -> None:
    views: list[View] = []
    told: list[BaseException] = []
    warm_up, timers = _start(views, fail_on=2, on_error=told.append)
    timers.run_all()
    assert [str(e) for e in told] == ["sample run failed"]
    assert warm_up.done and warm_up.stats()["failed"] and views[0].closed
    warm_up.cancel()  # once ended, a cancel changes nothing
    assert not warm_up.stats()["cancelled"]


def test_one_warm_up_per_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "_started", False)
    views: list[View] = []

    def make_view(mount: Any, clock: Any) -> View:
        views.append(View(mount, clock))
        return views[-1]

    first = warm_page_once(Doc(), ManualHost(), make_view)
    assert first is not None
    assert warm_page_once(Doc(), ManualHost(), make_view) is None
    assert len(views) == 1


def test_the_sample_run_carries_the_whole_answer_and_text_the_page_segments() -> None:
    batches = warm_batches(runs=1)
    assert [e["type"] for e in batches[0]] == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    assert [e["type"] for e in batches[-1]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    text = "".join(e["delta"] for b in batches[1:-1] for e in b)
    assert text.startswith(WARM_ANSWER)
    # Not ASCII, with a ZWJ sequence: the page's Intl.Segmenter path is taken.
    assert not text.isascii() and "\u200d" in text
    assert max(len(e["delta"]) for b in batches[1:-1] for e in b) <= 48


def test_the_sample_is_several_whole_runs_one_after_the_other() -> None:
    """warm.RUNS runs (V8 deoptimises the interpreter's loop over several
    optimisation cycles: the warm-up should span them), each complete with ids
    of its own, each carrying the whole answer."""
    assert warm.RUNS > 1
    batches = warm_batches()
    starts = [i for i, b in enumerate(batches) if b[0]["type"] == "RUN_STARTED"]
    assert len(starts) == warm.RUNS and starts[0] == 0
    one = warm_batches(runs=1)
    runs = [batches[at:at + len(one)] for at in starts]
    assert sum(len(r) for r in runs) == len(batches)
    run_ids: list[str] = []
    message_ids: list[str] = []
    for run in runs:
        assert [e["type"] for e in run[-1]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
        assert run[0][0]["runId"] == run[-1][1]["runId"]
        run_ids.append(run[0][0]["runId"])
        messages = {e["messageId"] for b in run for e in b if "messageId" in e}
        assert len(messages) == 1
        message_ids += messages
        text = "".join(e["delta"] for b in run[1:-1] for e in b)
        assert text == "".join(e["delta"] for b in one[1:-1] for e in b)
    assert len(set(run_ids)) == len(set(message_ids)) == warm.RUNS
