"""The recap: the one user message that stands in for an evicted prefix of the conversation.

This module holds the record (``Recap``), how a summarizer's answer is folded into the previous
recap (``merge_recap``), and its plain-data form for the store (``recap_to_dict``,
``recap_from_dict``). Compaction asks the turn's own model for one extra answer
(``seri.pure.compaction.summarizer_request``), reads it (``seri.pure.compaction.recap_answer``),
merges it here and renders the text the model will see (``seri.pure.compaction.recap_rendering``).
The Read:/Modified: lists never come from the model: they are taken from the evicted tool calls
(``seri.pure.compaction.recap_paths``) and merged with the previous lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from seri.pure.compaction.recap_answer import RecapFields
from seri.pure.compaction.recap_paths import TouchedPaths, merge_paths


@attrs.frozen
class Recap:
    """What the evicted part of a session established, kept across compactions."""

    goal: str = ""
    progress: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    read_paths: tuple[str, ...] = ()
    modified_paths: tuple[str, ...] = ()
    # Text from the model's answers that fit no field: kept rather than guessed at or dropped.
    notes: tuple[str, ...] = ()
    # The project rules in force whose messages this recap stands in for, as their texts
    # (``[rule name] ...``): a rule that fired stays in force after its message is evicted.
    # None for a recap stored before seri kept them here (they are then in its text only).
    rules: tuple[str, ...] | None = None
    # The task in hand, verbatim, when a cut evicted the newest message that set it (see
    # seri.pure.compaction.compaction_contract): never summarized, carried until a newer one
    # arrives.
    task: str = ""


# --- merging ---------------------------------------------------------------------------------


def merge_recap(
    previous: Recap | None,
    answer: RecapFields,
    read: Sequence[str],
    modified: Sequence[str],
) -> Recap:
    """The updated recap, from the previous one and the summarizer's answer.

    * goal: the answer's, else the previous one (a model that leaves it out has not changed it).
    * progress: the previous items, never lost, then the answer's new ones; repeats (ignoring
      case and spacing) are dropped.
    * blockers: the answer's list, since the model drops the ones the new turns resolved; an
      answer with no blockers field at all keeps the previous list.
    * next_steps: the answer's list, else the previous one.
    * read and modified paths: ``merge_paths`` of the previous lists and ``read``/``modified``
      (from ``paths_touched`` over the evicted messages): union, modified wins.
    * notes: the previous notes, then the answer's, repeats dropped.
    """
    before = previous if previous is not None else Recap()
    paths = merge_paths(
        TouchedPaths(before.read_paths, before.modified_paths),
        TouchedPaths(tuple(read), tuple(modified)),
    )
    return Recap(
        goal=answer.goal if answer.goal else before.goal,
        progress=_unique_items((*before.progress, *(answer.progress or ()))),
        blockers=_unique_items(answer.blockers if answer.blockers is not None else before.blockers),
        next_steps=_unique_items(
            answer.next_steps if answer.next_steps is not None else before.next_steps
        ),
        read_paths=paths.read,
        modified_paths=paths.modified,
        notes=_unique_items((*before.notes, *answer.notes)),
        rules=before.rules,
    )


def _unique_items(items: Iterable[str]) -> tuple[str, ...]:
    # Compare loosely, keep the first spelling: a model restating an item with other spacing
    # or case has not added anything.
    seen: dict[str, str] = {}
    for item in items:
        text = item.strip()
        key = " ".join(text.split()).casefold()
        if key and key not in seen:
            seen[key] = text
    return tuple(seen.values())


# --- plain data ------------------------------------------------------------------------------

_LIST_FIELDS = ("progress", "blockers", "next_steps", "read_paths", "modified_paths", "notes")


def recap_to_dict(recap: Recap) -> dict[str, Any]:
    """The recap as plain JSON-ready data, keyed by field name."""
    data: dict[str, Any] = {"goal": recap.goal}
    data.update({name: list(getattr(recap, name)) for name in _LIST_FIELDS})
    if recap.rules is not None:
        data["rules"] = list(recap.rules)
    if recap.task:
        data["task"] = recap.task
    return data


def recap_from_dict(data: Mapping[str, Any]) -> Recap:
    """The recap ``recap_to_dict`` made. Missing fields are empty; unknown keys are ignored,
    so a recap stored by a later version still loads. Wrong types raise TypeError."""
    goal = data.get("goal", "")
    if not isinstance(goal, str):
        raise TypeError(f"recap goal must be a string, not {goal!r}")
    lists = {name: _string_tuple(name, data.get(name, [])) for name in _LIST_FIELDS}
    rules = _string_tuple("rules", data["rules"]) if "rules" in data else None
    task = data.get("task", "")
    if not isinstance(task, str):
        raise TypeError(f"recap task must be a string, not {task!r}")
    return Recap(goal=goal, **lists, rules=rules, task=task)


def _string_tuple(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"recap {name} must be a list of strings, not {value!r}")
    return tuple(value)
