"""Where the edit tool's ``old_string`` lands in a file, and what the file becomes.

One function for both the tool (which writes the result) and the approval prompt (which
shows the person the diff before anything is written), so the two can never disagree.
"""

from __future__ import annotations

from typing import Literal

import attrs

EditOutcome = Literal["applied", "unchanged", "not_found", "ambiguous"]


@attrs.frozen
class EditPlan:
    outcome: EditOutcome
    # The file's text after the edit; "" unless the outcome is "applied".
    updated: str = ""
    replacements: int = 0
    occurrences: int = 0


def plan_edit(original: str, old: str, new: str, *, replace_all: bool = False) -> EditPlan:
    if old == new:
        return EditPlan("unchanged")
    if old not in original and "\r\n" in original and "\n" in old:
        # The model writes "\n"; a CRLF file needs "\r\n" for the match to hold.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = original.count(old) if old else 0
    if count == 0:
        return EditPlan("not_found")
    if count > 1 and not replace_all:
        return EditPlan("ambiguous", occurrences=count)
    updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
    return EditPlan("applied", updated, count if replace_all else 1, count)
