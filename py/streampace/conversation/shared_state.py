"""The AG-UI shared state, changed only within bounds.

STATE_SNAPSHOT replaces it, STATE_DELTA patches it (RFC 6902).  Both come from
outside, so both are measured against :class:`StateLimits` before anything
changes, and the state's measure is kept so that a patch costs what it
touches, not what the state holds.

The run framer (``session.framing``) holds one to refuse a costly event before
it is logged; every transcript (server, Redis store, page) holds one to apply
what was logged.  All use the same limits and the same code, so an event the
framer let through applies the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import events as ev
from .json_patch import (
    DEFAULT_STATE_LIMITS,
    JsonPatchError,
    JsonPatchLimitError,
    StateLimits,
    apply_patch_bounded,
    measure_document,
)
from .json_value import Measure

__all__ = ["SharedState", "StateLimits", "JsonPatchError", "JsonPatchLimitError",
           "DEFAULT_STATE_LIMITS", "STATE_EVENTS"]

STATE_EVENTS = frozenset({ev.STATE_SNAPSHOT, ev.STATE_DELTA})

# The last snapshot measured, by identity: on the server the framer measures a
# STATE_SNAPSHOT's value and the session's transcript then gets the very same
# object, so the second walk is skipped.  One entry, so it holds at most one
# state alive; values are never mutated (copy-on-write), so identity suffices.
_last_measured: tuple[Any, StateLimits, Measure] | None = None


# The last patch applied: (delta, the state it applied to, limits, result, its
# measure).  On the server the framer applies a STATE_DELTA to the run's state
# and the session's transcript then applies the very same delta object to the
# very same state object: it takes the result instead of doing the work again.
_last_patch: tuple[Any, Any, StateLimits, Any, Measure] | None = None


def _measure(value: Any, limits: StateLimits) -> Measure:
    global _last_measured
    last = _last_measured
    if last is not None and last[0] is value and last[1] == limits:
        return last[2]
    measured = measure_document(value, limits)
    if isinstance(value, (dict, list)):
        _last_measured = (value, limits, measured)
    return measured


class SharedState:
    """A state document and its measure.

    ``apply(event)`` applies a STATE_SNAPSHOT or STATE_DELTA all or nothing:
    JsonPatchLimitError if it would pass a bound, JsonPatchError if it does not
    apply (a patch whose path is missing, a failed ``test``); either way the
    state is as before.  The value is shared, never copied: treat it as
    immutable (patches are copy-on-write).
    """

    __slots__ = ("value", "measured", "limits")

    def __init__(self, value: Any = None, limits: StateLimits = DEFAULT_STATE_LIMITS) -> None:
        self.limits = limits
        self.value: Any = {} if value is None else value
        # Raises for a state over the limits: the caller chose it, so that is its bug.
        self.measured: Measure = _measure(self.value, limits)

    def copy(self) -> SharedState:
        """Another holder of the same (immutable) state, without measuring it again."""
        twin = SharedState.__new__(SharedState)
        twin.value, twin.measured, twin.limits = self.value, self.measured, self.limits
        return twin

    def snapshot(self, value: Any) -> None:
        self.measured = _measure(value, self.limits)
        self.value = value

    def patch(self, delta: Any) -> None:
        global _last_patch
        last = _last_patch
        if (last is not None and last[0] is delta and last[1] is self.value
                and last[2] == self.limits):
            self.value, self.measured = last[3], last[4]
            return
        base = self.value
        self.value, self.measured = apply_patch_bounded(base, delta, self.measured, self.limits)
        _last_patch = (delta, base, self.limits, self.value, self.measured)

    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply a state event (other types are ignored)."""
        etype = event.get("type")
        if etype == ev.STATE_SNAPSHOT:
            if "snapshot" not in event:
                raise JsonPatchError("STATE_SNAPSHOT without a snapshot")
            self.snapshot(event["snapshot"])
        elif etype == ev.STATE_DELTA:
            self.patch(event.get("delta"))
