"""The core stays sans-IO: it must run unchanged in CPython and in Pyodide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streampace

_ROOT = Path(streampace.__file__).parent
# The root modules and every sans-IO layer (the simulated model runs in the page too).
SANS_IO_PACKAGES = ("conversation", "pacing", "session", "markdown", "sim")
CORE = sorted([*_ROOT.glob("*.py"),
               *(p for pkg in SANS_IO_PACKAGES for p in (_ROOT / pkg).rglob("*.py"))])
FORBIDDEN = {"js", "pyodide", "asyncio", "socket"}


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(_ROOT).as_posix())
def test_core_module_imports_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    assert not found & FORBIDDEN, f"{path.name} imports {sorted(found & FORBIDDEN)}"


def test_scheduler_stack_imports_without_optional_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    for name in ("regex", "js", "pyodide"):
        monkeypatch.setitem(sys.modules, name, None)
    for mod in ("streampace.conversation.events", "streampace.pacing.graphemes",
                "streampace.pacing.scheduler", "streampace.testing", "streampace.session.framing",
                "streampace.session.protocol", "streampace.sim.timed_model"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
        assert importlib.import_module(mod)
