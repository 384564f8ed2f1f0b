"""Our markdown-it rules: math (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`) and footnotes.

Inline math stays on one line. `$…$` follows Pandoc's rule so prices stay
text: the opening `$` is followed by a non-blank, the closing `$` preceded by
a non-blank and not followed by a digit ("$5 and $10" has no closer). A display
block is a line of only `$$` (or `\\[`) up to a line of only `$$` (`\\]`); until its
closing line arrives it shows as its source (see `math_block`).

Work is linear: a failed search for a closer is remembered for the rest of its
line, so a line of many unclosed openers is scanned once, not once per opener.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

__all__ = ["FOOTNOTE_KEY", "footnote_key", "use_footnotes", "use_math"]

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
    """A line of only `$$` (or `\\[`) opens a display formula, like a fence:
    it runs to a line of only `$$` (`\\]`), and without one to the next blank
    line or the end of its container. So a line decides only its own role and
    block structure stays monotonic while the text streams. An unclosed block
    is shown as its source (`meta["closed"]` is False)."""
    if state.sCount[startLine] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[startLine] + state.tShift[startLine]
    opening = state.src[pos:state.eMarks[startLine]].strip()
    if opening not in ("$$", "\\["):
        return False
    if silent:
        return True
    closing = "$$" if opening == "$$" else "\\]"
    line = startLine + 1
    closed = False
    while line < endLine:
        if state.isEmpty(line):
            break
        if state.sCount[line] < state.blkIndent:
            break
        text = state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]].strip()
        if text == closing:
            closed = True
            break
        line += 1
    token = state.push("math_block", "math", 0)
    token.content = state.getLines(startLine + 1, line, state.sCount[startLine], False)
    token.markup = opening
    token.meta = {"closed": closed}
    end = line + 1 if closed else line
    token.map = [startLine, end]
    state.line = end
    return True


def use_math(md: MarkdownIt) -> None:
    md.inline.ruler.before("escape", "math_inline", math_inline)
    md.block.ruler.before("fence", "math_block", math_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})


# -- footnotes (GFM style) -----------------------------------------------------
# A footnote label lives in the references map under this prefix, which
# markdown-it's normalized link labels can never produce.
FOOTNOTE_KEY = "\x00fn:"
_MAX_LABEL = 100


def footnote_key(label: str) -> str:
    return FOOTNOTE_KEY + label.casefold()


def _footnote_label(src: str, pos: int, limit: int) -> tuple[str, int] | None:
    """`[^label]` at `pos`: (label, index after `]`). Labels have no blanks or brackets."""
    if not src.startswith("[^", pos):
        return None
    i = pos + 2
    while i < limit and i - pos < _MAX_LABEL + 2 and src[i] not in " \t\n[]":
        i += 1
    if i >= limit or src[i] != "]" or i == pos + 2:
        return None
    return src[pos + 2:i], i + 1


def footnote_ref(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "[":
        return False
    found = _footnote_label(state.src, state.pos, state.posMax)
    if found is None:
        return False
    label, end = found
    if state.env.get("references", {}).get(footnote_key(label)) is None:
        return False  # no such note (yet): the text stays literal
    if not silent:
        token = state.push("footnote_ref", "sup", 0)
        token.meta = {"label": label}
    state.pos = end
    return True


def footnote_def(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
    """`[^label]: text` at the top level, continued by lines indented 4 spaces
    (blank lines between them allowed) and lazy paragraph lines."""
    if state.level != 0 or state.sCount[startLine] - state.blkIndent >= 4:
        return False
    src = state.src
    start = state.bMarks[startLine] + state.tShift[startLine]
    limit = state.eMarks[startLine]
    found = _footnote_label(src, start, limit)
    if found is None or found[1] >= limit + 1 or src[found[1]:found[1] + 1] != ":":
        return False
    if silent:
        return True
    label, end = found
    lines = [src[end + 1:limit].strip()]
    terminators = state.md.block.ruler.getRules("paragraph")
    line = startLine + 1
    pending_blank = 0
    while line < endLine:
        if state.isEmpty(line):
            pending_blank += 1
            line += 1
            continue
        if state.sCount[line] - state.blkIndent >= 4:
            first = state.bMarks[line] + min(state.tShift[line], 4 + state.blkIndent)
            lines.extend([""] * pending_blank)
            lines.append(src[first:state.eMarks[line]])
            pending_blank = 0
            line += 1
            continue
        if pending_blank or _footnote_label(
                src, state.bMarks[line] + state.tShift[line], state.eMarks[line]) is not None:
            break
        # A lazy continuation line, unless it starts a block of its own.
        old = state.parentType
        state.parentType = "paragraph"
        stop = any(rule(state, line, endLine, True) for rule in terminators)
        state.parentType = old
        if stop:
            break
        lines.append(src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]])
        line += 1
    token = state.push("footnote_def", "", 0)
    token.meta = {"label": label}
    token.content = "\n".join(lines) + "\n"
    token.map = [startLine, line - pending_blank]
    state.env.setdefault("references", {})
    refs = state.env["references"]
    if footnote_key(label) not in refs:
        refs[footnote_key(label)] = {"href": "", "title": "", "footnote": label}
    state.line = line - pending_blank
    return True


def use_footnotes(md: MarkdownIt, definitions: bool = True) -> None:
    md.inline.ruler.before("link", "footnote_ref", footnote_ref)
    if definitions:
        md.block.ruler.before("reference", "footnote_def", footnote_def,
                              {"alt": ["paragraph", "reference"]})
