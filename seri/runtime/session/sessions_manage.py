"""`seri sessions rename ID TITLE` and `seri sessions rm ID...`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from seri.io.session.session_delete import Doomed, delete_sessions, describe, rename_session
from seri.io.session.session_table import resolve_session_id
from seri.pure.inputs.errors import SeriError
from seri.pure.terminal.human_units import plural
from seri.pure.terminal.terminal_text import neutralise
from seri.runtime.session.profile import Profile

MAX_TITLE_CHARS = 200


def rename(profile: Profile, raw_id: str, title: str) -> int:
    cleaned = " ".join(title.split())  # one line: a title is shown in a table
    if not cleaned:
        raise SeriError("a title needs some text: seri sessions rename ID 'new title'")
    if len(cleaned) > MAX_TITLE_CHARS:
        raise SeriError(f"the title is {len(cleaned)} characters; at most {MAX_TITLE_CHARS}")
    session_id = resolve_session_id(profile.store, raw_id)
    rename_session(profile.store, session_id, cleaned)
    print(neutralise(f"seri: session {session_id} is now titled {cleaned!r}"), file=sys.stderr)
    return 0


def remove(profile: Profile, raw_ids: Sequence[str], *, assume_yes: bool) -> int:
    # Every id is resolved before anything is deleted: one typo deletes nothing.
    session_ids = list(dict.fromkeys(resolve_session_id(profile.store, raw) for raw in raw_ids))
    doomed = describe(profile.store, session_ids)
    if not assume_yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise SeriError(
                "deleting sessions needs --yes when stdin is not a terminal (nothing was deleted)"
            )
        if not _confirmed(doomed):
            print("seri: nothing was deleted", file=sys.stderr)
            return 0
    deleted, wal_cleared = delete_sessions(profile.store, session_ids)
    print(
        f"seri: deleted {plural(deleted, 'session')} "
        f"({', '.join(d.session_id for d in doomed)}) with their messages and recordings",
        file=sys.stderr,
    )
    if not wal_cleared:
        print(
            "seri: another seri process is reading the store, so its write-ahead log still "
            "holds the deleted pages until it checkpoints (any seri write does)",
            file=sys.stderr,
        )
    return 0


def _line(doomed: Doomed) -> str:
    extras = [plural(doomed.messages, "message")]
    if doomed.subagents:
        extras.append(plural(doomed.subagents, "subagent session"))
    if doomed.runs:
        extras.append(plural(doomed.runs, "recorded run"))
    return f"  {doomed.session_id}  {doomed.title or '-'}  ({', '.join(extras)})"


def _confirmed(doomed: Sequence[Doomed]) -> bool:
    lines = "\n".join(_line(d) for d in doomed)
    print(neutralise(f"Delete for good:\n{lines}"), file=sys.stderr)
    try:
        print("delete? [y/N] ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return False
    return answer.strip().lower() in ("y", "yes")
