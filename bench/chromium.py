"""Headless Debian Chromium for the browser benchmarks (boot and per-frame).

Always /usr/bin/chromium with /usr/bin/chromedriver (bench/engines.py, which
also makes the Firefox and WebKit drivers): Selenium Manager is kept from
downloading a browser or driver of its own. The background-networking flags
matter here: without them Chromium keeps trying hosts this machine cannot reach.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from bench.engines import CHROMEDRIVER, CHROMIUM, browser

__all__ = ["CHROMEDRIVER", "CHROMIUM", "chromium"]


@contextlib.contextmanager
def chromium(prefix: str = "streampace-bench-",
             script_timeout_s: float | None = None) -> Iterator[Any]:
    """A headless Chromium with a fresh profile, so its first load is a cold boot."""
    with browser("chromium", prefix, script_timeout_s) as driver:
        yield driver
