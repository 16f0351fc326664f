"""`seri sessions export ID [--format jsonl|markdown]`: one session, streamed to stdout.

Messages are read and written one at a time, so a session of any length exports in
constant memory; the reader going away (`| head`) ends it quietly.
"""

from __future__ import annotations

import sys

from seri.runtime.profile import Profile
from seri.commands.sessions import session_head, write_json_lines
from seri.io import conversations
from seri.pure.errors import SeriError
from seri.pure.session_markdown import message_markdown, session_header
from seri.pure.timestamps import iso_utc

FORMATS = ("jsonl", "markdown")


def export(profile: Profile, raw_id: str, format_name: str) -> int:
    if format_name not in FORMATS:
        raise SeriError(f"--format is jsonl or markdown, not {format_name!r}")
    store = profile.store
    out = sys.stdout
    with store.snapshot():
        session_id = conversations.resolve_session_id(store, raw_id)
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
