"""Coalescing buffer for token streams (seed 003): first token at once, then one
render per time window.

Receiving and rendering run at different rates: tokens are accumulated as
they arrive, but ``render`` is called at most once per ``window_ms`` after the
first one.  The first token after an idle window is rendered immediately so
time-to-first-text never pays the window.  ``close()`` renders whatever is
pending (an abort or unmount must not drop the received tail).

Two ways to give it a timer, both sans-IO:

* the seed article's — ``StreamCoalescer(render, schedule, cancel, window_ms=40)``
  with ``schedule(task, delay_ms) -> handle`` and ``cancel(handle)`` (e.g.
  ``setTimeout`` / ``clearTimeout``, or a fake clock in a test);
* a host — ``StreamCoalescer(render, host, window_ms=40)`` with any
  :class:`streampace.clock.TimerHost` (the server's loop host, the page's
  ``BrowserHost``, ``streampace.testing.ManualHost``).

Either way the window timer is a :class:`streampace.clock.Timeout`, so a timer
that fires after it was cancelled does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

from streampace.clock import Timeout, TimerHost

__all__ = ["Cancel", "CoalescerClosedError", "Schedule", "StreamCoalescer"]

Schedule = Callable[[Callable[[], None], float], Any]
Cancel = Callable[[Any], None]


class CoalescerClosedError(RuntimeError):
    """push() after close()."""


class _ScheduleTimers:
    """The seed's ``schedule`` / ``cancel`` pair as the timer half of a TimerHost."""

    __slots__ = ("_schedule", "_cancel")

    def __init__(self, schedule: Schedule, cancel: Cancel) -> None:
        self._schedule = schedule
        self._cancel = cancel

    def now(self) -> float:
        raise NotImplementedError("a schedule/cancel pair has no clock")

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> Any:
        return self._schedule(callback, delay_ms)

    def cancel_timeout(self, handle: Any) -> None:
        self._cancel(handle)


class StreamCoalescer:
    @overload
    def __init__(self, render: Callable[[str], None], timers: TimerHost, *,
                 window_ms: float = 40) -> None: ...

    @overload
    def __init__(self, render: Callable[[str], None], timers: Schedule, cancel: Cancel,
                 window_ms: float = 40) -> None: ...

    def __init__(self, render: Callable[[str], None], timers: TimerHost | Schedule,
                 cancel: Cancel | None = None, window_ms: float = 40) -> None:
        if not window_ms >= 0:
            raise ValueError(f"window_ms must be >= 0, got {window_ms!r}")
        host: TimerHost
        if callable(getattr(timers, "request_timeout", None)):
            if cancel is not None:
                raise TypeError("StreamCoalescer(render, host, window_ms=...): a host brings "
                                "its own cancel")
            host = timers  # type: ignore[assignment]
        elif callable(timers) and callable(cancel):
            host = _ScheduleTimers(timers, cancel)
        else:
            raise TypeError("StreamCoalescer needs a TimerHost, or schedule and cancel "
                            "callables (the seed article's form)")
        self._render = render
        self.window_ms = window_ms
        self._parts: list[str] = []  # joined once per render, not per token
        self._timer = Timeout(host, self._flush)  # ignores a fire after cancel
        self._closed = False
        self.renders = 0

    @property
    def pending(self) -> str:
        return "".join(self._parts)

    @property
    def closed(self) -> bool:
        return self._closed

    def push(self, token: str) -> None:
        if self._closed:
            raise CoalescerClosedError("StreamCoalescer is closed; create one per request")
        if not isinstance(token, str):
            raise TypeError(f"token must be a str, got {type(token).__name__}")
        if token:
            self._parts.append(token)
        if self._timer.armed:
            return  # inside a window: the timer renders it
        self._flush()
        self._timer.arm(self.window_ms)

    def close(self) -> None:
        """Cancel the window timer and render what is pending; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._timer.cancel()
        self._flush()

    def _flush(self) -> None:
        if not self._parts:
            return
        text = "".join(self._parts)
        self._parts = []
        try:
            self._render(text)
        except BaseException:
            # Keep the text so close() or the next window can render it again.
            self._parts.insert(0, text)
            raise
        self.renders += 1
