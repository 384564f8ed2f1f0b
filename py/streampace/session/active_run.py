"""One accepted run of a session: what it was asked, its framer, who asked.

Data only; the rules of what may happen to a run are the run lifecycle
(``run_lifecycle.RUN_TABLE``) and the engine that drives it.  Its source is
its driver's: the server's run task, or the page's run driver.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

from .framing import RunFramer
from .outputs import Viewer

__all__ = ["ActiveRun"]


@dataclass
class ActiveRun(Generic[Viewer]):
    run_id: str
    prompt: str
    scenario: str | None
    framer: RunFramer
    requester: Viewer | None = None  # the viewer whose `run` it was (gets a refusal)
