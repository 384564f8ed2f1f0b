"""Streamed Markdown: incremental rendering at O(delta + open block) per change.

`MarkdownStream` takes one message's deltas and emits block operations
(`FinalBlock`, `SetTail`, `AppendCode`) over a sanitised element tree
(`tree.py`); `render_html` is the one-shot form. Sans-IO: runs in CPython and
Pyodide. Design, rules and figures: docs/markdown.md.
"""

from streampace.markdown.stream import (
    AppendCode,
    FinalBlock,
    MarkdownStream,
    Op,
    SetFootnotes,
    SetTail,
    UpdateBlock,
    render_html,
)

__all__ = ["AppendCode", "FinalBlock", "MarkdownStream", "Op", "SetFootnotes", "SetTail",
           "UpdateBlock", "render_html"]
