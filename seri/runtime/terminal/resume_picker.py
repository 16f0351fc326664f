"""The small prompt of `seri chat --resume` without an id: the project's recent sessions."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from seri.io.session.session_index import session_rows
from seri.pure.inputs.errors import SeriError
from seri.pure.session.resume_choice import (
    CHOICES,
    SEARCHED,
    choice_lines,
    is_search,
    matching,
    read_choice,
)
from seri.pure.terminal.terminal_text import neutralise
from seri.runtime.session.profile import Profile, current_project


class NothingChosen(SeriError):
    """The person cancelled the choice: nothing to do, nothing wrong."""

    exit_code = 0


def with_chosen_session(argv: Sequence[str], at: int, profile: Profile) -> list[str]:
    """``argv`` with the session the person picks put after ``--resume`` (at ``at``)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise SeriError(
            "--resume needs a session id when stdin is not a terminal; `seri sessions` "
            "lists them (or use --continue for the most recent)"
        )
    project = current_project()
    rows = session_rows(profile.store, project, limit=SEARCHED)
    if not rows:
        raise SeriError(f"no session to resume in {project}; start one with `seri chat`")
    zone = datetime.now(UTC).astimezone().tzinfo
    every = [
        (row[0], datetime.fromtimestamp(row[3], tz=zone).strftime("%Y-%m-%d %H:%M"), row[5], row[6])
        for row in rows
    ]
    shown = list(range(min(CHOICES, len(every))))
    _show("Recent sessions here:", [every[i] for i in shown])
    while True:
        print(
            f"resume which? [1-{len(shown)}, words of a title to search, Enter to cancel] ",
            end="",
            file=sys.stderr,
            flush=True,
        )
        answer = sys.stdin.readline()
        if is_search(answer):
            found = matching(every, answer)
            if len(found) == 1:
                return _resumed(argv, at, str(every[found[0]][0]))
            if found:
                shown = found[:CHOICES]
                _show(f"{len(found)} sessions match (newest first):", [every[i] for i in shown])
                continue
        try:
            chosen = read_choice(answer, len(shown))
        except ValueError as exc:
            words = neutralise(answer.strip())
            none = f"no session here matches {words!r}; " if is_search(answer) else ""
            print(f"seri: {none}{exc}", file=sys.stderr)
            continue
        if chosen is None:
            raise NothingChosen("nothing resumed")
        return _resumed(argv, at, str(every[shown[chosen]][0]))


def _show(heading: str, rows: list[tuple[str, str, str, int]]) -> None:
    print(neutralise(heading + "\n" + "\n".join(choice_lines(rows))), file=sys.stderr)


def _resumed(argv: Sequence[str], at: int, session_id: str) -> list[str]:
    return [*argv[: at + 1], session_id, *argv[at + 1 :]]
