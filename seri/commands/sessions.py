"""List, show, search, export, rename and delete stored sessions.

Usage:
  seri sessions [list] [--json] [--all] [--limit N]
  seri sessions show <id> [--json]
  seri sessions search <text>... [--all] [--json] [--fts] [--limit N]
  seri sessions export <id> [--format FORMAT]
  seri sessions rename <id> <title>...
  seri sessions rm <id>... [--yes]
  seri sessions import
  seri sessions (-h | --help)

Options:
  --json           JSON Lines on stdout, one object a line (list: type, id, project,
                   created, updated, model, messages, title, parent, calls, input_tokens,
                   output_tokens, cached_tokens, cost, tags; search: type "match", session,
                   seq, role, kind, created, title, parent, snippet, score).
  --all            Sessions of every project, not just the current directory's.
  --limit N        At most N lines. `list` shows a screenful on a terminal and every
                   session when its output is piped; `search` shows the best 20.
  --fts            The search text is SQLite FTS5 query syntax (AND, OR, NOT, NEAR(a b),
                   "a phrase", prefix*) instead of words to find as written.
  --format FORMAT  jsonl (the `show --json` lines) or markdown [default: jsonl].
  --yes            Delete without asking (needed when stdin is not a terminal).
  -h --help        Show this help.

`list` shows the current project's sessions, newest first, with the tokens and cost of
their recorded model calls (subagents' included; `-` when none were recorded). `show`
prints one session (an id or a unique prefix of one) with its messages, its compaction
ledger and its subagent sessions. `search` finds messages of the current project's
sessions (every project's with --all), best match first, each with a snippet: every word
must occur, "quoted words" as a phrase, a word ending in * as a prefix. It sees the
history as stored: what a compaction evicted is gone (its recap is searched instead),
and so is what a rewind removed. `export` writes a session as JSON Lines or as Markdown.
`rename` sets a session's title. `rm` deletes sessions with their messages, subagent
sessions, checkpoints, pins and recordings, for good (deleted pages are zeroed and the
WAL emptied); it asks first on a terminal. `import` reports on the older release's files
in $SERI_HOME/sessions/: which were imported, which were rejected and why (exit 1 if any
was rejected); the import itself happens on first use anyway.
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING

from seri.io.session.session_index import listing_rows
from seri.pure.inputs.number_ranges import LISTED_ROWS
from seri.pure.terminal.terminal_text import neutralise, one_line
from seri.pure.terminal.text_table import render_table
from seri.runtime.agent.running import parse_usage, positive_number
from seri.runtime.session.profile import Profile, current_project, open_profile

# Listing is what people and scripts run most (target: 50 ms with 1,000 sessions): json
# loads only for the forms that use it.
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from seri.pure.session.records import Session


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate in stored text is written as a \udXXX escape (valid in
        # JSON) instead of failing the whole listing.
        sys.stdout.reconfigure(errors="backslashreplace")
    limit = _limit(options["--limit"])
    profile = open_profile()
    if options["show"]:
        return _show(profile, options["<id>"][0], as_json=options["--json"])
    if options["import"]:
        return _import_report(profile)
    if options["search"]:
        from seri.runtime.session.sessions_search import search

        text = " ".join(options["<text>"])
        return search(
            profile,
            text,
            all_projects=options["--all"],
            as_json=options["--json"],
            fts=options["--fts"],
            limit=limit,
        )
    if options["export"]:
        from seri.runtime.session.sessions_export import export

        return export(profile, options["<id>"][0], options["--format"])
    if options["rename"]:
        from seri.runtime.session.sessions_manage import rename

        return rename(profile, options["<id>"][0], " ".join(options["<title>"]))
    if options["rm"]:
        from seri.runtime.session.sessions_manage import remove

        return remove(profile, options["<id>"], assume_yes=options["--yes"])
    return _list(profile, all_projects=options["--all"], as_json=options["--json"], limit=limit)


def _limit(text: str | None) -> int | None:
    return None if text is None else positive_number(text, "--limit", LISTED_ROWS)


def _local_time_formatter() -> Callable[[float], str]:
    """'2026-12-02 16:04' in the local zone; the zone is looked up once, not per row."""
    from datetime import UTC, datetime

    zone = datetime.now(UTC).astimezone().tzinfo

    def short_local(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, tz=zone).strftime("%Y-%m-%d %H:%M")

    return short_local


def _short_local(seconds: float) -> str:
    return _local_time_formatter()(seconds)


def _list(profile: Profile, *, all_projects: bool, as_json: bool, limit: int | None) -> int:
    project = None if all_projects else current_project()
    out = sys.stdout
    screenful = limit is None and out.isatty()
    if screenful:
        limit = _screen_rows()
    # One row more than shown tells whether there are more.
    rows = listing_rows(profile.store, project, limit=None if limit is None else limit + 1)
    more = limit is not None and len(rows) > limit
    rows = rows[:limit] if more else rows
    if as_json:
        from seri.io.agent.goal_listing import listed_goals
        from seri.pure.trajectories.json_lines import (
            json_line,  # json: only a --json listing pays for it
        )

        goals = listed_goals(profile.store, [str(row[0]) for row in rows])
        lines = (
            json_line(listing_to_dict(row, goals.get(str(row[0]))), compact=False) for row in rows
        )
        out.write("".join(lines))
        return 0
    if not rows:
        where = "any project" if all_projects else project
        print(f"No sessions in {where}. Start one with `seri chat`.", file=sys.stderr)
        return 0
    from seri.pure.terminal.human_units import cost_text, tokens_short

    short_local = _local_time_formatter()
    headers = ["ID", "UPDATED", "MSGS", "TOKENS", "COST", "MODEL"]
    headers += [*(["PROJECT"] if all_projects else []), "TITLE"]
    table = [
        [
            row[0],
            short_local(row[3]),
            str(row[6]),
            tokens_short(row[9] + row[10]) if row[8] else "-",
            cost_text(row[12]) if row[13] else "-",
            row[4] or "-",
            *([row[1]] if all_projects else []),
            row[5] or "-",
        ]
        for row in rows
    ]
    out.write(render_table(headers, table) + "\n")
    if more and screenful:
        print(
            f"seri: the {limit} most recent; --limit N shows more, piped output all",
            file=sys.stderr,
        )
    return 0


def _screen_rows() -> int:
    """A screenful of rows: the terminal's height less the header and the prompt."""
    import shutil

    return max(5, shutil.get_terminal_size().lines - 3)


def listing_to_dict(row: Sequence[Any], goal: dict[str, Any] | None = None) -> dict[str, Any]:
    """A listing row (``session_index.listing_rows``) as the JSON object scripts rely on."""
    from seri.pure.inputs import json_text
    from seri.runtime.session.sessions_export import row_to_dict

    calls, input_tokens, output_tokens, cached, cost, costed, tags = row[8:15]
    return {
        **row_to_dict(row[:8]),
        "calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_tokens": cached,
        # None when no recorded call reported a cost.
        "cost": round(cost, 6) if costed else None,
        # The run tags (SERI_RUN_TAGS, --tag) of its runs: {} when none.
        "tags": json_text.loads_stored(tags),
        # The session's goal (text, command, status: open, done, stalled, ...), or null.
        "goal": goal,
    }


def _show(profile: Profile, raw_id: str, *, as_json: bool) -> int:
    from seri.io.session import session_table
    from seri.runtime.session.sessions_export import session_head, write_json_lines

    store = profile.store
    with store.snapshot():
        session_id = session_table.resolve_session_id(store, raw_id)
        state, head = session_head(store, session_id)
        if as_json:
            write_json_lines(sys.stdout, store, session_id, head)
            return 0
        from seri.io.terminal.pager import paged

        with paged(sys.stdout) as out:  # on a terminal, through $PAGER (else less), as git
            _print_human(out, state.session, head, store, session_id)
    return 0


def _print_human(
    out: Any, session: Session, head: dict[str, Any], store: Any, session_id: str
) -> None:
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
    if head["tags"]:
        fields.append(("tags", " ".join(f"{key}={value}" for key, value in head["tags"].items())))
    goal = head.get("goal")
    if goal:
        fields.append(("goal", _goal_line(goal)))
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
                _summary_cost(c),
                str(c["cache_rewrite_tokens"]),
                _kept(c),
                c["focus"] or "-",
            ]
            for c in head["compactions"]
        ]
        table = render_table(
            [
                "AT",
                "TRIGGER",
                "EVICTED",
                "ESTIMATE",
                "CALLS",
                "ELIDED",
                "SUMMARIZER",
                "CACHE REWRITE",
                "KEPT",
                "FOCUS",
            ],
            rows,
        )
        out.write("".join(f"  {line}\n" for line in table.split("\n")))
    out.write("\n")
    _print_messages(out, store, session_id)


def _goal_line(goal: dict[str, Any]) -> str:
    checks = f", {goal['checks']} checks" if goal["checks"] else ""
    last = f" (last run: {goal['last_end']})" if goal["last_end"] else ""
    text = f": {one_line(goal['text'])}" if goal["text"] else ""
    return f"{goal['status']}{last}{checks}, until `{goal['command']}` exits 0{text}"


def _summary_cost(entry: dict[str, Any]) -> str:
    """The summarizer's tokens in and out, and its cost when reported."""
    tokens = f"{entry['summary_input_tokens']} in, {entry['summary_output_tokens']} out"
    cost = entry["summary_cost"]
    return tokens if cost is None else f"{tokens}, ${cost:.4f}"


def _kept(entry: dict[str, Any]) -> str:
    """Whether the task in hand and the goal came through verbatim ('-': there was none)."""
    marks = []
    for key, name in (("task_kept", "task"), ("goal_kept", "goal")):
        if entry[key] is not None:
            marks.append(f"{name} {'yes' if entry[key] else 'NO'}")
    return ", ".join(marks) or "-"


def _print_messages(out: Any, store: Any, session_id: str) -> None:
    """The messages, a thousand at a time. Bodies are read as plain JSON (no records are
    built): a body that decodes whole is used as it is; anything else goes through
    message_dict, which reports the damage (json.loads would give the same object for the
    former). Stored text may hold escape sequences (a model's answer, a file it read): a
    chunk is neutralised whole, which is the same as message by message (neutralise works
    one character at a time) and saves a call per message."""
    import json

    from seri.io.session import conversations
    from seri.pure.session.shown_message import render_message

    write = _chunk_writer(out)
    decode = json.JSONDecoder().raw_decode
    pending: list[str] = []
    add = pending.append
    for seq, body in conversations.iter_message_bodies(store, session_id):
        try:
            message, end = decode(body)
        except (ValueError, TypeError):  # not JSON, or not text at all
            message, end = None, -1
        if type(message) is not dict or end != len(body):
            message = conversations.message_dict(session_id, seq, body)
        add(render_message(seq, message))
        if len(pending) == 1000:
            write("".join(pending))
            pending.clear()
    write("".join(pending))


def _chunk_writer(out: Any) -> Callable[[str], None]:
    """Writes text for the terminal, neutralised. On a UTF-8 stream a chunk with nothing to
    neutralise (nearly all) is checked on its UTF-8 bytes and written as them: one encoding
    instead of a regex search and the stream's own encoding."""
    import codecs

    from seri.pure.terminal.terminal_text import inert_utf8

    raw = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None) or ""
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    if raw is None or not utf8:
        return lambda text: out.write(neutralise(text))

    def write(text: str) -> None:
        data = inert_utf8(text)
        if data is None:
            out.write(neutralise(text))
        else:
            out.flush()  # what the text layer holds goes first
            raw.write(data)

    return write


def _import_report(profile: Profile) -> int:
    from seri.io.session.session_index import legacy_import_marks

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
