"""The page's archive holds our sources without comments and docstrings, line for
line (scripts/slim_source.py, used by scripts/setup_runtime's build_zip)."""

from __future__ import annotations

import importlib.util
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from .install_harness import ROOT

SAMPLE = '''"""Module doc,
over two lines."""  # and a comment

from __future__ import annotations

import re  # why re

HASH = "# not a comment"  # a comment
PATTERN = re.compile(r"[#]+")


class Shape:
    """Class doc."""

    sides = 4  # four

    def area(self, side: int) -> int:
        """Method doc
        with more lines.
        """
        # a whole-line comment
        return side * side  # the area


async def later() -> str:
    "single-quoted doc"
    return f"{HASH}#{1 + 1}"


def only_doc() -> None:
    """Nothing but a docstring."""
'''


@pytest.fixture(scope="module")
def slim_source() -> Callable[[str], str]:
    spec = importlib.util.spec_from_file_location("slim_source",
                                                  ROOT / "scripts" / "slim_source.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.slim_source


def _run(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "sample"}
    exec(compile(source, "sample.py", "exec"), namespace)
    return namespace


def test_comments_and_docstrings_go_and_every_line_keeps_its_number(
        slim_source: Callable[[str], str]) -> None:
    slim = slim_source(SAMPLE)
    assert slim.count("\n") == SAMPLE.count("\n")
    for gone in ("Module doc", "and a comment", "why re", "Class doc", "four", "Method doc",
                 "whole-line", "the area", "single-quoted", "Nothing but"):
        assert gone not in slim, gone
    for line in ("    def area(self, side: int) -> int:", "        return side * side",
                 'HASH = "# not a comment"', 'PATTERN = re.compile(r"[#]+")'):
        number = SAMPLE.splitlines().index(next(s for s in SAMPLE.splitlines()
                                                if s.startswith(line)))
        assert slim.splitlines()[number].startswith(line), line
    before, after = _run(SAMPLE), _run(slim)
    assert after["Shape"]().area(3) == before["Shape"]().area(3) == 9
    assert after["HASH"] == "# not a comment" and after["PATTERN"].pattern == "[#]+"
    assert after["Shape"].__doc__ == "" and after["Shape"].area.__doc__ == ""
    assert after["only_doc"]() is None


def test_the_page_archive_holds_the_slim_sources(runtime_laid_out: None,
                                                 slim_source: Callable[[str], str]) -> None:
    with zipfile.ZipFile(ROOT / "vendor" / "streampace.zip") as archive:
        names = archive.namelist()
        for name in ("streampace/markdown/parser.py", "streampace/browser/host.py",
                     "streampace/pacing/scheduler.py"):
            original = (ROOT / "py" / name).read_text(encoding="utf-8")
            assert archive.read(name).decode("utf-8") == slim_source(original), name
        sizes = sum(archive.getinfo(n).file_size for n in names if n.startswith("streampace/"))
    sources = sum(len((ROOT / "py" / n).read_bytes()) for n in names if n.startswith("streampace/"))
    assert sizes < sources * 0.8  # the page's copy is markedly smaller
