"""Default bounds of a session: the server's (ServerConfig, `streampace serve --help`)
and the page's simulated session alike."""

from __future__ import annotations

__all__ = ["LOG_EVENTS", "LOG_BYTES", "HISTORY_MESSAGES", "HISTORY_BYTES", "MAX_PROMPT_CHARS"]

LOG_EVENTS = 10_000  # events the session log keeps for replay ...
LOG_BYTES = 8 * 1024 * 1024  # ... and their compact JSON; older ones only as a snapshot
HISTORY_MESSAGES = 1_000  # completed messages kept for snapshots / upstream history ...
HISTORY_BYTES = 4 * 1024 * 1024  # ... and their text, UTF-8 bytes
MAX_PROMPT_CHARS = 32_768  # longest `run.prompt`
