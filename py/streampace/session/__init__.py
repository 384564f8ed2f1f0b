"""The sans-IO half of a streampace session, shared by the server and the page.

- `log` — the session log: sequence numbers, a bounded replay window.
- `framing` — `RunFramer`: every run a well-formed AG-UI run, whatever its source does.
- `client_messages` — parsing what a viewer sends and the rules that refuse it.
- `protocol` — the protocol version, the text of each server message, attach modes.
- `source` — `RunRequest` and timed event groups, the sans-IO form of a source.

- `backoff` — reconnect delays.
- `compact_json` — the wire's JSON text.
- `limits` — the default bounds (log, history, prompt) of the server and the page alike.

The server (`streampace.server`) drives these with asyncio and WebSockets; the
page's simulated session (`streampace.sim.page_session`) with FrameHost timers.
Like the rest of the core, nothing here does I/O.
"""
