"""Review what the model asked to remember: nothing is written until approved.

Usage:
  seri memory list [--json]
  seri memory approve <n>
  seri memory reject <n>
  seri memory (-h | --help)

Options:
  --json     One JSON object a line: n, scope, project, text, session, at.
  -h --help  Show this help.

The model's `remember` tool stages an entry (scope `project` or `global`). An approved
entry is appended to its memory file under $SERI_HOME/memory/ at once, and enters the
prompt the next time seri starts, never mid-session (the prompt is frozen so providers
can reuse their cache). A memory file is capped at 16 KiB: a write past the cap fails
and asks you to consolidate the file first.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from seri.commands.profile import Profile, open_profile
from seri.commands.running import parse_usage, whole_number
from seri.io import memory_store
from seri.pure.errors import EXIT_OK, EXIT_USAGE, SeriError
from seri.pure.terminal_text import neutralise
from seri.pure.text_table import render_table
from seri.pure.timestamps import iso_utc

if TYPE_CHECKING:
    from seri.commands.chat_session import ChatSession, LineOutcome


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    if options["list"]:
        _list(profile, as_json=options["--json"])
        return EXIT_OK
    n = _number(options["<n>"])
    print(_decide(profile, n, approve=options["approve"]), file=sys.stderr)
    return EXIT_OK


def _number(text: str) -> int:
    return whole_number(text, "a memory entry number")


def _decide(profile: Profile, n: int, *, approve: bool) -> str:
    if approve:
        path = memory_store.approve(profile.store, profile.root, n)
        return f"Wrote memory entry {n} to {path}; it enters the prompt the next time seri starts."
    memory_store.reject(profile.store, n)
    return f"Rejected memory entry {n}."


def _list(profile: Profile, *, as_json: bool) -> None:
    entries = memory_store.pending(profile.store)
    if as_json:
        for e in entries:
            line = {
                "n": e.n,
                "scope": e.scope,
                "project": e.project,
                "text": e.text,
                "session": e.session_id or None,
                "at": iso_utc(e.at),
            }
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        return
    if not entries:
        print("No staged memory writes.", file=sys.stderr)
        return
    rows = [[str(e.n), e.scope, " ".join(e.text.split())[:80]] for e in entries]
    sys.stdout.write(render_table(["N", "SCOPE", "TEXT"], rows) + "\n")


def memory_slash(chat: ChatSession, rest: str) -> LineOutcome:
    words = rest.split()
    if not words or words[0] in ("pending", "list"):
        _list(chat.profile, as_json=False)
        return None
    if words[0] in ("approve", "reject") and len(words) == 2:
        try:
            print(
                _decide(chat.profile, _number(words[1]), approve=words[0] == "approve"),
                file=sys.stderr,
            )
        except SeriError as exc:
            print(neutralise(f"seri: {exc}"), file=sys.stderr)
            return 1
        return None
    print("usage: /memory pending | approve N | reject N", file=sys.stderr)
    return EXIT_USAGE
