"""`StreamView`: one paced session view in the page.

Wires a session transport (JS `SessionSocket` or the in-page `SimulatedSession`)
through the `SessionConnection` (the socket's state machine: resume, reconnect,
why it is not connected) and the `SessionClient` (decode, dedupe) into the
`PacingScheduler`, whose single apply per drain feeds the `DomRenderer`.
Handles socket close (flush_now), session switch (clear), connection problems
(`streampace:error` and the view's status line), reduced motion (everything
queued, committed in the next frame) and per-frame telemetry.
"""

from __future__ import annotations

import json
import statistics
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from streampace.browser.announce import heading_base as heading_base_option
from streampace.browser.ffi import JsProxy, create_proxy, js
from streampace.browser.host import BrowserHost
from streampace.browser.labels import labels_for
from streampace.browser.outbox import ACCEPTED, Outbox, refused
from streampace.browser.page_host import HostLease
from streampace.browser.renderer import DomRenderer
from streampace.browser.scroll import follower_ms
from streampace.browser.segmenter import IntlSegmenter
from streampace.browser.telemetry import Telemetry
from streampace.client.connection import MAX_QUEUED_SENDS, ConnState, SessionConnection
from streampace.client.connection_problems import Problem
from streampace.client.session_client import SessionClient, StreamError
from streampace.pacing.scheduler import PacingConfig, PacingScheduler
from streampace.session.protocol import shown_url

__all__ = ["StreamView", "frame_commit_config", "percentile"]

# Keep sampling this long after the last activity so the chart shows the tail.
_SAMPLE_LINGER_MS = 600.0
# Connection states in which the server is delivering to this view.
_SHOWING = (ConnState.OPEN, ConnState.ATTACHED)


def _option(socket: Any, name: str, default: Any) -> Any:
    """An option of a transport (a JS property that is undefined reads as None)."""
    value = getattr(socket, name, None)
    return default if value is None else value


def frame_commit_config(config: PacingConfig | None, pace: bool) -> PacingConfig:
    """The scheduler's config for this view.  Pacing off (``data-pace="off"``,
    prefers-reduced-motion) is a law of its own: each socket batch is committed
    in the next animation frame with everything queued — one commit per frame,
    never outside a frame, nothing held back longer than that."""
    base = config if config is not None else PacingConfig()
    return base if pace else replace(base, law="off")


def _page_lang() -> str:
    """The page's language (`<html lang>`), for the view's shipped words."""
    return str(js.document.documentElement.lang or "")


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
        on_paced: Callable[[list[dict]], None] | None = None,
        scroll: bool = True,
        announce: bool = True,
        heading_base: Any = "auto",
        labels: dict[str, str] | None = None,
    ) -> None:
        self.bridge = bridge
        self.mount = mount
        # Without a host of the caller's: a lease on the page's one frame loop.
        self.host: Any = host if host is not None else HostLease(on_error=self._report_exception)
        self._own_host = host is None
        self.segmenter = IntlSegmenter(bridge)
        self.labels = labels if labels is not None else labels_for(_page_lang())
        # The answer is said in a live region (`announce`); its headings sit
        # under the page's outline (`heading_base`: "auto", "off" or 1-6).
        self.announce = announce
        self.heading_base = heading_base
        self.renderer: Any = self._make_renderer(label=label, text_format=text_format,
                                                 scroll=scroll)
        # The person's questions: sent, queued behind the current run, or refused.
        self.outbox = Outbox(self._send_now, on_change=self._queue_changed)
        self.reduced_motion = bool(bridge.prefersReducedMotion())
        self.pace = pace and not self.reduced_motion
        self.scheduler = PacingScheduler(self.host, self._apply,
                                         frame_commit_config(config, self.pace), self.segmenter)
        self.telemetry = Telemetry(self.host, self.scheduler)
        if on_sample is None:
            # Nobody draws the samples: stats() gets its figures from the drains
            # that show text, and the page asks for no frame of its own. Its own
            # frame callback was 14 % of a replayed answer's Python (bench.page_frames,
            # bursty), and it woke the page every frame for 0.6 s after the text stopped.
            self.scheduler.on_applied = self._sample_at_apply
        self.on_delivered = on_delivered
        self.on_sample = on_sample
        self.on_status = on_status
        # Told each frame's paced events after they were rendered (page.py).
        self.on_paced = on_paced
        self.session: str | None = None
        self.socket: Any = None
        self.client: SessionClient | None = None
        self.connection: SessionConnection | None = None
        self._sink: Any = None
        self._sessions = 0
        self._sampling = False
        self._last_activity = 0.0
        self.errors: list[str] = []
        self.closed = False
        self._warm: Any = None  # browser/warm.py, while this view's warm-up runs

    def _make_renderer(self, *, label: str, text_format: str, scroll: bool) -> Any:
        """What shows the paced batches (a headless store overrides it: store.py)."""
        renderer = DomRenderer(self.mount, self.bridge, label=label, text_format=text_format,
                               scroll=scroll, labels=self.labels, announce=self.announce,
                               timers=self.host,
                               heading_base=heading_base_option(self.heading_base, self.mount))
        renderer.on_withdraw = self.withdraw
        return renderer

    # -- transport ---------------------------------------------------------
    def connect(self, socket: Any) -> None:
        """Show the session streamed by `socket` (replacing any current one).

        `socket` is a transport (client/connection.py): the JS `SessionSocket`,
        opened and buffering since before Python booted, or a `SimulatedSession`.
        What it reported so far is replayed in order, then the connection drives it.
        """
        if self.socket is not None:
            self.switch_session(socket)
            return
        self._sessions += 1
        self.session = f"s{self._sessions}"
        self.client = SessionClient(self._deliver, on_error=self._stream_error,
                                    reloaded=bool(_option(socket, "reloaded", False)))
        url = str(_option(socket, "url", ""))
        self.connection = SessionConnection(
            socket, self.host, self.client, url=url,
            asked_url=str(_option(socket, "askedUrl", url)),
            # Options the page gave the JS socket before Python existed.
            retry_before_open=bool(_option(socket, "retryBeforeOpen", True)),
            reconnect=bool(_option(socket, "autoReconnect", True)),
            on_change=self._connection_changed, on_problem=self._connection_problem)
        self.socket = socket
        if isinstance(socket, JsProxy):
            # One proxy per connection, destroyed in disconnect().
            self._sink = create_proxy(self.connection.handle)
            socket.attach(self._sink)
        else:
            self._sink = None
            socket.attach(self.connection.handle)

    def disconnect(self, flush: bool = True) -> None:
        socket, self.socket = self.socket, None
        connection, self.connection = self.connection, None
        if socket is not None:
            socket.detach()
        if connection is not None:
            connection.close()  # closes the socket; its callbacks see it go
        if self._sink is not None:
            self._sink.destroy()
            self._sink = None
        if not self.closed:
            self.renderer.show_connection("none", "")
        if flush and self.session is not None:
            self.scheduler.flush_now(self.session)

    def switch_session(self, socket: Any) -> None:
        old = self.session
        self.disconnect(flush=False)
        if old is not None:
            self.scheduler.clear(old)
        self.outbox.clear()
        self.renderer.reset()
        self.telemetry.reset()
        self.session = None
        self.connect(socket)

    def send(self, message: Any) -> dict[str, Any]:
        """A client message (a dict or its JSON text): sent now if connected (or
        after the next resume), queued behind the current run if it is a `run`
        while one is in progress, or refused; returns what happened
        (browser/outbox.py)."""
        if self.connection is None:
            return refused("not_connected", "not connected to a session")
        outcome = self.outbox.submit(message)
        if outcome["status"] == ACCEPTED and self._warm is not None:
            # An answer or a command is on its way: the sample's remaining steps
            # would only add to its first frames (a step at 4x CPU took 24 ms).
            self._warm.cancel()
        return outcome

    def send_json(self, text: str) -> str:
        """`send` for js_shim/streampace.js: JSON in, JSON out."""
        return json.dumps(self.send(text))

    def withdraw(self, message_id: str) -> bool:
        """Take back a queued question that was not sent yet."""
        return self.outbox.withdraw(message_id)

    def queued(self) -> list[dict[str, Any]]:
        return self.outbox.items()

    def queued_json(self) -> str:
        return json.dumps(self.outbox.items())

    def _send_now(self, text: str) -> bool:
        connection = self.connection
        if connection is None:
            return False
        if connection.send(text):
            return True
        why = connection.problem
        message = ("not sent: the connection is closed"
                   + (f" ({why.code})" if why is not None else "")
                   if connection.state is ConnState.CLOSED else
                   f"not sent: {MAX_QUEUED_SENDS} messages already wait for the connection")
        self._emit_error({"where": "connection", "code": "not_sent", "message": message})
        return False

    def _queue_changed(self) -> None:
        """The waiting questions changed: shown below the conversation (a view
        without a DOM, the store, has no `show_queue` and reads `queued()`)."""
        if self.closed:
            return
        queued = self.outbox.items()
        show = getattr(self.renderer, "show_queue", None)
        if show is not None:
            show(queued)
        self.bridge.emit(self.mount, "streampace:queue", json.dumps({"queued": queued}))

    def flush(self) -> None:
        if self.session is not None:
            self.scheduler.flush_now(self.session)

    def _connection_changed(self, old: ConnState, new: ConnState,
                            problem: Problem | None) -> None:
        connection = self.connection
        if connection is None:
            return  # the move of a connection being closed by disconnect()
        if old in _SHOWING and new not in _SHOWING and self.session is not None:
            # The socket went away while this session is shown: show all it sent.
            self.scheduler.flush_now(self.session)
        self.renderer.show_connection(new.value, connection.status_text())
        if self.on_status is not None:
            retry = connection.retry_in_ms()
            self.on_status(new.value, {
                "wasOpen": connection.opens > 0, "attempt": connection.attempt,
                "delayMs": None if retry is None else round(retry),
                "problem": None if problem is None else problem.detail()})

    def _connection_problem(self, problem: Problem, retry_in_ms: float | None) -> None:
        connection = self.connection
        detail = {"where": "connection", **problem.detail(),
                  "retrying": retry_in_ms is not None,
                  "retryInMs": None if retry_in_ms is None else round(retry_in_ms),
                  "attempt": connection.attempt if connection is not None else 0,
                  # The server, not the key: no session id in what a page may log.
                  "url": shown_url(connection.url) if connection is not None else ""}
        self._emit_error(detail)

    def _stream_error(self, error: StreamError) -> None:
        if error.where == "server":
            self.outbox.server_refused(error.code)
        self._emit_error({"where": error.where, "code": error.code, "message": error.message})

    def _emit_error(self, detail: dict[str, Any]) -> None:
        """One `streampace:error` on the mount (and the console), machine-readable."""
        text = f"{detail['where']}: {detail['code']}: {detail['message']}"
        self.errors.append(text)
        del self.errors[:-50]
        js.console.warn("streampace: " + text)
        self.bridge.emit(self.mount, "streampace:error", json.dumps(detail))

    # -- pipeline ----------------------------------------------------------
    def _deliver(self, events: list[dict]) -> None:
        session = self.session
        if session is None:
            return  # only a connected client delivers; kept for the type checker
        for event in events:
            kind = event.get("type")
            if kind == "RUN_STARTED":
                self.outbox.run_started()
                if self._warm is not None:
                    # A real answer pays its own first frames; the sample's steps
                    # would only add to them.
                    self._warm.cancel()
            elif kind in ("RUN_FINISHED", "RUN_ERROR"):
                self.outbox.run_ended()
        before = self.telemetry.before_enqueue()
        self.scheduler.enqueue(session, events)
        self.telemetry.after_enqueue(before)
        if self.on_sample is not None:
            self._last_activity = self.host.now()
            self._ensure_sampling()
        if self.on_delivered is not None:
            # After the scheduler had them: a frame it asked for comes first in
            # the host's frame, so a comparison view drawn there sees what the
            # paced view took of it (the demo: FrameSlices.waits_for_next_frame).
            self.on_delivered(events)

    def _apply(self, session_id: str, events: list[dict]) -> bool:
        if session_id != self.session or self.closed:
            return False  # not shown (any more): the scheduler keeps it queued
        self.renderer.apply(events)
        for event in events:
            if event.get("type") == "RUN_STARTED":
                self.outbox.run_shown()
        if self.on_paced is not None:
            self.on_paced(events)
        return True

    def _report_exception(self, exc: BaseException) -> None:
        text = "".join(traceback.format_exception(exc))
        self.errors.append(text)
        del self.errors[:-50]
        js.console.error("streampace: " + text)
        self.bridge.emit(self.mount, "streampace:error",
                         json.dumps({"where": "frame", "code": "frame_error",
                                     "message": str(exc)}))

    # -- telemetry ---------------------------------------------------------
    def _sample_at_apply(self, now: float) -> None:
        self.telemetry.sample(now)

    def _ensure_sampling(self) -> None:
        """Sampling in frames of its own, for a listener (see __init__)."""
        if not self._sampling and not self.closed:
            self._sampling = True
            self.host.request_frame(self._sample_frame)

    def _sample_frame(self) -> None:
        self._sampling = False
        sample = self.telemetry.sample()
        if self.on_sample is not None:
            self.on_sample(sample)
        now = sample[0]  # the sample's clock read: one FFI call fewer per frame
        if self.scheduler.queued_events() > 0:
            self._last_activity = now
        if now - self._last_activity < _SAMPLE_LINGER_MS:
            self._ensure_sampling()

    def stats(self) -> dict[str, Any]:
        work = list(self.host.frame_work_ms)
        applies = list(self.renderer.apply_ms)
        return {
            "session": self.session,
            "connection": (self.connection.stats() if self.connection is not None
                           else {"state": "none"}),
            "paced": self.pace,
            "reducedMotion": self.reduced_motion,
            "scheduler": self.scheduler.stats(),
            "client": dict(self.client.stats) if self.client else {},
            "outbox": self.outbox.stats(),
            "lastThrough": self.client.last_through if self.client else 0,
            "commits": self.renderer.commits,
            "frames": self.host.frames,
            "frameWorkMs": {"n": len(work), "p50": percentile(work, 50),
                            "p99": percentile(work, 99),
                            "mean": statistics.fmean(work) if work else None},
            "applyMs": {"p50": percentile(applies, 50), "p99": percentile(applies, 99)},
            # The page's scroll followers (every view's): their Python runs in the
            # frame after its layout, outside frameWorkMs.
            "followerMs": follower_ms(),
            "markdownDom": self.renderer.markdown_stats(),
            "maxFrameGraphemes": self.telemetry.max_frame_graphemes,
            "maxLagMs": self.telemetry.max_lag_ms,
            "segmenter": "Intl.Segmenter" if self.segmenter.uses_intl else "Python fallback",
            "segmenterJsCalls": self.segmenter.js_calls,
            "hostErrors": self.host.errors,
            # This view's page warm-up (browser/warm.py): None if another view ran it.
            "warmUp": None if self._warm is None else self._warm.stats(),
            "errors": self.errors[-5:],
        }

    def stats_json(self) -> str:
        return json.dumps(self.stats())

    def start_warm_up(self, bridge: Any = None) -> None:
        """Warm the page's streaming path once per page (browser/warm.py): the
        sample laid out once in this view's mount (its fonts), then a
        throwaway view like this one, on a detached element, fed sample runs
        a step per timer of this view's host. `bridge`: the throwaway view's
        (default this view's; a bridge that tells Python subscribers must not
        be given: the sample's events are nobody's)."""
        from streampace.browser.warm import warm_page_once

        warm_bridge = bridge if bridge is not None else self.bridge

        def make_view(mount: Any, host: Any) -> StreamView:
            return StreamView(warm_bridge, mount, pace=self.pace, host=host,
                              text_format=self.renderer.text_format, scroll=False,
                              announce=self.announce, heading_base="off", labels=self.labels)

        def told(exc: BaseException) -> None:
            js.console.warn("streampace: warm-up stopped: "
                            + "".join(traceback.format_exception(exc)))

        self._warm = warm_page_once(js.document, self.host, make_view, on_error=told,
                                    lay_out=self.renderer.lay_out_sample)

    def close(self) -> None:
        if self.closed:
            return
        if self._warm is not None:
            self._warm.cancel()
        self.disconnect(flush=False)
        self.closed = True
        self.scheduler.clear()
        if self._own_host:
            self.host.close()
        self.renderer.close()
