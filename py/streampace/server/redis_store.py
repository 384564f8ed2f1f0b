"""The Redis Streams session store: sessions shared by several server processes.

Per session (the ``{id}`` hash tag keeps one session's keys on one Cluster slot):

- ``sp:{id}:log``   a Stream; event with sequence number n has entry ID ``n-0``, so
  protocol ``through = n`` is a stream ID and a resume is XREAD after ``n-0``.
  Trimmed with ``MAXLEN ~`` (about 2 x --log-events, see ``stream_maxlen``) on
  every append; each process's mirror keeps the last --log-events of it.
- ``sp:{id}:seq``   the last sequence number written (survives trimming).
- ``sp:{id}:lease`` who runs the session: ``SET NX PX``, renewed while the run lives.
- ``sp:{id}:snap``  a hash: ``seq`` and the conversation at it (JSON), written by the run's owner
  every SNAPSHOT_EVERY events and at each run's end, so a process that opens a
  trimmed session rebuilds the same snapshot as one that saw every event.
- ``sp:{id}:runs``  runs started (the demo source's per-run seed).
- ``sp:{id}:epoch`` the session's epoch (docs/protocol.md), set once by whichever
  process opens the session first: every process announces the same one, so a
  client that reconnects to another process resumes instead of starting over.

One channel, ``sp:control``, carries cancels to whichever process runs a session.

Every append is one Lua script that checks the lease token before XADD, so a
process that lost its lease (paused, partitioned) cannot write into a run someone
else has since ended: the lease is also the fence.

Each process keeps, per session it serves, a mirror: the same bounded SessionLog
and Conversation the memory store has, fed by the process's ONE reader task (one
XREAD BLOCK over every stream it watches) that fans each session's events out to
this process's viewers through their delivery buffers.  Appends of all the runs a
process owns likewise share one pipelined writer.  So the
viewer code, its slow-consumer rules and close codes are those of the memory store;
even the run owner's own viewers are fed from the stream, which keeps every
process's viewers on byte-identical event sequences.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from streampace.conversation import events as ev
from streampace.conversation.transcript import Transcript
from streampace.session.compact_json import dumps_compact_ascii
from streampace.session.log import SessionLog
from streampace.session.run_lifecycle import RunState

from .memory import note_large_events
from .session import Session
from .store import redact_url
from .store_errors import StoreError

if TYPE_CHECKING:
    from .config import ServerConfig
    from .sources import Source

__all__ = ["RedisStore", "RedisSession", "CONTROL_CHANNEL", "SNAPSHOT_EVERY"]

log = logging.getLogger("streampace.server")

CONTROL_CHANNEL = "sp:control"
SNAPSHOT_EVERY = 500  # events between snapshot-key writes during a run
READ_COUNT = 512  # stream entries per session per XREAD
MUX_BLOCK_MS = 50  # the process reader's XREAD block: how late a newly watched session joins
_STORE_DOWN_MESSAGE = "the session store is unreachable; retrying"

_APPEND = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('STREAMPACE_LEASE_LOST')
end
local seq = tonumber(redis.call('GET', KEYS[3]) or '0')
local floor = tonumber(ARGV[3])
if floor > seq then seq = floor end
for i = 6, #ARGV do
  seq = seq + 1
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%d-0', seq), 'e', ARGV[i])
end
redis.call('SET', KEYS[3], string.format('%d', seq), 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
if ARGV[5] == '1' then
  redis.call('DEL', KEYS[2])
end
return seq
"""
_SNAPSHOT = """
local cur = redis.call('HGET', KEYS[1], 'seq')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def _dumps(obj: Any) -> str:
    # ASCII escapes: a lone surrogate from an upstream must not break the UTF-8 wire.
    return dumps_compact_ascii(obj)


def _seq(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.partition("-")[0])


def closing_events(conv: Transcript, code: str, message: str) -> list[dict[str, Any]]:
    """What ends the conversation's open run: its open items closed, then RUN_ERROR."""
    return [*conv.closing_events(), {"type": ev.RUN_ERROR, "message": message, "code": code}]


def _running(conv: Transcript) -> bool:
    return conv.run.status == "running"


def dump_conversation(conv: Transcript) -> dict[str, Any]:
    # The events that rebuild it: a fresh Transcript fed these equals this one in
    # every view (messages, history, snapshots, what is open).
    return {"events": conv.snapshot_events()}


def load_conversation(data: dict[str, Any], config: ServerConfig) -> Transcript:
    conv = Transcript(config.history_messages, config.history_bytes)
    conv.apply(data.get("events") or ())
    return conv


class RedisStore:
    name = "redis"
    shared = True

    def __init__(self, url: str, config: ServerConfig) -> None:
        self.display_url = redact_url(url)
        self.config = config
        self.lease_ms = config.lease_ms
        # XREAD blocks at most this long, which bounds how late a lost run is noticed.
        self.block_ms = max(50, min(1000, self.lease_ms // 3))
        self.ttl_ms = int(config.session_ttl_s * 1000)
        # The stream keeps more than a mirror's window (--log-events): a reader that
        # lags by a few large appends still reads every event, so a run owner's
        # mirror - the source of the snapshot key - never skips one.
        self.stream_maxlen = max(2 * config.log_events, config.log_events + 2 * READ_COUNT)
        self.token = uuid.uuid4().hex[:16]  # this process
        # Each session's reader holds a connection while it blocks in XREAD; the pool
        # has room for every session this process may hold, and waits (not fails)
        # when a burst of catch-ups wants more.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=2 * config.max_sessions + 64,
            timeout=10,
            decode_responses=False,
            socket_connect_timeout=2.0,
            socket_timeout=self.block_ms / 1000 + 5.0,
            # After a Redis restart the pool holds dead connections; a PING before
            # reusing an idle one, and quick retries, find that out at once.
            health_check_interval=2,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self.client = aioredis.Redis(connection_pool=pool)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._snapshot = self.client.register_script(_SNAPSHOT)
        self.running: dict[str, RedisSession] = {}  # sessions whose run this process owns
        self.readers: dict[str, RedisSession] = {}  # sessions the process reader serves
        self._writes: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._control: asyncio.Task[None] | None = None
        self._closed = False

    def new_session(self, session_id: str, source: Source, config: ServerConfig) -> Session:
        return RedisSession(session_id, source, config, self)

    # -- the process's stream reader ---------------------------------------------
    #
    # One task per process reads every stream this process needs with ONE blocking
    # XREAD over all of them, and hands each session its entries (which it fans out
    # to its viewers).  So each session is read once per process - never once per
    # viewer - and a process serving many sessions makes one Redis call per wakeup,
    # not one per session (bench/server_load.py 100 x 10: server CPU per delivered
    # event 39 -> 18 us).  A session joining is picked up at the latest when the
    # current XREAD returns (MUX_BLOCK_MS); ready() has caught it up.

    # -- the process's writer ------------------------------------------------------
    #
    # Appends of all sessions run by this process go out together: whatever queued
    # while the previous round trip was in flight is sent as one pipeline (one
    # connection, one round trip), each append still its own fenced script.

    def append(self, keys: list[str], args: list[Any]) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._writes.append((keys, args, fut))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_loop())
        return fut

    async def _write_loop(self) -> None:
        try:
            while self._writes:
                batch, self._writes = self._writes, []
                try:
                    pipe = self.client.pipeline(transaction=False)
                    for keys, args, _ in batch:
                        pipe.eval(_APPEND, len(keys), *keys, *args)
                    results = await pipe.execute(raise_on_error=False)
                except BaseException as exc:
                    for _, _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc if isinstance(exc, Exception)
                                              else RedisConnectionError("cancelled"))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, _, fut), res in zip(batch, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, Exception):
                        fut.set_exception(res)
                    else:
                        fut.set_result(res)
        finally:
            self._writer = None

    def want_reads(self, session: RedisSession) -> None:
        self.readers[session.id] = session
        if self._reader is None and not self._closed:
            self._reader = asyncio.create_task(self._read_loop())

    async def _read_loop(self) -> None:
        backoff = 0.1
        down = False
        try:
            while not self._closed:
                sessions = {s.k_log: s for s in list(self.readers.values()) if s.wants_reads}
                for sid in [i for i, s in self.readers.items() if not s.wants_reads]:
                    del self.readers[sid]
                if not sessions:
                    return
                try:
                    for s in sessions.values():
                        if s._reload:
                            await s._load()
                    streams = {k: f"{s.log.head}-0" for k, s in sessions.items()}
                    resp = await self.client.xread(streams, count=READ_COUNT,
                                                   block=MUX_BLOCK_MS)
                    if down:
                        down = False
                        log.warning("redis at %s is reachable again", self.display_url)
                        for s in sessions.values():
                            s._down = False
                    backoff = 0.1
                    for key, entries in resp or ():
                        name = key.decode() if isinstance(key, bytes) else key
                        if name in sessions:
                            sessions[name]._apply(entries)
                    await self._check_quiet(sessions.values())
                except (RedisError, OSError, StoreError) as exc:
                    down = True
                    for s in sessions.values():
                        s._store_down(exc)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
        finally:
            self._reader = None
            if self.readers and not self._closed:  # someone asked while we were leaving
                self._reader = asyncio.create_task(self._read_loop())

    async def _check_quiet(self, sessions: Any) -> None:
        """Sessions whose stream shows a run but has been quiet: is its owner alive?"""
        now = asyncio.get_running_loop().time()
        quiet_s = self.block_ms / 1000
        for s in sessions:
            if (_running(s.conversation) and not s.lifecycle.active
                    and now - s._last_data > quiet_s):
                s._last_data = now  # next look one quiet period from now
                await s._check_lost_run()

    async def start(self) -> None:
        try:
            await self.client.ping()
            log.info("session store: redis at %s", self.display_url)
        except (RedisError, OSError) as exc:
            # Serve anyway: sessions are refused (1013) until Redis answers.
            log.error("session store: redis at %s is unreachable (%s); retrying",
                      self.display_url, type(exc).__name__)
        self._control = asyncio.create_task(self._listen_control())

    async def close(self) -> None:
        self._closed = True
        for task in (self._control, self._reader, self._writer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        with contextlib.suppress(Exception):
            await self.client.aclose()

    async def publish_cancel(self, session_id: str, code: str, message: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.client.publish(
                CONTROL_CHANNEL, _dumps({"s": session_id, "code": code, "message": message}))

    async def _listen_control(self) -> None:
        """Cancels for the runs this process owns, wherever the viewer asked."""
        backoff = 0.1
        while not self._closed:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CONTROL_CHANNEL)
                backoff = 0.1
                while not self._closed:
                    msg = await pubsub.get_message(timeout=1.0)
                    if msg is None or msg.get("type") != "message":
                        continue
                    self._on_control(msg["data"])
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.debug("control channel: %r", exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _on_control(self, data: bytes) -> None:
        try:
            msg = json.loads(data)
            session = self.running.get(msg["s"])
        except (ValueError, KeyError, TypeError):
            return
        if session is not None:
            session.stop_run(str(msg.get("code", "cancelled")),
                             str(msg.get("message", "run cancelled by a viewer")))


class RedisSession(Session):
    def __init__(self, session_id: str, source: Source, config: ServerConfig,
                 store: RedisStore) -> None:
        super().__init__(session_id, source, config)
        self.config = config
        self.store = store
        self.client = store.client
        tag = f"sp:{{{session_id}}}"
        self.k_log, self.k_seq = f"{tag}:log", f"{tag}:seq"
        self.k_lease, self.k_snap, self.k_runs = f"{tag}:lease", f"{tag}:snap", f"{tag}:runs"
        self.k_epoch = f"{tag}:epoch"
        self._loaded = False
        self._reload = False  # a gap in the stream: rebuild the mirror
        self._last_data = 0.0  # loop time the reader last brought events (or looked)
        self._renewer: asyncio.Task[None] | None = None
        self._token: str | None = None  # the lease token while this process runs the session
        self._last_snap = 0
        self._down = False
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: asyncio.Future[int] | None = None
        self._catching: asyncio.Future[None] | None = None
        self._loading: asyncio.Future[None] | None = None

    # -- the mirror ------------------------------------------------------------

    @property
    def running(self) -> bool:
        """A run holds the session here or in another process (as the stream says).
        A local run that is only ENDING does not count: its terminal event is written
        (viewers may already have it), so the next run is accepted and starts the
        moment the old one has settled."""
        return (_running(self.conversation)
                or self.lifecycle.state in (RunState.STARTING, RunState.RUNNING))

    def start_run(self, prompt: str, scenario: str | None,
                  on_refused: Callable[[str, str], None] | None = None) -> None:
        previous = self.run_task
        if self.lifecycle.state != RunState.ENDING or previous is None:
            super().start_run(prompt, scenario, on_refused)
            return

        async def after_previous() -> None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(previous)
            try:
                Session.start_run(self, prompt, scenario, on_refused)
            except RuntimeError:  # another run got in first
                if on_refused is not None:
                    on_refused("run_active", "a run is already in progress in this session")

        self._spawn(after_previous())

    def attach(self, viewer: Any, after: int | None, epoch: str | None = None) -> str:
        mode = super().attach(viewer, after, epoch)
        self._ensure_reader()  # ready() ran before this viewer counted as one
        return mode

    async def ready(self) -> None:
        """Mirror loaded and current, reader running.  Raises StoreError if the
        mirror was never loaded and Redis cannot be reached."""
        if not self._loaded or self._reload:
            if self._loading is None or self._loading.done():
                self._loading = asyncio.ensure_future(self._load())
            await asyncio.shield(self._loading)  # one load for a burst of viewers
        else:
            with contextlib.suppress(StoreError):  # serve the mirror; the reader retries
                await self._catch_up()
        self._ensure_reader()

    async def _load(self) -> None:
        try:
            # Our random epoch becomes the session's only if no process set one yet.
            pipe = self.client.pipeline(transaction=True)
            pipe.set(self.k_epoch, self.epoch, nx=True, px=self.store.ttl_ms)
            pipe.get(self.k_epoch)
            _created, stored_epoch = await pipe.execute()
            raw_snap = await self.client.hmget(self.k_snap, ["seq", "data"])
            window = await self.client.xrevrange(self.k_log, count=self.config.log_events)
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis unreachable: {exc!r}") from None
        if stored_epoch:
            self.epoch = stored_epoch.decode() if isinstance(stored_epoch, bytes) else stored_epoch
        entries = [(_seq(eid), fields[b"e"]) for eid, fields in reversed(window)]
        # Keep the contiguous tail (a restarted Redis continues past a gap).
        start = 0
        for i in range(1, len(entries)):
            if entries[i][0] != entries[i - 1][0] + 1:
                start = i
        entries = entries[start:]
        snap_seq = int(raw_snap[0]) if raw_snap[0] else 0
        snap = json.loads(raw_snap[1]) if raw_snap[0] else None
        log_ = SessionLog(self.config.log_events, self.config.log_bytes, note_large_events)
        first = entries[0][0] if entries else None
        if snap is not None and (first is None or first <= snap_seq + 1):
            conv = load_conversation(snap, self.config)
            base = snap_seq
        else:
            conv = Transcript(self.config.history_messages, self.config.history_bytes)
            base = 0
            if first is not None and first > 1:
                log.warning("session %s: stream starts at %d with no snapshot before it; "
                            "snapshots hold only what followed", self.id, first)
        events: list[dict[str, Any]] = []
        for seq, raw in entries:
            event = json.loads(raw)
            events.append(event)
            if seq > base:
                conv.apply_event(event)
        log_.head = (first - 1) if first is not None else snap_seq
        log_.append(events)
        if self._loaded:  # a reload after a gap: viewers resume (4408) from the new log
            for viewer in list(self.viewers):
                viewer.leave_feed()
            self._feed = None
        self.log, self.conversation = log_, conv
        self._last_snap = snap_seq
        self._loaded, self._reload = True, False

    def _apply(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        """Entries read from the stream: log, model and fan out the new ones."""
        self._last_data = asyncio.get_running_loop().time()
        head = self.log.head
        out: list[dict[str, Any]] = []
        for eid, fields in entries:
            seq = _seq(eid)
            if seq <= head + len(out):
                continue  # read twice (catch-up and reader overlap)
            if seq != head + len(out) + 1:
                log.warning("session %s: stream jumped from %d to %d; reloading", self.id,
                            head + len(out), seq)
                self._reload = True
                break
            out.append(json.loads(fields[b"e"]))
        self.append(out)
        # A snapshot at least every quarter of the log window, so a process that opens
        # the session finds one the stream still follows on from.
        every = min(SNAPSHOT_EVERY, max(1, self.config.log_events // 4))
        if self._token is not None and out and self.log.head - self._last_snap >= every:
            self._spawn(self._write_snapshot())

    async def _read(self, block_ms: int | None) -> bool:
        """One XREAD after the mirror's head; True if anything arrived."""
        try:
            resp = await self.client.xread({self.k_log: f"{self.log.head}-0"},
                                           count=READ_COUNT, block=block_ms)
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis unreachable: {exc!r}") from None
        if not resp:
            return False
        for _key, entries in resp:
            self._apply(entries)
        return True

    async def _catch_up(self) -> None:
        """Read the stream up to its end now.  One at a time per session: a burst of
        viewers connecting share one catch-up instead of one read each."""
        if self._catching is None or self._catching.done():
            self._catching = asyncio.ensure_future(self._catch_up_once())
        await asyncio.shield(self._catching)

    async def _catch_up_once(self) -> None:
        while await self._read(None) and not self._reload:
            pass
        if self._reload:
            await self._load()

    def _ensure_reader(self) -> None:
        if not self._closed:
            self.store.want_reads(self)

    @property
    def wants_reads(self) -> bool:
        """Someone in this process needs this session's new events."""
        return not self._closed and bool(self.viewers or self.lifecycle.active)

    def _store_down(self, exc: Exception) -> None:
        if self._down:
            return
        self._down = True
        log.warning("session %s: %s (%s)", self.id, _STORE_DOWN_MESSAGE, exc)
        for viewer in list(self.viewers):
            viewer.send_error("store_unavailable", _STORE_DOWN_MESSAGE)

    # -- runs across processes ---------------------------------------------------

    async def _check_lost_run(self) -> None:
        """The stream shows a run open, yet nobody holds its lease: its process died.
        End it with RUN_ERROR run_lost so no viewer waits forever."""
        if not _running(self.conversation) or self.lifecycle.active:
            return
        try:
            if await self.client.exists(self.k_lease):
                return
            token = f"{self.store.token}:recover-{uuid.uuid4().hex[:8]}"
            if not await self.client.set(self.k_lease, token, nx=True, px=self.store.lease_ms):
                return
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis unreachable: {exc!r}") from None
        try:
            await self._end_lost_run(token)
            await self._write_snapshot()
        finally:
            with contextlib.suppress(RedisError, OSError):
                await self.store._release(keys=[self.k_lease], args=[token])

    async def _end_lost_run(self, token: str) -> None:
        await self._catch_up()
        if not _running(self.conversation):
            return
        run_id = self.conversation.run.run_id
        log.warning("session %s: run %s lost its process; ending it (run_lost)", self.id, run_id)
        await self._write(closing_events(
            self.conversation, "run_lost", "the server running this run stopped"), token)
        await self._catch_up()

    async def _write(self, events: list[dict[str, Any]], token: str) -> int:
        # The run's terminal event frees the session in the same script: a viewer
        # that sees the run end may start the next one at once, at any process.
        release = 1 if events and events[-1].get("type") in ev.RUN_TERMINAL_TYPES else 0
        args: list[Any] = [token, self.store.stream_maxlen, self.log.head, self.store.ttl_ms,
                           release]
        args.extend(_dumps(e) for e in events)
        try:
            return int(await self.store.append(
                [self.k_log, self.k_lease, self.k_seq, self.k_epoch], args))
        except ResponseError as exc:
            if "STREAMPACE_LEASE_LOST" in str(exc):
                raise StoreError("the run's lease was lost") from None
            raise StoreError(f"redis refused the append: {exc}") from None
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis unreachable: {exc!r}") from None

    async def _write_snapshot(self) -> None:
        # Serialised now, so it is the conversation exactly at log.head.
        # Writes may land out of order (several connections): the script keeps the
        # newest.
        seq = self.log.head
        payload = _dumps(dump_conversation(self.conversation))
        with contextlib.suppress(RedisError, OSError):
            await self.store._snapshot(keys=[self.k_snap], args=[seq, payload, self.store.ttl_ms])
            self._last_snap = max(self._last_snap, seq)

    async def _acquire_run(self, run_id: str) -> bool:
        token = f"{self.store.token}:{run_id}"
        try:
            if not await self.client.set(self.k_lease, token, nx=True, px=self.store.lease_ms):
                return False
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis unreachable: {exc!r}") from None
        try:
            await self._catch_up()  # current history, and the seq floor
            if _running(self.conversation):  # a lost run nobody has ended yet
                await self._end_lost_run(token)
            self.run_count = int(await self.client.incr(self.k_runs)) - 1
            await self.client.pexpire(self.k_runs, self.store.ttl_ms)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.store._release(keys=[self.k_lease], args=[token])
            raise
        self._token = token
        self.store.running[self.id] = self
        self._renewer = asyncio.create_task(self._keep_lease(token))
        self._ensure_reader()
        return True

    async def _keep_lease(self, token: str) -> None:
        period = self.store.lease_ms / 3000
        last_ok = time.monotonic()
        while True:
            await asyncio.sleep(period)
            try:
                if not await self.store._renew(keys=[self.k_lease],
                                               args=[token, self.store.lease_ms]):
                    self.stop_run("run_lost", "the run lost its lease")
                    return
                last_ok = time.monotonic()
            except (RedisError, OSError):
                if time.monotonic() - last_ok > self.store.lease_ms / 1000:
                    self.stop_run("store_unavailable", "the session store is unavailable")
                    return

    async def _emit(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        if self._token is None:
            raise StoreError("no lease")
        # A cancel must never cut a Redis command in half (redis-py then drops the
        # connection): the write runs shielded, and the next write - the terminal
        # event after a cancel - waits for it, so the stream keeps the run's order.
        if self._inflight is not None and not self._inflight.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._inflight)
        self._inflight = asyncio.ensure_future(self._write(events, self._token))
        await asyncio.shield(self._inflight)

    async def _release_run(self) -> None:
        token, self._token = self._token, None
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        self.store.running.pop(self.id, None)
        if token is None:
            return
        # No await before the session settles (the terminal event already freed the
        # lease); the lease is dropped here too in case the run ended unwritten.
        self._spawn(self._after_run(token))

    async def _after_run(self, token: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.store._release(keys=[self.k_lease], args=[token])
        with contextlib.suppress(StoreError):
            await self._catch_up()
            await self._write_snapshot()

    def request_cancel(self, code: str, message: str) -> None:
        if self.lifecycle.active:
            self.stop_run(code, message)
        else:
            self._spawn(self.store.publish_cancel(self.id, code, message))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        self._closed = True
        self.store.readers.pop(self.id, None)
        for task in (self._renewer, *self._tasks):
            if task is not None:
                task.cancel()
