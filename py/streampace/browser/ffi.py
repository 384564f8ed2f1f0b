"""The browser adapter's one door to the page: `js` and `pyodide.ffi`.

Every module of `streampace.browser` takes `js`, `create_proxy`, `to_js`,
`JsProxy` and `JsNull` from here, and nothing else in the package imports them
(tests/core/test_browser_ffi.py checks). In the page (`IN_BROWSER`: Pyodide,
on Emscripten) they are Pyodide's own. Anywhere else the import is skipped, as
Pyodide's `ffi/wrappers.py` imports `js` only `if IN_BROWSER`, so the browser
modules still import in CPython (tests, tools, type checks): `js` and the
functions become stand-ins that raise `BrowserOnly`, naming what needs the page,
on first use, and `JsProxy` / `JsNull` classes no value is an instance of.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

__all__ = ["IN_BROWSER", "BrowserOnly", "JsNull", "JsProxy", "create_proxy", "js",
           "js_bridge", "to_js"]

IN_BROWSER = sys.platform == "emscripten"


class BrowserOnly(RuntimeError):
    """Page-only code (the DOM, proxies) was used outside the page."""


class _Absent:
    """What a page-only object is outside the page: any use raises `BrowserOnly`."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> NoReturn:
        raise BrowserOnly(f"{self._name}.{attr} exists only in the page (Pyodide)")

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise BrowserOnly(f"{self._name}() exists only in the page (Pyodide)")

    def __repr__(self) -> str:
        return f"<{self._name}: only in the page>"


class _NoJsValue:
    """Outside the page no value comes from JavaScript: isinstance is always False."""


js: Any
create_proxy: Any
to_js: Any
JsProxy: Any
JsNull: Any
if IN_BROWSER:
    js = importlib.import_module("js")
    _ffi = importlib.import_module("pyodide.ffi")
    create_proxy, to_js = _ffi.create_proxy, _ffi.to_js
    JsProxy, JsNull = _ffi.JsProxy, _ffi.JsNull
else:
    js = _Absent("js")
    create_proxy = _Absent("pyodide.ffi.create_proxy")
    to_js = _Absent("pyodide.ffi.to_js")
    JsProxy = JsNull = _NoJsValue


def js_bridge() -> Any:
    """js_shim/bridge.js, which every boot of ours (js_shim/boot.js, and the
    benches' harness pages) registers as the JS module `_streampace_bridge`."""
    try:
        import _streampace_bridge  # type: ignore[import-not-found]
    except ImportError:
        raise RuntimeError(
            "streampace needs the page booted by streampace (PyScript with interpreter = "
            "'…/js_shim/pyscript.js', or the embed tag), which registers js_shim/bridge.js "
            "as the JS module '_streampace_bridge'") from None
    return _streampace_bridge
