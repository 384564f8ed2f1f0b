"""Parse and check what a viewer sends (protocol v2, docs/protocol.md).

The server's WebSocket endpoint and the page's simulated session both parse
with `parse_client_message` and refuse with the `check_*` rules below, so the
same bad message gets the same error code and text from either.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from streampace.bounded_json import JsonLimitError
from streampace.bounded_json import loads as bounded_loads

from .limits import MAX_PROMPT_CHARS

__all__ = ["ClientError", "RunMessage", "ResumeMessage", "CancelMessage", "parse_client_message",
           "check_resume", "check_run", "check_cancel", "CANCEL_CODE", "CANCEL_MESSAGE",
           "MAX_PROMPT_CHARS"]
# A viewer's cancel ends the run with RUN_ERROR of this code and message.
CANCEL_CODE = "cancelled"
CANCEL_MESSAGE = "run cancelled by a viewer"


class ClientError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class RunMessage:
    prompt: str
    scenario: str | None


@dataclass(frozen=True)
class ResumeMessage:
    after: int
    epoch: str | None = None  # the epoch `after` belongs to (None: a fresh or v1 client)


@dataclass(frozen=True)
class CancelMessage:
    pass


ClientMessage = RunMessage | ResumeMessage | CancelMessage


# Client messages are flat objects ({"type": "run", "prompt": ...}); a little room
# for fields a newer client may add.
MAX_CLIENT_DEPTH = 4


def parse_client_message(text: str, max_prompt_chars: int) -> ClientMessage:
    # The socket already bounds a message's bytes; this bound is the parser's own:
    # the longest prompt with every character escaped (a \uXXXX pair per astral
    # character), plus the rest of the message.
    max_bytes = 12 * max_prompt_chars + 4096
    try:
        data: Any = bounded_loads(text, max_bytes=max_bytes, max_depth=MAX_CLIENT_DEPTH)
    except JsonLimitError as exc:
        # Deep ("[[[[...") or huge input is refused like any other bad JSON, before
        # json.loads sees it (and counts toward the abuse meter).
        raise ClientError("bad_json", str(exc)) from None
    if not isinstance(data, dict):
        raise ClientError("bad_message", f"expected a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ClientError("bad_message", "'type' is missing or not a string")
    if kind == "run":
        prompt = data.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ClientError("bad_field", "run.prompt must be a non-empty string")
        if len(prompt) > max_prompt_chars:
            raise ClientError("bad_field", f"run.prompt is longer than {max_prompt_chars} chars")
        try:
            prompt.encode("utf-8")
        except UnicodeEncodeError:
            raise ClientError("bad_field", "run.prompt contains a lone surrogate") from None
        scenario = data.get("scenario")
        if scenario is not None and not isinstance(scenario, str):
            raise ClientError("bad_field", "run.scenario must be a string")
        return RunMessage(prompt, scenario)
    if kind == "resume":
        after = data.get("after")
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ClientError("bad_field", "resume.after must be an integer >= 0")
        epoch = data.get("epoch")
        if epoch is not None and not (isinstance(epoch, str) and 0 < len(epoch) <= 64):
            raise ClientError("bad_field", "resume.epoch must be a string of 1-64 characters")
        return ResumeMessage(after, epoch)
    if kind == "cancel":
        return CancelMessage()
    raise ClientError("unknown_type", f"unknown message type {kind[:40]!r}")


def check_resume(attached: bool) -> None:
    """`resume` is accepted once per socket (to restart delivery, reconnect)."""
    if attached:
        raise ClientError("already_attached", "this socket is already attached; reconnect")


def check_run(msg: RunMessage, scenarios: Collection[str] | None, running: bool) -> str | None:
    """The scenario to run ``msg`` with, or ClientError.

    ``scenarios``: what the source offers (None: it has none, and ignores the
    field the page always sends).
    """
    scenario = msg.scenario
    if scenarios is None:
        scenario = None
    elif scenario is not None and scenario not in scenarios:
        raise ClientError("bad_scenario", f"unknown scenario {scenario[:40]!r}")
    if running:
        raise ClientError("run_active", "a run is already in progress in this session")
    return scenario


def check_cancel(running: bool) -> None:
    if not running:
        raise ClientError("no_run", "no run is in progress")
