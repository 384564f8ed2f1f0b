"""XSS payloads in Markdown, shared by the core and the browser tests.

Each payload, if it ever executed in a page, would call `window.__xss(n)`.
Sources of the shapes: the usual filter-evasion cheat sheets (script/img/svg
tags, event handlers, javascript:/data:/vbscript: URLs obfuscated with
entities, percent escapes, whitespace, control characters and mixed case),
Markdown-specific ones (link and image destinations, autolinks, reference
definitions, link titles breaking out of attributes, fence info strings).
"""

from __future__ import annotations

PAYLOADS: list[str] = [
    "<script>window.__xss(1)</script>",
    "<img src=x onerror=window.__xss(2)>",
    "<svg onload=window.__xss(3)>",
    "<iframe src=\"javascript:window.__xss(4)\"></iframe>",
    "<a href=\"javascript:window.__xss(5)\">raw html link</a>",
    "[click](javascript:window.__xss(6))",
    "[click](JaVaScRiPt:window.__xss(7))",
    "[click](javascript&#58;window.__xss(8))",
    "[click](&#x6A;avascript:window.__xss(9))",
    "[click](java&#x09;script:window.__xss(10))",
    "[click](<java script:window.__xss(11)>)",
    "[click](%6Aavascript:window.__xss(12))",
    "[click]( javascript:window.__xss(13))",
    "[click](&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105"
    "&#0000112&#0000116&#0000058window.__xss(14))",
    "[click](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3MoMTUpPC9zY3JpcHQ+)",
    "[click](vbscript:window.__xss(16))",
    "![img](javascript:window.__xss(17))",
    "![img](x\" onerror=\"window.__xss(18))",
    "<javascript:window.__xss(19)>",
    "[ref]\n\n[ref]: javascript:window.__xss(20)",
    "[t](https://example.com \"title\\\" onmouseover=\\\"window.__xss(21)\")",
    "```js\" onmouseover=\"window.__xss(22)\nalert(1)\n```",
    "**<img src=x onerror=window.__xss(23)>**",
    "`<script>window.__xss(24)</script>`",
    "| <script>window.__xss(25)</script> | b |\n|---|---|\n"
    "| <img src=x onerror=window.__xss(26)> | c |",
    "- [ ] <svg/onload=window.__xss(27)>",
    "&lt;script&gt;window.__xss(28)&lt;/script&gt;",
    "<style>@import 'javascript:window.__xss(29)';</style>",
    "[click](\\u006aavascript:window.__xss(30))",
    "[x](javascript://%0Awindow.__xss(31))",
    "<a href=\"&#106;avascript:window.__xss(32)\">x</a>",
    "www.example.com\"onmouseover=\"window.__xss(33)",
    "https://example.com/<script>window.__xss(34)</script>",
    "<details open ontoggle=window.__xss(35)>",
    "[a](javascript\n:window.__xss(36))",
    "![a](//evil.example/x.png)",
    "<form><button formaction=javascript:window.__xss(37)>x</button></form>",
    # Math, code and footnotes: TeX that carries URLs or styles elsewhere, hostile
    # info strings, footnote labels shaped like markup.
    "$\\href{javascript:window.__xss(38)}{click}$",
    "$$\\style{background:url(javascript:window.__xss(39))}{x}$$",
    "\\[\\url{javascript:window.__xss(40)}\\]",
    "$\\unicode{<img src=x onerror=window.__xss(41)>}$",
    "```js\" onmouseover=\"window.__xss(42)\n<script>window.__xss(43)</script>\n```",
    "```html\n<img src=x onerror=window.__xss(44)>\n```",
    "Note[^x\"onclick=\"window.__xss(45)].\n\n[^x\"onclick=\"window.__xss(45)]: hi",
    "[^1]\n\n[^1]: [a](javascript:window.__xss(46))",
]
