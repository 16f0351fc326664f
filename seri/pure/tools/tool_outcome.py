"""What running one tool produced: the text for the model, and facts for the record.

``text`` is all the model ever sees. ``details`` are structured facts for the
trajectory (bytes written, edit outcome, exit code, whether output was cut),
kept as a tuple of pairs so the record stays immutable; ``detail`` and
``details_dict`` read them back.
"""

from __future__ import annotations

import attrs

DetailValue = str | int | float | bool | None


@attrs.frozen
class ToolOutcome:
    text: str
    is_error: bool = False
    details: tuple[tuple[str, DetailValue], ...] = ()

    def detail(self, key: str, default: DetailValue = None) -> DetailValue:
        for name, value in self.details:
            if name == key:
                return value
        return default

    def details_dict(self) -> dict[str, DetailValue]:
        return dict(self.details)


def outcome(text: str, *, is_error: bool = False, **details: DetailValue) -> ToolOutcome:
    """Build a ToolOutcome, details given as keywords (their order is kept)."""
    return ToolOutcome(text=text, is_error=is_error, details=tuple(details.items()))


def failure(text: str, **details: DetailValue) -> ToolOutcome:
    """An outcome the model should read as an error."""
    return outcome(text, is_error=True, **details)
