"""Entry point for js_shim/streampace.js: mount a paced view on an element."""

from __future__ import annotations

import json
from typing import Any

from streampace.browser.controller import StreamView
from streampace.browser.ffi import JsNull, js
from streampace.browser.labels import labels_for
from streampace.pacing.scheduler import PacingConfig

__all__ = ["pacing_config", "start", "view_labels"]


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


def view_labels(bridge: Any, target: Any, overrides: Any) -> dict[str, str]:
    """The view's words in the page's language with the page's `overrides`; bad
    overrides are reported (`streampace:error`, where "options") and the shipped
    words stay."""
    lang = str(js.document.documentElement.lang or "")
    if not isinstance(overrides, str):
        overrides = None  # undefined / null: none
    try:
        return labels_for(lang, overrides)
    except ValueError as exc:
        js.console.error(f"streampace: {exc}")
        bridge.emit(target, "streampace:error", json.dumps(
            {"where": "options", "code": "bad_labels", "message": str(exc)}))
        return labels_for(lang)


def start(bridge: Any, target: Any, socket: Any = None, pace: bool = True,
          max_lag_ms: Any = None, text_format: str = "markdown",
          scroll: bool = True, announce: bool = True,
          heading_base: Any = "auto", labels: Any = None) -> StreamView:
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
    before the view), "off" (as written) or 1-6. `labels` (the tag's
    `data-labels`, JSON): the view's words the page replaces."""
    view = StreamView(bridge, target, pace=bool(pace), config=pacing_config(max_lag_ms),
                      text_format=str(text_format or "markdown"), scroll=bool(scroll),
                      announce=bool(announce), heading_base=heading_base,
                      labels=view_labels(bridge, target, labels))
    if socket is not None and not isinstance(socket, JsNull):
        view.connect(socket)
    view.start_warm_up()
    return view
