"""Python API for pages that run their own Python on streampace's runtime.

A PyScript page whose config names our interpreter (`interpreter =
"./js_shim/pyscript.js"`, see pyscript.toml) gets a Python in which streampace
is already imported; from there it mounts paced views and subscribes to what
they show, without JavaScript:

    from streampace.browser.page import mount

    view = mount("#answer", "/ws/sessions/my-session")

    @view.on_text
    def revealed(message_id, delta):        # as the reader sees it, frame by frame
        print(delta, end="")

    @view.on("run-end")
    def ended(detail):
        print("run ended:", detail["status"])

    view.send({"type": "run", "prompt": "Why pace streamed text?"})

`on_text` hears the text as it is revealed, frame by frame (what the reader
sees, not what the network delivered); `on_paced` the same frames as AG-UI
events; `on(name, ...)` the view's events: "message-end", "run-end", "error"
(the details of the embed's DOM events, which still fire), "queue" (the
questions waiting for the current run: {"queued": [...]}) and "status" (the
connection's state: "connecting", "diagnosing", "open", "attached", "waiting",
"closed"; streampace.client.connection). In a frame that ends a message
or a run, its text is told first, then "message-end" / "run-end". A subscriber
that raises is reported on the console and the view goes on.

Any boot of ours (js_shim/boot.js: PyScript through js_shim/pyscript.js, the
embed tag, the demo) registers js_shim/bridge.js as the JS module
`_streampace_bridge`, which this module needs. Without a streampace server
(static files), `mount(..., simulate="fallback")` shows the in-page simulated
model instead, as the demo does.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from streampace.browser.controller import StreamView
from streampace.browser.embed import pacing_config
from streampace.browser.ffi import js, js_bridge, to_js
from streampace.browser.labels import labels_for
from streampace.client.fallback import SourceChoice, SourceState
from streampace.conversation.stream_identity import StreamTracker

__all__ = ["EVENTS", "PageView", "bridge", "mount", "revealed_text"]

# What `PageView.on` accepts; the first three are the embed's DOM events.
EVENTS = ("message-end", "run-end", "error", "status", "queue")
# Emitted while a frame is rendered: told after that frame's text.
_FRAME_EVENTS = ("message-end", "run-end")
_DOM_PREFIX = "streampace:"
_SIMULATE = ("never", "fallback", "always")
_TEXT_TYPES = ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK")
_mounted = 0  # views mounted on this page so far (each one's session key)


def bridge() -> Any:
    """js_shim/bridge.js, as our boot registered it."""
    return js_bridge()


def _element(target: Any) -> Any:
    if isinstance(target, str):
        el = js.document.querySelector(target)
        if el is None:
            raise ValueError(f"streampace: no element matches {target!r}")
        return el
    return target


class _EventBridge:
    """The JS bridge, with the view's DOM events also told to Python subscribers."""

    def __init__(self, js_bridge: Any, dispatch: Callable[[str, dict], None]) -> None:
        self._js = js_bridge
        self._dispatch = dispatch

    def emit(self, el: Any, name: str, detail_json: str) -> None:
        self._js.emit(el, name, detail_json)
        if name.startswith(_DOM_PREFIX):
            # Our own json.dumps of a dict (renderer/controller), not outside input.
            self._dispatch(name[len(_DOM_PREFIX):], json.loads(detail_json) if detail_json else {})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._js, name)


class PageView:
    """One paced view mounted from Python, and its subscribers."""

    def __init__(self, target: Any, *, pace: bool = True, max_lag_ms: Any = None,
                 text_format: str = "markdown", speed: float = 1.0, announce: bool = True,
                 heading_base: Any = "auto", remember: Any = "tab",
                 labels: Any = None) -> None:
        global _mounted
        self._js_bridge = bridge()
        # Where the session the server mints is kept across reloads (the tag's
        # data-remember: "tab", "local", "none" or a Storage-like JS object),
        # under this view's mount order.
        self.remember = remember
        self._slot = _mounted
        _mounted += 1
        self.element = _element(target)
        self.speed = speed
        self._text: list[Callable[[str, str], None]] = []
        self._paced: list[Callable[[list[dict]], None]] = []
        self._handlers: dict[str, list[Callable[[dict], None]]] = {name: [] for name in EVENTS}
        # Which message an id-less chunk continues: the one chunk rule (stream_identity).
        self._streams = StreamTracker()
        self._frame_events: list[tuple[str, dict]] = []
        # With simulate="fallback": the first reports decide the source (client/fallback.py).
        self._choice: SourceChoice | None = None
        self.simulated = False
        # The view's own host: its errors become "error" events.
        self.view = StreamView(_EventBridge(self._js_bridge, self._dispatch), self.element,
                               pace=pace, config=pacing_config(max_lag_ms),
                               text_format=text_format, on_status=self._on_status,
                               on_paced=self._on_paced, announce=announce,
                               heading_base=heading_base,
                               labels=labels_for(str(js.document.documentElement.lang or ""),
                                                 labels))
        # The sample runs' events go to no subscriber: the plain JS bridge.
        self.view.start_warm_up(self._js_bridge)

    # -- subscribing -------------------------------------------------------
    def on_text(self, fn: Callable[[str, str], None]) -> Callable[[str, str], None]:
        """Call `fn(message_id, delta)` for each slice of message text as it is
        revealed. Usable as a decorator."""
        self._text.append(fn)
        return fn

    def on_paced(self, fn: Callable[[list[dict]], None]) -> Callable[[list[dict]], None]:
        """Call `fn(events)` with each frame's paced AG-UI events (text sliced
        at grapheme boundaries), after they were rendered."""
        self._paced.append(fn)
        return fn

    def on(self, name: str, fn: Callable[[dict], None] | None = None) -> Any:
        """Call `fn(detail)` on the view's `name` event (see EVENTS); without
        `fn`, a decorator: `@view.on("run-end")`."""
        if name not in self._handlers:
            raise ValueError(f"streampace: unknown event {name!r}; one of {EVENTS}")
        if fn is None:
            return lambda handler: self.on(name, handler)
        self._handlers[name].append(fn)
        return fn

    # -- the session -------------------------------------------------------
    def connect(self, stream: str | None = None, *, simulate: str = "never") -> PageView:
        """Show the session at `stream` (a path on this origin or a ws:// URL).
        `simulate`: "never"; "fallback" — when no streampace server answers
        (static files), the in-page simulated model instead; "always"."""
        if simulate not in _SIMULATE:
            raise ValueError(f"simulate: one of {_SIMULATE}")
        if simulate == "always":
            self._use_simulation()
            return self
        if stream is None:
            raise ValueError("streampace: connect() needs a stream (or simulate='always')")
        options: dict[str, Any] = {}
        if simulate == "fallback":
            # Ask this page's server first: on static files no WebSocket is tried.
            options = {"retryBeforeOpen": False, "probeUrl": str(js.location.href)}
        self._choice = SourceChoice() if simulate == "fallback" else None
        self.simulated = False
        options["rememberKey"] = self._js_bridge.sessionKey(stream, self._slot)
        js_options = to_js(options, dict_converter=js.Object.fromEntries)
        # Set after the conversion: a JS store object must stay itself.
        js_options.remember = self._js_bridge.sessionStore(self.remember)
        socket = self._js_bridge.openSession(stream, js_options)
        self.view.connect(socket)
        return self

    def send(self, message: dict) -> dict[str, Any]:
        """A client message, e.g. {"type": "run", "prompt": "…"} or {"type": "cancel"}.
        Returns what happened to it, as `streampace.send()`'s promise settles:
        {"status": "accepted" | "queued" | "refused", "id", ...}; a `run` asked
        while one is in progress waits below the conversation and goes out when
        that run ends (streampace.browser.outbox)."""
        return self.view.send(message)

    def withdraw(self, message_id: str) -> bool:
        """Take back a queued question that was not sent yet."""
        return self.view.withdraw(message_id)

    def queued(self) -> list[dict[str, Any]]:
        """The questions waiting for the current run to end."""
        return self.view.queued()

    def flush(self) -> None:
        """Reveal everything queued now."""
        self.view.flush()

    def disconnect(self) -> None:
        self.view.disconnect()

    def stats(self) -> dict[str, Any]:
        return self.view.stats()

    def close(self) -> None:
        """Remove the view: its socket closed, its proxies, listeners, frames and
        timers freed (the page's frame loop too, when it was the last view)."""
        socket = self.view.socket
        self.view.close()
        if self.simulated and socket is not None:
            socket.close()
        self._text.clear()
        self._paced.clear()
        for handlers in self._handlers.values():
            handlers.clear()

    destroy = close  # the name the JS handles use

    # -- internals ---------------------------------------------------------
    def _use_simulation(self) -> None:
        from streampace.client.page_socket import SimulatedSession

        self.simulated = True
        session_id = f"page-{int(js.performance.now() * 1000) % 1_000_000_000}"
        self.view.switch_session(SimulatedSession(self.view.host, session_id, speed=self.speed))

    def _on_status(self, state: str, detail: dict) -> None:
        if (self._choice is not None
                and self._choice.report(state, detail) is SourceState.SIMULATION):
            # Deferred: the socket's own callback is still on the stack.
            self.view.host.request_timeout(self._use_simulation, 0)
        self._dispatch("status", {"state": state, **detail})

    def _on_paced(self, events: list[dict]) -> None:
        for paced in self._paced:
            self._call(paced, events)
        if self._text:
            self._tell_text(events)
        told, self._frame_events = self._frame_events, []
        for name, detail in told:
            self._tell(name, detail)

    def _tell_text(self, events: list[dict]) -> None:
        for message_id, delta in revealed_text(self._streams, events):
            for fn in self._text:
                self._call(fn, message_id, delta)

    def _dispatch(self, name: str, detail: dict) -> None:
        if name in _FRAME_EVENTS:
            self._frame_events.append((name, detail))  # told by _on_paced, after the text
        else:
            self._tell(name, detail)

    def _tell(self, name: str, detail: dict) -> None:
        for fn in self._handlers.get(name, ()):
            self._call(fn, detail)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - a subscriber must not stop the view
            self._report(exc)

    def _report(self, exc: BaseException) -> None:
        js.console.error("streampace: " + "".join(traceback.format_exception(exc)))


def revealed_text(streams: StreamTracker, events: list[dict]) -> Iterator[tuple[str, str]]:
    """``(message id, text)`` for each slice of message text in ``events``, the
    message resolved by ``streams`` — the one chunk rule (stream_identity), so an
    id-less chunk is told as the message the view shows it in."""
    for event in events:
        # Every event steps the tracker: other events end a chunk stream.
        stream = streams.step(event).stream
        if event.get("type") not in _TEXT_TYPES or stream is None:
            continue
        delta = event.get("delta")
        if isinstance(delta, str) and delta:
            yield stream.id, delta


def mount(target: Any, stream: str | None = None, *, simulate: str = "never",
          pace: bool = True, max_lag_ms: Any = None, text_format: str = "markdown",
          speed: float = 1.0, announce: bool = True, heading_base: Any = "auto",
          remember: Any = "tab", labels: Any = None) -> PageView:
    """Mount a paced view in `target` (a CSS selector or an element) and, with
    `stream`, show that session (see `PageView.connect` for `simulate`).
    `max_lag_ms` and `text_format` are the embed's `data-max-lag` and
    `data-format`; `announce` and `heading_base` its `data-announce` (a live
    region saying the answer) and `data-heading-base` ("auto", "off", 1-6);
    `remember` and `labels` its `data-remember` and `data-labels` (a dict
    here); `speed` speeds up the simulated model."""
    view = PageView(target, pace=pace, max_lag_ms=max_lag_ms, text_format=text_format,
                    speed=speed, announce=announce, heading_base=heading_base,
                    remember=remember, labels=labels)
    if stream is not None or simulate == "always":
        view.connect(stream, simulate=simulate)
    return view
