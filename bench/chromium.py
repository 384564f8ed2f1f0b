"""Headless Debian Chromium for the browser benchmarks (boot and per-frame).

Always /usr/bin/chromium with /usr/bin/chromedriver: Selenium Manager is kept
from downloading a browser or driver of its own. The background-networking
flags matter here: without them Chromium keeps trying hosts this machine
cannot reach.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic", "--window-size=1000,800",
)


@contextlib.contextmanager
def chromium(prefix: str = "streampace-bench-",
             script_timeout_s: float | None = None) -> Iterator[Any]:
    """A headless Chromium with a fresh profile, so its first load is a cold boot."""
    os.environ.setdefault("SE_MANAGER_PATH", "/nonexistent/selenium-manager-disabled")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix=prefix) as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        if script_timeout_s is not None:
            driver.set_script_timeout(script_timeout_s)
        try:
            yield driver
        finally:
            driver.quit()
