"""Entry point for js_shim/streampace.js: mount a paced view on an element."""

from __future__ import annotations

from typing import Any

from streampace.browser.controller import StreamView

__all__ = ["start"]


def start(bridge: Any, target: Any, socket: Any = None, pace: bool = True) -> StreamView:
    """Create the view in `target`; attach `socket` (opened and buffering since
    before Python booted) so everything it received is shown, in order."""
    view = StreamView(bridge, target, pace=bool(pace))
    if socket is not None:
        view.connect(socket)
    return view
