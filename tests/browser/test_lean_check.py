"""js_shim/lean_check.js: `instanceof PyProxy` replaced at boot by a test that
allocates nothing, in every engine, only where it answers as Pyodide's own.

What it saves is a bench figure (`python -m bench.ffi_glue`: the JS allocated
over an answer); here: that it is installed, that it says what Pyodide's own
test says of Python objects of every kind and of JS values, and that a
Pyodide whose test it would not match keeps its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from .browser_harness import BOOT_TIMEOUT_S, wait_for

pytestmark = pytest.mark.browser

# Python objects of every kind a proxy is made for: callables of each sort,
# containers, iterators, awaitables, buffers, a module, a class and an instance.
_PYTHON = """
import asyncio, sys

class Plain:
    pass

class Called:
    def __call__(self):
        return 1

def gen():
    yield 1

class Waits:
    def __await__(self):
        yield

async def agen():
    yield 1

[len, lambda x: x, Plain, Plain(), Called(), Plain.__init__, [1, 2], (1, 2), {"a": 1},
 {1, 2}, gen(), iter([1]), Waits(), agen(), bytearray(b"ab"), memoryview(b"ab"), sys,
 asyncio.sleep, object(), range(3), "text".upper, dict.fromkeys]
"""

_CALL_JS = """
const done = arguments[arguments.length - 1];
const [name, arg] = [arguments[0], arguments[1]];
Promise.resolve().then(() => window.__leanCheck[name](arg)).then(done,
  (err) => done({ error: String(err) + " " + String(err && err.stack) }));
"""


@pytest.fixture(scope="module")
def booted(driver: Any, page_server: Any) -> None:
    driver.get(page_server.url("/tests/browser/pages/stream.html?sid=lean"))
    wait_for(driver, "return !!(window.__rec && window.__rec.ready)", BOOT_TIMEOUT_S)
    driver.execute_script(
        "const s = document.createElement('script'); s.type = 'module';"
        " s.src = '/tests/browser/pages/lean-check.js'; document.head.append(s);")
    wait_for(driver, "return !!window.__leanCheck")


@pytest.mark.engines
def test_the_lean_check_is_installed_and_answers_as_pyodides_own(driver: Any,
                                                                 booted: None) -> None:
    got = driver.execute_async_script(_CALL_JS, "compare", _PYTHON)
    assert "error" not in got, got.get("error")
    assert got["installed"] and got["marked"] == 1, got
    proxies = got["proxies"]
    assert proxies == 22
    for index, lean, original, api in got["rows"]:
        assert lean == original == api, f"value {index}: lean {lean}, Pyodide's {original}"
        # The Python objects, the list and the globals, the destroyed proxy: proxies;
        # everything after them is a JS value.
        assert lean is (index < proxies + 3), index
    # Pyodide's narrower classes (their own tests call the replaced one) still tell
    # a proxy with a length from one without.
    assert got["lengths"] == [True, False]


def test_a_pyodide_whose_own_check_differs_keeps_it(driver: Any, booted: None) -> None:
    got = driver.execute_async_script(_CALL_JS, "declines", None)
    assert "error" not in got, got.get("error")
    assert got == {"installed": False, "kept": True}
