"""Session stores: where a session's log lives and who may run it.

``memory`` (the default) keeps everything in this process, as streampace always
did.  ``redis://`` / ``rediss://`` URLs select the Redis Streams store
(``redis_store.py``), which lets several server processes share sessions.

A store makes Session objects (``new_session``) and owns what they share inside
one process (a Redis client, the control-channel listener); ``start`` runs once
the event loop is up and ``close`` at shutdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit, urlunsplit

from .store_errors import StoreError

if TYPE_CHECKING:
    from .config import ServerConfig
    from .session import Session
    from .sources import Source

__all__ = ["SessionStore", "MemoryStore", "StoreError", "make_store", "redact_url",
           "check_store_spec"]


class SessionStore(Protocol):
    name: str
    shared: bool  # True when other processes see the same sessions

    def new_session(self, session_id: str, source: Source, config: ServerConfig) -> Session: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class MemoryStore:
    """Each session's log, conversation and run in this process's memory."""

    name = "memory"
    shared = False

    def new_session(self, session_id: str, source: Source, config: ServerConfig) -> Session:
        from .session import Session

        return Session(session_id, source, config)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (safe to print or log)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query,
                       parts.fragment))


def check_store_spec(spec: str) -> str:
    """Validate a ``--store`` value; returns it.  Raises ValueError (message redacted)."""
    if spec == "memory":
        return spec
    parts = urlsplit(spec)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise ValueError(
            f"unknown store {redact_url(spec)!r}: use memory or redis://HOST:PORT/DB "
            "(rediss:// for TLS)"
        )
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise ValueError(f"store URL {redact_url(spec)!r}: the path must be a database number")
    return spec


def make_store(config: ServerConfig) -> SessionStore:
    spec = check_store_spec(config.store)
    if spec == "memory":
        return MemoryStore()
    from .redis_store import RedisStore

    return RedisStore(spec, config)
