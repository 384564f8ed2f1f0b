"""Session stores: where a session's log lives and who may run it.

``memory`` (the default) keeps everything in this process, as streampace always
did.  ``redis://`` / ``rediss://`` URLs select the Redis Streams store
(``redis_store.py``), which lets several server processes share sessions;
``redis+cluster://`` / ``rediss+cluster://`` the same store on a Redis Cluster.

A store owns what its sessions share inside one process (a Redis client, the
control-channel listener; ``start`` once the loop is up, ``close`` at
shutdown) and gives each session a ``SessionBackend``: the session's driver
(server/session.py) is composed with it — it never subclasses it — and asks it
the few things that depend on where the log lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from .store_errors import StoreError

if TYPE_CHECKING:
    from streampace.conversation.transcript import Transcript
    from streampace.session.log import SessionLog


__all__ = ["SessionStore", "SessionBackend", "StoredSession", "MemoryStore", "MemoryBackend",
           "StoreError", "redact_url", "check_store_spec", "cluster_nodes",
           "is_cluster_spec"]


class StoredSession(Protocol):
    """What a store's parts may ask of the session they serve (server/session.py's
    ``Session``): its names, its log and conversation, three questions about who
    uses it, and the inputs a store feeds it.  Nothing here reaches into its
    engine, so a store depends on this seam and not on how the session works."""

    @property
    def id(self) -> str: ...

    @property
    def epoch(self) -> str: ...

    @property
    def log_name(self) -> str:
        """How logs name the session (never its id: that is the key)."""

    @property
    def log(self) -> SessionLog: ...

    @property
    def conversation(self) -> Transcript: ...

    @property
    def run_here(self) -> bool:
        """A run of this session is going on in this process."""

    @property
    def run_in_log(self) -> bool:
        """The log shows a run open (here or at another process)."""

    @property
    def in_use(self) -> bool:
        """A viewer is attached here, or a run goes on here."""

    def head_start_ms(self, quiet_ms: float) -> float:
        """How much earlier than its last activity it ranks for eviction."""

    def lost_run_events(self, code: str, message: str) -> list[dict[str, Any]]:
        """What ends the run the log shows open, whose owner is gone."""

    def append(self, events: list[dict[str, Any]]) -> None:
        """The store logged ``events``."""

    def reload(self, epoch: str, log_: SessionLog, transcript: Transcript,
               replacing: bool) -> None:
        """The store's view of the session (a first load, or a reload after a gap)."""

    def notify_store_down(self, message: str) -> None: ...

    def notify_store_lost(self, message: str) -> None: ...

    def stop_run(self, code: str, message: str, run_id: str | None = None) -> object:
        """Stop the run going on here."""


class SessionBackend(Protocol):
    """What a session's driver asks of its store (one per session)."""

    async def ready(self) -> None:
        """Load what the store holds for the session (before the first attach);
        raises StoreError when that cannot be done."""

    def viewer_attached(self) -> None:
        """A viewer attached (the store may need to follow the log for it)."""

    def viewer_left(self) -> None:
        """A viewer's connection is gone (the store may rank the session for eviction)."""

    async def acquire_run(self, run_id: str) -> tuple[bool, int | None]:
        """Take the right to run the session (one process at a time): whether it was
        granted, and the run's number when the store keeps the count."""

    async def emit(self, run_id: str, events: list[dict[str, Any]]) -> None:
        """Write a run's events to the log (the store logs them through
        ``Session.append``, at once or once it has them)."""

    def release_run(self, run_id: str) -> None:
        """The run is over: give up the right to run (must not wait)."""

    def publish_cancel(self, code: str, message: str) -> None:
        """Ask whichever process runs the session to stop its run."""

    async def close(self) -> None:
        """Release what the store holds for the session (shutdown, eviction)."""


class SessionStore(Protocol):
    name: str
    shared: bool  # True when other processes see the same sessions

    def backend(self, session: StoredSession) -> SessionBackend: ...

    async def exists(self, session_id: str) -> bool:
        """The store holds this session (another process may have made it)."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class MemoryBackend:
    """A session whose log is this process's memory: emitted events are logged at
    once, and nobody else can run it."""

    def __init__(self, session: StoredSession) -> None:
        self._session = session

    async def ready(self) -> None:
        pass

    def viewer_attached(self) -> None:
        pass

    def viewer_left(self) -> None:
        pass  # the hub ranks this process's sessions itself

    async def acquire_run(self, run_id: str) -> tuple[bool, int | None]:
        return True, None

    async def emit(self, run_id: str, events: list[dict[str, Any]]) -> None:
        self._session.append(events)

    def release_run(self, run_id: str) -> None:
        pass

    def publish_cancel(self, code: str, message: str) -> None:
        pass  # a memory session's runs are all here

    async def close(self) -> None:
        pass


class MemoryStore:
    """Each session's log, conversation and run in this process's memory."""

    name = "memory"
    shared = False

    def backend(self, session: StoredSession) -> SessionBackend:
        return MemoryBackend(session)

    async def exists(self, session_id: str) -> bool:
        return False  # this process's sessions are the hub's: nobody else makes any

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (safe to print or log).  Works on
    the text of the authority, so a cluster URL's host list is kept as it is."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    user, colon, _password = userinfo.partition(":")
    if not at or not colon:
        return url
    return urlunsplit((parts.scheme, f"{user}:***@{hosts}", parts.path, parts.query,
                       parts.fragment))


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def is_cluster_spec(spec: str) -> bool:
    return urlsplit(spec).scheme in CLUSTER_SCHEMES


def cluster_nodes(spec: str) -> list[tuple[str, int]]:
    """The seed nodes of a ``redis+cluster://[user:pw@]HOST:PORT[,HOST:PORT...]`` URL.
    Raises ValueError (message redacted)."""
    hosts = urlsplit(spec).netloc.rpartition("@")[2]
    nodes: list[tuple[str, int]] = []
    for item in hosts.split(","):
        host, colon, port = item.strip().rpartition(":")
        host = host.strip("[]")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"store URL {redact_url(spec)!r}: each node must be HOST:PORT")
        nodes.append((host, int(port)))
    return nodes


def check_store_spec(spec: str) -> str:
    """Validate a ``--store`` value; returns it.  Raises ValueError (message redacted)."""
    if spec == "memory":
        return spec
    parts = urlsplit(spec)
    if parts.scheme in CLUSTER_SCHEMES:
        cluster_nodes(spec)
        if parts.path.strip("/") not in ("", "0"):
            raise ValueError(f"store URL {redact_url(spec)!r}: a Redis Cluster has only "
                             "database 0")
        return spec
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise ValueError(
            f"unknown store {redact_url(spec)!r}: use memory, redis://HOST:PORT/DB "
            "(rediss:// for TLS) or redis+cluster://HOST:PORT[,HOST:PORT...]"
        )
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise ValueError(f"store URL {redact_url(spec)!r}: the path must be a database number")
    return spec
