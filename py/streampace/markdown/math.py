"""TeX math -> MathML Core element trees (rendered natively by the browser).

A subset of LaTeX math that chat answers use: letters, numbers, operators,
Greek and symbol commands, `^` / `_` scripts, `\\frac`, `\\sqrt[n]{}`,
`\\binom`, `\\text`, font commands (`\\mathbb` etc. map to Unicode math
alphabets, as MathML Core has no other variants), accents, `\\left … \\right`,
`\\operatorname`, and matrix-like environments (`matrix`, `pmatrix`,
`bmatrix`, `vmatrix`, `cases`, `aligned`…).

Inert by construction: the output is only elements from `tree.MATHML_TAGS`
with attributes from a fixed set of constant values; TeX text only ever
becomes text nodes. Commands outside the subset — including those that carry
URLs, styles or classes in other renderers (`\\href`, `\\url`, `\\style`,
`\\class`, `\\cssId`, `\\unicode`, `\\require`…) — render as an `merror`
showing their name, and their arguments as plain math text.

Bounded: a formula over `MAX_SOURCE` characters is shown as its source; groups
nest at most `MAX_DEPTH` deep (deeper braces read as literal characters), so
the tree depth and the recursion here are bounded by constants; tokenizing and
grouping are single linear passes.
"""

from __future__ import annotations

from typing import Any

from streampace.markdown.tree import Node

__all__ = ["MAX_DEPTH", "MAX_SOURCE", "tex_to_mathml"]

MAX_SOURCE = 4000
MAX_DEPTH = 12

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_IDENT = {"infty": "∞", "partial": "∂", "nabla": "∇", "emptyset": "∅", "varnothing": "∅",
          "hbar": "ℏ", "ell": "ℓ", "aleph": "ℵ", "Re": "ℜ", "Im": "ℑ", "wp": "℘", "imath": "ı"}
_OPS = {
    "pm": "±", "mp": "∓", "times": "×", "div": "÷", "cdot": "⋅", "ast": "∗", "star": "⋆",
    "circ": "∘", "bullet": "∙", "cap": "∩", "cup": "∪", "wedge": "∧", "land": "∧", "vee": "∨",
    "lor": "∨", "oplus": "⊕", "otimes": "⊗", "setminus": "∖", "leq": "≤", "le": "≤",
    "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "equiv": "≡", "sim": "∼",
    "simeq": "≃", "cong": "≅", "propto": "∝", "in": "∈", "notin": "∉", "ni": "∋",
    "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "supseteq": "⊇", "ll": "≪", "gg": "≫",
    "perp": "⊥", "parallel": "∥", "mid": "∣", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "gets": "←", "Rightarrow": "⇒", "Leftarrow": "⇐",
    "leftrightarrow": "↔", "Leftrightarrow": "⇔", "mapsto": "↦", "implies": "⟹",
    "iff": "⟺", "uparrow": "↑", "downarrow": "↓", "longrightarrow": "⟶",
    "forall": "∀", "exists": "∃", "nexists": "∄", "neg": "¬", "lnot": "¬", "ldots": "…",
    "cdots": "⋯", "dots": "…", "vdots": "⋮", "ddots": "⋱", "prime": "′", "angle": "∠",
    "triangle": "△", "degree": "°", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊",
    "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "vert": "|", "Vert": "‖", "lvert": "|",
    "rvert": "|", "colon": ":", "therefore": "∴", "because": "∵", "top": "⊤", "bot": "⊥",
    "{": "{", "}": "}", "|": "‖", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
    "backslash": "∖",
}
_BIG = {"sum": "∑", "prod": "∏", "coprod": "∐", "int": "∫", "iint": "∬", "iiint": "∭",
        "oint": "∮", "bigcup": "⋃", "bigcap": "⋂", "bigoplus": "⨁", "bigotimes": "⨂",
        "bigvee": "⋁", "bigwedge": "⋀"}
_FUNCS = _words(
    "sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan log ln lg exp lim "
    "liminf limsup max min sup inf det dim arg deg gcd lcm ker hom Pr mod bmod")
_LIMITS = frozenset({"lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "gcd",
                     "Pr"})
_SPACES = {",": "0.1667em", ":": "0.2222em", ">": "0.2222em", ";": "0.2778em",
           " ": "0.25em", "quad": "1em", "qquad": "2em", "!": "0", "enspace": "0.5em",
           "thinspace": "0.1667em"}
_ACCENTS = {"hat": "^", "widehat": "^", "bar": "¯", "overline": "¯", "vec": "→", "dot": "˙",
            "ddot": "¨", "tilde": "~", "widetilde": "~", "check": "ˇ", "breve": "˘",
            "acute": "´", "grave": "`", "overrightarrow": "→", "overleftarrow": "←"}
_UNDER = {"underline": "_", "underbrace": "⏟"}
# Unicode mathematical alphanumerics: (capital A, small a, digit 0) code points,
# and the letters that live elsewhere (the "holes").
_ALPHABETS = {
    "mathbf": (0x1D400, 0x1D41A, 0x1D7CE), "boldsymbol": (0x1D400, 0x1D41A, 0x1D7CE),
    "mathit": (0x1D434, 0x1D44E, None), "mathcal": (0x1D49C, 0x1D4B6, None),
    "mathscr": (0x1D49C, 0x1D4B6, None), "mathfrak": (0x1D504, 0x1D51E, None),
    "mathbb": (0x1D538, 0x1D552, 0x1D7D8), "mathsf": (0x1D5A0, 0x1D5BA, 0x1D7E2),
    "mathtt": (0x1D670, 0x1D68A, 0x1D7F6),
}
_HOLES = {
    "mathit": {"h": "ℎ"},
    "mathcal": {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ",
                "R": "ℛ", "e": "ℯ", "g": "ℊ", "o": "ℴ"},
    "mathscr": {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ",
                "R": "ℛ", "e": "ℯ", "g": "ℊ", "o": "ℴ"},
    "mathfrak": {"C": "ℭ", "H": "ℌ", "I": "ℑ", "R": "ℜ", "Z": "ℨ"},
    "mathbb": {"C": "ℂ", "H": "ℍ", "N": "ℕ", "P": "ℙ", "Q": "ℚ", "R": "ℝ", "Z": "ℤ"},
}
_FENCES = {"pmatrix": ("(", ")"), "bmatrix": ("[", "]"), "Bmatrix": ("{", "}"),
           "vmatrix": ("|", "|"), "Vmatrix": ("‖", "‖"), "cases": ("{", "")}
_ENVS = frozenset({"matrix", "smallmatrix", "aligned", "align", "align*", "gathered",
                   "array", "split", "eqnarray"}) | frozenset(_FENCES)
_TEXT_CMDS = frozenset({"text", "textrm", "textbf", "textit", "mbox", "textsf", "texttt"})


def _tokens(src: str) -> list[str]:
    """Commands (`\\name` or `\\x`), single characters, number runs; blanks dropped
    (a single space token is kept for `\\text` arguments)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            j = i + 1
            while j < n and src[j].isascii() and src[j].isalpha():
                j += 1
            if j == i + 1:
                j = min(n, i + 2)
            out.append(src[i:j])
            i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (src[j].isdigit() or (src[j] == "." and j + 1 < n
                                                  and src[j + 1].isdigit())):
                j += 1
            out.append(src[i:j])
            i = j
        elif c in " \t\n":
            out.append(" ")
            while i < n and src[i] in " \t\n":
                i += 1
        else:
            out.append(c)
            i += 1
    return out


# Grouped form: a list of items; an item is a token (str) or a list (a group).
Item = Any


def _group(tokens: list[str]) -> list[Item]:
    """Braces into nested lists with an explicit stack (never recursion);
    past MAX_DEPTH a brace is a literal character."""
    root: list[Item] = []
    stack = [root]
    literal = 0  # unmatched-by-design open braces beyond the cap
    for tok in tokens:
        if tok == "{":
            if len(stack) > MAX_DEPTH:
                literal += 1
                stack[-1].append("\\{")
            else:
                group: list[Item] = []
                stack[-1].append(group)
                stack.append(group)
        elif tok == "}":
            if literal:
                literal -= 1
                stack[-1].append("\\}")
            elif len(stack) > 1:
                stack.pop()
            else:
                stack[-1].append("\\}")
        else:
            stack[-1].append(tok)
    return root


def _mo(text: str, *attrs: tuple[str, str]) -> Node:
    return ("mo", tuple(attrs), (text,))


def _row(nodes: list[Node]) -> Node:
    return nodes[0] if len(nodes) == 1 else ("mrow", (), tuple(nodes))


def _styled(alphabet: str, text: str) -> str:
    base = _ALPHABETS.get(alphabet)
    if base is None:
        return text
    holes = _HOLES.get(alphabet, {})
    out = []
    for c in text:
        if c in holes:
            out.append(holes[c])
        elif "A" <= c <= "Z":
            out.append(chr(base[0] + ord(c) - 65))
        elif "a" <= c <= "z":
            out.append(chr(base[1] + ord(c) - 97))
        elif "0" <= c <= "9" and base[2] is not None:
            out.append(chr(base[2] + ord(c) - 48))
        else:
            out.append(c)
    return "".join(out)


def _plain_text(item: Item) -> str:
    """The characters of an argument, as text (for \\text, \\operatorname…)."""
    if isinstance(item, str):
        return item[1:] if item.startswith("\\") and len(item) == 2 else item
    parts: list[str] = []
    stack: list[Item] = [iter(item)]
    while stack:  # explicit stack: argument nesting is bounded anyway
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
        elif isinstance(nxt, list):
            stack.append(iter(nxt))
        else:
            parts.append(nxt[1:] if nxt.startswith("\\") and len(nxt) == 2 else nxt)
    return "".join(parts)


class _Converter:
    def __init__(self) -> None:
        self.alphabet = ""

    def items(self, items: list[Item]) -> list[Node]:
        """Nodes of a list of items (one group level; groups below are bounded)."""
        out: list[Node] = []
        i, n = 0, len(items)
        while i < n:
            item = items[i]
            i += 1
            if item == " ":
                continue
            if item in ("^", "_", "'"):
                base: Node = ("mrow", (), ())
                i -= 1
            else:
                base_i, i = self.atom(item, items, i)
                if base_i is None:
                    continue
                base = base_i
            # Scripts: x^a, x_b, x_b^a, x'.
            sup: Node | None = None
            sub: Node | None = None
            primes = 0
            while i < n and items[i] in ("^", "_", "'", " "):
                mark = items[i]
                i += 1
                if mark == " ":
                    continue
                if mark == "'":
                    primes += 1
                    continue
                while i < n and items[i] == " ":
                    i += 1
                if i >= n:
                    break
                arg, i = self.atom(items[i], items, i + 1)
                arg = arg if arg is not None else ("mrow", (), ())
                if mark == "^":
                    sup = arg
                else:
                    sub = arg
            if primes:
                p = _mo("′" * primes)
                sup = p if sup is None else ("mrow", (), (p, sup))
            limits = base[0] == "mo" and ("movablelimits", "true") in base[1]
            if sup is not None and sub is not None:
                out.append(("munderover" if limits else "msubsup", (), (base, sub, sup)))
            elif sup is not None:
                out.append(("mover" if limits else "msup", (), (base, sup)))
            elif sub is not None:
                out.append(("munder" if limits else "msub", (), (base, sub)))
            else:
                out.append(base)
        return out

    def arg(self, items: list[Item], i: int) -> tuple[Node, int]:
        while i < len(items) and items[i] == " ":
            i += 1
        if i >= len(items):
            return ("mrow", (), ()), i
        node, j = self.atom(items[i], items, i + 1)
        return (node if node is not None else ("mrow", (), ())), j

    def raw_arg(self, items: list[Item], i: int) -> tuple[Item, int]:
        while i < len(items) and items[i] == " ":
            i += 1
        return (items[i], i + 1) if i < len(items) else ("", i)

    def atom(self, item: Item, items: list[Item], i: int) -> tuple[Node | None, int]:
        """The node for `item` (consuming arguments from items[i:]) and the next index."""
        if isinstance(item, list):
            return _row(self.items(item)) if item else ("mrow", (), ()), i
        if not item.startswith("\\") or len(item) == 1:
            if item[0].isdigit():
                return ("mn", (), (_styled(self.alphabet, item),)), i
            if item.isalpha():
                text = _styled(self.alphabet, item)
                attrs = (("mathvariant", "normal"),) if self.alphabet and text == item else ()
                return ("mi", attrs, (text,)), i
            if item in "([|":
                return _mo(item, ("stretchy", "false")), i
            return _mo(item), i
        name = item[1:]
        if name in _GREEK:
            return ("mi", (), (_GREEK[name],)), i
        if name in _IDENT:
            return ("mi", (), (_IDENT[name],)), i
        if name in _OPS:
            return _mo(_OPS[name]), i
        if name in _BIG:
            return _mo(_BIG[name], ("movablelimits", "true")), i
        if name in _FUNCS:
            node: Node | None = ("mi", (), (name,))
            if name in _LIMITS:
                node = _mo(name, ("movablelimits", "true"))
            return node, i
        if name in _SPACES:
            return ("mspace", (("width", _SPACES[name]),), ()), i
        if name in ("frac", "dfrac", "tfrac", "cfrac", "binom", "dbinom", "tbinom"):
            num, i = self.arg(items, i)
            den, i = self.arg(items, i)
            if name.endswith("binom"):
                frac: Node = ("mfrac", (("linethickness", "0"),), (num, den))
                return ("mrow", (), (_mo("("), frac, _mo(")"))), i
            return ("mfrac", (), (num, den)), i
        if name == "sqrt":
            index = None
            j = i
            while j < len(items) and items[j] == " ":
                j += 1
            if j < len(items) and items[j] == "[":
                close = j + 1
                while close < len(items) and close - j < 64 and items[close] != "]":
                    close += 1
                if close < len(items) and items[close] == "]":
                    index = _row(self.items(items[j + 1:close]))
                    i = close + 1
            body, i = self.arg(items, i)
            return (("mroot", (), (body, index)) if index is not None
                    else ("msqrt", (), (body,))), i
        if name in _TEXT_CMDS:
            raw, i = self.raw_arg(items, i)
            return ("mtext", (), (_plain_text(raw),)), i
        if name == "operatorname":
            raw, i = self.raw_arg(items, i)
            return ("mi", (), (_plain_text(raw),)), i
        if name in _ALPHABETS or name in ("mathrm", "rm", "mathnormal"):
            raw, i = self.raw_arg(items, i)
            saved, self.alphabet = self.alphabet, ("" if name == "mathnormal" else name)
            node = (self.atom(raw, [], 0)[0] if not isinstance(raw, list)
                    else _row(self.items(raw)))
            self.alphabet = saved
            if name in ("mathrm", "rm") and node is not None and node[0] == "mi":
                node = ("mi", (("mathvariant", "normal"),), node[2])
            return node, i
        if name in _ACCENTS or name in _UNDER:
            body, i = self.arg(items, i)
            if name in _UNDER:
                return ("munder", (), (body, _mo(_UNDER[name], ("stretchy", "true")))), i
            return ("mover", (), (body, _mo(_ACCENTS[name], ("stretchy", "true")))), i
        if name in ("left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl",
                    "Bigr", "middle"):
            raw, i = self.raw_arg(items, i)
            text = _plain_text(raw) if raw != "." else ""
            text = _OPS.get(text[1:], text[1:]) if text.startswith("\\") else text
            return (_mo(text, ("stretchy", "true")) if text else None), i
        if name == "begin":
            return self.environment(items, i)
        if name in ("displaystyle", "textstyle", "limits", "nolimits", "end", "label",
                    "nonumber", "notag"):
            if name in ("end", "label"):
                _raw, i = self.raw_arg(items, i)
            return None, i
        # Unknown, or a command that carries URLs / styles elsewhere: inert.
        return ("merror", (), (("mtext", (), (item,)),)), i

    def environment(self, items: list[Item], i: int) -> tuple[Node | None, int]:
        raw, i = self.raw_arg(items, i)
        env = _plain_text(raw)
        if env == "array":  # column spec: not needed for layout here
            _spec, i = self.raw_arg(items, i)
        rows: list[list[list[Item]]] = [[[]]]
        n = len(items)
        while i < n:
            item = items[i]
            i += 1
            if item == "\\end":
                _end, i = self.raw_arg(items, i)
                break
            if item == "&":
                rows[-1].append([])
            elif item == "\\\\":
                rows.append([[]])
            else:
                rows[-1][-1].append(item)
        if rows and rows[-1] == [[]]:
            rows.pop()
        align = env in ("aligned", "align", "align*", "split", "eqnarray", "cases")
        trs = []
        for cells in rows:
            tds = []
            for k, cell in enumerate(cells):
                attrs = ((("columnalign", "right" if k % 2 == 0 else "left"),) if align
                         else ())
                content: Node = _row(self.items(cell)) if cell else ("mrow", (), ())
                tds.append(("mtd", attrs, (content,)))
            trs.append(("mtr", (), tuple(tds)))
        table: Node = ("mtable", (), tuple(trs))
        if env not in _ENVS:
            return ("merror", (), (("mtext", (), ("\\begin{" + env + "}",)),)), i
        fences = _FENCES.get(env)
        if fences is None:
            return table, i
        left, right = fences
        kids = [_mo(left, ("stretchy", "true")), table]
        if right:
            kids.append(_mo(right, ("stretchy", "true")))
        return ("mrow", (), tuple(kids)), i


def tex_to_mathml(src: str, display: bool) -> Node:
    """A `math` element for TeX `src` (inline, or display when `display`)."""
    attrs: tuple[tuple[str, str], ...] = (("display", "block"),) if display else ()
    if len(src) > MAX_SOURCE:
        body: Node = ("mtext", (), (src,))
    else:
        body = _row(_Converter().items(_group(_tokens(src)))) if src.strip() else (
            "mrow", (), ())
    annotation = ("annotation", (("encoding", "application/x-tex"),), (src,))
    return ("math", attrs, (("semantics", (), (body, annotation)),))
