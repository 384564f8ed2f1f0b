"""Page clients in Python for the tests that break the Redis store under running
servers (test_redis_restart.py, test_redis_cluster.py): what each viewer would
show across resumes, and the checks that every viewer ends with the same view."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import websockets
from streampace.client.session_client import SessionClient
from streampace.conversation.items import MessageItem
from streampace.conversation.live_state import LiveState

from .conftest import WAIT_S, send
from .test_multiprocess import ServerProcess


class Viewer:
    """A page's client in Python: what it would show, across resumes."""

    def __init__(self, proc: ServerProcess, session: str) -> None:
        self.proc = proc
        self.session = session
        self.state = LiveState()
        self.client = SessionClient(self._deliver)
        self.errors: list[str] = []
        self.closes: list[int | None] = []
        self.ws: Any = None
        self.trace: list[str] = []  # the last messages' outlines, for a failure's message

    def _deliver(self, events: list[dict]) -> None:
        self.state.apply(events)

    async def open(self) -> None:
        self.ws = await websockets.connect(self.proc.ws(self.session), max_size=None)
        await self.ws.send(self.client.resume_message())

    async def read_until(self, pred: Callable[[Viewer], bool]) -> None:
        try:
            async with asyncio.timeout(WAIT_S):
                while not pred(self):
                    msg = json.loads(text := await self.ws.recv())
                    if msg.get("type") == "error":
                        self.errors.append(msg["code"])
                    self.trace = [*self.trace[-11:], _outline(msg)]
                    self.client.receive(text)
        except TimeoutError:
            raise TimeoutError(f"{WAIT_S:.0f} s without the wanted view: {self.summary()}"
                               ) from None

    def summary(self) -> str:
        """What this viewer holds, for a failure's message (never the session id)."""
        return (f"viewer of {self.proc.url}: status {self.state.status!r}, "
                f"{self.contents()} events, through {self.client.last_through}, "
                f"errors {self.errors}, closes {self.closes}, text ends "
                f"{self.text()[-60:]!r}, last messages {self.trace}")

    async def read_to_close(self) -> None:
        try:
            await self.read_until(lambda _v: False)
        except websockets.ConnectionClosed as exc:
            self.closes.append(exc.rcvd.code if exc.rcvd else None)

    def text(self) -> str:
        return "\n".join(i.text for i in self.state.items()
                         if isinstance(i, MessageItem) and i.kind == "message")

    def contents(self) -> int:
        return self.client.stats["events"]


async def two_viewers_mid_run(a: ServerProcess, b: ServerProcess, session: str,
                              prompt: str) -> tuple[Viewer, Viewer]:
    """A viewer of ``session`` on each process; a long run started from the first,
    which both have seen at least 20 events of."""
    va, vb = Viewer(a, session), Viewer(b, session)
    await va.open()
    await vb.open()
    await send(va.ws, type="run", prompt=prompt, scenario="long")
    await va.read_until(lambda v: v.contents() >= 20)
    await vb.read_until(lambda v: v.contents() >= 20)
    return va, vb


async def resume_into_a_new_epoch(viewers: tuple[Viewer, ...], old_epoch: str | None) -> None:
    """Each viewer resumes on its own process and takes the store's new epoch (the
    client takes it once the snapshot is whole)."""
    for v in viewers:
        await v.open()
        await v.read_until(lambda v: v.client.epoch not in (None, old_epoch))


async def run_again_for_both(va: Viewer, vb: Viewer, prompt: str,
                             ended: tuple[str, ...] = ("finished",)) -> None:
    """The session works again: a run from ``va`` reaches both viewers whole; then
    both sockets close."""
    await send(va.ws, type="run", prompt=prompt, scenario="very_fast")
    for v in (va, vb):
        try:
            await v.read_until(lambda v: v.state.status in ended and prompt in v.text())
        except TimeoutError as exc:
            other = vb if v is va else va
            raise TimeoutError(f"{exc}; the other {other.summary()}") from None
    await va.ws.close()
    await vb.ws.close()


def assert_same_view(va: Viewer, vb: Viewer) -> None:
    """Both viewers end under one epoch, at one position, showing the same text."""
    assert va.client.epoch == vb.client.epoch
    assert va.text() == vb.text()
    assert va.client.last_through == vb.client.last_through


def _outline(msg: dict[str, Any]) -> str:
    """A server message in a few words: its type, position and events' types."""
    raw = msg.get("events")
    events: list[Any] = raw if isinstance(raw, list) else []
    kinds = ",".join(str(e.get("type"))[:12] for e in events[:4] if isinstance(e, dict))
    return (f"{msg.get('type')} mode={msg.get('mode')} through={msg.get('through')} "
            f"after={msg.get('after')} more={msg.get('more')} [{kinds}]")
