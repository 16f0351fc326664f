"""List a session's turns, or put its conversation and files back to before one of them.

Usage:
  seri rewind --session ID [--list] [--json]
  seri rewind --session ID --to N [--files | --conversation] [--yes]
  seri rewind (-h | --help)

Options:
  --session ID     The session (an id or a unique prefix of one).
  --list           List the user messages since the last compaction (the default).
  --json           With --list: one JSON object a line with n, seq, text and files.
  --to N           Restore to just before user message N (1 is the oldest since the last
                   compaction): the conversation, the files, or both (the default).
  --files          Restore only the files that seri's write_file and edit changed.
  --conversation   Restore only the conversation.
  --yes            Overwrite files that were changed outside seri since its checkpoint.
  -h --help        Show this help.

/rewind will not step across a compaction: what came before the recap is gone.
Changes made by `bash` are not tracked and are not put back. Only the 20 most
recently touched sessions of a project keep their file checkpoints.

Files are put back only in the session's own project directory, never the current one:
if that directory is gone, or was moved and another took its path, a rewind of files
refuses and says where the files were. The directory is printed before it is changed.
A session that a running seri holds (a chat, a compact) is refused with its pid (exit 1).
"""

from __future__ import annotations

import sys

from seri.io.session import session_table
from seri.io.session.leases import Lease
from seri.pure.inputs.errors import EXIT_OK
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.trajectories.json_lines import json_line
from seri.runtime.agent.running import parse_usage
from seri.runtime.session.profile import open_profile
from seri.runtime.session.rewind import (
    file_history_gone,
    listing,
    message_number,
    perform,
    turn_dict,
    turns,
)


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    store = profile.store
    session_id = session_table.resolve_session_id(store, options["--session"])
    if options["--to"] is None:
        listed = turns(store, session_id)
        if options["--json"]:
            for turn in listed:
                sys.stdout.write(json_line(turn_dict(turn), compact=False))
        else:
            gone = bool(listed) and file_history_gone(store, session_id, listed[0].seq)
            sys.stdout.write(neutralise(listing(listed, history_gone=gone)) + "\n")
        return EXIT_OK
    n = message_number(options["--to"])
    mode = (
        "files" if options["--files"] else "conversation" if options["--conversation"] else "both"
    )
    # One writer per session: a chat working on it (or a compact) keeps it; refused.
    lease = Lease.take(store, session_id, "seri rewind")
    try:
        lines = perform(store, session_id, n, mode, confirmed=options["--yes"])
    finally:
        lease.close()
    for line in lines:
        print(neutralise(line), file=sys.stderr)
    return EXIT_OK
