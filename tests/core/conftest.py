"""Shared rig for scheduler tests: a ManualHost, a recording apply, AG-UI builders."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from streampace.pacing.scheduler import PacingConfig, PacingScheduler
from streampace.testing import ManualHost

FRAME_60 = 1000 / 60
FRAME_120 = 1000 / 120


class AG:
    """Tiny AG-UI 1.0 event builders (camelCase dicts, as on the wire)."""

    @staticmethod
    def run_started(thread: str = "t1", run: str = "r1") -> dict:
        return {"type": "RUN_STARTED", "threadId": thread, "runId": run}

    @staticmethod
    def run_finished(thread: str = "t1", run: str = "r1") -> dict:
        return {"type": "RUN_FINISHED", "threadId": thread, "runId": run}

    @staticmethod
    def run_error(message: str = "boom") -> dict:
        return {"type": "RUN_ERROR", "message": message}

    @staticmethod
    def start(mid: str = "m1", role: str = "assistant") -> dict:
        return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role}

    @staticmethod
    def content(delta: str, mid: str = "m1") -> dict:
        return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta}

    @staticmethod
    def end(mid: str = "m1") -> dict:
        return {"type": "TEXT_MESSAGE_END", "messageId": mid}

    @staticmethod
    def chunk(delta: str, mid: str | None = "m1", role: str | None = None,
              name: str | None = None) -> dict:
        ev: dict[str, Any] = {"type": "TEXT_MESSAGE_CHUNK", "delta": delta}
        if mid is not None:
            ev["messageId"] = mid
        if role is not None:
            ev["role"] = role
        if name is not None:
            ev["name"] = name
        return ev

    @staticmethod
    def reasoning(delta: str, mid: str = "r1") -> dict:
        return {"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": delta}

    @staticmethod
    def reasoning_end(mid: str = "r1") -> dict:
        return {"type": "REASONING_MESSAGE_END", "messageId": mid}

    @staticmethod
    def tool_start(tid: str = "tc1", name: str = "search") -> dict:
        return {"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": name}

    @staticmethod
    def tool_args(delta: str, tid: str = "tc1") -> dict:
        return {"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": delta}

    @staticmethod
    def tool_end(tid: str = "tc1") -> dict:
        return {"type": "TOOL_CALL_END", "toolCallId": tid}

    @staticmethod
    def state_snapshot(snapshot: Any = None) -> dict:
        return {"type": "STATE_SNAPSHOT", "snapshot": snapshot if snapshot is not None else {}}

    @staticmethod
    def messages_snapshot(messages: list | None = None) -> dict:
        return {"type": "MESSAGES_SNAPSHOT", "messages": messages or []}

    @staticmethod
    def custom(value: Any = 0, name: str = "c") -> dict:
        return {"type": "CUSTOM", "name": name, "value": value}


@dataclass
class Call:
    at: float
    session: str
    events: list[dict]
    accepted: bool


@dataclass
class Rig:
    host: ManualHost
    sched: PacingScheduler
    calls: list[Call] = field(default_factory=list)
    reject: Callable[[str, list[dict]], bool] | None = None

    def apply(self, session: str, events: list[dict]) -> bool:
        ok = not (self.reject is not None and self.reject(session, events))
        self.calls.append(Call(self.host.now(), session, list(events), ok))
        return ok

    @property
    def accepted(self) -> list[Call]:
        return [c for c in self.calls if c.accepted]

    def delivered(self, session: str | None = None) -> list[dict]:
        return [e for c in self.accepted if session in (None, c.session) for e in c.events]

    def text(self, mid: str = "m1", session: str | None = None) -> str:
        return "".join(e.get("delta", "") for e in self.delivered(session)
                       if e.get("messageId") == mid and "delta" in e
                       and e["type"] in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK",
                                         "REASONING_MESSAGE_CONTENT"))

    def frames(self, n: int, dt: float = FRAME_60) -> None:
        for _ in range(n):
            self.host.frame(dt)

    def frames_until_idle(self, dt: float = FRAME_60, limit: int = 100_000) -> int:
        n = 0
        while self.sched.queued_events() and n < limit:
            self.host.frame(dt)
            n += 1
        assert self.sched.queued_events() == 0, "queue did not drain"
        return n


def make_rig(config: PacingConfig | None = None, segmenter: Any = None,
             start_ms: float = 1000.0) -> Rig:
    host = ManualHost(start_ms)
    rig = Rig(host=host, sched=None)  # type: ignore[arg-type]
    rig.sched = PacingScheduler(host, rig.apply, config, segmenter)
    return rig


@pytest.fixture
def rig() -> Rig:
    return make_rig()


@pytest.fixture
def seed_rig() -> Rig:
    """The seed's law (PacingConfig.seed()), for tests that pin its budget formula."""
    return make_rig(PacingConfig.seed())


RigFactory = Callable[..., Rig]  # make_rig's signature: config, segmenter, start_ms


@pytest.fixture
def rig_factory() -> RigFactory:
    return make_rig


@pytest.fixture
def ag() -> type[AG]:
    return AG
