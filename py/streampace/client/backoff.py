"""Reconnect delays: exponential backoff with jitter (docs/protocol.md: clients
should reconnect that way).  The one place of this law: the client connection
(client/connection.py) schedules every reconnect with it, for the page's
WebSocket and its simulated session alike; the JS socket never waits on its own."""

from __future__ import annotations

import random

__all__ = ["backoff_delay_ms"]


def backoff_delay_ms(attempt: int, base_ms: float = 250, cap_ms: float = 10_000,
                     rng: random.Random | None = None) -> float:
    """Uniform in [ceiling/2, ceiling], ceiling = min(cap, base * 2**attempt): many
    clients dropped at once spread out instead of reconnecting in step."""
    ceiling = min(cap_ms, base_ms * 2 ** attempt)
    return ceiling / 2 + (rng or random).random() * ceiling / 2
