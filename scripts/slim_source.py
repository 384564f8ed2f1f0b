"""Python sources for the page's archive without comments and docstrings.

The page imports our package and its bundled dependencies from
vendor/streampace.zip, and the memory snapshot holds the code objects compiled
from it: comments and docstrings are bytes every first visit downloads (in the
archive and in the snapshot's heap) that the page never reads. They are
removed line by line: each line keeps its number (a docstring becomes `""`
followed by the empty lines it spanned), so a traceback in the page points at
the line the repository has, and shows its code.

`slim_source(text)` refuses (ValueError) a result whose syntax tree differs
from the original's in anything but the docstrings' text and whose statements
moved to another line: it is checked on every file it writes.
"""

from __future__ import annotations

import ast
import io
import tokenize

__all__ = ["slim_source"]

_WITH_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, _WITH_DOCSTRING) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.append(first.value)
    return found


def _shape(text: str) -> tuple[str, list[tuple[str, int]]]:
    """The syntax tree without docstrings' text, and each statement's line."""
    tree = ast.parse(text)
    for doc in _docstrings(tree):
        doc.value = ""
    lines = [(type(node).__name__, node.lineno) for node in ast.walk(tree)
             if isinstance(node, ast.stmt)]
    return ast.dump(tree), lines


def slim_source(text: str) -> str:
    """`text` without its comments and with empty docstrings, line for line."""
    spans = {doc.lineno: doc.end_lineno for doc in _docstrings(ast.parse(text))}
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            edits.append((tok.start, tok.end, ""))
        elif tok.type == tokenize.STRING and spans.get(tok.start[0]) == tok.end[0]:
            # A docstring made of one string token (an implicit concatenation
            # spans several tokens and is left as it is).
            del spans[tok.start[0]]
            edits.append((tok.start, tok.end, '""' + "\n" * (tok.end[0] - tok.start[0])))
    lines = text.splitlines(keepends=True)
    for (row, col), (end_row, end_col), new in reversed(edits):
        head = lines[row - 1][:col]
        if not new:
            head = head.rstrip(" \t")
        lines[row - 1:end_row] = [head + new + lines[end_row - 1][end_col:]] + [""] * (
            end_row - row)
    slim = "".join(lines)
    if slim.count("\n") != text.count("\n") or _shape(slim) != _shape(text):
        raise ValueError("slim_source changed more than comments and docstrings")
    return slim
