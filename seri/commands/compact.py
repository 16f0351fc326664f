"""Compact a stored session from the shell.

Usage:
  seri compact --session ID [--focus TEXT]
  seri compact (-h | --help)

Options:
  --session ID   The session (an id or a unique prefix of one).
  --focus TEXT   Focus instructions for the recap, like the words after /compact.
  -h --help      Show this help.

Runs the same compaction as /compact: the newest ~20,000 tokens (compaction.keep_tokens)
are kept, everything older becomes one recap, written by one extra call to the session's
model. When no safe cut exists it prints `Not enough history to compact.` and exits 0.
Safe beside a running `seri chat` on the same session: if the session changes while the
recap is being written, seri reads it again and retries once, then gives up (exit 1)
without changing anything.
"""

from __future__ import annotations

import sys

from seri.commands.profile import current_project, open_profile
from seri.commands.running import parse_usage
from seri.pure.compaction import NOT_ENOUGH_HISTORY
from seri.pure.errors import EXIT_OK, TaskUnfinished

ATTEMPTS = 2
CHANGED = "the session changed while compacting"


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    from seri.commands.chat_session import ChatOptions, ChatSession

    profile = open_profile()
    chat = ChatSession.open(
        profile, current_project(), ChatOptions(resume=options["--session"], prompt="")
    )
    try:
        for _attempt in range(ATTEMPTS):
            why_not = chat.compact(options["--focus"] or "", trigger="shell")
            if not why_not:
                print(f"Compacted session {chat.session_id}.", file=sys.stderr)
                return EXIT_OK
            if why_not == NOT_ENOUGH_HISTORY:
                print(NOT_ENOUGH_HISTORY)
                return EXIT_OK
            if not why_not.startswith(CHANGED):
                break
        raise TaskUnfinished(f"compaction of {chat.session_id} failed: {why_not}")
    finally:
        chat.close()
