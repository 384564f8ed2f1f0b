"""One frame loop per page: every view and store leases the page's `BrowserHost`.

A page with three views and two stores still runs one `requestAnimationFrame`
callback, one `setTimeout` and one `visibilitychange` listener: each
`StreamView` (DOM view or headless store) holds a `HostLease`, a FrameHost
over the shared host that remembers what its owner asked for. Closing a lease
cancels its owner's pending frames and timers; closing the last one closes the
host, which destroys its proxies (nothing of ours stays on the page). An
exception in an owner's callback goes to that owner's `on_error`.

While the host lives, a `FrameCollector` (browser/collector.py) runs the cyclic
garbage collector in timeouts between its frames rather than inside them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from streampace.browser.collector import FrameCollector
from streampace.browser.host import BrowserHost

__all__ = ["HostLease", "page_collector", "page_host_users", "shared_host"]

_host: BrowserHost | None = None
_collector: FrameCollector | None = None
_users = 0


def shared_host() -> BrowserHost | None:
    """The page's host while a lease is open (tests and benchmarks read it)."""
    return _host


def page_host_users() -> int:
    return _users


def page_collector() -> FrameCollector | None:
    """The collector on the page's host while a lease is open."""
    return _collector


def _acquire() -> BrowserHost:
    global _host, _users, _collector
    if _host is None or _host.closed:
        _host = BrowserHost()
        _collector = FrameCollector(_host)
        _host.frame_end_listeners.append(_collector.after_frame)
    _users += 1
    return _host


def _release(host: BrowserHost) -> None:
    global _host, _users, _collector
    if host is not _host:
        return
    _users -= 1
    if _users <= 0:
        _users = 0
        _host = None
        if _collector is not None:
            _collector.stop()
            _collector = None
        host.close()


class HostLease:
    """A FrameHost for one owner on the page's shared `BrowserHost`."""

    def __init__(self, on_error: Callable[[BaseException], None] | None = None) -> None:
        self._host = _acquire()
        self.on_error = on_error
        self.errors = 0
        self.closed = False
        self._frames: set[int] = set()
        self._timers: set[int] = set()

    # -- FrameHost ---------------------------------------------------------
    def now(self) -> float:
        return self._host.now()

    def request_frame(self, callback: Callable[[], None]) -> int:
        return self._request(self._frames, self._host.request_frame, callback)

    def cancel_frame(self, handle: Any) -> None:
        self._frames.discard(handle)
        self._host.cancel_frame(handle)

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> int:
        return self._request(self._timers, self._host.request_timeout, callback, delay_ms)

    def cancel_timeout(self, handle: Any) -> None:
        self._timers.discard(handle)
        self._host.cancel_timeout(handle)

    # -- the page's figures ------------------------------------------------
    @property
    def frames(self) -> int:
        return self._host.frames

    @property
    def frame_work_ms(self) -> deque[float]:
        return self._host.frame_work_ms

    @property
    def in_frame(self) -> bool:
        return self._host.in_frame

    @property
    def hidden(self) -> bool:
        return self._host.hidden

    def pending(self) -> dict[str, int]:
        """This owner's frame and timeout requests not yet run."""
        return {"frames": len(self._frames), "timeouts": len(self._timers)}

    def close(self) -> None:
        """Cancel what this owner asked for and give the host back."""
        if self.closed:
            return
        self.closed = True
        for handle in self._frames:
            self._host.cancel_frame(handle)
        for handle in self._timers:
            self._host.cancel_timeout(handle)
        self._frames.clear()
        self._timers.clear()
        _release(self._host)

    # -- internals ---------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("streampace: this view is closed")

    def _request(self, handles: set[int], request: Callable[..., int],
                 callback: Callable[[], None], *args: Any) -> int:
        """Ask the shared host, remembering the handle until it runs or is cancelled."""
        self._check_open()
        cell = [0]

        def run() -> None:
            handles.discard(cell[0])
            self._run(callback)

        handle = cell[0] = request(run, *args)
        handles.add(handle)
        return handle

    def _run(self, callback: Callable[[], None]) -> None:
        if self.closed:
            return
        try:
            callback()
        except Exception as exc:
            self.errors += 1
            if self.on_error is None:
                raise
            self.on_error(exc)
