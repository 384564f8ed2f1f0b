"""Reconnect delays: exponential backoff with jitter (docs/protocol.md: clients
should reconnect that way).  The page's simulated session uses this; the JS
`SessionSocket` (js_shim/bridge.js, `backoffDelay`) computes the same law."""

from __future__ import annotations

import random

__all__ = ["backoff_delay_ms"]


def backoff_delay_ms(attempt: int, base_ms: float = 250, cap_ms: float = 10_000,
                     rng: random.Random | None = None) -> float:
    """Uniform in [ceiling/2, ceiling], ceiling = min(cap, base * 2**attempt): many
    clients dropped at once spread out instead of reconnecting in step."""
    ceiling = min(cap_ms, base_ms * 2 ** attempt)
    return ceiling / 2 + (rng or random).random() * ceiling / 2
