"""Inline completion of an open block's text: what to delete and what to
append so every unfinished construct shows in its most likely final form
(the table of constructs is in tail.py's docstring).

One left-to-right pass in one of three modes: plain text, inside a code span,
inside a link destination. In plain text only the characters in `_TEXT_RULES`
do anything; the scan jumps from one to the next (a single character class,
so the search cannot backtrack), and each has its rule. Each character is
looked at a bounded number of times, and a closer searches at most `_SEARCH`
openers, so the pass is linear in the text whatever it holds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from enum import Enum

from streampace.markdown.link_dest import Dest, closing_suffix, scan

__all__ = ["complete_inline"]

_SEARCH = 64  # openers looked at per closer

_ENTITY_SO_FAR = re.compile(r"&#?[A-Za-z0-9]{0,31}$")
_TAG_SO_FAR = re.compile(r"</?(?:[A-Za-z][A-Za-z0-9+.\-]{0,31})?$")
_AUTOLINK_SO_FAR = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*$")
_SPECIAL = re.compile(r"[$\\`!\[\]*_~]")  # the keys of _TEXT_RULES


def _is_space(c: str) -> bool:
    return c == "" or c.isspace()


def _is_punct(c: str) -> bool:
    return c != "" and unicodedata.category(c)[0] in "PS"


def _math_end(text: str, i: int) -> int | None:
    """For a math opener at `i` (md_rules' syntax): the index after its closer
    on the same line, -1 if it has none yet, None if `i` opens no formula
    (`$` before a blank or a digit: "$5" is a price until proven otherwise)."""
    n = len(text)
    line_end = text.find("\n", i)
    line_end = n if line_end < 0 else line_end
    if text.startswith("$$", i):
        close = text.find("$$", i + 2, line_end)
        return -1 if close < 0 else close + 2
    if text[i] == "$":
        if i + 1 >= n or text[i + 1] in " \t\n" or text[i + 1].isdigit():
            return None
        pos = i + 2
        while True:
            pos = text.find("$", pos, line_end)
            if pos < 0:
                return -1
            if text[pos - 1] not in " \t\\" and not (pos + 1 < n and text[pos + 1].isdigit()):
                return pos + 1
            pos += 1
    closer = "\\)" if text[i + 1] == "(" else "\\]"
    close = text.find(closer, i + 2, line_end)
    return -1 if close < 0 else close + 2


def _flanking(c: str, prev: str, nxt: str) -> tuple[bool, bool]:
    """(can open, can close) for a run of `c` between `prev` and `nxt`
    (CommonMark's left- and right-flanking rules; `_` is stricter)."""
    p_space, p_punct = _is_space(prev), _is_punct(prev)
    n_space, n_punct = _is_space(nxt), _is_punct(nxt)
    left = not n_space and (not n_punct or p_space or p_punct)
    right = not p_space and (not p_punct or n_space or n_punct)
    if c == "_":
        return left and (not right or p_punct), right and (not left or n_punct)
    return left, right


class _Mode(Enum):
    TEXT = "text"    # plain inline text: _TEXT_RULES apply
    CODE = "code"    # inside a code span, waiting for a backtick run as long
    DEST = "dest"    # after a link's `](`, waiting for its `)` (link_dest.py)
    DONE = "done"    # nothing after this point is completed (an open formula)


class _Emph:
    """An unmatched emphasis / strikethrough opener."""

    __slots__ = ("both", "char", "left", "length", "pos", "run")

    def __init__(self, pos: int, char: str, run: int, both: bool,
                 length: int | None = None) -> None:
        self.pos, self.char, self.run, self.both = pos, char, run, both
        self.left = run  # delimiters not yet matched
        # The whole run's length, which CommonMark's rule of 3 reads: more than
        # `run` for what a closing run leaves to open (`*_*s**`'s last `*`).
        self.length = run if length is None else length


class _Bracket:
    """An unmatched `[` or `![`; a `[` goes inactive once a link closes after
    it (links do not nest): a `]` then finds it and both are plain text."""

    __slots__ = ("active", "borrowed", "pos", "width")

    def __init__(self, pos: int, width: int) -> None:
        self.pos, self.width = pos, width
        self.active = True
        # Openers before it that a closer after it matched, and how many of
        # their delimiters: given back if it opens a link (whose text is read
        # apart: `*[*~~]()`'s second `*` closes nothing outside it).
        self.borrowed: list[tuple[_Emph, int]] = []


class _Scan:
    """The state of one pass (see the module docstring)."""

    __slots__ = ("autolink_at", "code", "deletions", "depth", "dest", "i", "image",
                 "last_closed", "last_run", "mode", "n", "stack", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        # The last literal run, a blank or a bracket pair's `]` after it.
        self.last_run: tuple[int, int] | None = None
        self.i = 0
        self.mode = _Mode.TEXT
        self.deletions: list[tuple[int, int]] = []
        self.stack: list[_Emph | _Bracket] = []
        self.code = (0, 0)          # CODE: the opening run's (position, length)
        self.dest = Dest.BEFORE     # DEST: where the destination and title stand
        self.image = False          # DEST: an image's (`![`), not a link's
        self.depth = 0              # DEST: the bare destination's parentheses open
        self.last_closed: tuple[int, int, int] | None = None  # bracket pos, width, ']' pos
        self.autolink_at = self.n   # where an autolink being written at the end starts

    def run(self) -> None:
        text, n = self.text, self.n
        while self.i < n:
            mode = self.mode
            if mode is _Mode.TEXT:
                m = _SPECIAL.search(text, self.i)
                if m is None:
                    return
                self.i = m.start()
                _TEXT_RULES[text[self.i]](self)
            elif mode is _Mode.CODE:
                self.in_code()
            elif mode is _Mode.DEST:
                self.in_dest()
            else:
                return

    # -- the two inner modes -------------------------------------------------
    def in_code(self) -> None:
        text, n = self.text, self.n
        i = text.find("`", self.i)
        if i < 0:
            self.i = n
            return
        j = self.run_end(i)
        if j - i == self.code[1]:
            self.mode = _Mode.TEXT
        self.i = j

    def in_dest(self) -> None:
        self.dest, self.depth, self.i = scan(self.dest, self.depth, self.text, self.i)
        if self.i > self.n:
            # An escaping backslash last: before our `)` it would escape it.
            self.deletions.append((self.n - 1, self.n))
            self.i = self.n
        if self.dest is Dest.CLOSED or self.dest is Dest.INVALID:
            # Closed, or no inline link after all (`[a](/x y`): the rest is
            # plain text, and nothing closes the link at the end.
            self.mode = _Mode.TEXT
            if self.dest is Dest.CLOSED and not self.image:
                self.deactivate_brackets()

    def deactivate_brackets(self) -> None:
        """A link closed: no `[` before it can open another around it (only
        the nearest `_SEARCH` are looked at, as a closer looks)."""
        stack = self.stack
        for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _SEARCH), -1):
            entry = stack[k]
            if isinstance(entry, _Bracket) and entry.width == 1:
                if not entry.active:
                    return  # (and the ones before it, by an earlier link)
                entry.active = False

    def run_end(self, i: int) -> int:
        text, n, c = self.text, self.n, self.text[i]
        j = i
        while j < n and text[j] == c:
            j += 1
        return j

    # -- rules of plain text, one per special character ------------------------
    def math(self) -> bool:
        """A formula at i: skip it whole, or (unfinished) to its line's end."""
        end = _math_end(self.text, self.i)
        if end is None:
            return False
        if end >= 0:
            self.i = end  # a complete formula: nothing inside it is completed
            return True
        # An unfinished formula shows as its source until it closes (to the end
        # of its line: inline math does not span lines). A zero-width deletion
        # marks the text as still open.
        nl = self.text.find("\n", self.i)
        if nl < 0:
            self.deletions.append((self.n, self.n))
            self.mode = _Mode.DONE
        else:
            self.i = nl
        return True

    def dollar(self) -> None:
        if not self.math():
            self.i += 1

    def backslash(self) -> None:
        i = self.i
        if i + 1 < self.n and self.text[i + 1] in "([" and self.math():
            return
        if i == self.n - 1:
            self.deletions.append((i, self.n))
        self.i = i + 2

    def backticks(self) -> None:
        j = self.run_end(self.i)
        self.code = (self.i, j - self.i)
        self.mode = _Mode.CODE
        self.i = j

    def bang(self) -> None:
        if self.i + 1 < self.n and self.text[self.i + 1] == "[":
            self.stack.append(_Bracket(self.i, 2))
            self.i += 2
        else:
            self.i += 1

    def open_bracket(self) -> None:
        self.stack.append(_Bracket(self.i, 1))
        self.i += 1

    def close_bracket(self) -> None:
        stack, i = self.stack, self.i
        for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _SEARCH), -1):
            entry = stack[k]
            if isinstance(entry, _Bracket):
                if not entry.active:  # (a link closed after it: `[[a](/u) b](`)
                    del stack[k]
                    self.i = i + 1
                    return
                inner = stack[-1]
                del stack[k:]  # emphasis opened inside the brackets stays literal
                if i + 1 < self.n and self.text[i + 1] == "(":
                    self.give_back(entry)
                else:
                    self.pass_down(entry, k)
                if isinstance(inner, _Emph) and inner.pos + inner.run == i:
                    # Literal right before the `]`: with the pair held back
                    # (finish_text), the closers would join it (`*[c *]`
                    # showed `*c **`, which closes nothing).
                    self.last_run = (inner.pos, i)
                if i + 1 < self.n and self.text[i + 1] == "(":
                    self.dest, self.depth, self.image = Dest.BEFORE, 1, entry.width == 2
                    self.mode = _Mode.DEST
                    self.i = i + 2
                    self.last_closed = None
                else:
                    self.last_closed = (entry.pos, entry.width, i)
                    self.i = i + 1
                return
        self.i = i + 1

    def pass_down(self, bracket: _Bracket, k: int) -> None:
        """`bracket` (at `k` in the stack) opens no link: the matches that
        crossed it stand, unless an open bracket below it, after their opener,
        opens one; that one keeps them."""
        for entry, used in bracket.borrowed:
            for j in range(k - 1, max(-1, k - 1 - _SEARCH), -1):
                outer = self.stack[j]
                if outer.pos < entry.pos:
                    break
                if isinstance(outer, _Bracket) and outer.active:
                    outer.borrowed.append((entry, used))
                    break

    def emphasis(self) -> None:
        text, n, i = self.text, self.n, self.i
        c = text[i]
        j = self.run_end(i)
        run = j - i
        self.i = j
        if c == "~" and run < 2:
            if j == n:
                self.deletions.append((i, j))  # may become `~~`
            return
        can_open, can_close = _flanking(c, text[i - 1] if i > 0 else "", text[j] if j < n else "")
        if j == n:
            # Nothing after the run yet: it cannot open; it may close.
            can_open = False
        both = can_open and can_close
        # markdown-it reads a tilde run as pairs, each a delimiter, after an odd
        # one as text (`~~~-~~`: `~`, then `~~-~~` struck through).
        delims = i + run % 2 if c == "~" else i
        run = j - delims
        left = self.close_emphasis(c, run, both) if can_close else run
        if left < run:
            if left and can_open:  # (what the run did not close may open)
                self.stack.append(_Emph(j - left, c, left, both, run))
            return
        if can_open:
            self.stack.append(_Emph(delims, c, run, both))
        elif j == n:
            self.deletions.append((i, j))  # an opener still waiting for its text
        elif text[j] in " \t\n":
            self.last_run = (i, j)  # (finish: shown last, the closers may join it)

    def close_emphasis(self, c: str, run: int, both: bool) -> int:
        """Match a closing run of `run` delimiters against the innermost
        openers only (a closer costs at most a constant, whatever number of
        openers precede it); what one opener leaves of the run goes on to the
        next (`*_*s**`: the second `*` closes the first, the `_` between stays
        text). Returns the delimiters left unmatched."""
        stack = self.stack
        left = run
        k = len(stack) - 1
        lowest = max(-1, len(stack) - 1 - _SEARCH)
        crossed: _Bracket | None = None  # the innermost open bracket passed
        while left and k > lowest:
            entry = stack[k]
            k -= 1
            if isinstance(entry, _Bracket):
                crossed = crossed or (entry if entry.active else None)
                continue
            if entry.char != c:
                continue
            # CommonMark's rule of 3 (runs that can both open and close), on
            # the whole runs' lengths. (Not for tildes: markdown-it's pairs
            # have no length to sum.)
            o = entry.length
            if ((both or entry.both) and c != "~" and (o + run) % 3 == 0
                    and (o % 3 or run % 3)):
                continue
            if crossed is None:
                del stack[k + 2:]  # (openers between go)
            else:  # (brackets stay: one may yet open a link)
                stack[k + 2:] = [e for e in stack[k + 2:] if isinstance(e, _Bracket)]
            used = min(left, entry.left)
            entry.left -= used
            left -= used
            if crossed is not None:
                crossed.borrowed.append((entry, used))
            if entry.left <= 0:
                del stack[k + 1]
        return left

    def give_back(self, bracket: _Bracket) -> None:
        """`bracket` opens a link: the openers before it that closers in its
        text matched are open again (each put back in its place, looked for
        among the nearest `_SEARCH` entries)."""
        stack = self.stack
        # (Innermost first in `borrowed`: put back outermost first, each then
        # goes at or near the stack's end.)
        for entry, used in reversed(bracket.borrowed):
            if entry.left <= 0:
                k = len(stack)
                while k > max(0, len(stack) - _SEARCH) and stack[k - 1].pos > entry.pos:
                    k -= 1
                stack.insert(k, entry)
            entry.left += used

    # -- the end -------------------------------------------------------------
    def finish(self) -> tuple[list[tuple[int, int]], str]:
        if self.mode is _Mode.CODE:
            pos, length = self.code
            if pos + length >= self.n:
                self.deletions.append((pos, self.n))
                suffix = ""
            else:
                # A backtick run at the end (not the closer's length: it would
                # have closed) is held back: most likely the closer arriving
                # (``c` then `), and next to ours it would make a longer run.
                end = self.n
                while self.text[end - 1] == "`":
                    end -= 1
                if end < self.n:
                    self.deletions.append((end, self.n))
                # The shown text loses its trailing blanks before the closer
                # (tail._apply), and a line break that held-back text leaves
                # last (its line goes): a backtick left last gets a space between.
                shown = self.text[pos + length:end].rstrip(" \t\n")
                if shown.strip():
                    suffix = (" " if shown.endswith("`") else "") + "`" * length
                else:
                    # Nothing shown in it (a line break, then the closer's run
                    # arriving): held back whole, as a run with nothing after it.
                    self.deletions.append((pos, self.n))
                    suffix = ""
        elif self.mode is _Mode.DEST:
            suffix = closing_suffix(self.dest, self.depth)
        else:
            suffix = self.finish_text()
        closers: list[_Emph] = []
        for entry in reversed(self.stack):
            if isinstance(entry, _Bracket):
                # (An inactive one is plain text for good; so, until a link
                # follows, is one an emphasis matched across: `*a [b* c`.)
                if entry.active and not entry.borrowed:
                    self.deletions.append((entry.pos, entry.pos + entry.width))
            elif entry.pos >= self.autolink_at:
                continue  # (in the autolink's URL: text, not an opener)
            elif entry.left == entry.run and self.opens_nothing(entry.pos + entry.run):
                # Its text so far is all held back (`**[`, `**`` ` ``, `**~~`),
                # or what is shown after it starts with a blank (`*[` then a
                # line break): closed, it would show as `****`. Held back too.
                self.deletions.append((entry.pos, entry.pos + entry.run))
            else:
                closers.append(entry)
        last = self.last_run
        if (closers and last is not None and self.text[last[0]] == closers[0].char
                and self.shown_after(last[1]) == self.n):
            # The closers would join a literal run shown last, blanks after it
            # (`*i * `: `**`, which closes nothing after a blank): held back.
            self.deletions.append(last)
        for entry in self.unclosable_held_back(closers, suffix) if closers else closers:
            suffix += _closer(entry)
        return self.deletions, suffix

    def unclosable_held_back(self, closers: list[_Emph], before_them: str = "") -> list[_Emph]:
        """`closers` (innermost first) without the openers the appended run
        cannot close, whose runs are held back instead: CommonMark's rule of
        3 reads the whole run of one character the suffix makes (`.**] **-`
        gets `****`: 2 + 4 is a multiple of 3, so `.**`, which may open and
        close, stays literal and the last `**` showed unarrived). Each run
        of one character is read once, shrinking as openers leave it.
        `before_them`: what the suffix holds before the closers (a code
        span's closer): the first run follows it, not the text."""
        kept: list[_Emph] = []
        k = 0
        while k < len(closers):
            end = k
            char = closers[k].char
            while end < len(closers) and closers[end].char == char:
                end += 1
            group = closers[k:end]
            length = sum(len(_closer(entry)) for entry in group)
            if k == 0 and before_them:
                before = before_them[-1]  # (`**e*`c`, closed `` `*`` ``: after the backtick)
            elif k == 0:
                at_end = self.shown_run_at_end(char)
                length += at_end
                before = self.shown_before(self.n - at_end)
            else:
                before = closers[k - 1].char
            # The run may open too (punctuation before it, a closer after):
            # then the rule reads it whatever the opener (`_**e*(` closed `*_`).
            opens = _flanking(char, before, closers[end].char if end < len(closers) else "")[0]
            for entry in group:
                if (((entry.both and entry.left == entry.run) or opens) and entry.char != "~"
                        and (entry.length + length) % 3 == 0 and (entry.length % 3 or length % 3)):
                    # (Only what no closer matched: an opener's innermost
                    # delimiters go first, `*_**e*/` keeps the `*` that `e*` closed.)
                    self.deletions.append((entry.pos, entry.pos + entry.left))
                    length -= entry.left
                else:
                    kept.append(entry)
            k = end
        return kept

    def shown_before(self, pos: int) -> str:
        """The last character before `pos` that shows (not held back, nor a
        blank the closers go before); "" if none."""
        text = self.text
        i = pos - 1
        while i >= 0:
            if text[i] in " \t":
                i -= 1
                continue
            held = next((begin for begin, end in self.deletions if begin <= i < end), None)
            if held is None:
                return text[i]
            i = held - 1
        return ""

    def shown_run_at_end(self, c: str) -> int:
        """How many `c` end the text and are shown (not held back): the
        suffix's first run continues them."""
        run = self.n
        while run > 0 and self.text[run - 1] == c:
            run -= 1
        held = [(begin, end) for begin, end in self.deletions if end > run]
        shown = self.n
        while shown > run and not any(begin < shown <= end for begin, end in held):
            shown -= 1
        return self.n - shown

    def shown_after(self, pos: int) -> int:
        """The first character at or after `pos` that shows: not a blank nor a
        line break (the closers go before trailing ones; a line left empty by
        what is held back goes) nor held back; `n` if none."""
        text, n = self.text, self.n
        for begin, end in sorted(self.deletions):
            if end <= pos:
                continue
            while pos < min(begin, n) and text[pos] in " \t\n":
                pos += 1
            if pos < begin:
                return pos
            pos = max(pos, end)
        while pos < n and text[pos] in " \t\n":
            pos += 1
        return pos

    def opens_nothing(self, start: int) -> bool:
        """Whether an opener's run ending at `start` is followed, once the
        deletions are made, by nothing or by a blank: it opens nothing then."""
        pos = start
        for begin, end in sorted(self.deletions):
            if begin > pos:
                break
            pos = max(pos, end)
        return pos >= self.n or self.text[pos].isspace()

    def finish_text(self) -> str:
        """Text ends: an autolink (closed), an entity or tag (held back) so
        far; a bracket pair at the very end (held back: a link may follow)."""
        n = self.n
        tail = self.text[-40:]
        suffix = ""
        m = _AUTOLINK_SO_FAR.search(tail)
        if m:
            suffix = ">"
            self.autolink_at = n - len(tail) + m.start()
        else:
            m = _ENTITY_SO_FAR.search(tail) or _TAG_SO_FAR.search(tail)
            if m:
                self.deletions.append((n - len(tail) + m.start(), n))
        last = self.last_closed
        if last is not None and last[2] == n - 1:
            self.deletions.append((last[0], last[0] + last[1]))
            self.deletions.append((n - 1, n))
        return suffix


def _closer(entry: _Emph) -> str:
    """The run that closes what is left of `entry` (strikethrough: `~~`)."""
    return entry.char * (entry.left if entry.char != "~" else 2)


_TEXT_RULES: dict[str, Callable[[_Scan], None]] = {
    "$": _Scan.dollar,
    "\\": _Scan.backslash,
    "`": _Scan.backticks,
    "!": _Scan.bang,
    "[": _Scan.open_bracket,
    "]": _Scan.close_bracket,
    "*": _Scan.emphasis,
    "_": _Scan.emphasis,
    "~": _Scan.emphasis,
}


def complete_inline(text: str) -> tuple[list[tuple[int, int]], str]:
    """Deletions (start, end) and a suffix that close what `text` leaves open."""
    scan = _Scan(text)
    scan.run()
    return scan.finish()
