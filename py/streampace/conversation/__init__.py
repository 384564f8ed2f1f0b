"""The conversation model (sans-IO): AG-UI events, stream identity and the one reducer.

- `events` — AG-UI events in wire shape, the names of two modules:
  `event_schema` (type names, bounded validation at the edge) and
  `stream_identity` (`STREAM_ROLES`, `StreamTracker`: which item an event belongs to).
- `transcript` — `Transcript`, the one reducer of a conversation, and its views;
  `run_status` — `RunStatus`, the latest run as the log shows it (one table).
- `live_state` — the page's view of the transcript: `Changes` per batch.
- `json_patch` — RFC 6902 for `STATE_DELTA`, bounded by `StateLimits`;
  `json_value` — iterative, bounded measure and copy of outside JSON values;
  `shared_state` — the state and its measure, changed only within the limits.
"""
