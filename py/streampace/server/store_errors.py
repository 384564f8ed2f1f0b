"""Errors a session store raises (shared by the stores and the session)."""

from __future__ import annotations

__all__ = ["StoreError"]


class StoreError(Exception):
    """The session store cannot do what was asked (unreachable, lease lost)."""
