"""The page's side of a session, sans-IO (no `js`: the browser adapter drives it).

- `session_client` — `SessionClient`: the one consumer of server messages
  (decoded by `session.protocol`), duplicates dropped by sequence number, epochs.
- `connection` — `SessionConnection`: the client socket's state machine (resume,
  reconnect, what a close means), with `connection_problems` and `backoff`.
- `page_session` — `PageSession`: the session engine on FrameHost timers, in the
  page, for the static-files use; `page_runner` runs its timed source as the
  server's run task runs any source; `page_socket` — `SimulatedSession`, its
  socket side, with the surface of the page's WebSocket; `fallback` —
  `SourceChoice`: the one rule for falling back to it (a server that never answered).

Nothing in the server imports this package; the browser adapter and the tests do.
"""
