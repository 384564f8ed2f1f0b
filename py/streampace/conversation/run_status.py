"""The latest run as a session's log shows it: ``RunStatus`` and the one table
that moves it (sans-IO).

The transcript folds every run boundary it reads through ``RUN_STATUS_TABLE``.  It
is the only view a process has of a run another process runs (the Redis store), and
the page's view of every run.  Whether a run holds a session is decided over this
status and the engine's own run lifecycle in one rule,
``streampace.session.run_lifecycle.run_holder``.  It lives here, below the session
package, because the conversation model owns the transcript that moves it.
"""

from __future__ import annotations

from enum import Enum, StrEnum

from streampace.lifecycle import table

__all__ = ["RunStatus", "RunStatusEvent", "RUN_STATUS_TABLE"]


class RunStatus(StrEnum):
    """The latest run as the session log shows it.  Its values are what readers show
    (the page's ``data-run``, a store's snapshot), so it is a ``StrEnum``."""

    IDLE = "idle"  # no run logged yet
    RUNNING = "running"  # RUN_STARTED, and no terminal event since
    FINISHED = "finished"  # RUN_FINISHED
    ERROR = "error"  # RUN_ERROR


class RunStatusEvent(Enum):
    STARTED = "started"  # RUN_STARTED
    FINISHED = "finished"  # RUN_FINISHED
    ERROR = "error"  # RUN_ERROR


# The log is folded, not policed: the framer makes every run well formed before it is
# logged, and a reader must keep whatever a log holds, so every boundary is accepted
# in every status (the transcript records the anomalies).
RUN_STATUS_TABLE = table(RunStatus, RunStatusEvent, """
IDLE      STARTED   RUNNING   the first run
IDLE      FINISHED  FINISHED  a reader that joined mid-run sees its end without its start
IDLE      ERROR     ERROR     an error before any run began (an upstream refused the first run)
RUNNING   STARTED   RUNNING   a run started without the last one's end: the new one is the run
RUNNING   FINISHED  FINISHED  the run finished
RUNNING   ERROR     ERROR     the run failed, was cancelled, or its process was lost
FINISHED  STARTED   RUNNING   the next run
FINISHED  FINISHED  FINISHED  a second terminal event: the run stays finished
FINISHED  ERROR     ERROR     an error after the run (an upstream's late RUN_ERROR)
ERROR     STARTED   RUNNING   the next run
ERROR     FINISHED  FINISHED  a terminal event after the error: the last one counts
ERROR     ERROR     ERROR     a second error: the last one counts
""")
