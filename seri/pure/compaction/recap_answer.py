"""Reading the summarizer's answer into recap fields, whatever shape the model chose.

The summarizer is asked for one JSON object, but models wrap it in a code fence, put prose
around it, or answer in headed text instead (``## Goal``, ``Goal:``, ``**Progress**``, bullets).
All of these are read. Field names are matched without regard to case, spaces, dashes or
underscores, so ``next_steps``, ``Next steps`` and ``nextSteps`` are the same field.

Nothing the model wrote is thrown away: text that fits no field (prose around the JSON, unknown
keys, unknown sections, lines before the first heading) becomes a note. Only markup goes:
heading marks, bullets, fences, quotes around an item, lines with no letter or digit at all, and
items that only say a list is empty ("none", "n/a"), which set the field to empty instead.

A field the answer does not mention at all is None, not empty: merging treats "no blockers
field" (keep the previous ones) differently from "blockers: none" (they were resolved).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import attrs

from seri.pure.inputs.lazy_pattern import LazyPattern

# Spellings of each field, after _key() has folded case and dropped everything but letters and
# digits. "notes" is the answer's own bucket for extra text; the path headings are there because
# models like to list files, which the recap takes from the tool calls instead, so such lists
# are kept as notes.
_FIELDS: dict[str, str] = {
    "goal": "goal",
    "goals": "goal",
    "objective": "goal",
    "overallgoal": "goal",
    "progress": "progress",
    "done": "progress",
    "completed": "progress",
    "accomplished": "progress",
    "blockers": "blockers",
    "blocker": "blockers",
    "blocked": "blockers",
    "nextsteps": "next_steps",
    "nextstep": "next_steps",
    "next": "next_steps",
    "todo": "next_steps",
    "remaining": "next_steps",
    "notes": "notes",
}
_NOTE_HEADINGS = frozenset({"read", "modified", "files", "readfiles", "modifiedfiles"})
# Without a colon or heading markup, only these spellings make a line a heading, so that a
# line such as "Done" inside a list stays an item.
_BARE_HEADINGS = frozenset({"goal", "progress", "blockers", "nextsteps", "notes"})
# What a model writes for an empty field, compared with the item's case, surrounding
# punctuation and runs of spaces set aside (but not its inner spaces or slash: the words
# "n" and "a" on two wrapped lines are content, "N/A" is not).
_EMPTY_ITEMS = frozenset({"none", "nothing", "n/a", "na", "nil", "none yet"})

_LEAD = LazyPattern(r"^\s*(?:>\s*)*(?P<hashes>#{1,6})?\s*(?P<bullet>[-*+•]\s+|\d{1,3}[.)]\s+)?")
_BULLET = LazyPattern(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_FENCE = LazyPattern(r"^\s*(```|~~~)[\w+-]*\s*$")
_WORDY = LazyPattern(r"\w")


@attrs.frozen
class RecapFields:
    """What one summarizer answer says. None means the answer did not mention the field."""

    goal: str | None = None
    progress: tuple[str, ...] | None = None
    blockers: tuple[str, ...] | None = None
    next_steps: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()


def parse_recap_answer(text: str) -> RecapFields:
    """The recap fields in a summarizer answer: JSON if it holds any, else headed text."""
    found = _find_json_object(text)
    if found is None:
        return _from_sections(_sections(text.splitlines()))
    obj, start, end = found
    fields = _from_json(obj)
    around = _prose_lines(text[:start].splitlines() + text[end:].splitlines())
    return attrs.evolve(fields, notes=(*around, *fields.notes))


# --- JSON ------------------------------------------------------------------------------------


def _find_json_object(text: str) -> tuple[dict[str, Any], int, int] | None:
    # Try every "{" in turn: the first one that decodes to an object with a recap key wins.
    # That covers a bare object, one inside a fence, and one embedded in prose alike.
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            pass
        else:
            if isinstance(value, dict) and any(_field(str(k)) for k in value):
                return value, start, end
        start = text.find("{", start + 1)
    return None


def _from_json(obj: dict[str, Any]) -> RecapFields:
    sections: list[tuple[str, list[str]]] = []
    for key, value in obj.items():
        field = _field(str(key))
        if field is None or (field == "notes" and not isinstance(value, str | list)):
            sections.append(("notes", [f"{key}: {_as_text(value)}"]))
        elif field == "goal":
            sections.append((field, [_goal_text(value)] if value is not None else []))
        else:
            sections.append((field, list(_json_items(value))))
    return _assemble(sections, present={_field(str(k)) for k in obj})


def _json_items(value: Any) -> Iterable[str]:
    if value is None:
        return
    if isinstance(value, str):
        yield from _items(value.splitlines())
    elif isinstance(value, list):
        for element in value:
            yield from _json_items(element) if isinstance(element, str) else [_as_text(element)]
    elif isinstance(value, dict):
        yield from (f"{k}: {_as_text(v)}" for k, v in value.items())
    else:
        yield _as_text(value)


def _goal_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_json_items(value))
    return " ".join(_items(value.splitlines())) if isinstance(value, str) else _as_text(value)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --- headed text -----------------------------------------------------------------------------


def _sections(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Split lines into (field, lines) runs; lines before any heading belong to notes."""
    sections: list[tuple[str, list[str]]] = [("notes", [])]
    for line in lines:
        heading = _heading(line)
        if heading is None:
            sections[-1][1].append(line)
            continue
        field, rest, keep_line = heading
        sections.append((field, [line.strip().lstrip("#").strip()] if keep_line else []))
        if rest:
            sections[-1][1].append(rest)
    return sections


def _heading(line: str) -> tuple[str, str, bool] | None:
    """(field, text after the heading, whether the heading line itself is kept), or None.

    Known field headings are consumed. Canonical names (``Goal``, ``Next steps``) and
    ``#``/bold headings always count; a synonym (``Blocked:``, ``Done:``) counts only at the
    start of a line, so that ``- Blocked: waiting for review`` inside a list stays an item. An
    unknown ``#`` heading or a wholly bold line starts a notes section and is kept, since it is
    the model's own label for what follows.
    """
    lead = _LEAD.match(line)
    assert lead is not None  # the pattern can match the empty string
    marked = lead.group("hashes") is not None
    bulleted = bool(lead.group("bullet"))
    body = line[lead.end() :]
    head, colon, rest = body.partition(":")
    name = head if colon else body
    strong = marked or _emphasized(name)
    key = _key(name)
    if key in _NOTE_HEADINGS and (colon or strong):
        return "notes", "", True
    field = _FIELDS.get(key) if len(name) <= 40 else None
    if field is not None and (key in _BARE_HEADINGS or strong or (colon and not bulleted)):
        return field, rest.strip().lstrip("*_ ").strip(), False
    if (marked and _WORDY.search(body)) or _bold_line(line):
        return "notes", "", True
    return None


def _emphasized(name: str) -> bool:
    s = name.strip()
    return s != s.strip("*_`")


def _bold_line(line: str) -> bool:
    s = line.strip()
    return len(s) > 4 and s.startswith("**") and s.endswith("**") and "**" not in s[2:-2]


# --- items and assembly ----------------------------------------------------------------------


def _items(lines: Iterable[str]) -> list[str]:
    """List items from lines: a bullet starts an item, a following plain line continues it,
    a blank line ends it. Markup-only lines (fences, rules, brackets) end an item too."""
    items: list[str] = []
    open_item = False
    for raw in lines:
        if not _WORDY.search(raw) or _FENCE.match(raw):
            open_item = False
            continue
        bullet = _BULLET.match(raw)
        text = _clean_item(raw[bullet.end() :] if bullet else raw)
        if open_item and not bullet:
            items[-1] = f"{items[-1]} {text}"
        else:
            items.append(text)
        open_item = True
    return items


def _clean_item(text: str) -> str:
    s = text.strip()
    if s.endswith(",") and s.startswith('"'):
        s = s[:-1].rstrip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        s = s[1:-1].strip()
    return s


def _prose_lines(lines: Iterable[str]) -> list[str]:
    return [line.strip() for line in lines if _WORDY.search(line) and not _FENCE.match(line)]


def _assemble(
    sections: list[tuple[str, list[str]]], present: set[str | None] | None = None
) -> RecapFields:
    """Gather runs per field. A field is present when it has a heading or key, even if empty."""
    collected: dict[str, list[str]] = {}
    for field, lines in sections:
        collected.setdefault(field, []).extend(lines)
    seen = present if present is not None else {field for field, _ in sections}

    def items(field: str) -> tuple[str, ...] | None:
        if field not in seen:
            return None
        return tuple(i for i in collected.get(field, []) if not _says_empty(i))

    goal = " ".join(collected.get("goal", [])).strip() if "goal" in seen else None
    return RecapFields(
        goal=goal or None,
        progress=items("progress"),
        blockers=items("blockers"),
        next_steps=items("next_steps"),
        notes=tuple(collected.get("notes", [])),
    )


def _from_sections(sections: list[tuple[str, list[str]]]) -> RecapFields:
    # Notes are kept a line each, as written: they are prose the model did not file anywhere,
    # and joining wrapped lines would run separate remarks together.
    return _assemble(
        [
            (field, _note_lines(lines) if field == "notes" else _items(lines))
            for field, lines in sections
        ]
    )


def _note_lines(lines: Iterable[str]) -> list[str]:
    return [item for line in lines for item in _items([line])]


def _says_empty(item: str) -> bool:
    return " ".join(item.casefold().split()).strip(" .,;:!()[]*_-`'\"") in _EMPTY_ITEMS


def _field(key: str) -> str | None:
    return _FIELDS.get(_key(key))


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())
