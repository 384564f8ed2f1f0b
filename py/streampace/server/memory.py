"""Hand freed heap memory back to the OS after large events (glibc ``malloc_trim``).

A 10 MB upstream delta passes through several transient 10 MB strings (the SSE
line, the parsed JSON, the pieces the framer cuts).  Python frees them, but
glibc keeps the pages in its heap when long-lived objects (the logged pieces)
sit between them, so the process RSS stayed ~20 MB higher for good.  After
large events have been logged we ask glibc, once, a moment later, to return
free pages.  Ordinary traffic (small events) never triggers it; on other C
libraries this is a no-op.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from collections.abc import Callable

from streampace.session.log import LARGE_EVENT_BYTES

__all__ = ["LARGE_EVENT_BYTES", "TRIM_AFTER_BYTES", "note_large_events", "note_freed"]

log = logging.getLogger("streampace.server")

TRIM_AFTER_BYTES = 4 * 1024 * 1024  # ... once this much of them was logged
TRIM_DELAY_S = 1.0  # let viewers send the batches that still hold the text


def _find_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_malloc_trim = _find_malloc_trim()
_pending = 0
_scheduled = False


def note_large_events(nbytes: int) -> None:
    """``nbytes`` of large events were logged; trim soon once enough have been."""
    global _pending, _scheduled
    _pending += nbytes
    if _malloc_trim is None or _scheduled or _pending < TRIM_AFTER_BYTES:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # not on the server's loop (a unit test): nothing to schedule on
    _scheduled = True
    loop.call_later(TRIM_DELAY_S, _trim)


def note_freed(nbytes: int) -> None:
    """``nbytes`` of a closed socket's queue were dropped (a stalled peer): the same
    trim, so what its batches held goes back to the OS, not only to the heap."""
    note_large_events(nbytes)


def _trim() -> None:
    global _pending, _scheduled
    _pending = 0
    _scheduled = False
    if _malloc_trim is not None:
        _malloc_trim(0)
