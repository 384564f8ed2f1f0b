"""The DOM calls a Markdown view makes most, each one crossing of the FFI.

In the page, `el.setAttribute(name, value)` through Pyodide is an attribute
lookup that hands Python a new proxy for the function (Pyodide probes its type
first) and then the call; `el.append(*kids)` the same. A view building a code
line's token spans or a table row's cells makes a dozen such calls in a frame.
`bridge_calls` takes them from js_shim/bridge.js instead, looked up once: one
crossing per build, the attributes set in JS. `doc_calls` makes the same calls
on any DOM-like document (the CPython tests' fake one). A frame's text write,
`appendData` on a Text node, goes the same way.

Only the crossing moves: which tags and attributes, and every attribute's
sanitising, stay with the caller (markdown_dom.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DomCalls", "bridge_calls", "doc_calls"]


@dataclass(frozen=True, slots=True)
class DomCalls:
    # element(tag, name, value, name, value, ...) -> a new element of the view's document
    element: Callable[..., Any]
    # append(parent, *children)
    append: Callable[..., None]
    # set_attribute(el, name, value)
    set_attribute: Callable[[Any, str, str], None]
    # append_data(text_node, text): most frames' one DOM write
    append_data: Callable[[Any, str], None]


def bridge_calls(bridge: Any, doc: Any) -> DomCalls:
    """The bridge's `element`, `appendTo`, `setAttribute` and `appendData`, each
    bound once."""
    return DomCalls(functools.partial(bridge.element, doc), bridge.appendTo,
                    bridge.setAttribute, bridge.appendData)


def doc_calls(doc: Any) -> DomCalls:
    """The same calls as plain DOM methods of `doc` and its elements."""
    create = doc.createElement

    def element(tag: str, *attributes: str) -> Any:
        el = create(tag)
        for i in range(0, len(attributes) - 1, 2):
            el.setAttribute(attributes[i], attributes[i + 1])
        return el

    def append(parent: Any, *children: Any) -> None:
        parent.append(*children)

    def set_attribute(el: Any, name: str, value: str) -> None:
        el.setAttribute(name, value)

    def append_data(node: Any, text: str) -> None:
        node.appendData(text)

    return DomCalls(element, append, set_attribute, append_data)
