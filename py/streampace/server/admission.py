"""Who may open a session socket, and on which session (docs/security.md).

A session id is a capability: whoever knows it reads the conversation and may
run and cancel in it.  So the server mints ids (128 random bits, URL-safe) for a
client that asks for a new session (``/ws/sessions/new``), and ids a client made
up are refused unless the operator allows them (``client_session_ids``).  The
host application decides who gets in with its ``authorize`` hook, called at the
handshake with the request and the session id.

Everything here is decided before the socket is accepted, from the request
alone: the Origin (and, for a mounted app, the Host), the id, the address's
number of open sockets, the hook.  Nothing here creates or touches a session —
that happens when the socket first attaches (``Hub.open``).
"""

from __future__ import annotations

import ipaddress
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection

from streampace.session.protocol import NEW_SESSION, SESSION_ID_RE, CloseCode

__all__ = [
    "Authorize", "NEW_SESSION", "SESSION_ID_RE", "Refused", "ClientCounts",
    "OriginPolicy", "TokenBucket", "RatePerKey", "address_key", "client_key", "mint_session_id",
]

MINTED_ID_BYTES = 16  # 128 bits: 22 characters of URL-safe base64, unpadded


# ``await authorize(websocket, session_id, new)``: True lets the socket in.  ``new``:
# the id was minted for this socket (the session does not exist yet).
Authorize = Callable[[HTTPConnection, str, bool], Awaitable[bool]]


@dataclass(frozen=True)
class Refused(Exception):
    """A socket refused before it reaches a session: close with ``code``."""

    code: CloseCode
    reason: str


def mint_session_id() -> str:
    return secrets.token_urlsafe(MINTED_ID_BYTES)


def address_key(host: str, ipv6_prefix: int = 64) -> str:
    """What per-address limits count against: an IPv4 address as it is, an IPv6 one
    by its first ``ipv6_prefix`` bits (one host is usually given a whole /64, so
    counting exact addresses would give it 2^64 shares).  An IPv4-mapped IPv6
    address counts as its IPv4 address."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))
    return str(ip)


def client_key(scope: Mapping[str, object], ipv6_prefix: int = 64) -> str:
    """The address a connection counts against (the ASGI server's ``client``, which
    uvicorn takes from forwarding headers only from ``--forwarded-allow-ips``)."""
    client = scope.get("client")
    if isinstance(client, list | tuple) and client:
        return address_key(str(client[0]), ipv6_prefix)
    return "unknown"


class TokenBucket:
    """A rate with a burst: ``burst`` at most, refilled at ``rate`` per second."""

    def __init__(self, burst: float, rate: float, now: float) -> None:
        self.burst = burst
        self.rate = rate
        self._tokens = burst
        self._at = now

    def take(self, cost: float, now: float) -> bool:
        """Take ``cost``; False when the bucket cannot pay it (nothing taken)."""
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if cost > self._tokens:
            return False
        self._tokens -= cost
        return True


class ClientCounts:
    """Open things per address, with a limit (0: none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._counts: Counter[str] = Counter()

    def take(self, key: str) -> bool:
        """Count one more for ``key``; False (nothing counted) when at the limit."""
        if self.limit and self._counts[key] >= self.limit:
            return False
        self._counts[key] += 1
        return True

    def release(self, key: str) -> None:
        left = self._counts[key] - 1
        if left > 0:
            self._counts[key] = left
        else:
            del self._counts[key]

    def __getitem__(self, key: str) -> int:
        return self._counts.get(key, 0)

    def total(self) -> int:
        return sum(self._counts.values())


class RatePerKey:
    """A token bucket per key (an address), a bounded number of them: a bucket that
    has had time to refill whole is the same as a new one, so such buckets are
    dropped once ``max_keys`` are held."""

    def __init__(self, burst: float, rate: float, max_keys: int = 4096) -> None:
        self.burst = burst
        self.rate = rate
        self.max_keys = max_keys
        self._buckets: dict[str, TokenBucket] = {}
        self._last: dict[str, float] = {}

    def take(self, key: str, now: float) -> bool:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            bucket = self._buckets[key] = TokenBucket(self.burst, self.rate, now)
        self._last[key] = now
        return bucket.take(1, now)

    def _prune(self, now: float) -> None:
        refill_s = self.burst / self.rate if self.rate > 0 else float("inf")
        for key, at in list(self._last.items()):
            if now - at >= refill_s:
                del self._last[key], self._buckets[key]
        while len(self._buckets) >= self.max_keys:  # all busy: the oldest go
            oldest = min(self._last, key=self._last.__getitem__)
            del self._last[oldest], self._buckets[oldest]


class OriginPolicy:
    """Which browser pages may open the socket.

    ``allow_origins``: origins allowed whatever the Host (``*``: any).  An Origin
    naming the request's own Host is allowed only when that Host is one of
    ``allowed_hosts`` (``*``: any): otherwise a DNS-rebinding page — whose Origin
    and Host are both the attacker's name, resolving to this server — would pass
    as same-origin.  A request without Origin is not from a browser page and is
    not refused here (the authorize hook still applies).
    """

    def __init__(self, allow_origins: Iterable[str], allowed_hosts: Iterable[str]) -> None:
        self.allow_origins = {o.rstrip("/").lower() for o in allow_origins}
        self.allowed_hosts = {h.lower().strip("[]") for h in allowed_hosts}

    def refusal(self, origin: str | None, host: str | None) -> str | None:
        """None when allowed, else why not (for the log)."""
        if origin is None:
            return None
        origin = origin.rstrip("/").lower()
        if "*" in self.allow_origins or origin in self.allow_origins:
            return None
        host = (host or "").lower()
        if not host or urlsplit(origin).netloc != host:
            return f"origin {origin[:100]!r} is not allowed"
        name = urlsplit(f"//{host}").hostname or ""
        if "*" in self.allowed_hosts or name in self.allowed_hosts:
            return None
        return f"host {host[:100]!r} is not an allowed host"
