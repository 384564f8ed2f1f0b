"""URL policy for links and images in untrusted Markdown.

Links are kept only for http:, https:, mailto: and relative URLs. Anything with
another scheme becomes plain text, including obfuscated forms: the check runs on
the URL as a browser would read it (entities are already decoded by the parser;
here ASCII whitespace and control characters are removed, as the URL parser
does, percent escapes in the scheme are decoded, and case is folded).
Images load only from the page's own origin unless allowed: a URL with a scheme
or starting with two slashes (in any mix of `/` and `\\`) is another origin.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["ALLOWED_SCHEMES", "LINK_REL", "is_safe_link", "is_same_origin"]

ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"

# What the WHATWG URL parser strips or ignores before reading a scheme.
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")


def _as_read(url: str) -> str:
    # Decode percent escapes until stable (double-encoded tricks), then strip
    # what the URL parser would drop anyway.
    for _ in range(3):
        decoded = unquote(url)
        if decoded == url:
            break
        url = decoded
    return _INVISIBLE.sub("", url).lower()


def _scheme(url: str) -> str | None:
    match = _SCHEME.match(_as_read(url))
    return match.group(1) if match else None


def is_safe_link(url: str) -> bool:
    scheme = _scheme(url)
    return scheme is None or scheme in ALLOWED_SCHEMES


def is_same_origin(url: str) -> bool:
    """A relative URL that cannot leave the page's origin."""
    if _scheme(url) is not None:
        return False
    read = _as_read(url)
    return not (read.startswith(("//", "\\\\", "/\\", "\\/")))
