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
2,000 characters. In the chat, `/pin TEXT` pins and `/pin` lists.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

import attrs

from seri.commands.profile import open_profile
from seri.commands.running import parse_usage, whole_number
from seri.io import conversations
from seri.io.pins import add_pin, list_pins, remove_pin
from seri.pure.errors import EXIT_OK

if TYPE_CHECKING:
    from seri.commands.chat_session import ChatSession, LineOutcome


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    store = profile.store
    session_id = conversations.resolve_session_id(store, options["--session"])
    if options["--list"]:
        pins = list_pins(store, session_id)
        for n, text in enumerate(pins, 1):
            line = (
                json.dumps({"n": n, "text": text}, ensure_ascii=False)
                if options["--json"]
                else f"{n}. {text}"
            )
            sys.stdout.write(line + "\n")
        if not pins and not options["--json"]:
            print(f"Session {session_id} has no pins.", file=sys.stderr)
        return EXIT_OK
    if options["--rm"] is not None:
        text = remove_pin(store, session_id, _number(options["--rm"]))
        print(f"Removed pin {options['--rm']}: {text}", file=sys.stderr)
        return EXIT_OK
    n = add_pin(store, session_id, " ".join(options["<text>"]), time.time())
    print(f"Pinned as note {n}; every recap of {session_id} carries it.", file=sys.stderr)
    return EXIT_OK


def _number(text: str) -> int:
    return whole_number(text, "a pin number (seri pin --session ID --list shows them)")


def pin_slash(chat: ChatSession, text: str) -> LineOutcome:
    """``/pin TEXT`` pins a note to this session; ``/pin`` lists the pins."""
    if not text:
        pins = list_pins(chat.store, chat.session_id) if chat.session_id else ()
        for n, pin in enumerate(pins, 1):
            print(f"{n}. {pin}", file=sys.stderr)
        if not pins:
            print("No pins yet: /pin TEXT adds one.", file=sys.stderr)
        return None
    chat.ensure_session()
    n = add_pin(chat.store, chat.session_id, text, time.time())
    chat.conversation = attrs.evolve(chat.conversation, pins=list_pins(chat.store, chat.session_id))
    print(f"Pinned as note {n}: every recap carries it.", file=sys.stderr)
    return None
