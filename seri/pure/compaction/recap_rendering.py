"""The recap as the text the model sees: its sections, the pinned notes and the task in hand
verbatim, and the most recent paths, shortened by steps until it fits a budget."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from seri.pure.compaction.recap import Recap
from seri.pure.compaction.recap_paths import PATHS_SHOWN, shown_paths

RECAP_HEADER = (
    "[Recap of the earlier conversation. Those messages were removed to save context; "
    "this recap stands in for them.]"
)


PINS_HEADING = "## Pinned notes (kept verbatim)"
# The task in hand when the cut evicted it: last, where the conversation goes on from.
TASK_HEADING = "## The task in hand (the newest message, kept verbatim)"


@attrs.frozen
class _Detail:
    """How much of a recap a rendering shows: paths and items per list, characters of goal."""

    paths: int
    items: int | None
    goal: int | None


# From everything down to the bare bones; a rendering takes the first that fits its budget.
_DETAILS = (
    _Detail(PATHS_SHOWN, None, None),
    _Detail(20, 40, 2_000),
    _Detail(10, 20, 1_000),
    _Detail(5, 10, 500),
    _Detail(3, 5, 300),
    _Detail(0, 3, 200),
)


def render_recap(recap: Recap, pins: Sequence[str] = (), max_chars: int | None = None) -> str:
    """The text of the recap message the model sees in place of the evicted messages.

    Paths show the most recent ``PATHS_SHOWN`` per list. With ``max_chars``, the rendering
    shows less of what is oldest (progress and notes items, paths) until it fits, saying how
    much it left out; the structured recap keeps everything. Pins are always shown whole.
    """
    text = ""
    for detail in _DETAILS:
        text = _render(recap, pins, detail)
        if max_chars is None or len(text) <= max_chars:
            break
    return text


def _render(recap: Recap, pins: Sequence[str], detail: _Detail) -> str:
    goal = recap.goal or "(not stated)"
    if detail.goal is not None and len(goal) > detail.goal:
        goal = goal[: detail.goal] + f"… [{len(goal) - detail.goal} more characters]"
    # Continuation lines are indented like the bullets': no line of the model's words can then
    # begin a section, the rules heading included (a recap stored before the rules were a
    # field of its own is read for that heading once, see ``compaction.rules_in_force``).
    goal = goal.replace("\n", "\n  ")
    read = _path_list("Read", recap.read_paths, detail.paths)
    modified = _path_list("Modified", recap.modified_paths, detail.paths)
    blocks = [
        RECAP_HEADER,
        f"## Goal\n{goal}",
        f"## Progress\n{_bullets(recap.progress, detail.items, 'earlier items')}",
        f"## Blockers\n{_bullets(recap.blockers, detail.items, 'more', newest=False)}",
        f"## Next steps\n{_bullets(recap.next_steps, detail.items, 'more', newest=False)}",
        f"{read}\n{modified}",
    ]
    if recap.notes:
        blocks.append(f"## Notes\n{_bullets(recap.notes, detail.items, 'earlier notes')}")
    if pins:
        blocks.append(f"{PINS_HEADING}\n" + "\n".join(f"- {pin}" for pin in pins))
    if recap.task:
        blocks.append(f"{TASK_HEADING}\n{recap.task}")
    return "\n\n".join(blocks)


def _bullets(
    items: Sequence[str], limit: int | None = None, rest: str = "more", *, newest: bool = True
) -> str:
    """Items as bullets; over ``limit``, the newest (or, for ordered lists, the first) only."""
    if not items:
        return "(none)"
    if limit is None or len(items) <= limit:
        return "\n".join("- " + item.replace("\n", "\n  ") for item in items)
    shown = list(items[-limit:] if newest else items[:limit])
    lines = ["- " + item.replace("\n", "\n  ") for item in shown]
    note = f"- ({len(items) - len(shown)} {rest} left out to fit the window)"
    if newest:
        lines.insert(0, note)
    else:
        lines.append(note)
    return "\n".join(lines)


def _path_list(label: str, paths: Sequence[str], limit: int = PATHS_SHOWN) -> str:
    if not paths:
        return f"{label}: (none)"
    recent, more = shown_paths(paths, limit)
    lines = [f"- {p}" for p in recent]
    if more:
        lines.append(f"- and {more} more")
    return f"{label}:\n" + "\n".join(lines)
