"""The page's run driver: a timed source run through the session engine on
FrameHost timeouts — the page's counterpart of the server's run task
(``server/session.py`` ``Session._run``).

Both drivers run a source the same way: ``begin_run`` (None: stopped before it
began, so the run ends at once), then each group to ``source_group`` while the
engine ``wants_source``, then ``end_run`` — with no outcome when the source has
no more (the engine judges how it ended), or with ``STOPPED`` when a ``StopRun``
cut it off (the stop the engine recorded is what counts).  The server waits for
each group on the asyncio clock; this waits on one re-armed timeout and releases
every group that is due when it fires (``TimedSteps``), so a frame that comes
late catches up at once.
"""

from __future__ import annotations

from collections.abc import Callable

from streampace.clock import Timeout, TimerHost
from streampace.session.engine import SessionEngine
from streampace.session.outputs import Output
from streampace.session.run_lifecycle import STOPPED, Outcome
from streampace.session.source import TimedSource, TimedSteps

__all__ = ["PageRunner"]


class PageRunner:
    """Runs a session's runs on ``source``; ``apply`` carries out the engine's outputs."""

    def __init__(self, host: TimerHost, engine: SessionEngine, source: TimedSource,
                 apply: Callable[[list[Output]], None]) -> None:
        self._host = host
        self._engine = engine
        self._source = source
        self._apply = apply
        self._timer = Timeout(host, self._release_due)
        self._run_id: str | None = None  # the run whose source this pulls
        self._steps: TimedSteps | None = None

    def start(self, run_id: str) -> None:
        """``StartRun``: no store to ask, so the body begins at once; its first group
        comes on the next turn of the clock, as a server's run task would."""
        request = self._engine.begin_run(run_id)
        if request is None:
            self._apply(self._engine.end_run(run_id, Outcome()))
            return
        self._run_id = run_id
        self._steps = TimedSteps(self._source.timed_groups(request), self._host.now())
        self._timer.arm(0.0)

    def stop(self, run_id: str) -> None:
        """``StopRun``: the source is dropped and the run ends right here."""
        self._drop()
        self._apply(self._engine.end_run(run_id, STOPPED))

    def close(self) -> None:
        """The page goes away: stop the clock (nobody is left to see an ending)."""
        self._drop()

    def _drop(self) -> None:
        self._timer.cancel()
        self._run_id = self._steps = None

    def _release_due(self) -> None:
        run_id, steps, engine = self._run_id, self._steps, self._engine
        if run_id is None or steps is None:
            return
        now = self._host.now()
        while (group := steps.due(now)) is not None:
            self._apply(engine.source_group(run_id, group))
            if self._run_id != run_id:
                return  # stopped while its events went out
            if not engine.wants_source(run_id):
                break
        if engine.wants_source(run_id) and (wait := steps.wait_ms(now)) is not None:
            self._timer.arm(wait)
            return
        self._drop()
        self._apply(engine.end_run(run_id))
