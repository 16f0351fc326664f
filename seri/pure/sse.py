"""SSE framing: bytes of a ``text/event-stream``, cut anywhere, into events.

Sans-I/O: ``SSEParser`` is fed whatever the socket delivered and hands back whole events; the
chat-completions chunks inside them are ``stream_assembly``'s to put together. The MCP HTTP
transport reads its streams with the same parser.
"""

from __future__ import annotations

import codecs
import re

import attrs

from seri.pure.value_record import ValueRecord


@attrs.frozen(repr=False, eq=False)
class SSEEvent(ValueRecord):
    """One dispatched SSE event. ``event`` is ``"message"`` unless the server named it.

    llama.cpp sends stream errors as a bare ``error:`` field rather than ``data:``; such an
    event comes out with ``event == "error"`` and the field's value as ``data``.
    """

    data: str
    event: str = "message"


@attrs.frozen(repr=False, eq=False)
class SSEDone(ValueRecord):
    """The ``data: [DONE]`` sentinel that ends an OpenAI-style stream."""


DONE = SSEDone()

_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEParser:
    """An incremental parser of ``text/event-stream`` bytes (the WHATWG event-stream rules).

    ``feed`` may be given any slicing of the stream: a chunk can end inside a line, between the
    CR and LF of a CRLF, or inside a multi-byte UTF-8 character; the events come out the same.
    Comment lines (``: OPENROUTER PROCESSING``) are counted in ``comments`` and otherwise skipped.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # text after the last line end
        self._skip_lf = False  # the last chunk ended in CR: a leading LF belongs to it
        self._started = False  # the byte-order mark is only stripped at the very start
        self._data: list[str] = []
        self._event = ""
        self.comments = 0

    def feed(self, data: bytes) -> list[SSEEvent | SSEDone]:
        """Take the next bytes; return the events they complete, in order."""
        return self._take(self._decoder.decode(data))

    def finish(self) -> list[SSEEvent | SSEDone]:
        """The stream ended. An event whose lines all arrived but whose blank line did not is
        dispatched (some servers close right after the last ``data:`` line); a half-received
        line is dropped, because its JSON would be cut."""
        events = self._take(self._decoder.decode(b"", final=True))
        self._pending = ""
        events.extend(self._dispatch())
        return events

    def _take(self, text: str) -> list[SSEEvent | SSEDone]:
        if not text:
            return []
        if not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._skip_lf:
            self._skip_lf = False
            text = text.removeprefix("\n")
        buffer = self._pending + text
        events: list[SSEEvent | SSEDone] = []
        start = 0
        for end in _LINE_END.finditer(buffer):
            events.extend(self._line(buffer[start : end.start()]))
            start = end.end()
            if end.group() == "\r" and start == len(buffer):
                self._skip_lf = True
        self._pending = buffer[start:]
        return events

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
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "error":
            # llama.cpp: `error: {...}` instead of a data line. Standard parsers would drop it.
            self._event = "error"
            self._data.append(value)
        # `id` and `retry` do not matter to a one-shot chat stream; unknown fields are ignored.
        return []

    def _dispatch(self) -> list[SSEEvent | SSEDone]:
        data, event = "\n".join(self._data), self._event or "message"
        had_data = bool(self._data)
        self._data, self._event = [], ""
        if not had_data:
            return []
        if event == "message" and data.strip() == "[DONE]":
            return [DONE]
        return [SSEEvent(data=data, event=event)]
