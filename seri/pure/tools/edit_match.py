"""Where the edit tool's ``old_string`` lands in a file, and what the file becomes.

One function for both the tool (which writes the result) and the approval prompt (which
shows the person the diff before anything is written), so the two can never disagree.
"""

from __future__ import annotations

from typing import Literal

import attrs

EditOutcome = Literal["applied", "unchanged", "not_found", "ambiguous", "too_large"]


@attrs.frozen
class EditPlan:
    outcome: EditOutcome
    # The file's text after the edit; "" unless the outcome is "applied".
    updated: str = ""
    replacements: int = 0
    occurrences: int = 0
    # The edited file's length in characters; set when it would pass the cap.
    size: int = 0


def plan_edit(
    original: str, old: str, new: str, *, replace_all: bool = False, cap: int | None = None
) -> EditPlan:
    """What the edit does; with ``cap``, an edit whose result would hold more characters
    than that is ``too_large`` and is measured before it is built (a ``replace_all`` of a
    short string by a long one could otherwise ask for terabytes)."""
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
    replaced = count if replace_all else 1
    size = len(original) + (len(new) - len(old)) * replaced
    if cap is not None and size > cap:  # a character is at least a byte: over in bytes too
        return EditPlan("too_large", replacements=replaced, occurrences=count, size=size)
    updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
    return EditPlan("applied", updated, replaced, count)


def edit_failure(plan: EditPlan, rel: str) -> str | None:
    """Why the edit tool refuses ``plan`` on the file named ``rel``, as the model is told;
    None when the failure (if any) is not one the file's text alone decides.

    The tool and the check made before asking a person share these words, so a call
    refused before it runs reads exactly as it would have read after."""
    if plan.outcome == "unchanged":
        return "old_string and new_string are the same; nothing to change"
    if plan.outcome == "not_found":
        return (
            f"old_string not found in {rel}. It must match the file exactly, whitespace and "
            "indentation included, without read_file's line numbers; read the file again."
        )
    if plan.outcome == "ambiguous":
        return (
            f"old_string occurs {plan.occurrences} times in {rel}; include more surrounding "
            "lines to make it unique, or set replace_all to true to replace every one."
        )
    return None
