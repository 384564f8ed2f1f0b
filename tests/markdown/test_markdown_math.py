"""Math: TeX to MathML elements, prices stay text, hostile TeX is inert and bounded."""

from __future__ import annotations

import pytest
from streampace.markdown import MarkdownStream, render_html
from streampace.markdown.math import MAX_DEPTH, tex_to_mathml
from streampace.markdown.tree import MATHML_TAGS

from .test_markdown_hostile import _max_depth, calls

ALLOWED_MATH_ATTRS = {"display", "mathvariant", "stretchy", "movablelimits", "linethickness",
                      "width", "columnalign", "encoding"}


def elements(node: object) -> list[tuple]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            out.append(n)
            stack.extend(n[2])
    return out


@pytest.mark.parametrize("src, html_part", [
    ("Euler $e^{i\\pi}+1=0$.", "<msup><mi>e</mi><mrow><mi>i</mi><mi>π</mi></mrow></msup>"),
    ("$$x^2$$ inline display", '<math display="block">'),
    ("\\(a_i\\)", "<msub><mi>a</mi><mi>i</mi></msub>"),
    ("\\[\\frac{1}{2}\\]", "<mfrac><mn>1</mn><mn>2</mn></mfrac>"),
    ("$\\sqrt{x}$ and $\\sqrt[3]{y}$", "<mroot><mi>y</mi><mn>3</mn></mroot>"),
    ("$\\mathbb{R}$", "<mi>ℝ</mi>"),
    ("$\\sum_{i=1}^n i$", '<munderover><mo movablelimits="true">∑</mo>'),
    ("$\\text{if } x$", "<mtext>if </mtext>"),
    ("$\\begin{cases}a & b\\\\c & d\\end{cases}$", "<mtable>"),
])
def test_tex_renders_as_mathml(src: str, html_part: str) -> None:
    html = render_html(src)
    assert "<math" in html and html_part in html, html


def test_display_block_math() -> None:
    html = render_html("Before\n\n$$\n\\int_0^1 x\\,dx = \\frac12\n$$\n\nAfter\n")
    assert '<div class="sp-math-block"><math display="block">' in html
    assert "<p>After</p>" in html


@pytest.mark.parametrize("text", [
    "It costs $5 and $10.", "Between $5-$10 a day", "$ 5 $", "Pay $3.50, not $4.", "US$5",
])
def test_prices_stay_text(text: str) -> None:
    assert "<math" not in render_html(text)


def test_unfinished_formula_shows_its_source_until_it_closes() -> None:
    stream = MarkdownStream()
    stream.feed("Let $x^*a + b")
    html = stream.to_html()
    assert "<math" not in html and "$x^*a + b" in html and "<em>" not in html
    stream.feed("$ done")
    assert "<math" in stream.to_html()
    block = MarkdownStream()
    block.feed("$$\n\\frac{a}{b}\n")
    assert "<math" not in block.to_html() and "\\frac{a}{b}" in block.to_html()
    block.feed("$$\n")
    assert "<math" in block.to_html()


@pytest.mark.parametrize("tex", [
    "\\href{javascript:alert(1)}{x}", "\\url{javascript:alert(1)}", "\\style{color:red}{x}",
    "\\class{evil}{x}", "\\cssId{x}{y}", "\\unicode{x41}", "\\require{html}", "\\html{<b>}",
    "\\htmlStyle{x}{y}", "\\begin{script}x\\end{script}",
])
def test_commands_that_carry_urls_or_styles_are_inert(tex: str) -> None:
    node = tex_to_mathml(tex, False)
    for tag, attrs, _kids in elements(node):
        assert tag in MATHML_TAGS
        for name, value in attrs:
            assert name in ALLOWED_MATH_ATTRS
            assert "javascript" not in value and "color" not in value
    assert any(e[0] == "merror" for e in elements(node))


def test_nesting_and_length_are_bounded() -> None:
    deep = "{" * 5000 + "x" + "}" * 5000
    node = tex_to_mathml(deep, False)
    assert _max_depth([node]) <= 2 * MAX_DEPTH + 8
    assert calls(lambda: tex_to_mathml("{" * 4000, False)) < 60 * calls(
        lambda: tex_to_mathml("{" * 100, False)) + 1000
    long = tex_to_mathml("x+" * 5000, False)
    assert long[2][0][2][0][0] == "mtext"  # over MAX_SOURCE: shown as its source


@pytest.mark.parametrize("unit", ["$a ", "$$a ", "\\(a ", "\\[a ", "$5 "])
def test_many_unclosed_openers_cost_linear_work(unit: str) -> None:
    n1 = calls(lambda: render_html(unit * 200))
    n2 = calls(lambda: render_html(unit * 2000))
    assert n2 < n1 * 15
