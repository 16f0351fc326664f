"""Formatting times that the caller read from the clock."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_utc(seconds: float) -> str:
    """'2026-12-02T16:04:21.123Z': stable, sortable, what jq and scripts expect."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
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
