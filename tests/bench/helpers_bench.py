"""Small hand-built traces for the bench tests (deterministic, a few seconds long)."""

from __future__ import annotations

from typing import Any

from bench.traces import Trace, deliver

MID = "m1"


def envelope(body: list[tuple[float, dict[str, Any]]], end_ms: float) -> list[tuple[float, dict]]:
    return [
        (0.0, {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        (0.0, {"type": "TEXT_MESSAGE_START", "messageId": MID, "role": "assistant"}),
        *body,
        (end_ms, {"type": "TEXT_MESSAGE_END", "messageId": MID}),
        (end_ms, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ]


def steady_model(rate_per_s: float, seconds: float, unit: str = "a") -> list[tuple[float, dict]]:
    """One grapheme per delta at a constant rate (a model's steady token stream)."""
    gap = 1000.0 / rate_per_s
    n = int(seconds * rate_per_s)
    body = [
        (10.0 + i * gap, {"type": "TEXT_MESSAGE_CONTENT", "messageId": MID, "delta": unit})
        for i in range(n)
    ]
    return envelope(body, 10.0 + n * gap)


def delivered(name: str, model: list[tuple[float, dict]]) -> Trace:
    """Through the real DeliveryBuffer, as production would batch it."""
    return Trace(name, model, deliver(model))


def direct(name: str, batches: list[tuple[float, list[dict]]]) -> Trace:
    """Arrivals given by hand; the model emitted each batch at its arrival time."""
    model = [(t, ev) for t, batch in batches for ev in batch]
    return Trace(name, model, batches)


def text(delta: str) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": MID, "delta": delta}
