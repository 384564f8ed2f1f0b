"""Issue 18 item 10: Redis restarted empty while one process lags.

Two `streampace serve` processes share a real redis-server without persistence.
A run streams to a viewer on each; one process is paused (SIGSTOP) while the
other's viewer goes on, and Redis is restarted empty.  Every process notices
that Redis lost its data (the data set's marker, checked on each read), tells its
viewers (`store_unavailable`) and closes them (1013); they resume into the
session as Redis has it now, under a new epoch.  Before, the paused process's
viewers silently missed text, or never saw the run end, under the same epoch
and `through` as the others.
"""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import websockets
from streampace.browser.client import SessionClient
from streampace.conversation.live_state import LiveState

from .conftest import WAIT_S, send
from .redis_harness import RedisProcess
from .test_multiprocess import ServerProcess, procs  # noqa: F401 - the fixture


class Viewer:
    """A page's client in Python: what it would show, across resumes."""

    def __init__(self, proc: ServerProcess, session: str) -> None:
        self.proc = proc
        self.session = session
        self.state = LiveState()
        self.client = SessionClient(self.state.apply)
        self.errors: list[str] = []
        self.closes: list[int | None] = []
        self.ws: Any = None

    async def open(self) -> None:
        self.ws = await websockets.connect(self.proc.ws(self.session), max_size=None)
        await self.ws.send(self.client.resume_message())

    async def read_until(self, pred: Any) -> None:
        async with asyncio.timeout(WAIT_S):
            while not pred(self):
                msg = json.loads(text := await self.ws.recv())
                if msg.get("type") == "error":
                    self.errors.append(msg["code"])
                self.client.receive(text)

    async def read_to_close(self) -> None:
        try:
            await self.read_until(lambda _v: False)
        except websockets.ConnectionClosed as exc:
            self.closes.append(exc.rcvd.code if exc.rcvd else None)

    def text(self) -> str:
        return "\n".join(i.text for i in self.state.items() if i.kind == "message")

    def contents(self) -> int:
        return self.client.stats["events"]


def test_redis_restarted_empty_while_a_process_is_paused_never_splits_an_epoch(
        tmp_path, procs):  # noqa: F811
    redis = RedisProcess(tmp_path / "r").start()
    try:
        a = ServerProcess(redis.url, speed=1.0)
        b = ServerProcess(redis.url, speed=1.0)
        procs += [a, b]

        async def scenario() -> tuple[Viewer, Viewer, str]:
            va, vb = Viewer(a, "rs"), Viewer(b, "rs")
            await va.open()
            await vb.open()
            await send(va.ws, type="run", prompt="before the restart", scenario="long")
            await va.read_until(lambda v: v.contents() >= 20)
            await vb.read_until(lambda v: v.contents() >= 20)
            old_epoch = va.client.epoch
            assert old_epoch == vb.client.epoch
            b.proc.send_signal(signal.SIGSTOP)  # B lags: it reads nothing more
            seen = va.contents()
            await va.read_until(lambda v: v.contents() >= seen + 20)
            redis.stop()
            redis.start()  # same port, empty
            await va.read_to_close()
            b.proc.send_signal(signal.SIGCONT)
            await vb.read_to_close()
            for v in (va, vb):  # each resumes where it was, on its own process
                await v.open()
                # The client takes the new epoch once the snapshot is whole.
                await v.read_until(lambda v: v.client.epoch not in (None, old_epoch))
            assert va.client.epoch == vb.client.epoch
            assert va.text() == vb.text()
            # The session works again, for both, identically.
            await send(va.ws, type="run", prompt="after the restart", scenario="very_fast")
            for v in (va, vb):
                await v.read_until(lambda v: v.state.status in ("finished", "error")
                                   and "after the restart" in v.text())
            await va.ws.close()
            await vb.ws.close()
            return va, vb, old_epoch

        va, vb, old_epoch = asyncio.run(scenario())
    finally:
        for proc in procs:  # a paused one must run again to be stopped
            if proc.alive():
                proc.proc.send_signal(signal.SIGCONT)
        redis.stop()
    for v in (va, vb):
        assert "store_unavailable" in v.errors
        assert v.closes == [1013]
        assert v.client.stats["runs_lost"] == 1  # the interrupted run ended, visibly
    assert va.client.epoch == vb.client.epoch != old_epoch
    assert va.text() == vb.text()
    assert va.client.last_through == vb.client.last_through
