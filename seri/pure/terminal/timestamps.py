"""Formatting times that the caller read from the clock."""

from __future__ import annotations

from datetime import UTC, datetime

# SQLite's Julian day of the Unix epoch, in milliseconds (date.c: 'unixepoch').
_EPOCH_JD_MS = 210866760000000.0


def iso_utc(seconds: float) -> str:
    """'2026-12-02T16:04:21.123Z': stable, sortable, what jq and scripts expect.

    Rounded to the millisecond exactly as SQLite's ``datetime(x, 'unixepoch', 'subsec')``
    rounds (the exports written by SQL), so the same time reads the same from either.
    """
    millis = int(seconds * 1000.0 + _EPOCH_JD_MS + 0.5) - int(_EPOCH_JD_MS)
    moment = datetime.fromtimestamp(millis // 1000, tz=UTC).replace(
        microsecond=(millis % 1000) * 1000
    )
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_since(text: str) -> float:
    """A date or date-time (ISO 8601; a bare date is midnight UTC) as epoch seconds."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
