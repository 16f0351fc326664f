"""The range of every number seri takes from outside: the command line, slash commands,
config.json, tool arguments. A number outside its range is one line naming the thing and the
range (exit 2, or a tool error for the model), never a number too big for SQLite, the clock
or a file offset that fails later as an internal error.

The bounds are far past any real use and far inside what SQLite's 64-bit integers, floats of
seconds and Python's int conversion take.
"""

from __future__ import annotations

import math

# Whole numbers from the first to the second, both included. A pair, not a record: `seri
# sessions --limit N` must not load attrs (and typing and re behind it) to read N.
Range = tuple[int, int]


def within(value: object, allowed: Range) -> bool:
    """Whether ``value`` is a whole number (not a bool) in ``allowed``."""
    low, high = allowed
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def words(allowed: Range) -> str:
    return f"from {allowed[0]:,} to {allowed[1]:,}"


# Model turns in a task (--max-turns, /max-turns, max_turns, subagent_max_turns).
TURNS: Range = (1, 1_000_000)
# Rows a listing or a search shows (--limit).
LISTED_ROWS: Range = (1, 1_000_000)
# A number of a row (a pin, a user message, a memory entry); negative ones count from the end.
ROW_NUMBERS: Range = (-1_000_000_000, 1_000_000_000)
# A context window, a keep budget or an answer budget, in tokens.
TOKENS: Range = (1, 100_000_000)
# A size in bytes seri is asked to keep or elide at.
BYTES: Range = (1, 2**40)
# Anything a provider takes as a plain integer (seed, top_k): what JSON numbers hold exactly.
PROVIDER_INTEGER: Range = (-(2**53) + 1, 2**53 - 1)
# How many MCP tools go out whole before tool_search (-1: never defer).
TOOL_COUNT: Range = (-1, 1_000_000)
# Days of trajectories kept.
MAX_RETENTION_DAYS = 36_500.0
# A cost budget in USD.
MAX_BUDGET_USD = 1e9
# The longest text of a refused number shown back.
_SHOWN = 40


def shown(value: object) -> str:
    """A refused value as it is quoted back: its ``repr`` (text in quotes), cut when long
    (5,000 digits stay one short line)."""
    quoted = repr(value)
    return quoted if len(quoted) <= _SHOWN else quoted[: _SHOWN - 1] + "…"


def whole_number_in(text: str, allowed: Range) -> int | None:
    """``text`` as a whole number within ``allowed``, or None (not a number, or outside)."""
    stripped = text.strip()
    # int() takes '1_000' and digits of every script; more than 30 digits are out of every
    # range anyway, and converting thousands of them is refused by Python itself.
    if len(stripped) > 30:
        return None
    try:
        value = int(stripped)
    except ValueError:
        return None
    return value if within(value, allowed) else None


def range_problem(name: str, value: object, allowed: Range) -> str:
    """Why ``value`` is not a number ``name`` takes, or "" when it is."""
    if within(value, allowed):
        return ""
    return f"{name} must be a whole number {words(allowed)}, not {shown(value)}"


def finite_in(value: object, low_exclusive: float, high: float) -> float | None:
    """A JSON number as a float above ``low_exclusive`` and at most ``high``, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > 10**30:
        return None
    number = float(value)
    if not math.isfinite(number) or not low_exclusive < number <= high:
        return None
    return number
