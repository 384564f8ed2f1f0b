"""browser/ffi.py is the adapter's one import of `js` / `pyodide.ffi`, and the
browser modules import in CPython (their page-only parts fail clearly when used)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
import streampace.browser
from streampace.browser import ffi

_BROWSER = Path(streampace.browser.__file__).parent
MODULES = sorted(p for p in _BROWSER.glob("*.py") if p.name != "__init__.py")
DEMO = Path(__file__).resolve().parents[2] / "demo" / "demo.py"  # the demo page's Python
PAGE_ONLY = {"js", "pyodide"}


def _imported_roots(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # nested imports too
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", [*MODULES, DEMO], ids=lambda p: p.name)
def test_only_ffi_imports_the_page(path: Path) -> None:
    roots = _imported_roots(path)
    assert not roots & PAGE_ONLY, f"{path.name} imports {sorted(roots & PAGE_ONLY)}"


def test_ffi_reaches_pyodide_only_through_its_guarded_import() -> None:
    source = (_BROWSER / "ffi.py").read_text(encoding="utf-8")
    assert 'import_module("js")' in source and 'import_module("pyodide.ffi")' in source
    assert not ffi.IN_BROWSER


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_browser_module_imports_in_cpython(path: Path) -> None:
    assert importlib.import_module(f"streampace.browser.{path.stem}")


def test_page_only_names_say_so_when_used_outside_the_page() -> None:
    with pytest.raises(ffi.BrowserOnly, match=r"js\.document exists only in the page"):
        _ = ffi.js.document
    with pytest.raises(ffi.BrowserOnly, match=r"create_proxy\(\) exists only in the page"):
        ffi.create_proxy(print)
    with pytest.raises(ffi.BrowserOnly):
        ffi.to_js({})
    assert not isinstance(None, ffi.JsNull) and not isinstance(object(), ffi.JsProxy)


def test_the_renderer_refuses_to_start_outside_the_page() -> None:
    from streampace.browser.renderer import DomRenderer

    with pytest.raises(ffi.BrowserOnly):
        DomRenderer(object(), object(), text_format="text")
