"""AG-UI events: the names every module uses, from two modules.

- ``event_schema`` — type names, validation at the edge (bounded), pacing classes.
- ``stream_identity`` — which item an event belongs to (``STREAM_ROLES``,
  ``StreamTracker``).

``from streampace.conversation import events as ev`` keeps working: ``ev.X`` is
the same object as in either module.
"""

from __future__ import annotations

from . import event_schema, stream_identity
from .event_schema import *  # noqa: F403
from .stream_identity import *  # noqa: F403

__all__ = [*event_schema.__all__, *stream_identity.__all__]
