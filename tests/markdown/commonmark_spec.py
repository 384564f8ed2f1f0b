"""The CommonMark spec examples, fetched from the markdown-it-py sdist, and a runner.

The spec (CC-BY-SA) is not vendored: on first use `pip download` fetches the
sdist of the installed markdown-it-py version from PyPI and its
`tests/test_cmark_spec/commonmark.json` is cached as
`vendor/commonmark-spec.json` (vendor/ is not committed).

Comparison normalises both sides the way cmark's own spec runner does with
`--normalize`: whitespace around block tags is dropped, runs of whitespace
collapse (except inside <pre>), attributes are sorted. Our additions are
removed before comparing: `rel="noopener noreferrer nofollow"` on links.

Run as a script to print the per-section table for docs/markdown.md:
    .venv/bin/python tests/markdown/commonmark_spec.py
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "vendor" / "commonmark-spec.json"
MEMBER = "tests/test_cmark_spec/commonmark.json"
# Shown as text by design (raw HTML is never rendered): excluded from the target.
EXCLUDED_SECTIONS = frozenset({"HTML blocks", "Raw HTML"})
# Also out of the target: images (issue 19 counts "outside raw HTML and images").
IMAGES = "Images"
OUR_REL = "noopener noreferrer nofollow"
# A piece of raw HTML in an example's source (tag, comment, processing instruction,
# declaration, CDATA).  Only run on the spec's own examples, never on stream text.
_RAW_HTML = re.compile(
    r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--.*?-->|<\?.*?\?>|<![A-Z][^>]*>"
    r"|<!\[CDATA\[.*?\]\]>", re.S)
_BLOCK = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "hr",
    "table", "thead", "tbody", "tr", "th", "td", "div",
}


def load_examples() -> list[dict]:
    if not CACHE.is_file():
        pkg = version("markdown-it-py")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                 ":all:", f"markdown-it-py=={pkg}", "-d", tmp],
                check=True,
            )
            sdist = next(Path(tmp).glob("*.tar.gz"))
            with tarfile.open(sdist) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith(MEMBER))
                file = tar.extractfile(member)
                assert file is not None, member.name
                data = file.read()
        CACHE.parent.mkdir(exist_ok=True)
        CACHE.write_bytes(data)
    return json.loads(CACHE.read_text(encoding="utf-8"))


class _Normaliser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.pre = 0

    def _tag(self, tag: str, attrs: list, close: str = "") -> str:
        kept = sorted((k, v or "") for k, v in attrs if not (k == "rel" and v == OUR_REL))
        return "<" + tag + "".join(f' {k}="{v}"' for k, v in kept) + close + ">"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self.pre += 1
        self._block_trim(tag)
        self.out.append(self._tag(tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._block_trim(tag)
        self.out.append(self._tag(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self.pre -= 1
        self._block_trim(tag)
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if not self.pre:
            data = " ".join(data.split()) if data.strip() else (" " if data else "")
            if self.out and self.out[-1].endswith(" ") and data.startswith(" "):
                data = data[1:]
        self.out.append(data.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))

    def _block_trim(self, tag: str) -> None:
        if tag in _BLOCK and not self.pre and self.out and not self.out[-1].startswith("<"):
            self.out[-1] = self.out[-1].rstrip()
        if tag in _BLOCK:
            self._after_block = True

    def result(self) -> str:
        text = "".join(self.out)
        # Whitespace right after a block tag (outside <pre>) does not matter.
        for tag in _BLOCK:
            if tag != "pre":
                text = text.replace(f"<{tag}> ", f"<{tag}>").replace(f"</{tag}> ", f"</{tag}>")
        return text.strip()


def normalise(html: str) -> str:
    parser = _Normaliser()
    parser.feed(html)
    parser.close()
    return parser.result()


def run(render: Callable[[str], str]) -> tuple[Counter, Counter, list[dict]]:
    """(passed per section, total per section, failing examples) for `render`."""
    passed: Counter = Counter()
    total: Counter = Counter()
    failing = []
    for ex in load_examples():
        total[ex["section"]] += 1
        if normalise(render(ex["markdown"])) == normalise(ex["html"]):
            passed[ex["section"]] += 1
        else:
            failing.append(ex)
    return passed, total, failing


def passes_raw_html(example: dict) -> bool:
    """The spec expects a piece of the source's raw HTML in its output verbatim
    (we never render raw HTML: it is shown as text by design)."""
    return any(m.group() in example["html"] for m in _RAW_HTML.finditer(example["markdown"]))


def outside_raw_html_and_images(render: Callable[[str], str]) -> tuple[int, int]:
    """(passed, examples) over the examples that need neither raw HTML passed
    through nor images — issue 19's measure, by what each example needs rather
    than by the section it sits in."""
    ok = n = 0
    for ex in load_examples():
        if ex["section"] in EXCLUDED_SECTIONS or ex["section"] == IMAGES or passes_raw_html(ex):
            continue
        n += 1
        ok += normalise(render(ex["markdown"])) == normalise(ex["html"])
    return ok, n


def summary(passed: Counter, total: Counter) -> tuple[int, int]:
    counted = [s for s in total if s not in EXCLUDED_SECTIONS]
    return sum(passed[s] for s in counted), sum(total[s] for s in counted)


def main() -> None:
    sys.path.insert(0, str(ROOT / "py"))
    from streampace.markdown import render_html

    def render(text: str) -> str:
        return render_html(text, allow_images=True)

    passed, total, failing = run(render)
    print("| section | passed | examples |\n|---|---|---|")
    for section in sorted(total):
        note = " (shown as text by design)" if section in EXCLUDED_SECTIONS else ""
        print(f"| {section}{note} | {passed[section]} | {total[section]} |")
    ok, n = summary(passed, total)
    print(f"\noutside HTML blocks / Raw HTML: {ok} / {n} = {100 * ok / n:.1f} %")
    print(f"all sections: {sum(passed.values())} / {sum(total.values())}")
    ok2, n2 = outside_raw_html_and_images(render)
    print(f"examples needing neither raw HTML nor images: {ok2} / {n2} = {100 * ok2 / n2:.1f} %")
    if "-v" in sys.argv:
        for ex in failing:
            if ex["section"] not in EXCLUDED_SECTIONS:
                print(f"--- {ex['example']} {ex['section']}\n{ex['markdown']!r}\n"
                      f"want {ex['html']!r}\ngot  {render(ex['markdown'])!r}")


if __name__ == "__main__":
    main()
