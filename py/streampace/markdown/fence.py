"""A top-level fenced code block while it streams: appended to, never re-parsed.

New lines are appended as code; a partial last line is shown unless it could
still become the closing fence. With a known language, each complete line is
highlighted once (`highlight.Highlighter`) and the partial line is highlighted
on each change (bounded by the highlighter's line cap), so code never shows
unhighlighted and closed lines are never tokenized again. The node shown when
the closing fence arrives is the block's final node (the one-shot render
highlights the same lines the same way).
"""

from __future__ import annotations

from streampace.markdown.highlight import Highlighter, language_of, resumed_highlighter
from streampace.markdown.tree import Node

__all__ = ["OpenFence", "closing_run", "opening_run"]


class OpenFence:
    def __init__(self, run: str, attrs: tuple, start: int) -> None:
        self.run = run
        self.attrs = attrs
        lang = next((v[len("language-"):] for k, v in attrs if k == "class"), "")
        family = language_of(lang) if lang else None
        self.hl = Highlighter(family) if family else None
        self.code = ""            # code text shown (complete lines + shown partial)
        self.done = 0             # length of `code` made of complete lines
        self.line_start = start   # tail offset of the first line not complete
        self.partial = ""         # the partial line as shown
        self.closed = False

    def step(self, tail: str) -> str:
        """Read what is new in `tail`; return the code text appended ("" if none)."""
        char, width = self.run[0], len(self.run)
        pos = self.line_start
        added: list[str] = []
        while True:
            nl = tail.find("\n", pos)
            if nl < 0:
                line = tail[pos:]
                # Held back while it could still become the closing fence.
                shown = "" if closing_run(line, char) is not None else line
                if shown != self.partial:
                    added.append(shown[len(self.partial):])
                    self.partial = shown
                break
            line = tail[pos:nl]
            if (closing_run(line, char) or 0) >= width:
                self.closed = True
                break
            added.append(line[len(self.partial):] + "\n")
            if self.hl is not None:
                self.hl.line(line + "\n")
            self.partial = ""
            pos = nl + 1
            self.line_start = pos
        text = "".join(added)
        self.code += text
        self.done = len(self.code) - len(self.partial)
        return text

    def resume(self, code: str) -> None:
        """Start from the complete lines `code`, highlighted where the last
        highlight of this language left them (a parse just showed them)."""
        self.code, self.done = code, len(code)
        if self.hl is not None:
            self.hl = resumed_highlighter(self.hl.language, code)

    def add_line(self, line: str) -> None:
        """One more complete line of code (without its "\\n")."""
        self.code += line + "\n"
        self.done = len(self.code)
        if self.hl is not None:
            self.hl.line(line + "\n")

    def node(self) -> Node:
        return self.node_with(self.partial)

    def node_with(self, partial: str) -> Node:
        """The block with its complete lines and `partial` shown after them."""
        if self.hl is not None:
            kids: tuple[Node, ...] = tuple(self.hl.partial(partial))
        else:
            code = self.code[:self.done] + partial
            kids = (code,) if code else ()
        return ("pre", (), (("code", self.attrs, kids),))


def opening_run(body: str) -> str | None:
    """The fence run `body` (a line from its first non-blank character) opens
    a fenced code block with: three or more backticks or tildes, and no
    backtick in a backtick fence's info string (CommonMark); else None."""
    if body[:1] not in ("`", "~"):
        return None
    run = body[:len(body) - len(body.lstrip(body[0]))]
    if len(run) < 3 or (run[0] == "`" and "`" in body[len(run):]):
        return None
    return run


def closing_run(line: str, char: str) -> int | None:
    """The length of the fence run `line` holds if it is `char`s alone after at
    most 3 spaces, spaces and tabs after them (CommonMark's closing fence, as
    markdown-it reads it: a tab before the run puts it at column 4 or more, in
    code; other white space is text); None when it is no such line, whatever
    follows. A line of blanks holds a run of 0 that may still come. The one
    reading of a closing fence line: the open fence, finality and list items
    use it."""
    body = line.lstrip(" ")
    if len(line) - len(body) > 3:
        return None
    run = len(body) - len(body.lstrip(char))
    return None if body[run:].strip(" \t") else run
