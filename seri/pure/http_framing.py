"""HTTP/1.1 framing (RFC 9112): the bytes of a request head, and a response read from pieces.

Pure: ``seri.io.http_connection`` moves the bytes; this says what they mean. The response
parser is fed whatever pieces the socket returns and gives the same head and body for any
split of the same bytes. Bytes that are not HTTP come back as a ``FramingError`` value
(never an exception), so a hostile or broken server is one clear line, not a traceback:

* a head (status line and headers, or a chunked body's trailers) over 64 KiB;
* a status line, header line, ``Content-Length`` or chunk size that does not parse;
* a transfer coding other than ``chunked`` (seri asks for ``Accept-Encoding: identity``);
* a body that ends before its length or its last chunk (``finish`` at the close).

A body is framed by ``Transfer-Encoding: chunked`` (extensions ignored, trailers read and
kept), else by ``Content-Length``, else it runs until the server closes. Interim 1xx answers
are skipped; HEAD, 204, 304 and a CONNECT's 2xx have no body.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

MAX_HEAD_BYTES = 64 * 1024
# A chunk-size line with its extensions; the size itself is at most 16 hex digits (2**64).
_MAX_CHUNK_LINE = 4096
_MAX_CHUNK_DIGITS = 16
_MAX_LENGTH_DIGITS = 19
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


@attrs.frozen
class ResponseHead:
    """A status line and its headers, names as the server wrote them, in order."""

    version: str
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]

    def get_all(self, name: str) -> tuple[str, ...]:
        wanted = name.lower()
        return tuple(value for key, value in self.headers if key.lower() == wanted)

    def get(self, name: str, default: str = "") -> str:
        """The header's value; repeated headers joined by ``, `` (RFC 9110 §5.3)."""
        values = self.get_all(name)
        return ", ".join(values) if values else default

    def as_mapping(self) -> Mapping[str, str]:
        """Lower-cased names, each once (repeats joined), for code that looks names up."""
        joined: dict[str, str] = {}
        for key, value in self.headers:
            lower = key.lower()
            joined[lower] = f"{joined[lower]}, {value}" if lower in joined else value
        return joined


@attrs.frozen
class FramingError:
    """Why the bytes are not an HTTP/1.1 response (a sentence fragment, no bytes quoted)."""

    message: str


@attrs.frozen
class Progress:
    """What one ``feed`` (or ``finish``) found: the head when it completed, the body bytes
    that arrived, whether the response is whole, or why it cannot be read."""

    head: ResponseHead | None = None
    body: bytes = b""
    done: bool = False
    error: FramingError | None = None


def request_head(
    method: str,
    target: str,
    host: str,
    headers: tuple[tuple[str, str], ...],
    content_length: int | None,
) -> bytes:
    """The head of a request: ``target`` is the path (or the absolute URL for a proxy, the
    ``host:port`` of a CONNECT). Raises ``ValueError`` for a header that cannot be sent,
    naming the header, never its value (it may be a key)."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    fixed = [("Accept-Encoding", "identity"), ("Connection", "keep-alive")]
    if method == "CONNECT":
        fixed = []
    for name, value in (*fixed, *headers):
        if not name or not set(name) <= _TOKEN_CHARS:
            raise ValueError(f"the header name {name!r} cannot be sent in HTTP")
        if any(ch in value for ch in "\r\n\0"):
            raise ValueError(f"the {name} header contains a line break or a NUL")
        lines.append(f"{name}: {value}")
    if content_length is not None:
        lines.append(f"Content-Length: {content_length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _head_end(buffer: bytearray, start: int) -> int:
    """The index just past the empty line that ends a head, or -1 (LF alone is accepted)."""
    crlf = buffer.find(b"\n\r\n", start)
    lf = buffer.find(b"\n\n", start)
    ends = [at + 3 for at in (crlf,) if at >= 0] + [at + 2 for at in (lf,) if at >= 0]
    return min(ends) if ends else -1


def _lines(raw: bytes) -> list[str]:
    return [line.removesuffix("\r") for line in raw.decode("latin-1").split("\n")]


def _header_fields(lines: list[str]) -> tuple[tuple[tuple[str, str], ...], FramingError | None]:
    fields: list[tuple[str, str]] = []
    for line in lines:
        if not line:
            continue
        if line[0] in " \t":
            # obs-fold: a continuation of the previous value, read as one space (RFC 9112 §5.2).
            if not fields:
                return (), FramingError("a header continuation line before any header")
            name, value = fields[-1]
            more = line.strip(" \t")
            fields[-1] = (name, f"{value} {more}")
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or not set(name) <= _TOKEN_CHARS:
            return (), FramingError("a header line that is not `name: value`")
        fields.append((name, value.strip(" \t")))
    return tuple(fields), None


def parse_head(raw: bytes) -> ResponseHead | FramingError:
    """A response head without its final empty line."""
    status_line, *rest = _lines(raw)
    version, _, after = status_line.partition(" ")
    code, _, reason = after.partition(" ")
    if (
        len(version) != 8
        or not version.startswith("HTTP/")
        or not (version[5].isdigit() and version[6] == "." and version[7].isdigit())
    ):
        return FramingError("the answer is not HTTP (no HTTP/1.x status line)")
    if len(code) != 3 or not code.isascii() or not code.isdigit() or code[0] == "0":
        return FramingError("a status line without a three-digit status")
    fields, error = _header_fields(rest)
    if error is not None:
        return error
    return ResponseHead(version=version, status=int(code), reason=reason, headers=fields)


def _content_length(head: ResponseHead) -> int | FramingError | None:
    values = {v.strip() for value in head.get_all("content-length") for v in value.split(",")}
    if not values:
        return None
    if len(values) > 1:
        return FramingError("Content-Length headers that disagree")
    (value,) = values
    if not value.isascii() or not value.isdigit() or len(value) > _MAX_LENGTH_DIGITS:
        return FramingError("a Content-Length that is not a number")
    return int(value)


def _chunk_size(line: bytes) -> int | FramingError:
    size = line.decode("latin-1").removesuffix("\r").partition(";")[0].strip(" \t")
    if not size or len(size) > _MAX_CHUNK_DIGITS or not set(size) <= _HEX_DIGITS:
        return FramingError("a chunk size that is not a hexadecimal number")
    return int(size, 16)


class ResponseParser:
    """One response, fed the bytes as they come (``feed``), then told of the close
    (``finish``) when the server hung up before the body was whole.

    ``method`` is the request's: a HEAD answer and a CONNECT's 2xx have no body.
    """

    def __init__(self, method: str = "GET") -> None:
        self._method = method.upper()
        self._buffer = bytearray()
        self._scanned = 0
        self._state = "head"  # head, length, size, data, data_end, trailers, close, done, error
        self._remaining = 0
        self._received = 0
        self._until_close = False
        self.head: ResponseHead | None = None
        self.trailers: tuple[tuple[str, str], ...] = ()
        self.error: FramingError | None = None

    @property
    def done(self) -> bool:
        return self._state == "done"

    @property
    def started(self) -> bool:
        """Whether any byte of the answer has arrived."""
        return self._received > 0

    @property
    def reusable(self) -> bool:
        """Whether the connection can carry another request: the answer is whole, was framed
        by its length or chunks, nothing followed it, and neither side asked to close."""
        head = self.head
        return (
            self.done
            and head is not None
            and not self._buffer
            and head.version == "HTTP/1.1"
            and "close" not in {t.strip().lower() for t in head.get("connection").split(",")}
            and not self._until_close
        )

    def feed(self, data: bytes) -> Progress:
        if self._state == "error":
            return Progress(error=self.error)
        self._received += len(data)
        self._buffer += data
        completed: ResponseHead | None = None
        body = bytearray()
        while True:
            step = self._step(body)
            if isinstance(step, FramingError):
                self._state, self.error = "error", step
                self._buffer.clear()
                return Progress(head=completed, body=bytes(body), error=step)
            if isinstance(step, ResponseHead):
                completed = step
                continue
            if not step:
                break
        return Progress(head=completed, body=bytes(body), done=self.done)

    def finish(self) -> Progress:
        """The server closed the connection: the body is whole only if it ran until then."""
        if self._state == "close":
            self._state = "done"
            return Progress(done=True)
        if self._state in ("done", "error"):
            return Progress(done=self.done, error=self.error)
        where = {
            "head": "before the response head ended",
            "length": "in the middle of the body",
            "size": "in the middle of a chunked body",
            "data": "in the middle of a chunk",
            "data_end": "in the middle of a chunk",
            "trailers": "in the middle of the trailers",
        }[self._state]
        self._state, self.error = "error", FramingError(f"the connection closed {where}")
        return Progress(error=self.error)

    # --- the states ---------------------------------------------------------------------------

    def _step(self, body: bytearray) -> ResponseHead | FramingError | bool:
        """One move of the state machine: the head when it completed, whether to go on."""
        state = self._state
        if state == "head":
            return self._take_head()
        if state in ("length", "data"):
            return self._take_data(body)
        if state == "size":
            return self._take_size()
        if state == "data_end":
            return self._take_data_end()
        if state == "trailers":
            return self._take_trailers()
        if state == "close":
            body += self._buffer
            self._buffer.clear()
            return False
        return False

    def _take_head(self) -> ResponseHead | FramingError | bool:
        end = _head_end(self._buffer, max(0, self._scanned - 2))
        if end < 0:
            self._scanned = len(self._buffer)
            if len(self._buffer) > MAX_HEAD_BYTES:
                return FramingError(f"a response head over {MAX_HEAD_BYTES // 1024} KiB")
            return False
        if end > MAX_HEAD_BYTES:
            return FramingError(f"a response head over {MAX_HEAD_BYTES // 1024} KiB")
        raw = bytes(self._buffer[:end]).rstrip(b"\r\n")
        del self._buffer[:end]
        self._scanned = 0
        head = parse_head(raw)
        if isinstance(head, FramingError):
            return head
        if 100 <= head.status < 200:
            if head.status == 101:
                return FramingError("the server switched protocols (101), which seri never asks")
            return True  # an interim answer (100 Continue, 103 Early Hints): the real one follows
        self.head = head
        framing = self._framing(head)
        if isinstance(framing, FramingError):
            return framing
        return head

    def _framing(self, head: ResponseHead) -> FramingError | None:
        if (
            self._method == "HEAD"
            or head.status in (204, 304)
            or (self._method == "CONNECT" and 200 <= head.status < 300)
        ):
            self._state = "done"
            return None
        codings = [
            c.strip().lower() for v in head.get_all("transfer-encoding") for c in v.split(",")
        ]
        codings = [c for c in codings if c]
        if codings:
            if codings != ["chunked"]:
                return FramingError(f"an unsupported transfer coding ({', '.join(codings)})")
            self._state = "size"
            return None
        length = _content_length(head)
        if isinstance(length, FramingError):
            return length
        if length is None:
            self._state, self._until_close = "close", True
        elif length == 0:
            self._state = "done"
        else:
            self._state, self._remaining = "length", length
        return None

    def _take_data(self, body: bytearray) -> bool:
        if not self._buffer:
            return False
        piece = self._buffer[: self._remaining]
        body += piece
        del self._buffer[: len(piece)]
        self._remaining -= len(piece)
        if self._remaining == 0:
            self._state = "done" if self._state == "length" else "data_end"
            return True
        return False

    def _take_size(self) -> FramingError | bool:
        end = self._buffer.find(b"\n", 0, _MAX_CHUNK_LINE + 1)
        if end < 0:
            if len(self._buffer) > _MAX_CHUNK_LINE:
                return FramingError("a chunk-size line over 4 KiB")
            return False
        size = _chunk_size(bytes(self._buffer[:end]))
        del self._buffer[: end + 1]
        if isinstance(size, FramingError):
            return size
        if size == 0:
            self._state, self._scanned = "trailers", 0
        else:
            self._state, self._remaining = "data", size
        return True

    def _take_data_end(self) -> FramingError | bool:
        if self._buffer[:2] == b"\r\n":
            del self._buffer[:2]
        elif self._buffer[:1] == b"\n":
            del self._buffer[:1]
        elif not self._buffer or self._buffer == b"\r":
            return False
        else:
            return FramingError("a chunk longer than its size")
        self._state = "size"
        return True

    def _take_trailers(self) -> FramingError | bool:
        if self._buffer[:2] == b"\r\n" or self._buffer[:1] == b"\n":
            del self._buffer[: 2 if self._buffer[:1] == b"\r" else 1]
            self._state = "done"
            return True
        if not self._buffer or self._buffer == b"\r":
            return False
        end = _head_end(self._buffer, max(0, self._scanned - 2))
        if end < 0:
            self._scanned = len(self._buffer)
            if len(self._buffer) > MAX_HEAD_BYTES:
                return FramingError(f"trailers over {MAX_HEAD_BYTES // 1024} KiB")
            return False
        if end > MAX_HEAD_BYTES:
            return FramingError(f"trailers over {MAX_HEAD_BYTES // 1024} KiB")
        fields, error = _header_fields(_lines(bytes(self._buffer[:end]).rstrip(b"\r\n")))
        if error is not None:
            return error
        del self._buffer[:end]
        self.trailers, self._state = fields, "done"
        return True
