"""The headless store (`streampace.createStore`): paced state without a DOM view.

A `StoreView` is a `StreamView` — the same connection, client, scheduler and
frame loop as the DOM view — whose batches go to a `SnapshotSink` instead of
the `DomRenderer`: the sans-IO `StoreModel` (conversation/paced_store.py)
folds them, and at most once per animation frame what changed is handed to
the JS store (js_shim/store.js) as one JSON patch, from which it makes the new
frozen snapshot and calls its listeners. Nothing is added to the page.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from streampace.browser.controller import StreamView
from streampace.browser.embed import pacing_config
from streampace.browser.ffi import JsNull
from streampace.conversation.paced_store import StoreModel

__all__ = ["SnapshotSink", "StoreView", "start"]


class SnapshotSink:
    """The store's "renderer": the paced batches into the snapshot model, published
    to `js_store._commit(patchJson)` at most once per animation frame — in the
    frame whose drain changed it, or (a change outside a frame: connection,
    flush) in the next one."""

    def __init__(self, js_store: Any, host: Any) -> None:
        self.model = StoreModel()
        self._js_store = js_store
        self._host = host
        self._frame: int | None = None
        self._published_frame = -1
        self.commits = 0
        self.publishes = 0
        self.apply_ms: deque[float] = deque(maxlen=4096)
        self.closed = False

    # -- the renderer interface StreamView uses -------------------------------
    def apply(self, events: list[dict]) -> None:
        t0 = self._host.now()
        if self.model.apply(events):
            self.commits += 1
            self._changed()
        self.apply_ms.append(self._host.now() - t0)

    def reset(self) -> None:
        self.model.reset()
        self._changed()

    def show_connection(self, state: str, text: str) -> None:
        # The problem comes with the status report (StoreView._status); a view
        # that stops showing a session has none.
        if state == "none":
            self.model.set_connection(state, None)
            self._changed()

    def set_connection(self, state: str, problem: dict | None) -> None:
        self.model.set_connection(state, problem)
        self._changed()

    def show_queue(self, queued: list[dict[str, Any]]) -> None:
        """The questions waiting for the current run (browser/outbox.py): the
        snapshot's `queued`, published with the next frame's changes."""
        self.model.set_queued(queued)
        self._changed()

    def markdown_stats(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        self.closed = True
        if self._frame is not None:
            self._host.cancel_frame(self._frame)
            self._frame = None
        self._js_store = None

    # -- publishing --------------------------------------------------------
    def _changed(self) -> None:
        if self.closed:
            return
        host = self._host
        if host.in_frame and self._published_frame != host.frames:
            self._publish()
        elif self._frame is None:
            self._frame = host.request_frame(self._on_frame)

    def _on_frame(self) -> None:
        self._frame = None
        self._publish()

    def _publish(self) -> None:
        patch = self.model.take_patch()
        if patch is None or self._js_store is None:
            return
        self._published_frame = self._host.frames
        self.publishes += 1
        self._js_store._commit(json.dumps(patch, ensure_ascii=False))


class StoreView(StreamView):
    """A paced session with no DOM view; `js_store` gets the snapshots and,
    being an EventTarget, the `streampace:error` events."""

    def __init__(self, bridge: Any, js_store: Any, **options: Any) -> None:
        super().__init__(bridge, js_store, on_status=self._status, scroll=False, **options)

    def _make_renderer(self, *, label: str, text_format: str, scroll: bool) -> Any:
        return SnapshotSink(self.mount, self.host)

    def _status(self, state: str, detail: dict) -> None:
        self.renderer.set_connection(state, detail.get("problem"))

    def snapshot_json(self) -> str:
        """The current snapshot, whole (tests, and a store's first read)."""
        return json.dumps(self.renderer.model.snapshot.record(), ensure_ascii=False)


def start(bridge: Any, js_store: Any, socket: Any = None, pace: bool = True,
          max_lag_ms: Any = None, text_format: str = "markdown") -> StoreView:
    """A store for `js_store` (js_shim/store.js); attach `socket` if given (a JS
    null arrives as JsNull). `text_format` is kept for the host to read: the
    snapshot's text is always the source text."""
    view = StoreView(bridge, js_store, pace=bool(pace), config=pacing_config(max_lag_ms),
                     text_format=str(text_format or "markdown"))
    if socket is not None and not isinstance(socket, JsNull):
        view.connect(socket)
    return view
