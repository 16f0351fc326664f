"""SSE framing: bytes of a ``text/event-stream``, cut anywhere, into events.

Sans-I/O: ``SSEParser`` is fed whatever the socket delivered and hands back whole events; the
chat-completions chunks inside them are ``stream_assembly``'s to put together. The MCP HTTP
transport reads its streams with the same parser.

Bounded and linear (``seri.pure.inputs.bounded_input``): each byte is looked at once however the
stream is cut, and a line, an event's data or the whole stream over the source's limits
raises ``BoundedInputError`` naming the source, as soon as the limit is passed (a line that
never ends is given up on at its limit, not held while it grows).
"""

from __future__ import annotations

import attrs

from seri.pure.inputs.bounded_input import (
    InputLimits,
    LineSplitter,
    OverlongLine,
    line_too_long,
    message_too_big,
    total_too_big,
)


@attrs.frozen
class SSEEvent:
    """One dispatched SSE event. ``event`` is ``"message"`` unless the server named it.

    llama.cpp sends stream errors as a bare ``error:`` field rather than ``data:``; such an
    event comes out with ``event == "error"`` and the field's value as ``data``.
    """

    data: str
    event: str = "message"


@attrs.frozen
class SSEDone:
    """The ``data: [DONE]`` sentinel that ends an OpenAI-style stream."""


DONE = SSEDone()


class SSEParser:
    """An incremental parser of ``text/event-stream`` bytes (the WHATWG event-stream rules).

    ``feed`` may be given any slicing of the stream: a chunk can end inside a line, between the
    CR and LF of a CRLF, or inside a multi-byte UTF-8 character; the events come out the same.
    Comment lines (``: OPENROUTER PROCESSING``) are counted in ``comments`` and otherwise skipped.
    ``limits`` bound a line, an event's data and the stream (``max_total_bytes`` 0: no bound).
    """

    def __init__(self, limits: InputLimits) -> None:
        self._limits = limits
        self._lines = LineSplitter(limits.max_line_bytes, lone_cr=True)
        self._received = 0
        self._started = False  # the byte-order mark is only stripped at the very start
        self._data: list[str] = []
        self._data_chars = 0
        self._event = ""
        self.comments = 0

    def feed(self, data: bytes) -> list[SSEEvent | SSEDone]:
        """Take the next bytes; return the events they complete, in order. Raises
        ``BoundedInputError`` when the stream passes one of its limits."""
        self._received += len(data)
        total = self._limits.max_total_bytes
        if total and self._received > total:
            raise total_too_big(self._limits)
        events: list[SSEEvent | SSEDone] = []
        for line in self._lines.feed(data):
            if isinstance(line, OverlongLine):
                raise line_too_long(self._limits)
            events.extend(self._line(self._decode(line)))
        return events

    def finish(self) -> list[SSEEvent | SSEDone]:
        """The stream ended. An event whose lines all arrived but whose blank line did not is
        dispatched (some servers close right after the last ``data:`` line); a half-received
        line is dropped, because its JSON would be cut."""
        self._lines.finish()
        return self._dispatch()

    def _decode(self, line: bytes) -> str:
        if not self._started:
            self._started = True
            line = line.removeprefix(b"\xef\xbb\xbf")
        return line.decode("utf-8", "replace")

    def _line(self, line: str) -> list[SSEEvent | SSEDone]:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1
            return []
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._add_data(value)
        elif name == "event":
            self._event = value
        elif name == "error":
            # llama.cpp: `error: {...}` instead of a data line. Standard parsers would drop it.
            self._event = "error"
            self._add_data(value)
        # `id` and `retry` do not matter to a one-shot chat stream; unknown fields are ignored.
        return []

    def _add_data(self, value: str) -> None:
        # Characters, not bytes: a bound on them bounds the bytes to four times as many.
        self._data_chars += len(value) + 1
        if self._data_chars > self._limits.max_message_bytes:
            raise message_too_big(self._limits)
        self._data.append(value)

    def _dispatch(self) -> list[SSEEvent | SSEDone]:
        data, event = "\n".join(self._data), self._event or "message"
        had_data = bool(self._data)
        self._data, self._event, self._data_chars = [], "", 0
        if not had_data:
            return []
        if event == "message" and data.strip() == "[DONE]":
            return [DONE]
        return [SSEEvent(data=data, event=event)]
