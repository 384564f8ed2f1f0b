"""Coalescing buffer for token streams (seed 003): first token at once, then one
render per time window.

Receiving and rendering run at different rates: tokens are accumulated as
they arrive, but ``render`` is called at most once per ``window_ms`` after the
first one.  The first token after an idle window is rendered immediately so
time-to-first-text never pays the window.  ``close()`` renders whatever is
pending (an abort or unmount must not drop the received tail).

Sans-IO: the timer comes from the injected host (a ``streampace.clock.TimerHost``).
"""

from __future__ import annotations

from collections.abc import Callable

from streampace.clock import Timeout, TimerHost

__all__ = ["CoalescerClosedError", "StreamCoalescer"]


class CoalescerClosedError(RuntimeError):
    """push() after close()."""


class StreamCoalescer:
    def __init__(
        self,
        render: Callable[[str], None],
        host: TimerHost,
        window_ms: float = 40,
    ) -> None:
        if not window_ms >= 0:
            raise ValueError(f"window_ms must be >= 0, got {window_ms!r}")
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
