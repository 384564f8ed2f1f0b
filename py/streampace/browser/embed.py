"""Entry point for js_shim/streampace.js: mount a paced view on an element."""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsNull

from streampace.browser.controller import StreamView

__all__ = ["start"]


def start(bridge: Any, target: Any, socket: Any = None, pace: bool = True) -> StreamView:
    """Create the view in `target`; attach `socket` (opened and buffering since
    before Python booted) so everything it received is shown, in order.

    Without a socket (a JS `null` arrives as `JsNull`) the view is mounted and
    waits for `StreamView.connect`."""
    view = StreamView(bridge, target, pace=bool(pace))
    if socket is not None and not isinstance(socket, JsNull):
        view.connect(socket)
    return view
