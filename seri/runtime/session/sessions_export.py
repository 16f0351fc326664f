"""`seri sessions export ID [--format jsonl|markdown]`: one session, streamed to stdout.

Messages are read and written one at a time, so a session of any length exports in
constant memory; the reader going away (`| head`) ends it quietly.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from seri.pure.inputs.errors import SeriError
from seri.pure.terminal.timestamps import iso_utc
from seri.runtime.session.profile import Profile

if TYPE_CHECKING:
    from seri.pure.session.records import Session

FORMATS = ("jsonl", "markdown")


def export(profile: Profile, raw_id: str, format_name: str) -> int:
    from seri.io.session import conversations, session_table
    from seri.pure.session.session_markdown import message_markdown, session_header

    if format_name not in FORMATS:
        raise SeriError(f"--format is jsonl or markdown, not {format_name!r}")
    store = profile.store
    out = sys.stdout
    with store.snapshot():
        session_id = session_table.resolve_session_id(store, raw_id)
        state, head = session_head(store, session_id)
        if format_name == "jsonl":
            write_json_lines(out, store, session_id, head)
            return 0
        session = state.session
        fields = [
            ("session", f"`{session.id}`"),
            ("project", f"`{session.project}`"),
            ("model", session.model or "-"),
            ("created", iso_utc(session.created)),
            ("updated", iso_utc(session.updated)),
            ("messages", str(session.messages)),
        ]
        if session.parent_id:
            fields.append(("subagent of", f"`{session.parent_id}`"))
        if head["children"]:
            fields.append(("subagents", ", ".join(f"`{c}`" for c in head["children"])))
        if head["compactions"]:
            fields.append(("compactions", str(len(head["compactions"]))))
        out.write(session_header(session.title, fields))
        for seq, created, message in conversations.iter_message_rows(store, session_id):
            out.write(message_markdown(seq, iso_utc(created), message))
    return 0


def session_head(store: Any, session_id: str) -> tuple[Any, dict[str, Any]]:
    """The session's state and its header object (the first line of `show --json`)."""
    from seri.io.compaction import compaction_ledger
    from seri.io.session import session_table
    from seri.io.session.session_tags import session_tags

    state = session_table.load_state(store, session_id)
    ledger = compaction_ledger.read_ledger(store, session_id)
    children = session_table.child_sessions(store, session_id)
    head = session_to_dict(state.session)
    head["compactions"] = [{**row, "at": iso_utc(row["at"])} for row in ledger]
    head["turns_used"] = state.turns_used
    head["children"] = [child.id for child in children]
    if state.forked_from:
        head["forked_from"] = state.forked_from
    head["tags"] = session_tags(store, session_id)
    from seri.io.agent.goals import load_goal

    goal = load_goal(store, session_id)
    head["goal"] = None if goal is None else goal.export()
    return state, head


def write_json_lines(out: Any, store: Any, session_id: str, head: dict[str, Any]) -> None:
    """The header line, then one line per message, in order (compact JSON).

    SQLite writes the message lines itself, a thousand at a time: a stored body is the
    message's JSON already (``message_to_json``), so a line is the keys `show` adds followed
    by the body minus its opening brace, as `trajectory export` does. 100,000 messages stream
    at about the speed of `sqlite3 -json`.
    """
    from seri.io.session.conversations import message_line_chunks
    from seri.pure.trajectories.json_lines import json_line, line_safe

    out.write(json_line(head))
    for chunk in message_line_chunks(store, session_id):
        out.write(line_safe(chunk))


def session_to_dict(session: Session) -> dict[str, Any]:
    return row_to_dict(
        (
            session.id,
            session.project,
            session.created,
            session.updated,
            session.model,
            session.title,
            session.messages,
            session.parent_id,
        )
    )


def row_to_dict(row: Sequence[Any]) -> dict[str, Any]:
    """A session row (see ``session_index``) as the stable JSON object scripts rely on."""
    session_id, project, created, updated, model, title, messages, parent = row
    return {
        "type": "session",
        "id": session_id,
        "project": project,
        "created": iso_utc(created),
        "updated": iso_utc(updated),
        "model": model,
        "messages": messages,
        "title": title,
        "parent": parent or None,
    }
