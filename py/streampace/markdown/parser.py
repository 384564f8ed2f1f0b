"""Markdown source -> element tree, through markdown-it-py (CommonMark + GFM parts).

markdown-it-py was chosen by measurement (docs/markdown.md): it passes the
CommonMark spec and loads in Pyodide from our own archive. We use its block and
inline parsers only; its HTML renderer is not used. Its tokens become our
`tree` nodes here, and that is where the output is made safe:

- raw HTML is off in the parser (`html=False`), so `<tag>` stays literal text;
- links pass `safety.is_safe_link` or stay literal text (markdown-it calls our
  validator and keeps the source as text when it refuses);
- links get `rel="noopener noreferrer nofollow"`;
- images from another origin become a link showing their alt text unless
  `allow_images` is set;
- only tags and attributes listed here can appear.

GFM parts: tables and strikethrough come from markdown-it-py; task list items
and bare-URL autolinks (`https://…`, `www.…`) are added here.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections import ChainMap
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block.paragraph import paragraph
from markdown_it.rules_inline import StateInline

from streampace.markdown.highlight import highlight, language_of
from streampace.markdown.math import tex_to_mathml
from streampace.markdown.md_rules import footnote_key, use_footnotes, use_math
from streampace.markdown.safety import LINK_REL, is_safe_link, is_same_origin
from streampace.markdown.tree import Attrs, Element, Node

__all__ = ["Parser", "default_parser", "quiet_block_rule_logs"]

_ALIGN = {"text-align:left": "left", "text-align:right": "right", "text-align:center": "center"}
_SIMPLE_INLINE = {"em_open": "em", "strong_open": "strong", "s_open": "del"}
_SIMPLE_BLOCK = {
    "blockquote_open", "bullet_list_open", "list_item_open", "thead_open", "tbody_open",
    "tr_open", "table_open",
}
_TASK = re.compile(r"^\[([ xX])\](?=[ \t]|$)")
# GFM extended autolinks: after start, whitespace or one of *_~( .
_BARE_URL = re.compile(r"(?:(?<=[\s*_~(])|^)(?:https?://|www\.)[^\s<]*", re.IGNORECASE)
_DOMAIN = re.compile(r"^(?:https?://)?(?:www\.)?[\w-]", re.IGNORECASE)  # a domain starts here
# The characters at which each inline rule of ours can start. markdown-it's
# `text` rule stops at a wider set (`:`, `-`, `+`, `=`, ...), but where no rule
# starts there the character joins the same text token: text without these
# characters parses as itself. Parser() refuses an inline rule not listed here.
_RULE_STARTS = {
    "text": "", "newline": "\n", "math_inline": "$\\", "escape": "\\", "backticks": "`",
    "strikethrough": "~", "emphasis": "*_", "footnote_ref": "[", "link": "[", "image": "!",
    "autolink": "<", "html_inline": "<", "entity": "&",
}
# The first characters of a line at which each block rule of ours can start
# (after the line's indentation, itself code's start); table and lheading need a
# second line. Any other first character starts a paragraph's text. Parser()
# refuses a block rule not listed here.
_BLOCK_RULE_STARTS = {
    "table": "", "code": " \t", "math_block": "$\\", "fence": "`~", "blockquote": ">",
    "hr": "-*_", "list": "-+*0123456789", "footnote_def": "[", "reference": "[",
    "html_block": "<", "heading": "#", "lheading": "", "paragraph": "",
}
_MAY_START_BLOCK = frozenset("".join(_BLOCK_RULE_STARTS.values()))
# Text no inline rule acts on, whose inline parse is itself: none of the rules'
# start characters, no `]` (a label's end), no `#` (a heading's closing marks),
# no white space but the plain space (a block's content is stripped of it), no
# NUL (a parse replaces it) and no bare URL (`://`, `www.`: autolinked). One
# character class, searched: linear in the text.
_NOT_PLAIN = re.compile(r"[\n$\\`~*_\[!<&\]#\x00]|[^\S ]")
# One line that is a heading or a list item by its marker alone, then one space
# and the content: (heading marks, bullet, number, delimiter, content).
_BLOCK_KINDS = {"ul": "bullet_list_open", "ol": "ordered_list_open", "p": "paragraph_open",
                "blockquote": "blockquote_open"}
_MARKED_LINE = re.compile(r"(?:(#{1,6})|([-+*])|(\d{1,9})([.)])) (\S.*)")


class _NoDebugLog:
    """Stands in for the module loggers of markdown-it's block rules, which log
    every rule entry at DEBUG level: ~90 logger calls on one block parse of a
    short list, each a call into `logging` to learn that DEBUG is off."""

    # `"".format` takes any arguments and ignores them: a call into C, no Python frame.
    debug = staticmethod("".format)


_BLOCK_RULES = ("blockquote", "code", "fence", "heading", "hr", "html_block", "lheading",
                "list", "paragraph", "reference")


def quiet_block_rule_logs() -> int:
    """Replace the DEBUG loggers of markdown-it's block rules with `_NoDebugLog`
    in this process; returns how many were replaced. For the page's own
    interpreter only (browser/runtime.py): in a server or a user's process
    another library's DEBUG logs are not ours to silence."""
    replaced = 0
    for rule in _BLOCK_RULES:
        module = importlib.import_module(f"markdown_it.rules_block.{rule}")
        if hasattr(module, "LOGGER"):
            setattr(module, "LOGGER", _NoDebugLog())  # noqa: B010 - a module, untyped here
            replaced += 1
    return replaced


def _is_plain(text: str) -> bool:
    return (text != "" and _NOT_PLAIN.search(text) is None and "://" not in text
            and "www." not in text.lower())


def _starts_no_block(content: str) -> bool:
    """Whether a line (or a list item's or heading's content) starting so can
    only be a paragraph's text: a character no block rule starts at, fewer
    than three backticks or tildes (not a fence), or `*` or `_` that opens
    inline markup (not a list marker: the next character is no blank; not a
    thematic break: it holds a letter or digit)."""
    first = content[:1]
    if first.isalpha():
        return True
    if first in ("`", "~"):
        return not content.startswith(first * 3)
    if first in ("*", "_"):
        return content[1:2] not in ("", " ", "\t") and any(c.isalnum() for c in content)
    return first != "" and first not in _MAY_START_BLOCK


def _fence_line(src: str) -> bool:
    """Whether `src` is one line (with its break or not) that opens a fenced
    code block at its first column: three or more backticks (then no backtick
    in the info string) or tildes. Alone, it runs to the end of the source."""
    if "\n" in src[:-1]:
        return False
    first = src[:1]
    if first not in ("`", "~") or not src.startswith(first * 3):
        return False
    return first == "~" or "`" not in src.lstrip("`")


def _line_block(src: str, marked: bool) -> tuple[str, Attrs, str] | None:
    """(tag, attributes, content) of `src` when it is one line (with its break
    or not) that is a paragraph, or (`marked`) a heading, or a list item or a
    block quote whose marker is followed by one space, and whose content
    `_starts_no_block` (a heading's may start with anything): markdown-it
    makes it that block around the inline parse of the content. Tag "p",
    "h1".."h6", "ul" or "ol" (one item), "blockquote" (one paragraph). None:
    any other source (a block parse decides)."""
    if "\n" in src[:-1]:
        return None
    src = src.rstrip("\n")  # the line's break changes nothing of it
    attrs: Attrs = ()
    if _starts_no_block(src):
        content, tag = src, "p"
    elif marked and src.startswith("> ") and _starts_no_block(src[2:]):
        content, tag = src[2:], "blockquote"
    else:
        line = _MARKED_LINE.fullmatch(src) if marked else None
        if line is None:
            return None
        marks, bullet, number, _delim, content = line.groups()
        # A heading's content is inline text whatever it starts with; its
        # closing marks are not (`#` left to the parse).
        if "#" in content if marks else not _starts_no_block(content):
            return None
        tag = f"h{len(marks)}" if marks else "ul" if bullet else "ol"
        if number and int(number) != 1:
            attrs = (("start", str(int(number))),)
    content = content.rstrip(" ")
    if content != content.strip() or "\x00" in content:
        # A block strips other white space too (so does the math block's line
        # test: "\u00a0$$" opens one); a parse replaces NUL.
        return None
    return tag, attrs, content


def _wrap_line(tag: str, attrs: Attrs, kids: tuple[Node, ...]) -> Element:
    """A `_line_block`'s node around its content's inline nodes."""
    if tag in ("ul", "ol"):
        return (tag, attrs, (("li", (), kids),))
    if tag == "blockquote":
        return (tag, attrs, (("p", (), kids),))
    return (tag, attrs, kids)


def _trim_url(url: str) -> str:
    """GFM's end rules: trailing punctuation, unbalanced ')' and entity-like
    tails. One backward pass (each character looked at a bounded number of
    times): the URL is untrusted and may be long."""
    opens, closes = url.count("("), url.count(")")
    end = len(url)
    while end:
        c = url[end - 1]
        if c in "?!.,:*_~'\"":
            end -= 1
        elif c == ")" and closes > opens:
            closes -= 1
            end -= 1
        elif c == ";":
            j = end - 2
            while j >= 0 and url[j].isascii() and url[j].isalnum():
                j -= 1
            if j >= 0 and url[j] == "&" and j < end - 2:
                end = j
            else:
                break
        else:
            break
    return url[:end]


class _CappedBlock(ParserBlock):
    """markdown-it's block parser, except past `maxNesting` container levels:
    there markdown-it drops the rest of the input; here it stays, as
    paragraphs of literal text (`> > > …` past 20 levels reads as text). A
    container's content parsed alone (`Parser.within`) counts the levels
    above it too, so the cap falls where a parse of the whole document puts it."""

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        if state.level + state.env.get("_sp_levels", 0) < state.md.options.maxNesting:
            super().tokenize(state, startLine, endLine)
            return
        line = startLine
        while line < endLine:
            # As markdown-it's own loop does, blank lines count as consumed: a
            # container whose content is only blank (`>` × 20) must not be
            # left where it started ("block rule didn't increment state.line").
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine or state.sCount[line] < state.blkIndent:
                break
            paragraph(state, line, endLine, False)  # consumes at least one line
            line = state.line


_MAX_INLINE_DEPTH = 16  # deeper inline elements degrade to their literal markup
Context = tuple[str, int]  # (id prefix, block index): footnote element ids


def note_slug(label: str) -> str:
    """A footnote label as an id fragment: [A-Za-z0-9_-] only, injective."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "-") else f"_{ord(c):x}_"
                   for c in label)


class Parser:
    """One configured markdown-it-py instance and the token -> tree conversion."""

    levels = 0  # block levels above the sources it parses (`within`)

    def __init__(self, *, allow_images: bool = False, autolink: bool = True) -> None:
        self.allow_images = allow_images
        self.autolink = autolink
        self.md = self._markdown_it(inline=True, footnote_defs=True)
        # A footnote's content: the same, except that it cannot hold another
        # footnote definition (so rendering one never recurses further).
        self.note_md = self._markdown_it(inline=True, footnote_defs=False)
        # Block structure only (no inline pass): cheap, used to find block boundaries.
        self.blocks_md = self._markdown_it(inline=False, footnote_defs=True)
        for md in (self.md, self.note_md):
            unknown = set(md.inline.ruler.get_active_rules()) - _RULE_STARTS.keys()
            if unknown:  # `_is_plain` would answer for text such a rule acts on
                raise RuntimeError(f"inline rules without their start characters: {unknown}")
        for md in (self.md, self.note_md, self.blocks_md):
            unknown = set(md.block.ruler.get_active_rules()) - _BLOCK_RULE_STARTS.keys()
            if unknown:  # `_starts_no_block` would answer for a line such a rule starts
                raise RuntimeError(f"block rules without their start characters: {unknown}")

    @staticmethod
    def _markdown_it(inline: bool, footnote_defs: bool) -> MarkdownIt:
        md = MarkdownIt("commonmark", {"html": False})
        md.enable(["table", "strikethrough"])
        # No core `text_join`: the paragraph-level paths (`inline`,
        # `inline_split`) run the inline parser alone, so a full parse must
        # hand `_inline` the same tokens (it joins text runs itself).
        md.disable(["text_join"] if inline else ["inline", "text_join"])
        md.validateLink = is_safe_link  # type: ignore[method-assign]
        md.block.__class__ = _CappedBlock
        use_math(md)
        use_footnotes(md, definitions=footnote_defs)
        return md

    def marks_are_blocks(self) -> bool:
        """Whether a heading or list marker at the top of a source opens its
        block: not past markdown-it's nesting cap (`_CappedBlock`), where every
        line is a paragraph's text."""
        return self.levels < self.md.options.maxNesting

    def within(self, levels: int) -> Parser:
        """This parser for a container's content parsed alone, `levels` block
        levels further down (a list item's content: 2, the list and the item;
        a block quote's: 1), for markdown-it's nesting cap to count them."""
        inner = copy.copy(self)
        inner.levels = self.levels + levels
        return inner

    # -- parsing -------------------------------------------------------------
    def _env(self, refs: dict, ctx: Context | None) -> dict[str, Any]:
        # Definitions found in this source go to the front map; the caller's
        # map is read, never copied (its size must not cost every parse).
        return {"references": ChainMap({}, refs), "_sp_ctx": ctx or ("", 0),
                "_sp_notes": [], "_sp_refs": [], "_sp_levels": self.levels}

    @staticmethod
    def _refs_after(env: dict[str, Any], refs: dict) -> dict:
        added = env["references"].maps[0]
        return {**refs, **added} if added else refs

    def line_kind(self, line: str) -> str | None:
        """The token type of the block that `line` (one line) is alone, when its
        start says it without a parse (`_line_block`), else None."""
        block = _line_block(line, self.marks_are_blocks())
        return None if block is None else _BLOCK_KINDS.get(block[0], "heading_open")

    def block_starts(self, src: str, refs: dict) -> list[tuple[int, int, str]]:
        """(start line, end line, token type) of each top-level block of `src`."""
        kind = self.line_kind(src)
        if kind is not None:  # one line whose block its start says (no parse's ~0.1 ms)
            return [(0, 1, kind)]
        marked = self.marks_are_blocks()
        if marked and _fence_line(src):  # a code block's first line
            return [(0, 1, "fence")]
        nl = src.find("\n")
        if (marked and nl > 0 and _fence_line(src[:nl]) and src.find("\n", nl + 1) < 0
                and src[nl + 1:].strip(" \t")):
            # Its first line and the next one not yet complete: an open fence runs
            # over both, whatever that line holds (a closing run closes it there).
            return [(0, 2, "fence")]
        out = []
        for tok in self.blocks_md.parse(src, self._env(refs, None)):
            if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
                out.append((tok.map[0], tok.map[1], tok.type))
        return out

    def render(self, src: str, refs: dict, ctx: Context | None = None
               ) -> tuple[list[Node], dict]:
        """Top-level nodes of `src`, and the references known after it."""
        nodes, refs, _notes, _used = self.render_all(src, refs, ctx)
        return nodes, refs

    def render_all(self, src: str, refs: dict, ctx: Context | None = None) -> tuple[
            list[Node], dict, list[tuple[str, list[Node]]], list[tuple[str, str]]]:
        """Nodes, references after it, footnote definitions (label, content)
        and footnote references made (key, element id) of `src`. `ctx` is
        (id prefix, index of the block in its document) for footnote ids."""
        line = _line_block(src, self.marks_are_blocks())
        if line is not None:
            # One line: its block is known; the inline parse alone gives its
            # content (a third to a half of a parse's cost is its block pass).
            tag, attrs, content = line
            if _is_plain(content):
                return [_wrap_line(tag, attrs, (content,))], refs, [], []
            kids, env = self._inline_env(content, refs, ctx)
            return [_wrap_line(tag, attrs, tuple(kids))], refs, [], env["_sp_refs"]
        env = self._env(refs, ctx)
        tokens = self.md.parse(src, env)
        nodes = self._blocks(tokens, env)
        return nodes, self._refs_after(env, refs), env["_sp_notes"], env["_sp_refs"]

    def inline(self, src: str, refs: dict, ctx: Context | None = None) -> list[Node]:
        """Inline nodes of `src` (the content of one paragraph), no block pass."""
        if _is_plain(src):
            return [src]
        if not src:
            return []
        return self._inline_env(src, refs, ctx)[0]

    def _inline_env(self, src: str, refs: dict, ctx: Context | None
                    ) -> tuple[list[Node], dict[str, Any]]:
        """markdown-it's inline parse of `src`: its nodes, and the parse's env
        (the footnote references it made)."""
        env = self._env(refs, ctx)
        tokens: list = []
        self.md.inline.parse(src, self.md, env, tokens)
        return self._inline(tokens, env), env

    def inline_split(self, src: str, refs: dict, ctx: Context | None = None
                     ) -> tuple[list[Node], bool]:
        """Inline nodes of `src` and whether `src` is *closed*: nothing in it can
        pair with text after it, so parse(src + more) = parse(src) ++ parse(more)
        whenever `more` follows a blank (`src` ends with a space or line break).

        Read from markdown-it's own state after the parse: no emphasis or
        strikethrough opener left unmatched, no literal `[` left without its
        `]` (a link label may still close), no `](` / `][` left as text nor a
        reference link followed by `(` (a destination, title or label may
        still close), no literal backtick run, in an image's text too
        (a code span may still close), and no `$`, `\\(`, `\\[` on the last
        line (inline math closes on its line)."""
        if _is_plain(src):  # the usual piece of prose: itself, and nothing in it opens
            return [src], True
        env = self._env(refs, ctx)
        tokens: list = []
        state = StateInline(src, self.md, env, tokens)
        self.md.inline.tokenize(state)
        for rule in self.md.inline.ruler2.getRules(""):
            rule(state)
        closed = not any(d.open and d.end < 0 for d in state.delimiters)
        depth = 0
        after_link = False
        for tok in tokens:
            if not closed:
                break
            if tok.type != "text":
                after_link = tok.type in ("link_close", "image")
                if tok.type == "image" and "`" in tok.content:
                    # Its text is one token: a backtick run there may still
                    # pair with a later one (a code span outranks the image).
                    closed = False
                continue
            text = tok.content
            # `[label](` after a defined label: the label became a reference
            # link and `(` text, but the inline link may still close.
            if "`" in text or "](" in text or "][" in text or (
                    after_link and text.startswith("(")):
                closed = False
            after_link = False
            for c in text:
                if c == "[":
                    depth += 1
                elif c == "]" and depth:
                    depth -= 1
        last_line = src[src.rfind("\n") + 1:]
        if depth or "$" in last_line or "\\(" in last_line or "\\[" in last_line:
            closed = False
        return self._inline(tokens, env), closed

    # -- tokens -> tree ------------------------------------------------------
    def _blocks(self, tokens: list, env: dict[str, Any]) -> list[Node]:
        # Each frame: [tag, attrs, children, transparent]; a hidden paragraph
        # (tight list) is transparent: its children join the parent.
        root: list[Any] = [None, (), [], False]
        stack = [root]
        for tok in tokens:
            t = tok.type
            if tok.nesting == 1:
                tag = tok.tag
                attrs: Attrs = ()
                if t == "ordered_list_open":
                    start = tok.attrs.get("start")
                    attrs = (("start", str(start)),) if start not in (None, 1) else ()
                elif t in ("th_open", "td_open"):
                    align = _ALIGN.get(str(tok.attrs.get("style", "")))
                    attrs = (("align", align),) if align else ()
                elif t not in _SIMPLE_BLOCK and t not in ("paragraph_open", "heading_open"):
                    tag = tok.tag or "div"
                stack.append([tag, attrs, [], bool(tok.hidden)])
            elif tok.nesting == -1:
                tag, attrs, children, transparent = stack.pop()
                parent = stack[-1][2]
                if transparent:
                    parent.extend(children)
                    continue
                if tag == "li":
                    attrs, children = self._task_item(attrs, children)
                parent.append((tag, attrs, tuple(children)))
            else:
                parent = stack[-1][2]
                if t == "inline":
                    parent.extend(self._inline(tok.children or [], env))
                elif t == "fence":
                    info = unescapeAll(tok.info).strip()
                    # The class value goes through setAttribute / attribute
                    # escaping, so any first word of the info string is safe.
                    lang = info.split(None, 1)[0] if info else ""
                    code_attrs = (("class", "language-" + lang),) if lang else ()
                    family = language_of(lang) if lang else None
                    kids = (tuple(highlight(family, tok.content)) if family
                            else _texts(tok.content))
                    parent.append(("pre", (), (("code", code_attrs, kids),)))
                elif t == "code_block":
                    parent.append(("pre", (), (("code", (), _texts(tok.content)),)))
                elif t == "hr":
                    parent.append(("hr", (), ()))
                elif t == "footnote_def":
                    # Shown in the footnotes section, not in the flow.
                    note_env = dict(env, _sp_notes=[])
                    content = self._blocks(self.note_md.parse(tok.content, note_env), note_env)
                    env["_sp_notes"].append((tok.meta["label"], content))
                elif t == "math_block" and tok.meta.get("closed"):
                    parent.append(("div", (("class", "sp-math-block"),),
                                   (tex_to_mathml(tok.content.strip(), True),)))
                elif t == "math_block":  # not closed (yet): its source, as text
                    parent.append(("p", (("class", "sp-math-source"),),
                                   (tok.markup + "\n" + tok.content.rstrip("\n"),)))
                elif t == "html_block":  # not produced with html=False; text if it were
                    parent.append(("p", (), (tok.content,)))
        return root[2]

    def _task_item(self, attrs: tuple, children: list) -> tuple[tuple, list]:
        if not children:
            return attrs, children
        first = children[0]
        if isinstance(first, str):
            host, index = None, 0
            text = first
        elif first[0] == "p" and first[2] and isinstance(first[2][0], str):
            host, index = first, 0
            text = first[2][0]
        else:
            return attrs, children
        match = _TASK.match(text)
        if not match:
            return attrs, children
        box: Element = ("input", (("type", "checkbox"), ("disabled", ""))
                        + ((("checked", ""),) if match.group(1) in "xX" else ()), ())
        rest = text[match.end():]
        inner: list[Node] = [box] + ([rest] if rest else [])
        if host is None:
            children = inner + children[1:]
        else:
            para = (host[0], host[1], tuple(inner) + tuple(host[2][index + 1:]))
            children = [para] + children[1:]
        return attrs + (("class", "task-list-item"),), children

    def _inline(self, tokens: list, env: dict[str, Any]) -> list[Node]:
        root: list[Any] = [None, (), []]
        stack = [root]
        in_link = 0

        def add(node: Node) -> None:
            kids = stack[-1][2]
            if isinstance(node, str) and (not node or (kids and isinstance(kids[-1], str))):
                if node:  # markdown-it leaves empty text tokens behind delimiters
                    kids[-1] += node
            else:
                kids.append(node)

        # Text, and escapes, run together until something else comes: a bare
        # URL is looked for over the whole run. A character reference ends a
        # run (GFM: an entity-like tail is not part of the URL).
        run: list[str] = []
        after = ""  # the character before the run, when it follows a reference

        def flush() -> None:
            nonlocal after
            if run:
                add_text("".join(run), after)
                run.clear()
            after = ""

        def add_text(text: str, after: str) -> None:
            if not self.autolink or in_link or ("://" not in text and "www." not in text.lower()):
                add(text)
                return
            pos = 0
            for m in _BARE_URL.finditer(text):
                if m.start() == 0 and after and not (after.isspace() or after in "*_~("):
                    continue  # glued to the reference before it: not a URL start
                url = _trim_url(m.group(0))
                if not _DOMAIN.match(url) or len(url) <= len("www.") or url.lower() in (
                        "http://", "https://", "www."):
                    continue
                href = url if "://" in url else "http://" + url
                if not is_safe_link(href):
                    continue
                if m.start() > pos:
                    add(text[pos:m.start()])
                add(("a", (("href", href), ("rel", LINK_REL)), (url,)))
                pos = m.start() + len(url)
            if pos < len(text):
                add(text[pos:])

        for tok in tokens:
            t = tok.type
            if t == "text" or (t == "text_special" and tok.info != "entity"):
                run.append(tok.content)
                continue
            flush()
            if t == "text_special":  # a character reference: its text, linked to nothing
                add(tok.content)
                after = tok.content[-1:]
            elif t == "softbreak":
                add("\n")
            elif t == "hardbreak":
                add(("br", (), ()))
            elif t == "code_inline":
                add(("code", (), (tok.content,)))
            elif t == "footnote_ref":
                add(self._footnote_ref(tok.meta["label"], env))
            elif t == "math_inline":
                add(tex_to_mathml(tok.content.strip(), bool(tok.meta.get("display"))))
            elif tok.nesting == 1 and len(stack) > _MAX_INLINE_DEPTH:
                # Too deep (e.g. `*a ` x 600 closed by the open-tail rules): the
                # element degrades to its markup as text; no tree deeper than this.
                add(tok.markup)
                stack.append(["", tok.markup, []])
            elif t in _SIMPLE_INLINE:
                stack.append([_SIMPLE_INLINE[t], (), []])
            elif t == "link_open":
                href = str(tok.attrs.get("href", ""))
                link: Attrs = (("href", href),)
                if tok.attrs.get("title"):
                    link += (("title", str(tok.attrs["title"])),)
                stack.append(["a", link + (("rel", LINK_REL),), []])
                in_link += 1
            elif tok.nesting == -1 and len(stack) > 1:
                tag, attrs, kids = stack.pop()
                if not tag:  # a degraded element: its children, then its markup
                    for kid in kids:
                        add(kid)
                    add(tok.markup)
                    continue
                if tag == "a":
                    in_link -= 1
                add((tag, attrs, tuple(kids)))
            elif t == "image":
                add(self._image(tok))
            elif t == "html_inline":  # not produced with html=False
                add(tok.content)
        flush()
        return root[2]

    def _footnote_ref(self, label: str, env: dict[str, Any]) -> Element:
        prefix, block = env["_sp_ctx"]
        key = footnote_key(label)
        attrs: Attrs = (("href", "#" + prefix + "fn-" + note_slug(label.casefold())),)
        used = env["_sp_refs"]
        if all(k != key for k, _ in used):  # the block's first reference to it
            ref_id = f"{prefix}fnref-{note_slug(label.casefold())}-{block}"
            attrs += (("id", ref_id),)
            used.append((key, ref_id))
        return ("sup", (("class", "footnote-ref"),), (("a", attrs, (label,)),))

    def _image(self, tok: Any) -> Element:
        src = str(tok.attrs.get("src", ""))
        alt = "".join(_plain(c) for c in (tok.children or []))
        title = tok.attrs.get("title")
        attrs: Attrs
        if self.allow_images or is_same_origin(src):
            attrs = (("src", src), ("alt", alt))
            if title:
                attrs += (("title", str(title)),)
            return ("img", attrs, ())
        attrs = (("href", src), ("rel", LINK_REL), ("class", "sp-image-link"))
        if title:
            attrs += (("title", str(title)),)
        return ("a", attrs, (alt or src,))


def _texts(text: str) -> tuple[str, ...]:
    return (text,) if text else ()


def _plain(tok: Any) -> str:
    """markdown-it's alt text: the inline content as plain text."""
    if tok.type in ("text", "text_special", "code_inline"):
        return tok.content
    if tok.type in ("softbreak", "hardbreak"):
        return "\n"
    if tok.type == "image":
        return "".join(_plain(c) for c in (tok.children or []))
    return ""


_default: Parser | None = None


def default_parser() -> Parser:
    """The shared parser with default options (parsers are stateless between
    parses, so every stream and renderer can use one)."""
    global _default
    if _default is None:
        _default = Parser()
    return _default
