"""Server-sent events from bytes (sans-IO), strict and bounded.

Why not a text decoder in front of a line parser: HTTP clients decode a body
with ``errors="replace"``, so invalid UTF-8 from an upstream would become
U+FFFD and the run would "finish" normally with text the model never sent.
SSE is UTF-8 by definition (WHATWG HTML §9.2), so each line is decoded
strictly here and a bad byte is an error, after the events before it.

Bounds: a line, and the data of one event, may not exceed ``max_event_bytes``
(an upstream that never sends a line break cannot grow the buffer without end).
Lines split at CR, LF or CRLF: those bytes never occur inside a UTF-8
multi-byte sequence, so splitting before decoding is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseDecoder", "SseError", "SseEvent"]

_BOM = "\ufeff"


class SseError(ValueError):
    """The stream is not valid SSE within bounds; ``reason``: ``bad_utf8`` or ``too_big``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class SseEvent:
    event: str  # "message" unless the stream named it
    data: str
    id: str | None = None


class SseDecoder:
    """``feed(bytes)`` returns the events completed so far; ``close()`` ends the
    stream (an event without its blank line is dropped, as the standard says).

    A fault (SseError) is raised only after every event before it was returned:
    if a chunk holds good events and then a bad byte, ``feed`` returns the good
    ones and the next ``feed`` or ``close`` raises.
    """

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no line break
        self._first = True  # a BOM may open the stream
        self._offset = 0  # bytes consumed before _buf (for error messages)
        self._event = ""
        self._data: list[str] = []
        self._data_bytes = 0
        self._last_id: str | None = None
        self._error: SseError | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._error is not None:
            raise self._error
        buf = self._buf
        buf += chunk
        out: list[SseEvent] = []
        pos = 0  # lines before it are done; deleted once, after the loop
        while True:
            cut = self._line_end(pos)
            if cut is None:
                break
            end, after = cut
            try:
                event = self._line(bytes(buf[pos:end]), self._offset + pos)
            except SseError as exc:
                if not out:
                    raise
                self._error = exc
                return out
            pos = after
            if event is not None:
                out.append(event)
        if pos:
            del buf[:pos]
            self._offset += pos
            self._scanned = max(self._scanned - pos, 0)
        if len(buf) > self.max_event_bytes:
            raise SseError("too_big", f"an SSE line longer than {self.max_event_bytes} bytes")
        return out

    def close(self) -> list[SseEvent]:
        """The stream ended: a last line without its break is still a line."""
        if self._error is not None:
            raise self._error
        out: list[SseEvent] = []
        if self._buf:
            line = bytes(self._buf.rstrip(b"\r"))
            self._buf.clear()
            event = self._line(line, self._offset)
            if event is not None:
                out.append(event)
        return out

    def _line_end(self, pos: int) -> tuple[int, int] | None:
        """(end of the line at ``pos``, start of the next) or None if incomplete."""
        buf = self._buf
        start = max(pos, self._scanned)
        lf = buf.find(b"\n", start)
        cr = buf.find(b"\r", start, lf if lf >= 0 else len(buf))
        if cr >= 0:
            if cr + 1 == len(buf):
                self._scanned = cr  # a CR at the end may be the first half of CRLF
                return None
            self._scanned = 0
            return cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
        if lf >= 0:
            self._scanned = 0
            return lf, lf + 1
        self._scanned = len(buf)
        return None

    def _line(self, raw: bytes, at: int) -> SseEvent | None:
        """One line (without its break) that starts at byte ``at`` of the stream."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SseError("bad_utf8", f"invalid UTF-8 at byte {at + exc.start}") from None
        if self._first:
            self._first = False
            line = line.removeprefix(_BOM)
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None  # a comment (keep-alive)
        field, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data_bytes += len(raw) + 1
            if self._data_bytes > self.max_event_bytes:
                raise SseError("too_big", f"an SSE event larger than {self.max_event_bytes} bytes")
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._last_id = value
        # "retry" and unknown fields are ignored: we never reconnect to an upstream.
        return None

    def _dispatch(self) -> SseEvent | None:
        data, self._data, self._data_bytes = self._data, [], 0
        name, self._event = self._event, ""
        if not data:
            return None
        return SseEvent(name or "message", "\n".join(data), self._last_id)
