"""The small prompt of `seri chat --resume` without an id: the project's recent sessions."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from seri.io.session_index import session_rows
from seri.pure.errors import SeriError
from seri.pure.resume_choice import CHOICES, choice_lines, read_choice
from seri.pure.terminal_text import neutralise
from seri.runtime.profile import Profile, current_project


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
    rows = session_rows(profile.store, project, limit=CHOICES)
    if not rows:
        raise SeriError(f"no session to resume in {project}; start one with `seri chat`")
    zone = datetime.now(UTC).astimezone().tzinfo
    shown = [
        (row[0], datetime.fromtimestamp(row[3], tz=zone).strftime("%Y-%m-%d %H:%M"), row[5], row[6])
        for row in rows
    ]
    print(neutralise("Recent sessions here:\n" + "\n".join(choice_lines(shown))), file=sys.stderr)
    while True:
        print(
            f"resume which? [1-{len(rows)}, Enter to cancel] ", end="", file=sys.stderr, flush=True
        )
        answer = sys.stdin.readline()
        try:
            chosen = read_choice(answer, len(rows))
        except ValueError as exc:
            print(f"seri: {exc}", file=sys.stderr)
            continue
        if chosen is None:
            raise NothingChosen("nothing resumed")
        return [*argv[: at + 1], str(rows[chosen][0]), *argv[at + 1 :]]
