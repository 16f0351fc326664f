"""List and show stored sessions.

Usage:
  seri sessions [list] [--json] [--all]
  seri sessions show <id> [--json]
  seri sessions import
  seri sessions (-h | --help)

Options:
  --json      JSON Lines on stdout, one object a line (keys: type, id, project,
              created, updated, model, messages, title, parent).
  --all       Sessions of every project, not just the current directory's.
  -h --help   Show this help.

`list` shows the current project's sessions, newest first. `show` prints one
session (an id or a unique prefix of one) with its messages, its compaction
ledger and its subagent sessions. `import` reports on the older release's files
in $SERI_HOME/sessions/: which were imported, which were rejected and why
(exit 1 if any was rejected); the import itself happens on first use anyway.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from seri.io.session_index import session_rows
from seri.pure.terminal_text import neutralise
from seri.pure.text_table import render_table
from seri.pure.timestamps import iso_utc
from seri.runtime.profile import Profile, current_project, open_profile
from seri.runtime.running import parse_usage

if TYPE_CHECKING:
    from seri.pure.records import Message, Session


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate in stored text is written as a \udXXX escape (valid in
        # JSON) instead of failing the whole listing.
        sys.stdout.reconfigure(errors="backslashreplace")
    profile = open_profile()
    if options["show"]:
        return _show(profile, options["<id>"], as_json=options["--json"])
    if options["import"]:
        return _import_report(profile)
    return _list(profile, all_projects=options["--all"], as_json=options["--json"])


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


def _local_time_formatter() -> Callable[[float], str]:
    """'2026-12-02 16:04' in the local zone; the zone is looked up once, not per row."""
    zone = datetime.now(UTC).astimezone().tzinfo

    def short_local(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, tz=zone).strftime("%Y-%m-%d %H:%M")

    return short_local


def _short_local(seconds: float) -> str:
    return _local_time_formatter()(seconds)


def _list(profile: Profile, *, all_projects: bool, as_json: bool) -> int:
    project = None if all_projects else current_project()
    rows = session_rows(profile.store, project)
    out = sys.stdout
    if as_json:
        out.write("".join(json.dumps(row_to_dict(row), ensure_ascii=False) + "\n" for row in rows))
        return 0
    if not rows:
        where = "any project" if all_projects else project
        print(f"No sessions in {where}. Start one with `seri chat`.", file=sys.stderr)
        return 0
    short_local = _local_time_formatter()
    headers = ["ID", "UPDATED", "MSGS", "MODEL", *(["PROJECT"] if all_projects else []), "TITLE"]
    table = [
        [
            session_id,
            short_local(updated),
            str(messages),
            model or "-",
            *([project_dir] if all_projects else []),
            title or "-",
        ]
        for session_id, project_dir, _created, updated, model, title, messages, _parent in rows
    ]
    out.write(render_table(headers, table) + "\n")
    return 0


def _message_line(session_id: str, seq: int, created: float, message: Message) -> dict[str, Any]:
    from seri.io.codec import message_to_dict

    return {
        "type": "message",
        "session": session_id,
        "seq": seq,
        "created": iso_utc(created),
        **message_to_dict(message),
    }


def _show(profile: Profile, raw_id: str, *, as_json: bool) -> int:
    from seri.io import conversations

    store = profile.store
    with store.snapshot():
        session_id = conversations.resolve_session_id(store, raw_id)
        state = conversations.load_state(store, session_id)
        ledger = conversations.compaction_ledger(store, session_id)
        children = conversations.child_sessions(store, session_id)
        head = session_to_dict(state.session)
        head["compactions"] = [{**row, "at": iso_utc(row["at"])} for row in ledger]
        head["turns_used"] = state.turns_used
        head["children"] = [child.id for child in children]
        if state.forked_from:
            head["forked_from"] = state.forked_from
        out = sys.stdout
        if as_json:
            out.write(json.dumps(head, ensure_ascii=False) + "\n")
            for seq, created, message in conversations.iter_message_rows(store, session_id):
                line = _message_line(session_id, seq, created, message)
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            return 0
        _print_human(state.session, head, store, session_id)
    return 0


def _print_human(session: Session, head: dict[str, Any], store: Any, session_id: str) -> None:
    from seri.io import conversations

    out = sys.stdout
    fields = [
        ("session", session.id),
        ("project", session.project),
        ("model", session.model or "-"),
        ("created", _short_local(session.created)),
        ("updated", _short_local(session.updated)),
        ("messages", str(session.messages)),
        ("title", session.title or "-"),
    ]
    if head["children"]:
        fields.append(("subagents", ", ".join(head["children"])))
    if head.get("forked_from"):
        fields.append(("forked", f"from {head['forked_from']} (seri chat --fork)"))
    out.write("".join(f"{name:<10} {neutralise(value)}\n" for name, value in fields))
    if head["compactions"]:
        out.write("\ncompactions:\n")
        rows = [
            [
                c["at"],
                c["trigger"],
                str(c["evicted"]),
                f"{c['estimate_before']} -> {c['estimate_after']}",
                str(c["summary_calls"]),
                str(c["elided"]),
                c["focus"] or "-",
            ]
            for c in head["compactions"]
        ]
        table = render_table(
            ["AT", "TRIGGER", "EVICTED", "ESTIMATE", "CALLS", "ELIDED", "FOCUS"], rows
        )
        out.write("".join(f"  {line}\n" for line in table.split("\n")))
    out.write("\n")
    for seq, _created, message in conversations.iter_message_rows(store, session_id):
        # Stored text may hold escape sequences (a model's answer, a file it read).
        out.write(neutralise(_render_message(seq, message)))


def _render_message(seq: int, message: Message) -> str:
    label = message.role + (f" ({message.kind})" if message.kind else "")
    lines = [f"[{seq}] {label}"]
    if message.reasoning:
        lines.append(_indent("(thinking) " + message.reasoning))
    if message.text:
        prefix = "(error) " if message.is_error else ""
        lines.append(_indent(prefix + message.text))
    lines.extend(
        _indent(f"-> {call.name}({call.arguments})  [{call.id}]") for call in message.tool_calls
    )
    if message.role == "tool":
        lines[0] += f" {message.tool_name} [{message.tool_call_id}]"
    return "\n".join(lines) + "\n"


def _indent(text: str, width: int = 2000) -> str:
    shown = text if len(text) <= width else text[:width] + f"… ({len(text) - width} more chars)"
    # Lines end at "\n" only: a carriage return is not a line (the terminal text drops it).
    lines = shown.removesuffix("\n").split("\n")
    return "\n".join(("    " + line).rstrip() for line in lines)


def _import_report(profile: Profile) -> int:
    from seri.io.session_index import legacy_import_marks

    rows = [
        [name, status, detail or "-"] for name, status, detail in legacy_import_marks(profile.store)
    ]
    unreadable = profile.legacy.unreadable if profile.legacy else ()
    rows += [[detail.split(":", 1)[0], "unreadable", detail] for detail in unreadable]
    if not rows:
        print("No files from the older release were found.", file=sys.stderr)
        return 0
    sys.stdout.write(render_table(["FILE", "STATUS", "DETAIL"], rows) + "\n")
    return 1 if any(status in ("rejected", "unreadable") for _, status, _ in rows) else 0
