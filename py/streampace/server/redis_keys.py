"""The Redis layout of a session (docs/scaling.md) and the scripts that write it.

Per session (the ``{id}`` hash tag keeps one session's keys on one Cluster slot):

- ``sp:{id}:log``   a Stream; event with sequence number n has entry ID ``n-0``, so
  protocol ``through = n`` is a stream ID and a resume is XREAD after ``n-0``.
  Trimmed with ``MAXLEN ~`` on every append.
- ``sp:{id}:seq``   the last sequence number written (survives trimming).
- ``sp:{id}:lease`` who runs the session: ``SET NX PX``, renewed while the run lives.
- ``sp:{id}:snap``  a hash: ``seq`` and the conversation at it (JSON), written by the
  run's owner, so a process that opens a trimmed session rebuilds the same snapshot.
- ``sp:{id}:runs``  runs started (the demo source's per-run seed).
- ``sp:{id}:epoch`` the session's epoch, set once by whichever process opens it first.

Global keys:

- ``sp:instance``  a random marker of the data set, set by the first process that
  finds none.  Every read checks it: a Redis that restarted empty (or was flushed)
  has none, or another process's new one, and the process knows that what it holds
  no longer continues what Redis holds (docs/scaling.md, "Durability").
- ``sp:sessions``  a sorted set of session ids by last activity (ms): ``--max-sessions``
  across all processes; sessions quiet the longest are forgotten to make room.

One channel, ``sp:control``, carries cancels to whichever process runs a session.
Every append is one Lua script that checks the lease token before XADD, so a
process that lost its lease cannot write into a run someone else has ended.

On a Redis Cluster (``redis+cluster://``) every script and transaction names the
keys of one session only, so each stays in that session's slot.  ``sp:instance``
is not used there (a shard can lose data while the others keep theirs): each
entry carries ``c``, a hash chained over the session's events, so a process can
tell that what a promoted replica holds no longer continues what it has shown
(``chain_next``, ``CLUSTER_APPEND_SCRIPT``, ``POLL_SCRIPT``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from streampace.session.compact_json import dumps_compact_ascii

__all__ = ["SessionKeys", "CONTROL_CHANNEL", "INSTANCE_KEY", "INDEX_KEY", "APPEND_SCRIPT",
           "SNAPSHOT_SCRIPT", "RENEW_SCRIPT", "RELEASE_SCRIPT", "LEASE_LOST", "dumps",
           "entry_seq", "CLUSTER_APPEND_SCRIPT", "POLL_SCRIPT", "BUMP_EPOCH_SCRIPT",
           "STREAM_LOST", "STREAM_BEHIND", "chain_next", "CHAIN_HEX"]

CONTROL_CHANNEL = "sp:control"
INSTANCE_KEY = "sp:instance"
INDEX_KEY = "sp:sessions"
LEASE_LOST = "STREAMPACE_LEASE_LOST"  # the append script's refusal
STREAM_LOST = "STREAMPACE_STREAM_LOST"  # the stream lost entries a writer had written or read
STREAM_BEHIND = "STREAMPACE_STREAM_BEHIND"  # the writer's view was behind the stream
CHAIN_HEX = 16  # hex digits of the chained hash kept per entry


def _append_script(body: str, ttl: int, release: int, result: str) -> str:
    """An append (KEYS: log, lease, seq, epoch; ARGV[1] the lease token): refused
    unless the caller holds the lease; ``body`` XADDs the events and leaves the last
    seq in ``seq``; then the seq is stored, the session's keys live ``ARGV[ttl]`` ms
    more and the lease is released if ``ARGV[release]`` is '1'."""
    return f"""
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('{LEASE_LOST}')
end
{body.strip()}
redis.call('SET', KEYS[3], string.format('%d', seq), 'PX', ARGV[{ttl}])
redis.call('PEXPIRE', KEYS[1], ARGV[{ttl}])
redis.call('PEXPIRE', KEYS[4], ARGV[{ttl}])
if ARGV[{release}] == '1' then
  redis.call('DEL', KEYS[2])
end
return {result}
"""


# ARGV: token, maxlen, seq floor, ttl ms, release (0/1), then one JSON event per argument.
APPEND_SCRIPT = _append_script("""
local seq = tonumber(redis.call('GET', KEYS[3]) or '0')
local floor = tonumber(ARGV[3])
if floor > seq then seq = floor end
for i = 6, #ARGV do
  seq = seq + 1
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%d-0', seq), 'e', ARGV[i])
end
""", ttl=4, release=5, result="seq")
# KEYS: snap, seq.  ARGV: seq, data, ttl ms.  Writes may land out of order: the newest
# wins.  Never one past the stream's last seq: a process whose mirror is ahead of the
# store (a failover lost writes it had shown) must not leave a conversation the stream
# does not continue — every later load would start from it.
SNAPSHOT_SCRIPT = """
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[1]) then
  return 0
end
local cur = redis.call('HGET', KEYS[1], 'seq')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
# The cluster's append: the writer names the tail it knows (seq and chain).  Redis
# holding less (a promoted replica missing acknowledged writes) or something else
# at that seq means viewers were shown text the store no longer has: the session
# gets a new epoch (so every process rebuilds it and tells its viewers) and the
# append is refused.  ARGV: token, maxlen, seq, chain, ttl ms, release (0/1), the
# writer's epoch, a new epoch, then the events.
CLUSTER_APPEND_SCRIPT = _append_script("""
local seq = tonumber(redis.call('GET', KEYS[3]) or '0')
local chain = ''
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last then
  for j = 1, #last[2], 2 do
    if last[2][j] == 'c' then chain = last[2][j + 1] end
  end
end
local want = tonumber(ARGV[3])
if seq > want then
  return redis.error_reply('STREAMPACE_STREAM_BEHIND')
end
if seq < want or chain ~= ARGV[4] then
  if redis.call('GET', KEYS[4]) == ARGV[7] then
    redis.call('SET', KEYS[4], ARGV[8], 'PX', ARGV[5])
  end
  return redis.error_reply('STREAMPACE_STREAM_LOST')
end
for i = 9, #ARGV do
  seq = seq + 1
  chain = string.sub(redis.sha1hex(chain .. ARGV[i]), 1, 16)
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%d-0', seq),
             'e', ARGV[i], 'c', chain)
end
""", ttl=5, release=6, result="{seq, chain}")
# The cluster's read of one session (no XREAD across slots): epoch, last seq and
# the entries after the reader's head, in one call.  KEYS: log, epoch, seq.
# ARGV: the exclusive start ``(n-0``, count.
POLL_SCRIPT = """
return {redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]),
        redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])}
"""
# KEYS: epoch.  ARGV: the epoch the caller held, a new one, ttl ms.  The epoch
# Redis holds afterwards (the new one, or whatever another process set first).
BUMP_EPOCH_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return redis.call('GET', KEYS[1])
"""
RENEW_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


@dataclass(frozen=True)
class SessionKeys:
    log: str
    seq: str
    lease: str
    snap: str
    runs: str
    epoch: str

    @property
    def data(self) -> tuple[str, ...]:
        """The keys that hold the session (not its lease): deleted to forget it."""
        return (self.log, self.seq, self.snap, self.runs, self.epoch)

    @classmethod
    def of(cls, session_id: str) -> SessionKeys:
        tag = f"sp:{{{session_id}}}"
        return cls(f"{tag}:log", f"{tag}:seq", f"{tag}:lease", f"{tag}:snap", f"{tag}:runs",
                   f"{tag}:epoch")


def dumps(obj: Any) -> str:
    # ASCII escapes: a lone surrogate from an upstream must not break the UTF-8 wire.
    return dumps_compact_ascii(obj)


def chain_next(chain: str, raw: bytes) -> str:
    """The chained hash after an entry whose stored event is ``raw`` (as the cluster
    append script computes it)."""
    return hashlib.sha1(chain.encode() + raw, usedforsecurity=False).hexdigest()[:CHAIN_HEX]


def entry_seq(entry_id: bytes | str) -> int:
    """The sequence number a stream entry ID (``n-0``) stands for."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.partition("-")[0])
