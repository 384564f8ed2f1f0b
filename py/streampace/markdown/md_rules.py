"""Our markdown-it rules: math (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`).

Inline math stays on one line. `$…$` follows Pandoc's rule so prices stay
text: the opening `$` is followed by a non-blank, the closing `$` preceded by
a non-blank and not followed by a digit ("$5 and $10" has no closer). A display
block is a line of only `$$` (or `\\[`) up to a line of only `$$` (`\\]`), with
no blank line between and at most `_MAX_BLOCK_LINES`; without its closing line
it is no block (the source shows as text until the formula closes).

Work is linear: a failed search for a closer is remembered for the rest of its
line, so a line of many unclosed openers is scanned once, not once per opener.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

__all__ = ["use_math"]

_MAX_BLOCK_LINES = 200
_CLOSERS = {"$$": "$$", "\\(": "\\)", "\\[": "\\]"}


def _line_end(src: str, pos: int, limit: int) -> int:
    end = src.find("\n", pos, limit)
    return limit if end < 0 else end


def _memo(state: StateInline) -> dict[str, tuple[int, int, int]]:
    """Closer searches of this inline parse: needle -> (from, found, line end)."""
    held = state.env.get("_sp_math")
    if held is None or held[0] is not state:
        held = (state, {})
        state.env["_sp_math"] = held
    memo: dict[str, tuple[int, int, int]] = held[1]
    return memo


def _find(state: StateInline, needle: str, start: int, end: int) -> int:
    """`src.find(needle, start, end)`, remembering misses for the rest of the line."""
    memo = _memo(state)
    seen = memo.get(needle)
    if seen is not None and seen[1] < 0 and seen[0] <= start and end <= seen[2]:
        return -1
    found = state.src.find(needle, start, end)
    memo[needle] = (start, found, end)
    return found


def _dollar_closer(state: StateInline, start: int, end: int) -> int:
    """The first valid closing `$` in [start, end), or -1."""
    src = state.src
    memo = _memo(state)
    seen = memo.get("$")
    if seen is not None and seen[0] <= start and end <= seen[2] and (
            seen[1] < 0 or seen[1] >= start):
        return seen[1]
    pos = start
    found = -1
    while pos < end:
        pos = src.find("$", pos, end)
        if pos < 0:
            break
        if src[pos - 1] == "\\":
            pos += 1
            continue
        if src[pos - 1] not in " \t" and not (pos + 1 < len(src) and src[pos + 1].isdigit()):
            found = pos
            break
        pos += 1
    memo["$"] = (start, found, end)
    return found


def math_inline(state: StateInline, silent: bool) -> bool:
    src, pos, limit = state.src, state.pos, state.posMax
    if src[pos] == "$":
        opener = "$$" if src.startswith("$$", pos) else "$"
    elif src.startswith(("\\(", "\\["), pos):
        opener = src[pos:pos + 2]
    else:
        return False
    start = pos + len(opener)
    end_line = _line_end(src, start, limit)
    if opener == "$":
        if start >= end_line or src[start] in " \t":
            return False
        close = _dollar_closer(state, start + 1, end_line)
        if close < 0:
            return False
        content, after = src[start:close], close + 1
    else:
        close = _find(state, _CLOSERS[opener], start, end_line)
        # `\[` and `\(` are also escaped brackets: only a formula with a
        # letter or digit in it is math (CommonMark's `\[\\\]` stays text).
        if close < 0 or not any(c.isalnum() for c in src[start:close]):
            return False
        content, after = src[start:close], close + 2
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = content
        token.markup = opener
        token.meta = {"display": opener in ("$$", "\\[")}
    state.pos = after
    return True


def math_block(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
    if state.sCount[startLine] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[startLine] + state.tShift[startLine]
    opening = state.src[pos:state.eMarks[startLine]].strip()
    if opening not in ("$$", "\\["):
        return False
    closing = "$$" if opening == "$$" else "\\]"
    line = startLine + 1
    while line < endLine and line - startLine <= _MAX_BLOCK_LINES:
        if state.isEmpty(line) or state.sCount[line] < state.blkIndent:
            return False
        text = state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]].strip()
        if text == closing:
            break
        line += 1
    else:
        return False
    if silent:
        return True
    token = state.push("math_block", "math", 0)
    token.content = state.getLines(startLine + 1, line, state.sCount[startLine], False)
    token.markup = opening
    token.map = [startLine, line + 1]
    state.line = line + 1
    return True


def use_math(md: MarkdownIt) -> None:
    md.inline.ruler.before("escape", "math_inline", math_inline)
    md.block.ruler.before("fence", "math_block", math_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
