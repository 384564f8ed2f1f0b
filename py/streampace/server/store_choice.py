"""The store a server's configuration names, made (``make_store``).

Apart from ``store.py`` so that the store protocols, which every Redis module
imports, never import the Redis store back: the memory store needs no Redis
client, so ``RedisStore`` is imported only when a Redis URL is configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .store import MemoryStore, SessionStore, check_store_spec

if TYPE_CHECKING:
    from .config import ServerConfig

__all__ = ["make_store"]


def make_store(config: ServerConfig) -> SessionStore:
    """The store ``config.store`` names (checked first: a bad URL is a ValueError)."""
    spec = check_store_spec(config.store)
    if spec == "memory":
        return MemoryStore()
    from .redis_store import RedisStore

    return RedisStore(spec, config)
