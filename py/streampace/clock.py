"""The one clock protocol of the core: a millisecond clock and one-shot timers.

Everything in ``streampace`` that waits — the delivery buffer, the coalescer,
the pacing scheduler — gets its time from a host object instead of reading a
clock or starting a timer itself, so the same code runs on asyncio (the
server's ``server/loop_host.py``), in the page (``browser/host.py``) and on a
virtual clock (``streampace.testing.ManualHost``, the bench's hosts).

``TimerHost`` is the subset that batching needs; ``FrameHost`` adds the
animation frames the scheduler paces on.  A host may fire a timeout that was
cancelled (a host whose cancel is best-effort); ``Timeout`` ignores such a late
fire, so callers need not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

__all__ = ["FrameHost", "FrameRequest", "TimerHost", "Timeout"]


class TimerHost(Protocol):
    """A clock in milliseconds and one-shot timeouts on it."""

    def now(self) -> float: ...  # milliseconds, monotonic

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> Any: ...

    def cancel_timeout(self, handle: Any) -> None: ...


class FrameHost(TimerHost, Protocol):
    """A TimerHost that also runs callbacks on animation frames."""

    def request_frame(self, callback: Callable[[], None]) -> Any: ...

    def cancel_frame(self, handle: Any) -> None: ...


class Timeout:
    """One re-armable timeout on a TimerHost that ignores stale fires.

    Each ``arm``/``cancel`` starts a new generation; a callback from an older
    one (a host that fired a cancelled timer) does nothing.
    """

    __slots__ = ("_host", "_callback", "_handle", "_gen", "armed")

    def __init__(self, host: TimerHost, callback: Callable[[], None]) -> None:
        self._host = host
        self._callback = callback
        self._handle: Any = None
        self._gen = 0
        self.armed = False

    def arm(self, delay_ms: float) -> None:
        """Fire ``callback`` after ``delay_ms``; an armed timeout is cancelled first."""
        self.cancel()
        self._gen += 1
        gen = self._gen
        self.armed = True
        self._handle = self._request(lambda: self._fire(gen), delay_ms)

    def cancel(self) -> None:
        if self.armed:
            self.armed = False
            self._gen += 1
            handle, self._handle = self._handle, None
            self._cancel(handle)

    def _request(self, callback: Callable[[], None], delay_ms: float) -> Any:
        return self._host.request_timeout(callback, delay_ms)

    def _cancel(self, handle: Any) -> None:
        self._host.cancel_timeout(handle)

    def _fire(self, gen: int) -> None:
        if gen != self._gen:
            return  # cancelled or re-armed since: the host fired it anyway
        self.armed = False
        self._handle = None
        self._callback()


class FrameRequest(Timeout):
    """One re-armable animation-frame request that ignores stale callbacks: a
    :class:`Timeout` whose deadline is the host's next frame."""

    __slots__ = ()

    def __init__(self, host: FrameHost, callback: Callable[[], None]) -> None:
        super().__init__(host, callback)

    def arm(self, delay_ms: float = 0.0) -> None:
        """Run ``callback`` in the next animation frame (``delay_ms`` is not used)."""
        super().arm(delay_ms)

    def _request(self, callback: Callable[[], None], delay_ms: float) -> Any:
        return cast(FrameHost, self._host).request_frame(callback)

    def _cancel(self, handle: Any) -> None:
        cast(FrameHost, self._host).cancel_frame(handle)
