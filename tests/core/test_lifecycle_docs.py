"""Every typed state machine: all its states reachable, every rule explained, and its
diagram in docs/architecture.md exactly what ``lifecycle.diagram`` draws from its table.

The doc marks each diagram with ``<!-- diagram: module.TABLE initial -->`` before a
```mermaid block; to update one, paste what a failure shows.
"""

from __future__ import annotations

import importlib
import re
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from streampace.lifecycle import diagram, unreachable

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
# (module, table, its state Enum, initial state)
TABLES = [
    ("streampace.session.run_lifecycle", "RUN_TABLE", "RunState", "IDLE"),
    ("streampace.conversation.run_status", "RUN_STATUS_TABLE", "RunStatus", "IDLE"),
    ("streampace.session.session_lifecycle", "SESSION_TABLE", "SessionState", "OPEN"),
    ("streampace.session.framing", "FRAME_TABLE", "FrameState", "WAITING"),
    ("streampace.session.delivery_lifecycle", "DELIVERY_TABLE", "DeliveryState", "OPEN"),
    ("streampace.session.viewer_feed", "FEED_TABLE", "FeedState", "DETACHED"),
    ("streampace.server.redis_mirror", "MIRROR_TABLE", "MirrorState", "EMPTY"),
    ("streampace.server.redis_store", "STORE_TABLE", "StoreState", "NEW"),
    ("streampace.server.redis_reader", "READER_TABLE", "ReaderState", "IDLE"),
    ("streampace.pacing.drive", "DRIVE_TABLE", "DriveState", "IDLE"),
    ("streampace.client.fallback", "SOURCE_TABLE", "SourceState", "UNDECIDED"),
    ("streampace.markdown.tail_states", "TAIL_TABLE", "TailState", "TAIL"),
]
_MARK = re.compile(r"<!-- diagram: ([\w.]+)\.(\w+) (\w+) -->\n```mermaid\n(.*?)```", re.S)


def _table(module: str, name: str, states: str, initial: str) -> tuple[Any, type[Enum], Enum]:
    mod = importlib.import_module(module)
    enum = getattr(mod, states)
    return getattr(mod, name), enum, enum[initial]


@pytest.mark.parametrize("spec", TABLES, ids=lambda spec: spec[1])
def test_every_state_is_reachable_and_every_rule_says_why(spec: tuple[str, str, str, str]) -> None:
    table, states, initial = _table(*spec)
    assert unreachable(table, initial, states) == []
    assert all(rule.why for rule in table.values())


def test_the_docs_show_each_table_as_generated() -> None:
    found = {(m.group(1), m.group(2)): (m.group(3), m.group(4))
             for m in _MARK.finditer(DOC.read_text(encoding="utf-8"))}
    for module, name, states, initial in TABLES:
        assert (module, name) in found, f"docs/architecture.md has no diagram of {name}"
        shown_initial, shown = found.pop((module, name))
        table, _enum, start = _table(module, name, states, initial)
        assert shown_initial == initial
        expected = diagram(table, start)
        assert shown == expected, f"{name} changed; its diagram is now:\n{expected}"
    assert not found, f"diagrams of tables this test does not know: {sorted(found)}"
