"""Entry point for js_shim/streampace.js: mount a paced view on an element."""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsNull

from streampace.browser.controller import StreamView
from streampace.pacing.scheduler import PacingConfig

__all__ = ["pacing_config", "start"]


def pacing_config(max_lag_ms: Any = None) -> PacingConfig:
    """The default law with the knob from the tag ("auto", "", None: automatic)."""
    # JS null/undefined arrive as None or as Pyodide's jsnull: automatic too.
    if (not isinstance(max_lag_ms, (str, int, float))
            or str(max_lag_ms).strip().lower() in ("", "auto")):
        return PacingConfig()
    try:
        value = float(max_lag_ms)
    except (TypeError, ValueError):
        raise ValueError(
            f"data-max-lag: expected milliseconds or 'auto', got {max_lag_ms!r}") from None
    return PacingConfig(max_lag_ms=value)


def start(bridge: Any, target: Any, socket: Any = None, pace: bool = True,
          max_lag_ms: Any = None, text_format: str = "markdown",
          scroll: bool = True, announce: bool = True,
          heading_base: Any = "auto") -> StreamView:
    """Create the view in `target`; attach `socket` (opened and buffering since
    before Python booted) so everything it received is shown, in order.

    Without a socket (a JS `null` arrives as `JsNull`) the view is mounted and
    waits for `StreamView.connect`.  `max_lag_ms` (the tag's `data-max-lag`):
    the pacing law's one knob, the most any grapheme may trail its arrival;
    None or "auto" = automatic. `text_format` ("markdown" or "text") is how
    assistant messages are shown. `scroll` (the tag's `data-scroll`, off with
    "off"): keep the newest text in sight while the reader is at the bottom.
    `announce` (`data-announce`, off with "off"): say the answer in a polite live
    region as it becomes readable. `heading_base` (`data-heading-base`): the
    level of the answer's top headings, "auto" (one below the page's heading
    before the view), "off" (as written) or 1-6."""
    view = StreamView(bridge, target, pace=bool(pace), config=pacing_config(max_lag_ms),
                      text_format=str(text_format or "markdown"), scroll=bool(scroll),
                      announce=bool(announce), heading_base=heading_base)
    if socket is not None and not isinstance(socket, JsNull):
        view.connect(socket)
    return view
