"""`seri chat --resume` without an id, on a terminal: which recent session to open.

Deciding that the id is missing, numbering the choices and reading the answer are pure;
the command shows them and reads the line.
"""

from __future__ import annotations

from collections.abc import Sequence

CHOICES = 10
# How many recent sessions a search looks through.
SEARCHED = 500


def resume_without_id(argv: Sequence[str]) -> int | None:
    """Where ``--resume`` stands with no id after it (last, or before another option)."""
    for index, word in enumerate(argv):
        if word == "--":
            return None
        if word == "--resume":
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-"):
                return index
    return None


def choice_lines(rows: Sequence[tuple[str, str, str, int]]) -> list[str]:
    """'  1  2026-12-03 08:17  fix the tests  (12 messages, 3fa9…)' per (id, when, title, n)."""
    return [
        f"  {number:>2}  {when}  {title or '-'}  ({messages} messages, {session_id[:8]})"
        for number, (session_id, when, title, messages) in enumerate(rows, start=1)
    ]


def read_choice(answer: str, count: int) -> int | None:
    """The chosen row (0-based), None to cancel; ValueError names what is accepted."""
    text = answer.strip()
    if not text or text.lower() in ("q", "n", "no"):
        return None
    if text.isdigit() and 1 <= int(text) <= count:
        return int(text) - 1
    raise ValueError(f"answer with a number from 1 to {count}, or Enter to cancel")


def is_search(answer: str) -> bool:
    """Whether an answer is words to look for rather than a number or a cancel."""
    text = answer.strip()
    return bool(text) and not text.isdigit() and text.lower() not in ("q", "n", "no")


def matching(rows: Sequence[tuple[str, str, str, int]], answer: str) -> list[int]:
    """The rows whose title (or id) holds every word of ``answer``, any case, in order."""
    words = answer.casefold().split()
    return [
        index
        for index, (session_id, _, title, _) in enumerate(rows)
        if all(word in f"{title} {session_id}".casefold() for word in words)
    ]
