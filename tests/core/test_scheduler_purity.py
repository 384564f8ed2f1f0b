"""The core stays sans-IO: it must run unchanged in CPython and in Pyodide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streampace

CORE = sorted(Path(streampace.__file__).parent.glob("*.py"))
FORBIDDEN = {"js", "pyodide", "asyncio", "socket"}


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_core_module_imports_no_io(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    assert not found & FORBIDDEN, f"{path.name} imports {sorted(found & FORBIDDEN)}"


def test_scheduler_stack_imports_without_optional_packages(monkeypatch):
    import importlib
    import sys

    for name in ("regex", "js", "pyodide"):
        monkeypatch.setitem(sys.modules, name, None)
    for mod in ("streampace.events", "streampace.graphemes", "streampace.scheduler",
                "streampace.testing"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
        assert importlib.import_module(mod)
