"""One streampace session, sans-IO: the engine and the parts it is built from.

- `engine` — `SessionEngine`: the session's rules (log, transcript, runs, framing,
  attach/resume, client-message dispatch); inputs in, `outputs` out.
- `outputs` — what the engine asks its driver to do (send, emit, fan out, start or
  stop a run).
- `run_lifecycle` — the run's typed state machine and who holds the run
  (`run_holder`, over it and the log's `RunStatus`); `active_run` — one run's data.
- `session_lifecycle` — the session's typed state machine (open, shutting down, evicted).
- `log` — the session log: sequence numbers, a bounded replay window.
- `framing` — `RunFramer`: every run a well-formed AG-UI run, whatever its source does.
- `client_messages` — parsing what a viewer sends and the rules that refuse it.
- `protocol` — the protocol version, the text of each server message, attach modes.
- `source` — `RunRequest` and timed event groups, the sans-IO form of a source, and
  `TimedSteps`, the waits a driver takes between them.
- `delivery` (+ `delivery_lifecycle`) — batching for the wire.

- `backoff` — reconnect delays.
- `compact_json` — the wire's JSON text.
- `limits` — the default bounds (log, history, prompt) of the server and the page alike.

The server (`streampace.server.session`) drives the engine with asyncio and
WebSockets; the page's simulated session (`streampace.client.page_session`) with
FrameHost timers.  Like the rest of the core, nothing here does I/O.
"""
