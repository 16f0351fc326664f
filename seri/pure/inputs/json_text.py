"""JSON text from outside seri: config.json, tool arguments, stream chunks, error bodies,
MCP messages. Whatever it holds, parsing it raises ValueError (JSONTextError) or returns.
``dump_json`` is the one compact form seri writes such JSON back in.

``json.loads`` alone lets two other failures through: RecursionError for nesting deeper
than the interpreter's stack (``[[[[…`` 100,000 deep), and a plain ValueError for an
integer of more than 4,300 digits (Python's guard against quadratic conversion). And what
it parses may be nested deeply enough (a few hundred levels) to break code that walks the
value afterwards. So ``loads`` refuses text nested more than ``MAX_DEPTH`` deep before
parsing it (``seri.pure.inputs.bounded_input``), and ``loads_bounded`` also holds the text to its
source's size limit and names the source. Callers catch ValueError and say, in one line,
what was wrong and where.

``loads_stored`` is for JSON seri wrote itself (rows of seri.db): everything in it came in
through the bounds above (or an older seri), so it is read back whole, however deep.

This is the only module that calls ``json.loads`` (tests/test_bounded_sources.py).
"""

from __future__ import annotations

import json
from typing import Any

from seri.pure.inputs.bounded_input import (
    MAX_DEPTH,
    InputLimits,
    check_json_size,
    json_depth_over,
)

TOO_DEEP = (
    f"it is nested too deeply (more than {MAX_DEPTH} levels of arrays or objects inside each other)"
)
# Digits beyond this in a stream's number are no count anyone means: read as "not given".
LENIENT_DIGITS = 30


class JSONTextError(ValueError):
    """The text is not JSON seri can take: malformed, nested too deeply, or a number too long."""


def _text(raw: str | bytes) -> str:
    # As json.loads decodes bytes (UTF-8, -16 or -32, by the first bytes).
    return raw if isinstance(raw, str) else raw.decode(json.detect_encoding(raw), "surrogatepass")


def _parse(text: str, parse_int: Any = None) -> Any:
    try:
        return json.loads(text, parse_int=parse_int)
    except RecursionError:
        raise JSONTextError(TOO_DEEP) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise JSONTextError("it holds a number with thousands of digits") from None
        raise JSONTextError(str(exc)) from None


def loads(raw: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` whose every failure is a ValueError with a plain message; text nested
    more than ``max_depth`` deep is refused before it is parsed."""
    text = _text(raw)
    if json_depth_over(text, max_depth):
        raise JSONTextError(TOO_DEEP)
    return _parse(text)


def loads_bounded(raw: str | bytes, limits: InputLimits) -> Any:
    """JSON from the source ``limits`` describes: over its message size or depth, a
    ``BoundedInputError`` naming the source (a ValueError); otherwise as ``loads``."""
    check_json_size(raw, limits)
    return _parse(_text(raw))


def loads_stored(raw: str | bytes) -> Any:
    """JSON seri stored itself, read back whole; every failure is a ValueError."""
    return _parse(_text(raw))


def _lenient_int(digits: str) -> float | int:
    return int(digits) if len(digits.lstrip("-")) <= LENIENT_DIGITS else float("inf")


def loads_lenient_numbers(raw: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """As ``loads``, but an integer too long to mean anything becomes infinity instead of an
    error: a stream chunk with absurd usage numbers still delivers its text."""
    text = _text(raw)
    if json_depth_over(text, max_depth):
        raise JSONTextError(TOO_DEEP)
    return _parse(text, parse_int=_lenient_int)


def dump_json(value: object) -> str:
    """Compact JSON text, non-ASCII kept as is: the one form seri stores provider JSON in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
