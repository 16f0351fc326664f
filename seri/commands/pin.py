"""Pin short notes to a session: carried verbatim in every recap, forever.

Usage:
  seri pin --session ID <text>...
  seri pin --session ID --list [--json]
  seri pin --session ID --rm N
  seri pin (-h | --help)

Options:
  --session ID  The session (an id or a unique prefix of one).
  --list        List the session's pins, numbered.
  --json        With --list: one JSON object a line: n, text.
  --rm N        Remove pin N (as --list numbers them).
  -h --help     Show this help.

A pin is what must survive every compaction word for word: a constraint, a decision, a
name. The model sees it in the recap that stands in for the older conversation, from the
next compaction on (before that, the conversation itself is still whole). A pin is at most
2,000 characters, and a session's pins 8,000 in all. In the chat, `/pin TEXT` pins and
`/pin` lists.
"""

from __future__ import annotations

import json
import sys
import time

from seri.io.session import session_table
from seri.io.session.pins import add_pin, list_pins, remove_pin
from seri.pure.inputs.errors import EXIT_OK
from seri.pure.terminal.terminal_text import one_line
from seri.pure.trajectories.json_lines import line_safe
from seri.runtime.agent.running import parse_usage, whole_number
from seri.runtime.session.profile import open_profile


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    store = profile.store
    session_id = session_table.resolve_session_id(store, options["--session"])
    if options["--list"]:
        pins = list_pins(store, session_id)
        for n, text in enumerate(pins, 1):
            line = (
                line_safe(json.dumps({"n": n, "text": text}, ensure_ascii=False))
                if options["--json"]
                else f"{n}. {one_line(text)}"
            )
            sys.stdout.write(line + "\n")
        if not pins and not options["--json"]:
            print(f"Session {session_id} has no pins.", file=sys.stderr)
        return EXIT_OK
    if options["--rm"] is not None:
        text = remove_pin(store, session_id, _number(options["--rm"]))
        print(f"Removed pin {options['--rm']}: {one_line(text)}", file=sys.stderr)
        return EXIT_OK
    n = add_pin(store, session_id, " ".join(options["<text>"]), time.time())
    print(f"Pinned as note {n}; every recap of {session_id} carries it.", file=sys.stderr)
    return EXIT_OK


def _number(text: str) -> int:
    return whole_number(text, "a pin number (seri pin --session ID --list shows them)")
