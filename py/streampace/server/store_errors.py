"""Errors a session store raises (shared by the stores and the session)."""

from __future__ import annotations

__all__ = ["StoreError", "StoreFull"]


class StoreError(Exception):
    """The session store cannot do what was asked (unreachable, lease lost)."""


class StoreFull(StoreError):
    """The store holds its maximum of sessions and none can be forgotten: a new one
    is refused (1013)."""
