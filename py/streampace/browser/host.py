"""`BrowserHost`: the scheduler's FrameHost on the page's own clock.

One persistent proxy for `requestAnimationFrame` and one for `setTimeout`,
re-armed as needed: creating and destroying a proxy per call costs ~44 us and a
bare Python function handed to JS is destroyed when the call returns. Any number
of frame/timeout requests are multiplexed over those two proxies. All proxies are
destroyed by `close()`.
"""

from __future__ import annotations

import heapq
import itertools
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any

from streampace.browser.ffi import create_proxy, js

__all__ = ["BrowserHost"]

# Browsers may fire a timer a fraction of a millisecond before performance.now()
# reaches its deadline; treat those as due instead of re-arming a 0 ms timer.
_TIMER_SLACK_MS = 1.0


class _Callback:
    """A plain callable (weak-referenceable, unlike a bound method) given to JS."""

    __slots__ = ("_fn", "__weakref__")

    def __init__(self, fn: Callable[..., None]) -> None:
        self._fn = fn

    def __call__(self, *args: Any) -> None:
        self._fn(*args)


class BrowserHost:
    """FrameHost backed by `performance.now`, `requestAnimationFrame`, `setTimeout`.

    While the tab is hidden the browser stops animation frames; timeouts still
    run (throttled), which is why the scheduler arms a fallback timeout with every
    frame. `visibility_listeners` are told about changes (argument: hidden).
    Exceptions raised by callbacks are passed to `on_error` (default: console)
    after the loop has been re-armed, so one failure cannot stop the loop.
    """

    def __init__(self, on_error: Callable[[BaseException], None] | None = None) -> None:
        self._window = js.globalThis
        # The bound method, looked up once: `performance.now()` through the
        # proxy is an attribute lookup (a new method proxy) plus the call, about
        # 3 us in Pyodide against 0.5 us for the call alone, and a frame reads
        # the clock about ten times (scheduler, drive, renderer, telemetry).
        # Pyodide binds `this` to the method it hands out.
        self._clock = js.performance.now
        # Asked for every frame: bound once too (window's, as `this`).
        self._request_animation_frame = self._window.requestAnimationFrame
        self._document = js.document
        self._ids = itertools.count(1)
        self._frame_waiters: dict[int, Callable[[], None]] = {}
        self._raf_handle: Any = None
        self._timers: dict[int, tuple[float, Callable[[], None]]] = {}
        self._timer_heap: list[tuple[float, int]] = []
        self._timeout_handle: Any = None
        self._timeout_deadline: float | None = None
        self.on_error = on_error or self._log_error
        self.errors = 0
        self.frames = 0
        # Python time per animation frame that had work (ms), for p50/p99 figures.
        self.frame_work_ms: deque[float] = deque(maxlen=8192)
        self.hidden = bool(self._document.hidden)
        self.visibility_listeners: list[Callable[[bool], None]] = []
        # Told once a frame's callbacks have run, still in the frame (the page's
        # FrameCollector: a collection step is then asked for as a timeout).
        self.frame_end_listeners: list[Callable[[], None]] = []
        self.closed = False
        self._frame_t0: float | None = None  # when this frame's callbacks began
        # Kept as attributes (None after close) so tests can check they are freed.
        frame_cb, timeout_cb, visibility_cb = (
            _Callback(self._on_frame), _Callback(self._on_timeout), _Callback(self._on_visibility))
        self.frame_callback: _Callback | None = frame_cb
        self.timeout_callback: _Callback | None = timeout_cb
        self.visibility_callback: _Callback | None = visibility_cb
        self._frame_proxy = create_proxy(frame_cb)
        self._timeout_proxy = create_proxy(timeout_cb)
        self._visibility_proxy = create_proxy(visibility_cb)
        self._document.addEventListener("visibilitychange", self._visibility_proxy)

    # -- FrameHost ---------------------------------------------------------
    def now(self) -> float:
        return float(self._clock())

    @property
    def in_frame(self) -> bool:
        """True while animation-frame callbacks run (a store publishes in the frame)."""
        return self._frame_t0 is not None

    def frame_elapsed_ms(self) -> float:
        """How long this animation frame's callbacks have run so far (0 outside
        a frame): a later callback can leave work to the next frame."""
        return float(self._clock() - self._frame_t0) if self._frame_t0 is not None else 0.0

    def request_frame(self, callback: Callable[[], None]) -> int:
        self._check_open()
        handle = next(self._ids)
        self._frame_waiters[handle] = callback
        self._arm_frame()
        return handle

    def cancel_frame(self, handle: Any) -> None:
        self._frame_waiters.pop(handle, None)
        if not self._frame_waiters and self._raf_handle is not None and not self.closed:
            self._window.cancelAnimationFrame(self._raf_handle)
            self._raf_handle = None

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> int:
        self._check_open()
        handle = next(self._ids)
        deadline = self.now() + max(0.0, float(delay_ms))
        self._timers[handle] = (deadline, callback)
        heapq.heappush(self._timer_heap, (deadline, handle))
        self._arm_timeout()
        return handle

    def cancel_timeout(self, handle: Any) -> None:
        # The heap entry goes stale and is skipped when it surfaces.  The JS
        # timer is left armed: the scheduler cancels its fallback timeout and
        # asks for a new one every frame, and clearTimeout + setTimeout per
        # frame are two FFI crossings; an early wake-up that finds nothing
        # due costs one, once per fallback period.
        self._timers.pop(handle, None)
        if not self._timers:
            self._timer_heap.clear()

    # -- lifecycle ---------------------------------------------------------
    def close(self) -> None:
        """Stop everything and destroy every proxy this host created."""
        if self.closed:
            return
        self.closed = True
        if self._raf_handle is not None:
            self._window.cancelAnimationFrame(self._raf_handle)
        if self._timeout_handle is not None:
            self._window.clearTimeout(self._timeout_handle)
        self._raf_handle = self._timeout_handle = None
        self._document.removeEventListener("visibilitychange", self._visibility_proxy)
        for proxy in (self._frame_proxy, self._timeout_proxy, self._visibility_proxy):
            proxy.destroy()
        self._frame_waiters.clear()
        self._timers.clear()
        self._timer_heap.clear()
        self.visibility_listeners.clear()
        self.frame_end_listeners.clear()
        self.frame_callback = self.timeout_callback = self.visibility_callback = None

    def pending(self) -> dict[str, int]:
        return {"frames": len(self._frame_waiters), "timeouts": len(self._timers)}

    # -- internals ---------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("BrowserHost is closed")

    def _arm_frame(self) -> None:
        if self._raf_handle is None and not self.closed:
            self._raf_handle = self._request_animation_frame(self._frame_proxy)

    def _arm_timeout(self) -> None:
        if self.closed:
            return
        while self._timer_heap and self._timer_heap[0][1] not in self._timers:
            heapq.heappop(self._timer_heap)
        if not self._timer_heap:
            return
        deadline = self._timer_heap[0][0]
        if self._timeout_handle is not None:
            if self._timeout_deadline is not None and self._timeout_deadline <= deadline:
                return
            self._window.clearTimeout(self._timeout_handle)
        self._timeout_deadline = deadline
        self._timeout_handle = self._window.setTimeout(
            self._timeout_proxy, max(0.0, deadline - self.now())
        )

    def _on_frame(self, _timestamp: Any = None) -> None:
        self._raf_handle = None
        if self.closed:
            return
        waiters = self._frame_waiters
        self._frame_waiters = {}
        if not waiters:
            return
        self.frames += 1
        # Re-arm before the work: if a callback raises, the next frame still comes
        # (it finds nothing to do and stops unless someone asked again).
        self._arm_frame()
        t0 = self._clock()
        self._frame_t0 = t0
        try:
            self._run_all(waiters.values())
        finally:
            self._frame_t0 = None
        self._run_all(self.frame_end_listeners)
        self.frame_work_ms.append(float(self._clock() - t0))

    def _on_timeout(self) -> None:
        self._timeout_handle = None
        self._timeout_deadline = None
        if self.closed:
            return
        now = self.now() + _TIMER_SLACK_MS
        due: list[Callable[[], None]] = []
        while self._timer_heap and self._timer_heap[0][0] <= now:
            _deadline, handle = heapq.heappop(self._timer_heap)
            entry = self._timers.pop(handle, None)
            if entry is not None:
                due.append(entry[1])
        self._arm_timeout()
        self._run_all(due)

    def _on_visibility(self, _event: Any = None) -> None:
        hidden = bool(self._document.hidden)
        if hidden == self.hidden:
            return
        self.hidden = hidden
        if not hidden and self._frame_waiters:
            # A frame requested while hidden may never have been scheduled by the
            # browser; ask again so frames resume at once.
            if self._raf_handle is not None:
                self._window.cancelAnimationFrame(self._raf_handle)
                self._raf_handle = None
            self._arm_frame()
        self._run_all([lambda listener=listener: listener(hidden)
                       for listener in list(self.visibility_listeners)])

    def _run_all(self, callbacks: Any) -> None:
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # surfaced, never swallowed silently
                self.errors += 1
                try:
                    self.on_error(exc)
                except Exception:
                    self._log_error(exc)

    @staticmethod
    def _log_error(exc: BaseException) -> None:
        js.console.error("streampace: " + "".join(traceback.format_exception(exc)))
