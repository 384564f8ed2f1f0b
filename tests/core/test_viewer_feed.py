"""The sans-IO viewer feed (session/viewer_feed.py) on its own: a virtual clock, a
plain log, an outlet that records what it is handed and says whether it has room.

The server's WebSocket viewer and the page's session drive this machine; here each
path is walked by hand, checking every event reaches the outlet once, in order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streampace.lifecycle import LifecycleError
from streampace.session.delivery import Batch, DeliveryConfig
from streampace.session.log import SessionLog
from streampace.session.outputs import Attach
from streampace.session.protocol import AttachMode
from streampace.session.shared_feed import SharedFeed
from streampace.session.viewer_feed import FeedState, ViewerFeed
from streampace.testing import ManualHost

S = FeedState
NOW = DeliveryConfig(max_wait_ms=0, ramp_wait_ms=0)  # every batch on the next timer turn


class Outlet:
    def __init__(self) -> None:
        self.texts: list[dict[str, Any]] = []
        self.batches: list[Batch] = []
        self.room = True
        self.behind: list[int] = []

    def send(self, text: str, batch: Batch | None) -> None:
        self.texts.append(json.loads(text))
        if batch is not None:
            self.batches.append(batch)

    def has_room(self) -> bool:
        return self.room

    def fell_behind(self, cursor: int) -> None:
        self.behind.append(cursor)

    def names(self) -> list[str]:
        return [e["stepName"].rstrip("x") for m in self.texts for e in m.get("events", [])]


class Session:
    def __init__(self, log: SessionLog, shared: SharedFeed | None) -> None:
        self._log = log
        self._shared = shared

    @property
    def log(self) -> SessionLog:
        return self._log

    @property
    def feed(self) -> SharedFeed | None:
        return self._shared


def step(i: int, pad: int = 0) -> dict[str, Any]:
    return {"type": "STEP_STARTED", "stepName": f"s{i}" + "x" * pad}


def attach(after: int, mode: AttachMode = AttachMode.LOG,
           snapshot: list[dict[str, Any]] | None = None) -> Attach:
    return Attach(object(), '{"type":"attached"}', mode, after, snapshot)


def make(*, part_bytes: int | None = 1024, shared: bool = True, log: SessionLog | None = None
         ) -> tuple[ManualHost, Outlet, Session, ViewerFeed]:
    host, outlet = ManualHost(), Outlet()
    shared_feed = SharedFeed(NOW, host) if shared else None
    session = Session(log if log is not None else SessionLog(), shared_feed)
    feed = ViewerFeed(outlet, host, NOW, part_bytes=part_bytes, pull_events=2, pull_bytes=1 << 20)
    return host, outlet, session, feed


def append(session: Session, feed: ViewerFeed, events: list[dict[str, Any]]) -> None:
    """As a driver fans out: the log takes them, the viewer sees them, then the shared feed."""
    first = session.log.head + 1
    through = session.log.append(events)
    feed.on_append(events, first, through)
    if session.feed is not None:
        session.feed.enqueue(events, through)


def pull_all(feed: ViewerFeed) -> int:
    pulls = 0
    while feed.pull():
        pulls += 1
        assert pulls < 100
    return pulls


def test_a_snapshot_in_parts_then_the_log_then_live_then_the_shared_feed() -> None:
    host, outlet, session, feed = make()
    session.log.append([step(i) for i in range(1, 4)])
    snapshot = [step(i, pad=600) for i in range(1, 4)]  # three parts of about 1 KiB
    assert feed.attach(session, attach(3, AttachMode.SNAPSHOT, snapshot)) is S.SNAPSHOT
    assert outlet.texts == [{"type": "attached"}]
    append(session, feed, [step(4), step(5), step(6)])  # waits in the log
    assert state(feed) is S.SNAPSHOT and feed.cursor == 3

    assert feed.pull() and feed.pull() and state(feed) is S.SNAPSHOT
    assert feed.pull() and state(feed) is S.REPLAYING  # the last part went out
    parts = outlet.texts[1:]
    assert [m.get("more") for m in parts] == [True, True, None]
    assert {m["through"] for m in parts} == {3}
    assert feed.pull() and feed.cursor == 5  # a chunk of two (pull_events)
    assert feed.pull() and feed.cursor == 6
    # At the head: what its own buffer holds goes out first, then it joins.
    assert not feed.pull() and state(feed) is S.SHARED
    assert outlet.names() == ["s1", "s2", "s3", "s4", "s5", "s6"]
    assert session.feed is not None and session.feed.members == {outlet: feed}

    append(session, feed, [step(7)])  # the shared feed delivers it
    host.run_all()
    assert outlet.names() == ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]
    assert outlet.texts[-1]["through"] == 7 and feed.cursor == 7


def test_the_page_takes_the_snapshot_as_one_batch_and_the_log_in_one_read() -> None:
    host, outlet, session, feed = make(part_bytes=None, shared=False)
    feed.pull_events = feed.pull_bytes = 1 << 30
    session.log.append([step(i) for i in range(1, 6)])
    snapshot = [step(i, pad=5000) for i in range(1, 6)]
    feed.attach(session, attach(5, AttachMode.SNAPSHOT, snapshot))
    assert pull_all(feed) == 1 and state(feed) is S.LIVE  # no shared feed: stays LIVE
    assert outlet.texts[1] == {"through": 5, "events": snapshot}

    _, empty_out, empty_session, empty = make(part_bytes=None, shared=False)
    empty.attach(empty_session, attach(0, AttachMode.SNAPSHOT, []))
    pull_all(empty)
    assert empty_out.texts[1] == {"through": 0, "events": []}  # the page always sends one

    _, out, resumed_session, resumed = make(part_bytes=None, shared=False)
    resumed.pull_events = resumed.pull_bytes = 1 << 30
    resumed_session.log.append([step(i) for i in range(1, 6)])
    resumed.attach(resumed_session, attach(2))
    assert pull_all(resumed) == 1 and resumed.cursor == 5
    append(resumed_session, resumed, [step(6)])  # live: into its own buffer
    assert state(resumed) is S.LIVE and resumed.cursor == 6
    host_of(resumed).run_all()
    assert out.names() == ["s3", "s4", "s5", "s6"]


def state(feed: ViewerFeed) -> FeedState:
    """Read through a call: mypy would narrow ``feed.state`` across the steps."""
    return feed.state


def host_of(feed: ViewerFeed) -> ManualHost:
    host = feed.host
    assert isinstance(host, ManualHost)
    return host


def test_a_full_connection_takes_no_live_events_and_leaves_the_shared_feed() -> None:
    host, outlet, session, feed = make()
    feed.attach(session, attach(0, AttachMode.LIVE))
    assert state(feed) is S.SHARED
    outlet.room = False
    append(session, feed, [step(1)])
    host.run_all()  # the shared batch is handed on, then it leaves
    assert state(feed) is S.REPLAYING and session.feed is not None
    assert outlet not in session.feed.members
    append(session, feed, [step(2)])  # not taken live
    assert state(feed) is S.REPLAYING and feed.cursor == 1
    outlet.room = True
    assert feed.pull() and not feed.pull()
    host.run_all()
    assert not feed.pull() and state(feed) is S.SHARED
    assert outlet.names() == ["s1", "s2"]


def test_a_viewer_whose_next_event_the_log_dropped_is_told_so() -> None:
    host, outlet, session, feed = make(log=SessionLog(max_events=3))
    session.log.append([step(i) for i in range(1, 4)])
    feed.attach(session, attach(0))
    outlet.room = False
    append(session, feed, [step(4), step(5)])  # the log now starts at 3
    assert outlet.behind == [0]
    assert not feed.pull() and outlet.behind == [0, 0]


def test_closing_once_drops_what_is_pending_and_sends_nothing_more() -> None:
    host, outlet, session, feed = make()
    feed.attach(session, attach(0, AttachMode.SNAPSHOT, [step(1, pad=3000)]))
    assert feed.close() and not feed.close()
    assert state(feed) is S.CLOSING and not feed.pull()
    append(session, feed, [step(1)])
    host.run_all()
    assert outlet.texts == [{"type": "attached"}]
    feed.stop()
    assert state(feed) is S.CLOSED
    assert feed.attach(session, attach(0)) is S.CLOSED  # a late resume sends nothing
    assert outlet.texts == [{"type": "attached"}]


def test_a_move_the_table_does_not_list_raises() -> None:
    _host, _outlet, _session, feed = make()
    with pytest.raises(LifecycleError, match="SNAPSHOT_SENT in state DETACHED"):
        feed._send_part()
    assert state(feed) is S.DETACHED
