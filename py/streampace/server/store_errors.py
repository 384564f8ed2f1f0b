"""Errors a session store raises (shared by the stores and the session)."""

from __future__ import annotations

__all__ = ["StoreError", "StoreFull", "StoreLost"]


class StoreError(Exception):
    """The session store cannot do what was asked (unreachable, lease lost)."""


class StoreFull(StoreError):
    """The store holds its maximum of sessions and none can be forgotten: a new one
    is refused (1013)."""


class StoreLost(StoreError):
    """The store lost its data (Redis restarted empty, or was flushed): what was read
    must not continue what this process holds."""
