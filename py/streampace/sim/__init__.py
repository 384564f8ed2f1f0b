"""The simulated model and the page's in-browser session (outside the core).

- `scenarios` — what each scenario says: seeded, timed AG-UI runs (`simulate`).
- `run_builder` — `RunBuilder`: a run's clock, ids and event builders; `TimedEvent`.
- `cadence` — each scenario's token rate, jitter, pauses and length.
- `clusters` — the small grapheme splitter the simulated model cuts deltas with.
- `views` — what tests and benches read off a run (visible text, figures, jitter, snapshots).
- `text` — the corpus the simulated model answers from.
- `timed_model` — the simulated model as a timed source of a session.

The page's in-browser session that plays this model (static-files use) is in
`streampace.client` (`page_session`, `page_runner`, `page_socket`).

Sans-IO like the core (it runs in the page), but not part of it: nothing in
the core imports it.
"""

from streampace.sim.run_builder import TimedEvent
from streampace.sim.scenarios import SCENARIOS, iter_simulate, simulate
from streampace.sim.views import (
    messages_snapshot,
    stamped,
    summarize,
    visible_text,
    with_network_jitter,
    with_snapshot,
)

__all__ = [
    "SCENARIOS",
    "TimedEvent",
    "simulate",
    "iter_simulate",
    "visible_text",
    "summarize",
    "with_network_jitter",
    "messages_snapshot",
    "with_snapshot",
    "stamped",
]
