"""`StreamView`: one paced session view in the page.

Wires a session transport (JS `SessionSocket` or the in-page `SimulatedSession`)
through `SessionClient` into the `PacingScheduler`, whose single apply per drain
feeds the `DomRenderer`. Handles socket close (flush_now), session switch
(clear), reduced motion (reveal per delivered batch) and per-frame telemetry.
"""

from __future__ import annotations

import json
import statistics
import traceback
from collections.abc import Callable
from typing import Any

import js
from pyodide.ffi import JsProxy, create_proxy

from streampace.browser.client import SessionClient
from streampace.browser.host import BrowserHost
from streampace.browser.renderer import DomRenderer
from streampace.browser.segmenter import IntlSegmenter
from streampace.browser.telemetry import Telemetry
from streampace.pacing.scheduler import PacingConfig, PacingScheduler

__all__ = ["StreamView", "percentile"]

# Keep sampling this long after the last activity so the chart shows the tail.
_SAMPLE_LINGER_MS = 600.0


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class StreamView:
    def __init__(
        self,
        bridge: Any,
        mount: Any,
        *,
        pace: bool = True,
        label: str = "Answer",
        host: BrowserHost | None = None,
        config: PacingConfig | None = None,
        on_delivered: Callable[[list[dict]], None] | None = None,
        on_sample: Callable[[tuple[float, int, int, float]], None] | None = None,
        on_status: Callable[[str, dict], None] | None = None,
        text_format: str = "markdown",
        scroll: bool = True,
    ) -> None:
        self.bridge = bridge
        self.mount = mount
        self.host = host if host is not None else BrowserHost(on_error=self._report_exception)
        self._own_host = host is None
        self.segmenter = IntlSegmenter(bridge)
        self.renderer = DomRenderer(mount, bridge, label=label, text_format=text_format,
                                    scroll=scroll)
        self.reduced_motion = bool(bridge.prefersReducedMotion())
        self.pace = pace and not self.reduced_motion
        self.scheduler = PacingScheduler(self.host, self._apply, config, self.segmenter)
        self.telemetry = Telemetry(self.host, self.scheduler)
        self.on_delivered = on_delivered
        self.on_sample = on_sample
        self.on_status = on_status
        self.session: str | None = None
        self.socket: Any = None
        self.client: SessionClient | None = None
        self._sink: Any = None
        self._sessions = 0
        self._sampling = False
        self._last_activity = 0.0
        self.errors: list[str] = []
        self.closed = False

    # -- transport ---------------------------------------------------------
    def connect(self, socket: Any) -> None:
        """Show the session streamed by `socket` (replacing any current one)."""
        if self.socket is not None:
            self.switch_session(socket)
            return
        self._sessions += 1
        self.session = f"s{self._sessions}"
        self.client = SessionClient(self._deliver, on_close=self._on_close,
                                    on_status=self._status, on_error=self._stream_error)
        self.socket = socket
        if isinstance(socket, JsProxy):
            # One proxy per connection, destroyed in disconnect().
            self._sink = create_proxy(self.client.handle)
            socket.attach(self._sink)
        else:
            self._sink = None
            socket.attach(self.client.handle)

    def disconnect(self, flush: bool = True) -> None:
        socket, self.socket = self.socket, None
        if socket is not None:
            socket.detach()
            socket.close()
        if self._sink is not None:
            self._sink.destroy()
            self._sink = None
        if flush and self.session is not None:
            self.scheduler.flush_now(self.session)

    def switch_session(self, socket: Any) -> None:
        old = self.session
        self.disconnect(flush=False)
        if old is not None:
            self.scheduler.clear(old)
        self.renderer.reset()
        self.telemetry.reset()
        self.session = None
        self.connect(socket)

    def send(self, text: str) -> None:
        if self.socket is None:
            raise RuntimeError("not connected")
        self.socket.send(text)

    def flush(self) -> None:
        if self.session is not None:
            self.scheduler.flush_now(self.session)

    # -- pipeline ----------------------------------------------------------
    def _deliver(self, events: list[dict]) -> None:
        if self.on_delivered is not None:
            self.on_delivered(events)
        before = self.telemetry.before_enqueue()
        self.scheduler.enqueue(self.session, events)
        self.telemetry.after_enqueue(before)
        if not self.pace:
            self.scheduler.flush_now(self.session)
        self._last_activity = self.host.now()
        self._ensure_sampling()

    def _apply(self, session_id: str, events: list[dict]) -> bool:
        if session_id != self.session or self.closed:
            return False  # not shown (any more): the scheduler keeps it queued
        self.renderer.apply(events)
        return True

    def _on_close(self) -> None:
        # The socket went away while this session is shown: show all it sent.
        if self.session is not None:
            self.scheduler.flush_now(self.session)

    def _status(self, state: str, detail: dict) -> None:
        if self.on_status is not None:
            self.on_status(state, detail)

    def _stream_error(self, message: str) -> None:
        self.errors.append(message)
        del self.errors[:-50]
        js.console.warn("streampace: " + message)
        self.bridge.emit(self.mount, "streampace:error",
                         json.dumps({"where": "stream", "message": message}))

    def _report_exception(self, exc: BaseException) -> None:
        text = "".join(traceback.format_exception(exc))
        self.errors.append(text)
        del self.errors[:-50]
        js.console.error("streampace: " + text)
        self.bridge.emit(self.mount, "streampace:error",
                         json.dumps({"where": "frame", "message": str(exc)}))

    # -- telemetry ---------------------------------------------------------
    def _ensure_sampling(self) -> None:
        if not self._sampling and not self.closed:
            self._sampling = True
            self.host.request_frame(self._sample_frame)

    def _sample_frame(self) -> None:
        self._sampling = False
        sample = self.telemetry.sample()
        if self.on_sample is not None:
            self.on_sample(sample)
        now = self.host.now()
        if self.scheduler.queued_events() > 0:
            self._last_activity = now
        if now - self._last_activity < _SAMPLE_LINGER_MS:
            self._ensure_sampling()

    def stats(self) -> dict[str, Any]:
        work = list(self.host.frame_work_ms)
        applies = list(self.renderer.apply_ms)
        return {
            "session": self.session,
            "connection": self.client.state if self.client else "none",
            "paced": self.pace,
            "reducedMotion": self.reduced_motion,
            "scheduler": self.scheduler.stats(),
            "client": dict(self.client.stats) if self.client else {},
            "lastThrough": self.client.last_through if self.client else 0,
            "commits": self.renderer.commits,
            "frames": self.host.frames,
            "frameWorkMs": {"n": len(work), "p50": percentile(work, 50),
                            "p99": percentile(work, 99),
                            "mean": statistics.fmean(work) if work else None},
            "applyMs": {"p50": percentile(applies, 50), "p99": percentile(applies, 99)},
            "markdownDom": self.renderer.markdown_stats(),
            "maxFrameGraphemes": self.telemetry.max_frame_graphemes,
            "maxLagMs": self.telemetry.max_lag_ms,
            "segmenter": "Intl.Segmenter" if self.segmenter.uses_intl else "Python fallback",
            "segmenterJsCalls": self.segmenter.js_calls,
            "hostErrors": self.host.errors,
            "errors": self.errors[-5:],
        }

    def stats_json(self) -> str:
        return json.dumps(self.stats())

    def close(self) -> None:
        if self.closed:
            return
        self.disconnect(flush=False)
        self.closed = True
        self.scheduler.clear()
        if self._own_host:
            self.host.close()
        self.renderer.close()
