"""What is said of a Markdown block (`streampace.markdown.tree` nodes).

Prose is said as its text (a soft line break is a space); list items, quoted paragraphs
and other nested blocks each on a line of their own (a line break is a
sentence boundary for `sentences`). What a voice cannot usefully read symbol
by symbol is one short summary instead: "code block, Python, 12 lines",
"table, 3 columns, 4 rows", "formula" (inline math), "math block". Images say
their alternative text. The walk is iterative: the tree's depth comes from
stream text.
"""

from __future__ import annotations

from streampace.markdown.tree import Node, text_of

__all__ = ["code_summary", "spoken_block", "table_summary"]

_BLOCKS = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "div", "section",
    "dl", "dt", "dd", "hr",
})
# Names people say for the fence labels answers use most; others are said as written.
_LANGUAGES = {
    "py": "Python", "python": "Python", "js": "JavaScript", "javascript": "JavaScript",
    "ts": "TypeScript", "typescript": "TypeScript", "sh": "shell", "bash": "shell",
    "shell": "shell", "zsh": "shell", "console": "shell", "json": "JSON", "html": "HTML",
    "css": "CSS", "sql": "SQL", "yaml": "YAML", "yml": "YAML", "toml": "TOML", "xml": "XML",
    "c": "C", "cpp": "C++", "c++": "C++", "cs": "C#", "csharp": "C#", "go": "Go",
    "rust": "Rust", "rs": "Rust", "java": "Java", "kotlin": "Kotlin", "swift": "Swift",
    "ruby": "Ruby", "rb": "Ruby", "php": "PHP", "tex": "TeX", "latex": "LaTeX",
    "md": "Markdown", "markdown": "Markdown", "diff": "diff", "text": "", "txt": "",
    "plaintext": "",
}
_MAX_LANGUAGE = 24  # a longer label is not a language name: left out


def _attr(node: tuple, name: str) -> str:
    for key, value in node[1]:
        if key == name:
            return str(value)
    return ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def code_summary(pre: tuple) -> str:
    """ "code block, Python, 12 lines" for a `pre` element."""
    code = next((kid for kid in pre[2] if not isinstance(kid, str) and kid[0] == "code"), None)
    language = ""
    text = ""
    if code is not None:
        text = text_of(code)
        for cls in _attr(code, "class").split():
            if cls.startswith("language-"):
                label = cls[len("language-"):]
                language = _LANGUAGES.get(label.lower(), label)
                break
    if len(language) > _MAX_LANGUAGE or not language.isprintable():
        language = ""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    parts = ["code block"]
    if language:
        parts.append(language)
    parts.append(_plural(lines, "line"))
    return ", ".join(parts)


def table_summary(table: tuple) -> str:
    """ "table, 3 columns, 4 rows" (rows under the header)."""
    columns = 0
    rows = 0
    stack: list[Node] = list(table[2])
    while stack:
        top = stack.pop()
        if isinstance(top, str):
            continue
        if top[0] == "tr":
            cells = sum(1 for kid in top[2] if not isinstance(kid, str) and kid[0] in ("td", "th"))
            columns = max(columns, cells)
            if any(not isinstance(kid, str) and kid[0] == "td" for kid in top[2]):
                rows += 1
        elif top[0] in ("thead", "tbody", "tfoot"):
            stack.extend(top[2])
    return f"table, {_plural(columns, 'column')}, {_plural(rows, 'row')}"


def _summary(node: tuple) -> str | None:
    """A summary for what is not read as text, or None."""
    tag = node[0]
    if tag == "pre":
        return code_summary(node)
    if tag == "table":
        return table_summary(node)
    if tag == "math":
        return "math block" if _attr(node, "display") == "block" else "formula"
    if tag == "img":
        return _attr(node, "alt") or "image"
    if tag == "br":
        return " "
    if tag == "input":
        return ("checked" if any(k == "checked" for k, _ in node[1]) else "unchecked") + " "
    return None


def spoken_block(node: Node) -> str:
    """What is said of `node`: its lines (nested blocks apart, on lines of their own)."""
    out: list[str] = []
    stack: list[Node | None] = [node]  # None: the end of a block (a line break)
    # A line break is written only between two pieces of text, so a paragraph
    # of one text node is that very string: nothing is copied. This runs on
    # the open block every frame (whitespace is folded when a line is said,
    # announcer._line).
    pending = False
    while stack:
        top = stack.pop()
        if top is None:
            pending = True
            continue
        if isinstance(top, str):
            text = top.replace("\n", " ") if "\n" in top else top  # a soft line break
        elif (summary := _summary(top)) is not None:
            text = summary
            if top[0] in ("pre", "table") or _attr(top, "display") == "block":
                pending = True  # a line of its own
                stack.append(None)
        else:
            if top[0] in _BLOCKS:
                pending = True
                stack.append(None)
            stack.extend(reversed(top[2]))
            continue
        if pending and out:
            out.append("\n")
        pending = False
        out.append(text)
    return "".join(out)
