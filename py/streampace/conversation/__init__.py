"""The conversation model (sans-IO): AG-UI events, stream identity and the one reducer.

- `events` — AG-UI events in wire shape: validation at the edge, `STREAM_ROLES`
  and `StreamTracker` (which item an event belongs to).
- `transcript` — `Transcript`, the one reducer of a conversation, and its views.
- `live_state` — the page's view of the transcript: `Changes` per batch.
- `json_patch` — RFC 6902 for `STATE_DELTA`.
"""
