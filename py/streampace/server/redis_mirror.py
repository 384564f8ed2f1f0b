"""A process's mirror of one Redis session: its log window and transcript, kept current.

Each process keeps, per session it serves, the same bounded SessionLog and
Transcript the memory store has.  The process's one reader (redis_reader.py)
and the catch-ups of connecting viewers read the stream after the mirror's head
and hand the entries to ``apply``, which logs them through the session's engine
(``Session.append``) and so fans them out exactly as the memory store does —
even the run owner's own viewers are fed from the stream, which keeps every
process's viewers on byte-identical event sequences.

Where the mirror stands is one typed machine (``MIRROR_TABLE``): loaded or not,
current, stale after a gap in the stream (rebuilt before the next read), or
down (Redis did not answer the reader; viewers were told once).  The diagram in
docs/architecture.md is ``diagram(MIRROR_TABLE, MirrorState.EMPTY)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from enum import Enum
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from streampace.conversation.transcript import Transcript
from streampace.lifecycle import Machine, table
from streampace.session.log import SessionLog

from .memory import note_large_events
from .redis_conn import READ_COUNT, Polled, RedisConnection, unreachable
from .redis_keys import INSTANCE_KEY, SessionKeys, chain_next, dumps, entry_seq
from .store_errors import StoreError, StoreLost

if TYPE_CHECKING:
    from .config import ServerConfig
    from .store import StoredSession

__all__ = ["MIRROR_TABLE", "MirrorEvent", "MirrorState", "RedisMirror", "STORE_DOWN_MESSAGE",
           "STORE_LOST_MESSAGE",
           "dump_conversation", "load_conversation"]

log = logging.getLogger("streampace.server")

STORE_DOWN_MESSAGE = "the session store is unreachable; retrying"
STORE_LOST_MESSAGE = "the session store lost its data; resume to continue"
STREAM_LOST_MESSAGE = ("the session store lost events it had acknowledged (a failover); "
                       "resume to continue")


class MirrorState(Enum):
    EMPTY = "empty"  # nothing loaded yet (a load that failed refuses the socket)
    CURRENT = "current"  # loaded; reads after its head extend it
    STALE = "stale"  # the stream jumped past its head: rebuilt before the next read
    DOWN = "down"  # the reader's last read failed; attached viewers were told once
    CLOSED = "closed"  # the session was closed (shutdown, eviction): late results dropped


class MirrorEvent(Enum):
    LOADED = "loaded"  # a (re)load from the stream and the snapshot key finished
    LOAD_FAILED = "load_failed"
    READ_OK = "read_ok"  # the process reader's XREAD answered
    READ_FAILED = "read_failed"  # ... or did not
    GAP = "gap"  # an entry did not follow the mirror's head
    LOST = "lost"  # Redis lost the data (restarted empty, flushed, or the session forgotten)
    CLOSE = "close"


MIRROR_TABLE = table(MirrorState, MirrorEvent, """
EMPTY    LOADED       CURRENT  the first load, before the first viewer attaches
EMPTY    LOAD_FAILED  EMPTY    Redis unreachable: the socket is refused (1013)
EMPTY    CLOSE        CLOSED   closed before it was ever loaded
CURRENT  READ_OK      CURRENT  the reader extends it
CURRENT  READ_FAILED  DOWN     Redis stopped answering: viewers are told
CURRENT  GAP          STALE    entries do not follow its head (trimmed past it, or Redis restarted)
CURRENT  LOADED       CURRENT  a reload started while stale finished after the reader recovered
CURRENT  CLOSE        CLOSED   shutdown or eviction
STALE    LOADED       CURRENT  rebuilt: viewers resume from the new log
STALE    LOAD_FAILED  STALE    the reader retries the reload
STALE    READ_OK      STALE    a read that raced the gap: the reload comes first
STALE    READ_FAILED  DOWN     Redis stopped answering: viewers are told (the gap shows again once
                               it answers)
STALE    GAP          STALE    an overlapping read found the same gap
STALE    CLOSE        CLOSED   shutdown or eviction
DOWN     READ_OK      CURRENT  Redis answers again
DOWN     READ_FAILED  DOWN     one notice per outage
DOWN     GAP          STALE    a catch-up read found a gap
DOWN     LOADED       CURRENT  a reload that was in flight finished
DOWN     LOAD_FAILED  DOWN     still unreachable
DOWN     CLOSE        CLOSED   shutdown or eviction
EMPTY    LOST         EMPTY    nothing loaded: nothing lost
CURRENT  LOST         STALE    viewers are told and closed; rebuilt under a new epoch
STALE    LOST         STALE    viewers are told and closed; rebuilt under a new epoch
DOWN     LOST         STALE    viewers are told and closed; rebuilt under a new epoch
CLOSED   LOST         CLOSED   closed: nothing to tell
CLOSED   LOADED       CLOSED   closed: a late result is dropped
CLOSED   LOAD_FAILED  CLOSED   closed: a late result is dropped
CLOSED   READ_OK      CLOSED   closed: a late result is dropped
CLOSED   READ_FAILED  CLOSED   closed: a late result is dropped
CLOSED   GAP          CLOSED   closed: a late result is dropped
CLOSED   CLOSE        CLOSED   already closed
""")

_S = MirrorState
_LOADED = (_S.CURRENT, _S.STALE, _S.DOWN)
_APPLYING = (_S.CURRENT, _S.DOWN)  # entries after the head extend the log


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def dump_conversation(conv: Transcript) -> dict[str, Any]:
    # The events that rebuild it: a fresh Transcript fed these equals this one in
    # every view (messages, history, snapshots, what is open).
    return {"events": conv.snapshot_events()}


def load_conversation(data: dict[str, Any], config: ServerConfig) -> Transcript:
    conv = Transcript(config.history_messages, config.history_bytes)
    conv.apply(data.get("events") or ())
    return conv


class RedisMirror:
    def __init__(self, session: StoredSession, conn: RedisConnection, keys: SessionKeys,
                 config: ServerConfig) -> None:
        self._session = session
        self._conn = conn
        self.keys = keys
        self._config = config
        self._machine: Machine[MirrorState, MirrorEvent] = Machine(
            "redis mirror", MIRROR_TABLE, MirrorState.EMPTY)
        self.last_data = 0.0  # loop time the reader last brought events (or looked)
        self.snapshot_seq = 0  # the seq of the newest snapshot key this process knows of
        self.chain = ""  # cluster: the chained hash of the entry at the head
        self.on_applied: Any = None  # called after entries were logged (the run's owner)
        self._lost_message = STORE_LOST_MESSAGE
        self._loading: asyncio.Future[None] | None = None
        self._catching: asyncio.Future[None] | None = None

    @property
    def state(self) -> MirrorState:
        return self._machine.state

    @property
    def loaded(self) -> bool:
        return self._machine.state in _LOADED

    @property
    def stale(self) -> bool:
        return self._machine.state is MirrorState.STALE

    @property
    def head(self) -> int:
        return self._session.log.head

    def _move(self, event: MirrorEvent) -> MirrorState:
        before = self._machine.state
        after = self._machine.step(event)
        if after is MirrorState.DOWN and before is not MirrorState.DOWN:
            self._session.notify_store_down(STORE_DOWN_MESSAGE)
        elif event is MirrorEvent.LOST and before in _LOADED:
            self._session.notify_store_lost(self._lost_message)
        return after

    def lost(self, message: str = STORE_LOST_MESSAGE) -> None:
        """What this process holds no longer continues what Redis holds (it restarted
        empty, was flushed, forgot the session, or a cluster failover lost writes):
        viewers are told and closed, and they resume into the session as Redis has
        it, under a new epoch — never two texts under one epoch (issue 18 item 10)."""
        if self._machine.state in _LOADED:
            log.warning("session %s: %s", self._session.log_name, message)
        self._lost_message = message
        self._move(MirrorEvent.LOST)

    # -- the reader's side --------------------------------------------------------

    def read_ok(self) -> None:
        self._move(MirrorEvent.READ_OK)

    def read_failed(self, exc: BaseException) -> None:
        if self._machine.state is not MirrorState.DOWN:
            log.warning("session %s: %s (%s)", self._session.log_name, STORE_DOWN_MESSAGE, exc)
        self._move(MirrorEvent.READ_FAILED)

    def apply(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> bool:
        """Entries read from the stream: log and fan out the new ones.  False when, on a
        cluster, they do not continue what this mirror holds (``diverged`` follows)."""
        self.last_data = asyncio.get_running_loop().time()
        if self._machine.state not in _APPLYING:
            return True  # stale: the reload reads them again; closed: nobody to give them to
        head = self.head
        chained = self._conn.cluster
        chain = self.chain
        out: list[dict[str, Any]] = []
        continues = True
        for eid, fields in entries:
            seq = entry_seq(eid)
            if seq <= head + len(out):
                continue  # read twice (catch-up and reader overlap)
            if seq != head + len(out) + 1:
                log.warning("session %s: stream jumped from %d to %d; reloading",
                            self._session.log_name, head + len(out), seq)
                self._move(MirrorEvent.GAP)
                break
            if chained:
                following = chain_next(chain, fields[b"e"])
                if following != _text(fields.get(b"c")):
                    continues = False  # another event under a seq this mirror holds
                    break
                chain = following
            out.append(json.loads(fields[b"e"]))  # our own writes, framed and checked
        self.chain = chain
        self._session.append(out)
        if out and self.on_applied is not None:
            self.on_applied()
        return continues

    async def polled(self, result: Polled) -> None:
        """One cluster read of this session (redis_conn.Polled): another epoch means
        the data this mirror holds is gone; a stream that ends before the head, or
        goes on differently, means the store lost events this process has shown."""
        if self._machine.state not in _APPLYING:
            return
        if result.epoch != self._session.epoch:
            self.lost()
        elif result.seq < self.head or (result.entries and not self.apply(result.entries)):
            # (no entries: no apply, so a quiet stream stays quiet for check_quiet)
            await self.diverged(result.seq)

    async def diverged(self, seq: int) -> None:
        """Redis holds less than, or other than, what this process has shown (a
        replica promoted before it had every acknowledged write): the session gets a
        new epoch first, so every process — and this one's next load — rebuilds it
        from what Redis holds; then viewers are told and closed."""
        log.error("session %s: the store no longer holds the events this process showed "
                  "(stream at %d, shown through %d): a failover lost acknowledged writes",
                  self._session.log_name, seq, self.head)
        await self._conn.new_epoch(self.keys, self._session.epoch)
        self.lost(STREAM_LOST_MESSAGE)

    # -- loading and catching up ------------------------------------------------------

    async def ready(self) -> None:
        """Loaded and current.  Raises StoreError if it was never loaded and Redis
        cannot be reached (a loaded mirror is served as it is; the reader retries)."""
        if self._machine.state in (MirrorState.EMPTY, MirrorState.STALE):
            await self.load()
        else:
            with contextlib.suppress(StoreError):
                await self.catch_up()
            if self.stale:  # it found the data gone
                await self.load()
        await self._conn.touch([self._session.id])

    async def load(self) -> None:
        """(Re)build the mirror from the stream and the snapshot key: one load at a
        time, shared by a burst of viewers and the reader."""
        if self._loading is None or self._loading.done():
            self._loading = asyncio.ensure_future(self._load())
        await asyncio.shield(self._loading)

    async def _load(self) -> None:
        try:
            epoch, log_, conv, snap_seq, chain = await self._read_all()
        except StoreError:
            self._move(MirrorEvent.LOAD_FAILED)
            raise
        if self._machine.state is MirrorState.CLOSED:
            return
        replacing = self.loaded
        self._session.reload(epoch, log_, conv, replacing)
        self.snapshot_seq = snap_seq
        self.chain = chain
        self._move(MirrorEvent.LOADED)

    async def _read_all(self) -> tuple[str, SessionLog, Transcript, int, str]:
        try:
            return await self._read_all_once()
        except StoreLost:
            # Noticed while loading (the store has been told): this load reads the
            # data as it is now, which is exactly what a rebuild wants.
            return await self._read_all_once()

    async def _read_all_once(self) -> tuple[str, SessionLog, Transcript, int, str]:
        keys, conn, config = self.keys, self._conn, self._config
        client = conn.client
        try:
            if conn.cluster:  # no data-set marker there (redis_keys)
                marker, stored_epoch = None, await client.get(keys.epoch)
            else:
                pipe = client.pipeline(transaction=False)
                pipe.get(INSTANCE_KEY)
                pipe.get(keys.epoch)
                marker, stored_epoch = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        await conn.observe(marker)
        try:
            if not stored_epoch:
                # A new session (or one Redis lost): room for it, then a new epoch —
                # never an epoch this process held before, so a viewer of the old
                # data is never taken for one of the new.
                await conn.make_room()
                pipe = client.pipeline(transaction=True)
                pipe.set(keys.epoch, uuid.uuid4().hex[:16], nx=True, px=conn.ttl_ms)
                pipe.get(keys.epoch)
                _created, stored_epoch = await pipe.execute()
            raw_snap: Any = await client.hmget(keys.snap, ["seq", "data"])
            window: Any = await client.xrevrange(keys.log, count=config.log_events)
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        epoch = self._session.epoch
        if stored_epoch:
            epoch = stored_epoch.decode() if isinstance(stored_epoch, bytes) else stored_epoch
        chain = _text(window[0][1].get(b"c")) or "" if window else ""
        entries = [(entry_seq(eid), fields[b"e"]) for eid, fields in reversed(window)]
        # Keep the contiguous tail (a restarted Redis continues past a gap).
        start = 0
        for i in range(1, len(entries)):
            if entries[i][0] != entries[i - 1][0] + 1:
                start = i
        entries = entries[start:]
        snap_seq = int(raw_snap[0]) if raw_snap[0] else 0
        snap = json.loads(raw_snap[1]) if raw_snap[0] else None
        if snap is not None and entries and snap_seq > entries[-1][0]:
            # Written past what the stream holds (before SNAPSHOT_SCRIPT refused
            # that): it shows events the store lost, and the stream does not follow it.
            log.warning("session %s: the snapshot (at %d) is past the stream's end (%d); "
                        "loading from the stream", self._session.log_name, snap_seq,
                        entries[-1][0])
            snap, snap_seq = None, 0
        log_ = SessionLog(config.log_events, config.log_bytes, note_large_events)
        first = entries[0][0] if entries else None
        if snap is not None and (first is None or first <= snap_seq + 1):
            conv = load_conversation(snap, config)
            base = snap_seq
        else:
            conv = Transcript(config.history_messages, config.history_bytes)
            base = 0
            if first is not None and first > 1:
                log.warning("session %s: stream starts at %d with no snapshot before it; "
                            "snapshots hold only what followed", self._session.log_name, first)
        events: list[dict[str, Any]] = []
        for seq, raw in entries:
            event = json.loads(raw)
            events.append(event)
            if seq > base:
                conv.apply_event(event)
        log_.head = (first - 1) if first is not None else snap_seq
        log_.append(events)
        return epoch, log_, conv, snap_seq, chain

    async def catch_up(self) -> None:
        """Read the stream up to its end now.  One at a time per session: a burst of
        viewers connecting share one catch-up instead of one read each."""
        if self._catching is None or self._catching.done():
            self._catching = asyncio.ensure_future(self._catch_up_once())
        await asyncio.shield(self._catching)

    async def _catch_up_once(self) -> None:
        while await self._read() and not self.stale:
            pass
        if self.stale:
            await self.load()

    async def _read(self) -> bool:
        """One XREAD after the mirror's head; True if anything arrived.  The session's
        epoch comes in the same round trip: another one means the data this mirror
        holds is gone (the session was forgotten, or Redis restarted)."""
        if self._conn.cluster:
            result = (await self._conn.poll([(self.keys, self.head)]))[0]
            if isinstance(result, Exception):
                raise unreachable(result)
            head = self.head
            await self.polled(result)
            return self.head > head
        resp, epoch = await self._conn.read({self.keys.log: f"{self.head}-0"}, READ_COUNT,
                                            None, epoch_key=self.keys.epoch)
        if epoch != self._session.epoch:
            self.lost()
            return False
        if not resp:
            return False
        for _key, entries in resp:
            self.apply(entries)
        return True

    def snapshot_payload(self) -> tuple[int, str]:
        """The conversation at the mirror's head, serialised now (so it is exactly the
        conversation at that seq)."""
        return self.head, dumps(dump_conversation(self._session.conversation))

    def close(self) -> None:
        self._move(MirrorEvent.CLOSE)
