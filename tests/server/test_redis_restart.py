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
import signal
from pathlib import Path

from .redis_harness import RedisProcess
from .redis_viewers import (
    Viewer,
    assert_same_view,
    resume_into_a_new_epoch,
    run_again_for_both,
    two_viewers_mid_run,
)
from .test_multiprocess import ServerProcess, procs  # noqa: F401 - the fixture


def test_redis_restarted_empty_while_a_process_is_paused_never_splits_an_epoch(
        tmp_path: Path, procs: list[ServerProcess]) -> None:  # noqa: F811
    redis = RedisProcess(tmp_path / "r").start()
    try:
        a = ServerProcess(redis.url, speed=1.0)
        b = ServerProcess(redis.url, speed=1.0)
        procs += [a, b]

        async def scenario() -> tuple[Viewer, Viewer, str | None]:
            va, vb = await two_viewers_mid_run(a, b, "rs", "before the restart")
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
            # Each resumes where it was, on its own process.
            await resume_into_a_new_epoch((va, vb), old_epoch)
            assert va.client.epoch == vb.client.epoch
            assert va.text() == vb.text()
            # The session works again, for both, identically.
            await run_again_for_both(va, vb, "after the restart", ended=("finished", "error"))
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
    assert_same_view(va, vb)
    assert va.client.epoch != old_epoch
