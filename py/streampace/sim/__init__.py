"""The simulated model and the page's in-browser session (outside the core).

- `scenarios` — seeded, timed AG-UI runs (`simulate`) and views of them.
- `text` — the corpus the simulated model answers from.
- `timed_model` — the simulated model as a timed source of a session.
- `page_session` — the session engine on FrameHost timers, in the page, for the
  static-files use; `page_socket` — its socket side.

Sans-IO like the core (it runs in the page), but not part of it: nothing in
the core imports it.
"""

from streampace.sim.scenarios import (
    SCENARIOS,
    TimedEvent,
    iter_simulate,
    messages_snapshot,
    simulate,
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
