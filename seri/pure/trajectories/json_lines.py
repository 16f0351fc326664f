"""One JSON value per line, whatever reads the lines: every JSON Lines output goes through here.

JSON allows U+2028 and U+2029 (and U+0085, NEL) raw inside strings, and ``json.dumps`` with
``ensure_ascii=False`` writes them so. But Python's ``str.splitlines()``, and readers built on
the same idea of a line, break a line there: a message or tool output holding one made a
stream-json record (or an export line) two broken halves. Inside a JSON text these characters
can only be in strings, where their ``\\uXXXX`` escape is the same value, so escaping them in
the finished text (or its UTF-8 bytes, for the lines SQLite builds) is always safe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# The characters str.splitlines() breaks at that json.dumps leaves raw (it escapes every
# control character below U+0020 already).
_RAW_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_RAW_BREAK_BYTES = {
    char.encode("utf-8"): escape.encode("ascii") for char, escape in _RAW_BREAKS.items()
}


def line_safe(text: str) -> str:
    """``text`` (JSON, or JSON lines) with its raw line-breaking characters escaped."""
    for char, escape in _RAW_BREAKS.items():
        if char in text:
            text = text.replace(char, escape)
    return text


def line_safe_bytes(data: bytes) -> bytes:
    """``line_safe`` for UTF-8 bytes (no decoding: these byte sequences mean only them)."""
    for raw, escape in _RAW_BREAK_BYTES.items():
        if raw in data:
            data = data.replace(raw, escape)
    return data


def json_line(
    value: Any, *, default: Callable[[Any], Any] | None = None, compact: bool = True
) -> str:
    """``value`` as one line of JSON, ending in ``\\n`` (UTF-8 text, as seri writes JSON)."""
    separators = (",", ":") if compact else None
    text = json.dumps(value, ensure_ascii=False, separators=separators, default=default)
    return line_safe(text) + "\n"
