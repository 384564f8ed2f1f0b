"""Syntax highlighting: token classes per language, incremental and linear."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from streampace.browser.markdown_dom import MarkdownView
from streampace.markdown import MarkdownStream, render_html
from streampace.markdown.highlight import LANGUAGES, LINE_CAP, Highlighter, highlight, language_of
from streampace.markdown.tree import text_of

from .fake_dom import FakeDocument, element, inner_html
from .test_markdown_hostile import calls

SAMPLES = {
    "python": ('@dataclass\ndef f(x: int) -> str:\n    """doc\n    more"""\n'
               '    return f"{x}" if x > 0x1F else None  # note\n',
               {("m", "@dataclass"), ("k", "def"), ("f", "f"), ("t", "int"), ("k", "return"),
                ("s", '"""doc'), ("n", "0x1F"), ("l", "None"), ("c", "# note")}),
    "javascript": ("const a = `x\n${y}`; // c\nfunction g() { return null }\n/* b\n c */",
                   {("k", "const"), ("s", "`x"), ("c", "// c"), ("k", "function"),
                    ("f", "g"), ("l", "null"), ("c", "/* b")}),
    "json": ('{"key": "v", "n": -1.5e3, "ok": true, "z": null}',
             {("a", '"key"'), ("s", '"v"'), ("n", "1.5e3"), ("l", "true"), ("l", "null")}),
    "shell": ("# setup\nexport PATH=$HOME/bin:${PATH}\necho \"hi $USER\" | grep -q x\n",
              {("c", "# setup"), ("k", "export"), ("v", "$HOME"), ("v", "${PATH}"),
               ("t", "echo"), ("s", '"hi $USER"'), ("t", "grep")}),
    "html": ('<!-- c -->\n<a href="/x" class=\'y\'>t &amp; u</a>\n<br/>',
             {("c", "<!-- c -->"), ("g", "<a"), ("a", "href"), ("s", '"/x"'),
              ("l", "&amp;"), ("g", "</a"), ("g", "<br/")}),
    "css": ("@media screen {\n  .a > b { color: #fff; margin: 0 auto; } /* c */\n}",
            {("m", "@media"), ("a", "color"), ("n", "0"), ("c", "/* c */")}),
    "sql": ("SELECT id, count(*) FROM t WHERE name = 'x' -- c\n",
            {("k", "SELECT"), ("t", "count"), ("k", "FROM"), ("s", "'x'"), ("c", "-- c")}),
    "rust": ('fn main() {\n    let v: Vec<u8> = vec![1, 2];\n    println!("{}", v.len());\n}',
             {("k", "fn"), ("f", "main"), ("k", "let"), ("t", "Vec"), ("t", "u8"),
              ("f", "vec!"), ("f", "println!"), ("s", '"{}"')}),
    "go": ('package main\nfunc main() {\n\ts := `raw\nstr`\n\tfmt.Println(s, nil)\n}',
           {("k", "package"), ("k", "func"), ("s", "`raw"), ("f", "Println"),
            ("l", "nil")}),
    "c": ('#include <stdio.h>\nint main(void) {\n  printf("%d\\n", 42); /* x */\n}',
          {("m", "#include <stdio.h>"), ("t", "int"), ("t", "void"), ("f", "printf"),
           ("s", '"%d\\n"'), ("n", "42"), ("c", "/* x */")}),
    "java": ('@Override\npublic static void main(String[] a) { return; }',
             {("m", "@Override"), ("k", "public"), ("t", "void"), ("t", "String")}),
    "yaml": ("# c\nname: app\nitems:\n  - key: 1\n    on: true\n",
             {("c", "# c"), ("a", "name"), ("a", "items"), ("a", "key"), ("n", "1"),
              ("l", "true")}),
    "diff": ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n same\n",
             {("m", "--- a/f"), ("m", "+++ b/f"), ("f", "@@ -1 +1 @@"), ("d", "-old"),
              ("i", "+new")}),
}


def spans(nodes: list) -> set[tuple[str, str]]:
    return {(n[1][0][1][len("sp-hl-"):], n[2][0]) for n in nodes if not isinstance(n, str)}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_each_language_marks_its_tokens(language: str) -> None:
    code, expected = SAMPLES[language]
    nodes = highlight(language, code)
    assert text_of(("code", (), tuple(nodes))) == code  # the exact source, nothing lost
    assert expected <= spans(nodes), expected - spans(nodes)


def test_every_language_has_a_sample_and_aliases_resolve() -> None:
    assert set(SAMPLES) == set(LANGUAGES)
    for alias, family in [("py", "python"), ("ts", "javascript"), ("tsx", "javascript"),
                          ("bash", "shell"), ("xml", "html"), ("rs", "rust"), ("cpp", "c"),
                          ("c++", "c"), ("yml", "yaml"), ("golang", "go"), ("patch", "diff")]:
        assert language_of(alias) == family
    assert language_of("brainfuck") is None


def test_streamed_fence_highlights_each_complete_line_once() -> None:
    stream = MarkdownStream()
    code = "".join(f"x{i} = f({i})  # c\n" for i in range(40))
    text = "```python\n" + code + "```\n"
    for i in range(0, len(text), 5):
        stream.feed(text[i:i + 5])
        fence = stream._fence
        if fence is not None and fence.hl is not None:
            assert fence.hl.lines == fence.code.count("\n")  # never re-tokenized
        # Never unhighlighted: the shown code already has its spans.
        code_node = stream.nodes()[-1][2][0] if stream.nodes() else None
        if code_node is not None and text_of(code_node).count("=") > 1:
            assert any(not isinstance(k, str) for k in code_node[2])
    stream.close()
    assert stream.to_html() == render_html(text)
    assert 'class="sp-hl-c"' in stream.to_html()


def test_a_long_line_costs_the_cap_not_its_length() -> None:
    hl = Highlighter("python")
    small = calls(lambda: hl.partial("x = 'a' + " * 100))
    big = calls(lambda: hl.partial("x = 'a' + " * 20_000))
    assert big <= small * 1.2 + 50
    nodes = highlight("python", "y" * (LINE_CAP + 5000) + "\n")
    last = nodes[-1]
    assert isinstance(last, str) and last.endswith("y" * 5000 + "\n")


def _highlighting(language: str, code: str) -> Callable[[], object]:
    return lambda: highlight(language, code)


@pytest.mark.parametrize("hostile", ['"' * 5000, "/*" * 3000, "'\\" * 3000, "<" * 5000,
                                     "$" * 5000, "@" * 5000, "0" * 5000, "`" * 5000])
def test_hostile_code_is_linear(hostile: str) -> None:
    for language in LANGUAGES:
        n1 = calls(_highlighting(language, hostile[:500] + "\n"))
        n2 = calls(_highlighting(language, (hostile[:500] + "\n") * 10))
        assert n2 <= n1 * 11 + 60, language  # ten lines cost ~ten times one


def test_highlighted_code_in_the_dom_reads_as_its_source() -> None:
    doc = FakeDocument()
    box = doc.createElement("div")
    view = MarkdownView(doc, box, MarkdownStream().parser)
    text = "```js\nconst a = 1; // x\n```\n"
    for ch in text:
        view.feed(ch)
    view.close()
    assert "sp-hl-k" in inner_html(box)
    code = element(element(box.children[0]).children[-1])
    assert code.tag == "code" and code.textContent == "const a = 1; // x\n"


def test_a_frames_new_token_spans_go_in_with_one_append() -> None:
    """A line's new tokens go into the code element in one append: one call
    through the FFI in the page, one mutation record for its observers."""
    doc = FakeDocument()
    box = doc.createElement("div")
    view = MarkdownView(doc, box, MarkdownStream().parser)
    view.feed("```python\nx = 1\n")
    code = element(element(box.children[0]).children[-1])
    appends: list[int] = []
    real_append = code.append

    def counted(*nodes: Any) -> None:
        appends.append(len(nodes))
        real_append(*nodes)

    code.append = counted  # type: ignore[method-assign]
    view.feed("def f(a, b): return a + b  # sum\n")
    assert len(appends) == 1 and appends[0] >= 5, appends
    assert code.textContent.endswith("def f(a, b): return a + b  # sum\n")


def _fresh(language: str, code: str) -> list:
    """`highlight` without its memory: a new Highlighter fed line by line."""
    hl = Highlighter(language)
    lines = code.split("\n")
    for line in lines[:-1]:
        hl.line(line + "\n")
    return hl.partial(lines[-1])


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_highlighting_code_again_resumes_its_lines_with_the_same_nodes(language: str) -> None:
    sample = SAMPLES[language][0]
    grown = sample + "\n" + sample
    # Growing (a code block open in a list item, parsed on each change), then
    # other code (another block), then a prefix of the first: never stale.
    for code in (sample[:7], sample, grown[:len(sample) + 9], grown, "x\n" + sample, sample[:3]):
        assert highlight(language, code) == _fresh(language, code), code


@pytest.fixture
def tokenized(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every line the highlighter tokenizes, as it does."""
    lines: list[str] = []
    tokens = Highlighter._tokens

    def counted(self: Highlighter, line: str, state: str, partial: bool = False) -> Any:
        lines.append(line)
        return tokens(self, line, state, partial)

    monkeypatch.setattr(Highlighter, "_tokens", counted)
    return lines


def test_a_code_block_open_in_a_list_item_tokenizes_its_new_lines_only(
        tokenized: list[str]) -> None:
    code = "".join(f"  x{i} = f({i})  # c\n" for i in range(60))
    text = "- item\n\n  ```python\n" + code
    stream = MarkdownStream()
    for i in range(0, len(text), 13):
        tokenized.clear()
        stream.feed(text[i:i + 13])
        # The line(s) this delta completed and the partial one, not the block.
        assert len(tokenized) <= text[i:i + 13].count("\n") + 1, (i, tokenized)
    stream.close()
    assert stream.to_html() == render_html(text)


@pytest.mark.parametrize("size", [7, 13, 31])
def test_an_items_code_block_is_not_tokenized_again_when_it_closes(
        tokenized: list[str], size: int) -> None:
    """The item's code streams through its own state (`FenceTail`), outside any
    parse; when the closing fence hands the item back to a parse, that parse
    resumes from the state's lines: no delta tokenizes more than the lines it
    completes and its partial line, twice at most (the state's, the parse's)."""
    code = "".join(f"   x{i} = f({i})  # c\n" for i in range(60))
    text = "1. item\n\n   ```python\n" + code + "   ```\n2. next\n\nAfter.\n"
    stream = MarkdownStream()
    for i in range(0, len(text), size):
        tokenized.clear()
        stream.feed(text[i:i + size])
        assert len(tokenized) <= 2 * (text[i:i + size].count("\n") + 1), (i, tokenized)
    stream.close()
    assert stream.to_html() == render_html(text)
