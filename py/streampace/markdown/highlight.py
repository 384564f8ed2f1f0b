"""Syntax highlighting for fenced code, one line at a time, in linear time.

A small hand-written tokenizer per language family (one scanning loop driven by
a table of keywords, comment and string syntax), chosen over Pygments for boot
cost and per-line cost in Pyodide (docs/markdown.md has the measurements). Each
character is looked at a bounded number of times, no regex runs on the code,
and only the first `LINE_CAP` characters of a line are tokenized (the rest is
plain text), so a line costs O(min(length, cap)).

`Highlighter` is incremental: `line()` tokenizes one complete line with the
state the previous line left (an open block comment or multi-line string) and
its output never changes again; `partial()` tokenizes the unfinished last line
without keeping anything. The one-shot form (`highlight`) feeds the same lines
to the same object, so streamed and one-shot output are identical.

Output nodes: text, or `("span", (("class", "sp-hl-X"),), (text,))` with X one
of: k keyword, t type/builtin, l literal, s string, c comment, n number,
f function/macro, m meta (decorator, preprocessor, diff header), a attribute /
property / key, g tag, v variable, i inserted, d deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from streampace.markdown.tree import Node, append_nodes

__all__ = ["LANGUAGES", "Highlighter", "highlight", "language_of", "remember",
           "resumed_highlighter"]

LINE_CAP = 1000


@dataclass(frozen=True)
class _Lang:
    keywords: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    literals: frozenset[str] = frozenset()
    line_comment: tuple[str, ...] = ()
    block_comment: tuple[str, str] | None = None
    quotes: str = "\"'"
    multiline_quotes: str = ""       # quotes whose strings may span lines
    triple: bool = False             # Python's ''' and """
    ignore_case: bool = False
    at_meta: bool = False            # @decorator / @Annotation
    hash_meta: bool = False          # C preprocessor lines
    dollar_vars: bool = False        # shell $VAR, ${VAR}
    macros: bool = False             # Rust name!
    keys: bool = False               # "key": (JSON) / key: (YAML, CSS)
    string_prefixes: frozenset[str] = field(default_factory=frozenset)


def _w(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PY = _Lang(
    keywords=_w("and as assert async await break class continue def del elif else except "
                "finally for from global if import in is lambda nonlocal not or pass raise "
                "return try while with yield match case"),
    types=_w("int str float bool list dict set tuple bytes object type len range print "
             "isinstance super self cls open enumerate zip map filter sorted min max sum any "
             "all abs repr iter next Exception ValueError TypeError KeyError"),
    literals=_w("True False None"), line_comment=("#",), triple=True, at_meta=True,
    string_prefixes=_w("r b f u rb br fr rf R B F U"))
_JS = _Lang(
    keywords=_w("break case catch class const continue debugger default delete do else "
                "export extends finally for function if import in instanceof let new of "
                "return super switch this throw try typeof var void while with yield async "
                "await static get set from as implements interface type enum declare "
                "readonly public private protected abstract namespace keyof"),
    types=_w("string number boolean any unknown never object Array Object Promise Map Set "
             "console document window JSON Math Date Error"),
    literals=_w("true false null undefined NaN Infinity"), line_comment=("//",),
    block_comment=("/*", "*/"), quotes="\"'`", multiline_quotes="`", at_meta=True)
_JSON = _Lang(literals=_w("true false null"), quotes='"', keys=True,
              line_comment=("//",), block_comment=("/*", "*/"))
_SH = _Lang(
    keywords=_w("if then else elif fi for while until do done case esac in function return "
                "local export source alias unset set shift exit"),
    types=_w("echo cd ls cat grep sed awk rm cp mv mkdir pip python python3 npm npx node git "
             "curl wget sudo apt chmod chown docker make"),
    literals=_w("true false"), line_comment=("#",), dollar_vars=True, multiline_quotes="\"'")
_CSS = _Lang(keywords=_w("important"), line_comment=(), block_comment=("/*", "*/"),
             keys=True, at_meta=True)
_SQL = _Lang(
    keywords=_w("select from where insert into values update set delete create table drop "
                "alter add join left right inner outer full cross on group by order having "
                "limit offset as and or not is in exists distinct union all primary key "
                "foreign references index view default case when then else end begin commit "
                "rollback returning with like between desc asc unique constraint if"),
    types=_w("int integer varchar text boolean date timestamp serial bigint float real "
             "numeric char decimal count sum avg min max coalesce"),
    literals=_w("null true false"), line_comment=("--",), block_comment=("/*", "*/"),
    quotes="'\"", ignore_case=True)
_RUST = _Lang(
    keywords=_w("as async await break const continue crate dyn else enum extern fn for if "
                "impl in let loop match mod move mut pub ref return self Self static struct "
                "super trait type unsafe use where while"),
    types=_w("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str "
             "String Vec Option Result Box Rc Arc HashMap Some None Ok Err"),
    literals=_w("true false"), line_comment=("//",), block_comment=("/*", "*/"),
    quotes='"', macros=True, at_meta=False)
_GO = _Lang(
    keywords=_w("break case chan const continue default defer else fallthrough for func go "
                "goto if import interface map package range return select struct switch type "
                "var"),
    types=_w("int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 float32 float64 "
             "string bool byte rune error any make new len cap append copy delete panic "
             "recover"),
    literals=_w("true false nil iota"), line_comment=("//",), block_comment=("/*", "*/"),
    quotes="\"'`", multiline_quotes="`")
_C = _Lang(
    keywords=_w("auto break case const continue default do else enum extern for goto if "
                "inline register restrict return sizeof static struct switch typedef union "
                "volatile while class namespace template typename public private protected "
                "virtual override new delete this throw try catch using operator friend "
                "constexpr explicit noexcept static_cast dynamic_cast reinterpret_cast "
                "const_cast"),
    types=_w("char double float int long short signed unsigned void bool size_t int8_t "
             "int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string vector "
             "auto"),
    literals=_w("true false NULL nullptr"), line_comment=("//",), block_comment=("/*", "*/"),
    hash_meta=True)
_JAVA = _Lang(
    keywords=_w("abstract assert break case catch class const continue default do else enum "
                "extends final finally for goto if implements import instanceof interface "
                "native new package private protected public return static strictfp super "
                "switch synchronized this throw throws transient try volatile while var "
                "record yield sealed permits"),
    types=_w("boolean byte char double float int long short void String Integer Long Double "
             "Boolean Object List Map Set ArrayList HashMap Optional System"),
    literals=_w("true false null"), line_comment=("//",), block_comment=("/*", "*/"),
    at_meta=True)
_YAML = _Lang(literals=_w("true false null yes no on off True False Null"),
              line_comment=("#",), keys=True)

_FAMILIES: dict[str, _Lang | str] = {
    "python": _PY, "javascript": _JS, "json": _JSON, "shell": _SH, "css": _CSS, "sql": _SQL,
    "rust": _RUST, "go": _GO, "c": _C, "java": _JAVA, "yaml": _YAML, "html": "html",
    "diff": "diff",
}
_ALIASES = {
    "py": "python", "python3": "python", "py3": "python", "gyp": "python",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
    "ts": "javascript", "tsx": "javascript", "typescript": "javascript", "node": "javascript",
    "jsonc": "json", "json5": "json", "sh": "shell", "bash": "shell", "zsh": "shell",
    "console": "shell", "shellsession": "shell", "xml": "html", "svg": "html",
    "xhtml": "html", "htm": "html", "vue": "html", "scss": "css", "less": "css",
    "postgres": "sql", "postgresql": "sql", "mysql": "sql", "sqlite": "sql", "rs": "rust",
    "golang": "go", "h": "c", "cpp": "c", "c++": "c", "cc": "c", "cxx": "c", "hpp": "c",
    "hh": "c", "yml": "yaml", "patch": "diff", "udiff": "diff",
}
LANGUAGES = tuple(sorted(_FAMILIES))


def language_of(info_word: str) -> str | None:
    """The highlighter family for a fence's first info word, or None."""
    name = info_word.lower()
    name = _ALIASES.get(name, name)
    return name if name in _FAMILIES else None


def _span(cls: str, text: str) -> Node:
    return ("span", (("class", "sp-hl-" + cls),), (text,))


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


class _Out:
    __slots__ = ("nodes",)

    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def add(self, cls: str, text: str) -> None:
        if not text:
            return
        nodes = self.nodes
        if not cls:
            if nodes and isinstance(nodes[-1], str):
                nodes[-1] = nodes[-1] + text
            else:
                nodes.append(text)
        else:
            nodes.append(_span(cls, text))


def _string_end(line: str, i: int, quote: str, escapes: bool = True) -> int:
    """Index after the closing `quote` from `i`, or -1 if the line ends first."""
    n, q = len(line), len(quote)
    while i < n:
        c = line[i]
        if escapes and c == "\\":
            i += 2
            continue
        if line.startswith(quote, i):
            return i + q
        i += 1
    return -1


def _number_end(line: str, i: int) -> int:
    n = len(line)
    j = i
    while j < n and (line[j].isalnum() or line[j] in "._" or (
            line[j] in "+-" and line[j - 1] in "eE" and not line[i:j].startswith(("0x", "0X")))):
        j += 1
    return j


class _Line:
    """One line being tokenized by `_code_line`'s rules."""

    __slots__ = ("lang", "line", "n", "out", "partial", "start_of_line", "state")

    def __init__(self, lang: _Lang, line: str, out: _Out, partial: bool) -> None:
        self.lang, self.line, self.n, self.out, self.partial = lang, line, len(line), out, partial
        self.start_of_line = True
        self.state = ""  # what the next line starts inside ("" nothing; see _code_line)


# A rule looks at the token starting at i: it returns the index after it (the
# line's length when the token runs to the end, with `state` set), or -1 when
# the token is not its kind.
_Rule = Callable[[_Line, int], int]


def _blanks(sc: _Line, i: int) -> int:
    line, n = sc.line, sc.n
    j = i
    while j < n and line[j] in " \t":
        j += 1
    sc.out.add("", line[i:j])
    return j


def _line_comment(sc: _Line, i: int) -> int:
    line = sc.line
    if not line.startswith(sc.lang.line_comment, i) or (
            line[i] == "#" and i > 0 and line[i - 1] not in " \t"):
        return -1
    sc.out.add("c", line[i:])
    return sc.n


def _block_comment(sc: _Line, i: int) -> int:
    line, bc = sc.line, sc.lang.block_comment
    if bc is None or not line.startswith(bc[0], i):
        return -1
    end = line.find(bc[1], i + len(bc[0]))
    if end < 0:
        sc.out.add("c", line[i:])
        sc.state = "c" + bc[1]
        return sc.n
    sc.out.add("c", line[i:end + len(bc[1])])
    return end + len(bc[1])


def _string(sc: _Line, i: int) -> int:
    lang, line, c = sc.lang, sc.line, sc.line[i]
    quote = c * 3 if lang.triple and line.startswith(c * 3, i) else c
    end = _string_end(line, i + len(quote), quote)
    if lang.keys and end > 0 and line[end:].lstrip().startswith(":"):
        sc.out.add("a", line[i:end])
        return end
    if end < 0:
        sc.out.add("s", line[i:])
        if len(quote) == 3 or c in lang.multiline_quotes:
            sc.state = "s" + quote
        return sc.n
    sc.out.add("s", line[i:end])
    return end


def _number(sc: _Line, i: int) -> int:
    line, c = sc.line, sc.line[i]
    if not (c.isdigit() or (c == "." and i + 1 < sc.n and line[i + 1].isdigit())):
        return -1
    j = _number_end(line, i)
    sc.out.add("n", line[i:j])
    return j


def _word_class(sc: _Line, word: str, j: int) -> str:
    """The class of the identifier `word` ending at `j` ("f!": a Rust macro)."""
    lang, line = sc.lang, sc.line
    nxt = line[j] if j < sc.n else ""
    key = word.lower() if lang.ignore_case else word
    if nxt in lang.quotes and word in lang.string_prefixes:
        return "s"  # the string itself follows
    if lang.keys and lang is not _JSON and (sc.start_of_line or lang is _CSS) \
            and line[j:].lstrip(" \t").startswith(":"):
        return "a"
    if key in lang.keywords:
        return "k"
    if key in lang.literals:
        return "l"
    if key in lang.types:
        return "t"
    if lang.macros and nxt == "!":
        return "f!"
    return "f" if nxt == "(" else ""


def _word(sc: _Line, i: int) -> int:
    lang, line, n, c = sc.lang, sc.line, sc.n, sc.line[i]
    css = lang is _CSS
    if not (_ident_char(c) or (c == "-" and css and i + 1 < n and line[i + 1].isalpha())):
        return -1
    j = i + 1
    while j < n and (_ident_char(line[j]) or (css and line[j] == "-")):
        j += 1
    word = line[i:j]
    # At the end of a partial line a word may still grow (`in` -> `int`): it
    # is classed once complete.
    cls = "" if j == n and sc.partial else _word_class(sc, word, j)
    if cls == "f!":
        cls, word, j = "f", word + "!", j + 1
    sc.out.add(cls, word)
    sc.start_of_line = False
    return j


def _at_meta(sc: _Line, i: int) -> int:
    line, n = sc.line, sc.n
    if not (i + 1 < n and _ident_char(line[i + 1])):
        return -1
    j = i + 1
    while j < n and (_ident_char(line[j]) or line[j] in ".-"):
        j += 1
    sc.out.add("m", line[i:j])
    return j


def _dollar_var(sc: _Line, i: int) -> int:
    line, n = sc.line, sc.n
    if i + 1 >= n:
        return -1
    j = i + 1
    if line[j] == "{":
        end = line.find("}", j)
        j = n if end < 0 else end + 1
    else:
        while j < n and (_ident_char(line[j]) or (j == i + 1 and line[j] in "@#?$!*")):
            j += 1
    sc.out.add("v" if j > i + 1 else "", line[i:j])
    return j


def _yaml_dash(sc: _Line, i: int) -> int:
    if not (i + 1 < sc.n and sc.line[i + 1] == " "):
        return -1
    sc.out.add("", "- ")
    return i + 2


_ASCII_WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
# For a character no rule names (other letters and digits, punctuation).
_OTHER: tuple[_Rule, ...] = (_number, _word)


def _rule_table(lang: _Lang) -> dict[str, tuple[_Rule, ...]]:
    """Per first character, the rules to try in order (the first that takes
    the token wins; none: one character of plain text)."""
    firsts: list[tuple[_Rule, str]] = [
        (_blanks, " \t"),
        (_line_comment, "".join(lc[0] for lc in lang.line_comment)),
        (_block_comment, lang.block_comment[0][0] if lang.block_comment else ""),
        (_string, lang.quotes),
        (_number, "0123456789."),
        (_word, _ASCII_WORD + ("-" if lang is _CSS else "")),
        (_at_meta, "@" if lang.at_meta else ""),
        (_dollar_var, "$" if lang.dollar_vars else ""),
        (_yaml_dash, "-" if lang is _YAML else ""),
    ]
    table: dict[str, list[_Rule]] = {}
    for rule, chars in firsts:
        for c in chars:
            if rule not in table.setdefault(c, []):
                table[c].append(rule)
    return {c: tuple(rules) for c, rules in table.items()}


_RULES = {id(lang): _rule_table(lang) for lang in _FAMILIES.values() if isinstance(lang, _Lang)}


def _code_line(lang: _Lang, line: str, state: str, out: _Out, partial: bool = False) -> str:
    """Tokenize one line of a C-like / script language; return the state after
    it: "" or, inside a block comment or a multi-line string, its class and
    closer ("c*/", "s\"\"\"")."""
    i = 0
    if state:  # inside a block comment or a multi-line string: find its end
        kind, close = state[0], state[1:]
        end = _string_end(line, 0, close, escapes=kind == "s")
        if end < 0:
            out.add(kind, line)
            return state
        out.add(kind, line[:end])
        i = end
    elif lang.hash_meta and line.lstrip().startswith("#"):
        out.add("m", line)
        return ""
    sc = _Line(lang, line, out, partial)
    rules, n = _RULES[id(lang)], sc.n
    while i < n:
        for rule in rules.get(line[i], _OTHER):
            j = rule(sc, i)
            if j >= 0:
                break
        else:
            out.add("", line[i])
            sc.start_of_line = False
            j = i + 1
        i = j
    return sc.state


def _html_line(line: str, state: str, out: _Out) -> str:
    """Tags, attributes, strings, comments and entities; state: '', 'c' (in a
    comment) or 't' (inside a tag that continues on the next line)."""
    n = len(line)
    i = 0
    while i < n:
        if state == "c":
            end = line.find("-->", i)
            if end < 0:
                out.add("c", line[i:])
                return "c"
            out.add("c", line[i:end + 3])
            i = end + 3
            state = ""
            continue
        if state == "t":
            c = line[i]
            if c == ">" or line.startswith("/>", i):
                k = 2 if c == "/" else 1
                out.add("g", line[i:i + k])
                i += k
                state = ""
            elif c in "\"'":
                end = _string_end(line, i + 1, c, escapes=False)
                end = n if end < 0 else end
                out.add("s", line[i:end])
                i = end
            elif _ident_char(c) or c in ":-":
                j = i
                while j < n and (_ident_char(line[j]) or line[j] in ":-."):
                    j += 1
                out.add("a", line[i:j])
                i = j
            else:
                out.add("", c)
                i += 1
            continue
        c = line[i]
        if line.startswith("<!--", i):
            state = "c"
            continue
        if c == "<" and i + 1 < n and (line[i + 1].isalpha() or line[i + 1] in "/!?"):
            j = i + 1
            while j < n and (_ident_char(line[j]) or line[j] in "/!?:-."):
                j += 1
            out.add("g", line[i:j])
            i = j
            state = "t"
            continue
        if c == "&":
            j = i + 1
            while j < n and j - i < 12 and (line[j].isalnum() or line[j] == "#"):
                j += 1
            if j < n and line[j] == ";" and j > i + 1:
                out.add("l", line[i:j + 1])
                i = j + 1
                continue
        j = i + 1
        while j < n and line[j] not in "<&":
            j += 1
        out.add("", line[i:j])
        i = j
    return state


def _diff_line(line: str, out: _Out) -> None:
    if line.startswith(("+++", "---", "diff ", "index ")):
        out.add("m", line)
    elif line.startswith("@@"):
        out.add("f", line)
    elif line.startswith("+"):
        out.add("i", line)
    elif line.startswith("-"):
        out.add("d", line)
    else:
        out.add("", line)


class Highlighter:
    """Incremental highlighting of one code block (see the module docstring)."""

    def __init__(self, language: str) -> None:
        family = _FAMILIES[language]
        self.language = language
        self._lang = family if isinstance(family, _Lang) else None
        self._kind = family if isinstance(family, str) else "code"
        self.state = ""
        self.nodes: list[Node] = []   # complete lines so far (final)
        self.lines = 0                # complete lines tokenized (for tests)

    def _tokens(self, line: str, state: str, partial: bool = False) -> tuple[list[Node], str]:
        out = _Out()
        head, rest = line[:LINE_CAP], line[LINE_CAP:]
        if self._kind == "diff":
            _diff_line(head, out)
        elif self._kind == "html":
            state = _html_line(head, state, out)
        else:
            assert self._lang is not None
            state = _code_line(self._lang, head, state, out, partial and not rest)
        if rest:
            out.add("", rest)
        return out.nodes, state

    def line(self, text: str) -> None:
        """One complete line (with its "\\n")."""
        body = text[:-1] if text.endswith("\n") else text
        nodes, self.state = self._tokens(body, self.state)
        self.lines += 1
        append_nodes(self.nodes, nodes)
        append_nodes(self.nodes, ["\n"] if text.endswith("\n") else [])

    def partial(self, text: str) -> list[Node]:
        """Nodes of the complete lines plus the unfinished line `text` (not kept)."""
        nodes = list(self.nodes)
        if text:
            append_nodes(nodes, self._tokens(text, self.state, partial=True)[0])
        return nodes


# Per language, the complete lines of the last code it highlighted, their nodes
# and the state after them. A code block open inside a list item or a quote is
# parsed, so highlighted, again on each change: the lines it had are resumed
# from here, not tokenized again (line by line with state, the same nodes).
_LAST: dict[str, tuple[str, tuple[Node, ...], str]] = {}


def highlight(language: str, code: str) -> list[Node]:
    """One-shot: the nodes of `code` (the same as feeding it line by line)."""
    hl = resumed_highlighter(language, code)
    return hl.partial(code[code.rfind("\n") + 1:])


def remember(hl: Highlighter, code: str) -> None:
    """`hl`, fed the complete lines `code`, is where the next code highlighted
    in its language may resume (`highlight`): a code block streamed outside
    a parse (`item_fence.FenceTail`) that a parse shows next."""
    _LAST[hl.language] = (code, tuple(hl.nodes), hl.state)


def resumed_highlighter(language: str, code: str) -> Highlighter:
    """A highlighter fed the complete lines of `code`, resumed from the last
    code highlighted in `language` when `code` starts with its lines (only
    the lines after them are tokenized)."""
    hl = Highlighter(language)
    start = 0
    last = _LAST.get(language)
    if last is not None and code.startswith(last[0]):
        start = len(last[0])
        hl.nodes, hl.state = list(last[1]), last[2]
    resumed = start
    while True:
        nl = code.find("\n", start)
        if nl < 0:
            break
        hl.line(code[start:nl + 1])
        start = nl + 1
    if start > resumed:
        _LAST[language] = (code[:start], tuple(hl.nodes), hl.state)
    return hl
