"""naive: paint every batch the moment it arrives (what most chat UIs do)."""

from __future__ import annotations

from typing import Any

from bench.strategies.base import Strategy


class Naive(Strategy):
    name = "naive"
    summary = "commit each socket batch on arrival"

    def receive(self, events: list[dict[str, Any]]) -> None:
        self.commit(list(events), "arrival")
