"""Where runs come from: the simulated model, a replay file, or a real upstream."""

from __future__ import annotations

from .base import RunRequest, Source, SourceSpecError, parse_source

__all__ = ["RunRequest", "Source", "SourceSpecError", "parse_source"]
