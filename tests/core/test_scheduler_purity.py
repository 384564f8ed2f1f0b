"""The core stays sans-IO: it must run unchanged in CPython and in Pyodide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streampace

_ROOT = Path(streampace.__file__).parent
# The flat core modules and the sans-IO session parts the server and the page share.
CORE = sorted([*_ROOT.glob("*.py"), *(_ROOT / "session").glob("*.py")])
FORBIDDEN = {"js", "pyodide", "asyncio", "socket"}


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(_ROOT).as_posix())
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
                "streampace.testing", "streampace.session.framing",
                "streampace.session.protocol", "streampace.session.sim_model"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
        assert importlib.import_module(mod)
