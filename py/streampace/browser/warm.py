"""Warm the page's streaming path once, after boot, before the first answer.

The memory snapshot holds our modules imported and the sans-IO Python warm
(runtime.warm_up), but not what only a page has: the JS side of Pyodide's FFI,
V8's code for the interpreter's wasm functions a stream uses (compiled lazily,
optimised only once they ran a while), `Intl.Segmenter`'s data, the DOM calls
of the Markdown view. A page's first answer paid for all of it in its first
frames and socket messages: `python -m bench.long_frames --page embed --trace
bursty --cpu 1 --cpu-frames 10` counted 26 frames over 10 ms of CPU without the
warm-up, 8 with it.

So once per page, after the first view mounted, a throwaway `StreamView` on a
detached element (never laid out, never in the document) is fed short sample
runs through the real stack — socket messages as JSON, segmentation, pacing,
the Markdown DOM, the live region — on a virtual clock, one small step per
timer callback of the page's own host, so no step is a long task. It shows
nothing, sends nothing and fires its events only inside its detached element;
it is closed at its end, or earlier when the view that started it closes,
sends a message or receives a run (a real answer pays its own first frames;
the sample's steps would only add to them).

Before the first message, a step of its own lays the sample out once in the
page, in the view's own styles and removed in the same task (never painted):
the first layout of an answer that uses a font the page had not used yet (a
heading's size, bold, code's monospace, an emoji) matched and loaded that font
inside the frame that showed it — with `python -m bench.frame_trace --page
demo --trace bursty`, the emoji's layout 7.1 ms at 1x and 20.6 ms at 4x CPU,
the first code block's 5.6 and 36.3 ms. Those fonts are the page's, so one
layout of the sample warms every later answer.

The sample is `RUNS` runs, not one, because of how V8 optimises the
interpreter's loop (`_PyEval_EvalFrameDefault`, one 79 KB wasm function). Its
optimised code inlines the C functions it saw called through function
pointers. When another one turns up, V8 throws that code away (a deopt),
compiles the baseline code again on the main thread (4-15 ms at 1x CPU,
14-35 ms at 4x) and runs it until the optimiser is done again, about 200 ms
later in the background. Each deopt waits for the optimiser's next cycle, so
a longer warm-up meets more of them before an answer does, and V8 stops
deoptimising a function after ten (`--wasm-deopts-per-function-limit`).
`python -m bench.wasm_tiering --settle 2` (8 loads, the question 2 s after
ready) counted per first answer: with one run 3-4 at 1x and at 4x; with
three, 1-3 (median 1.5) at 1x and 0-3 (median 1) at 4x.
Since then the snapshot shows the loop's calls many kinds of object before V8
first optimises it (call_sites.py), and a page meets one such deopt, during
its boot.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streampace.browser.runtime import WARM_ANSWER
from streampace.testing import ManualHost

__all__ = ["PageWarmUp", "warm_batches"]

_STEP_GAP_MS = 10.0  # between two steps: the page's own frames run in between
_CHUNK = 48  # characters per sample socket message
_FRAMES_PER_STEP = 3
_FRAME_MS = 1000.0 / 60.0
_MAX_IDLE_STEPS = 200  # after the last message: a bound, whatever the view keeps asking
RUNS = 3  # sample runs back to back (see above: V8's optimisation cycles)
# Not ASCII: the page segments it with Intl.Segmenter (ASCII never needs it).
_UNICODE_TAIL = "\n\nDéjà vu — 日本語のテキスト, עברית, 👩‍👩‍👧 and 🇫🇷.\n"
# Laid out only (not streamed): signs answers often use, in text and emoji style.
_SIGNS = "\n\n✔️ ✅ ❌ ⚠️ 👉 🚀 ✓ ✗ → ← • … “quoted” ‘and’ – © ½ ≤ ≥ ± × ÷ ∞ €\n"

_started = False  # one warm-up per page


def warm_batches(answer: str = WARM_ANSWER + _UNICODE_TAIL, chunk: int = _CHUNK,
                 runs: int = RUNS) -> list[list[dict[str, Any]]]:
    """The sample runs as the socket would deliver them, one after the other:
    each a start, the answer in `chunk`-character deltas, an end."""
    batches: list[list[dict[str, Any]]] = []
    for n in range(1, runs + 1):
        run = f"warm-{n}"  # the run's id, and its one message's
        batches.append([
            {"type": "RUN_STARTED", "threadId": "warm", "runId": run},
            {"type": "TEXT_MESSAGE_START", "messageId": run, "role": "assistant"}])
        batches += [[{"type": "TEXT_MESSAGE_CONTENT", "messageId": run,
                      "delta": answer[at:at + chunk]}] for at in range(0, len(answer), chunk)]
        batches.append([{"type": "TEXT_MESSAGE_END", "messageId": run},
                        {"type": "RUN_FINISHED", "threadId": "warm", "runId": run}])
    return batches


class _SampleSocket:
    """A transport that delivers what the warm-up feeds it and sends nowhere."""

    url = "ws://streampace.invalid/warm"

    def __init__(self) -> None:
        self.sink: Callable[..., None] | None = None

    def attach(self, sink: Callable[..., None]) -> None:
        self.sink = sink

    def detach(self) -> None:
        self.sink = None

    def close(self, *_args: Any) -> None:
        self.sink = None

    def send(self, _data: str) -> bool:
        return True

    def deliver(self, kind: str, data: str | None = None) -> None:
        if self.sink is not None:
            self.sink(kind, data)


class PageWarmUp:
    """One sample run through a throwaway view, a step per timer of `timers`.

    `make_view(mount, host)`: the view to warm (a `StreamView` with the page's
    options on `host`, a virtual clock); `timers`: the real view's FrameHost;
    `lay_out(sample)`: the first step, lays the sample's text out in the page
    once (the real view's `DomRenderer.lay_out_sample`).
    """

    def __init__(self, doc: Any, timers: Any, make_view: Callable[[Any, Any], Any],
                 batches: list[list[dict[str, Any]]] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 lay_out: Callable[[str], Any] | None = None) -> None:
        self._timers = timers
        self._lay_out = lay_out
        self.laid_out = False  # the sample was laid out in the page (its first step)
        self._on_error = on_error
        self._clock = ManualHost()
        self._view: Any = make_view(doc.createElement("div"), self._clock)
        self._socket = _SampleSocket()
        self._batches = batches if batches is not None else warm_batches()
        self._next = 0
        self._idle_steps = 0
        self._steps = 0
        self.failed = False
        self.cancelled = False
        self._timer: Any = None
        self.done = False

    def start(self) -> None:
        self._view.connect(self._socket)
        self._socket.deliver("open")
        self._arm()

    def cancel(self) -> None:
        """Stop now (the view that started it closed, or an answer started) and
        drop the throwaway view."""
        if self.done:
            return
        self.cancelled = True
        if self._timer is not None:
            self._timers.cancel_timeout(self._timer)
            self._timer = None
        self._finish()

    def step(self) -> None:
        """The sample's layout first (a step of its own); then one socket
        message and a few frames (and due timers) of the throwaway view per
        step; once everything is delivered, a few frames a step until it is
        idle."""
        self._timer = None
        if self.done:
            return
        self._steps += 1
        try:
            if self._lay_out is not None:
                lay_out, self._lay_out = self._lay_out, None
                self.laid_out = bool(lay_out(WARM_ANSWER + _UNICODE_TAIL + _SIGNS))
            elif self._feed_step():
                self._finish()
                return
        except Exception as exc:  # the sample run's failure is no answer's: told, then stopped
            self._finish()
            self.failed = True
            if self._on_error is None:
                raise
            self._on_error(exc)
            return
        self._arm()

    def _feed_step(self) -> bool:
        """One message and a few frames of the throwaway view; True when it is done."""
        if self._next < len(self._batches):
            self._next += 1
            self._socket.deliver("message", json.dumps(
                {"through": self._next, "events": self._batches[self._next - 1]}))
        for _ in range(_FRAMES_PER_STEP):
            self._clock.frame(_FRAME_MS)
        self._idle_steps += self._next >= len(self._batches)
        return self._next >= len(self._batches) and (
            self._idle() or self._idle_steps > _MAX_IDLE_STEPS)

    def _idle(self) -> bool:
        """Nothing left to show: no frame asked for; the timers still armed (the
        live region's pauses, a hold-back) are let run first, then asked again."""
        if self._clock.pending_frames:
            return False
        at = self._clock.next_timeout_at()
        if at is None:
            return True
        self._clock.run_until(at)
        return False

    def stats(self) -> dict[str, Any]:
        """How far it went: the sample laid out or not, messages fed of all,
        steps taken, how it ended."""
        return {"laidOut": self.laid_out, "fed": self._next, "of": len(self._batches),
                "steps": self._steps,
                "done": self.done, "failed": self.failed, "cancelled": self.cancelled}

    def _arm(self) -> None:
        self._timer = self._timers.request_timeout(self.step, _STEP_GAP_MS)

    def _finish(self) -> None:
        if not self.done:
            self.done = True
            self._view.close()


def warm_page_once(doc: Any, timers: Any, make_view: Callable[[Any, Any], Any],
                   on_error: Callable[[BaseException], None] | None = None,
                   lay_out: Callable[[str], Any] | None = None) -> PageWarmUp | None:
    """Start the page's warm-up unless one already ran or runs (None then)."""
    global _started
    if _started:
        return None
    _started = True
    warm = PageWarmUp(doc, timers, make_view, on_error=on_error, lay_out=lay_out)
    warm.start()
    return warm
