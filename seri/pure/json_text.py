"""JSON text from outside seri: config.json, tool arguments, stream chunks, error bodies,
stored rows. Whatever it holds, parsing it raises ValueError (JSONTextError) or returns.
``dump_json`` is the one compact form seri writes such JSON back in.

``json.loads`` alone lets two other failures through: RecursionError for nesting deeper
than the interpreter's stack (``[[[[…`` 100,000 deep), and a plain ValueError for an
integer of more than 4,300 digits (Python's guard against quadratic conversion). Callers
catch ValueError and say, in one line, what was wrong and where.
"""

from __future__ import annotations

import json
from typing import Any

TOO_DEEP = "it is nested too deeply (arrays or objects inside each other)"
# Digits beyond this in a stream's number are no count anyone means: read as "not given".
LENIENT_DIGITS = 30


class JSONTextError(ValueError):
    """The text is not JSON seri can take: malformed, nested too deeply, or a number too long."""


def loads(text: str | bytes) -> Any:
    """``json.loads`` whose every failure is a ValueError with a plain message."""
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTextError(TOO_DEEP) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise JSONTextError("it holds a number with thousands of digits") from None
        raise JSONTextError(str(exc)) from None


def _lenient_int(digits: str) -> float | int:
    return int(digits) if len(digits.lstrip("-")) <= LENIENT_DIGITS else float("inf")


def loads_lenient_numbers(text: str | bytes) -> Any:
    """As ``loads``, but an integer too long to mean anything becomes infinity instead of an
    error: a stream chunk with absurd usage numbers still delivers its text."""
    try:
        return json.loads(text, parse_int=_lenient_int)
    except RecursionError:
        raise JSONTextError(TOO_DEEP) from None


def dump_json(value: object) -> str:
    """Compact JSON text, non-ASCII kept as is: the one form seri stores provider JSON in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
