"""Stream text must only ever reach the DOM as text: no HTML sinks in page code."""

from __future__ import annotations

import re

from .browser_harness import ROOT

# Assignments/calls only, so prose that names them does not count.
SINKS = re.compile(
    r"\.(?:innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML\s*\(|document\.write(?:ln)?\s*\("
    r"|createContextualFragment\s*\(|DOMParser\s*\("
)


def page_sources() -> list:
    files = [*ROOT.joinpath("py").rglob("*.py"), *ROOT.joinpath("js_shim").rglob("*.js"),
             *ROOT.joinpath("demo").rglob("*.js"), *ROOT.joinpath("demo").rglob("*.py"),
             *ROOT.joinpath("examples").rglob("*.js")]
    return [p for p in files if "__pycache__" not in p.parts]


def test_page_code_has_no_html_sinks() -> None:
    sources = page_sources()
    assert {"renderer.py", "demo.py", "demo.js"} <= {p.name for p in sources}
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
            for p in sources
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if SINKS.search(line)]
    assert hits == []


def test_sink_pattern_catches_the_usual_forms() -> None:
    for bad in ("el.innerHTML = x", "el.outerHTML += y", "el.insertAdjacentHTML('beforeend', s)",
                "document.write(s)", "range.createContextualFragment(s)"):
        assert SINKS.search(bad), bad
    assert not SINKS.search("# never use innerHTML here")
