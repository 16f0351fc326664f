"""Start a new session where another left off: from its recap and pins.

Usage:
  seri handoff --session ID [--focus TEXT] [-p PROMPT [--output-format FORMAT]]
  seri handoff (-h | --help)

Options:
  --session ID                The session to hand off (an id or a unique prefix of one).
  --focus TEXT                Focus instructions for the recap, as for /compact.
  -p PROMPT, --prompt PROMPT  Then run this task in the new session, as `seri chat --resume
                              NEW -p PROMPT` does (its answer, or its result record, on
                              stdout; its exit status).
  --output-format FORMAT      With -p: text, json or stream-json, as for seri chat
                              [default: text].
  -h --help                   Show this help.

The new session is a copy of the source (its messages, file checkpoints and pins; it
records where it came from) compacted down to a recap, the pins and the newest turn, by
the model the source last ran with. The source itself is only read: not compacted, not
held, left byte for byte as it was, so a chat may go on running it meanwhile. A session
too short to compact is carried over whole. Without -p the new session's id is printed on
stdout (go on with `seri chat --resume ID`). When the compaction fails, the copy is
deleted again and seri exits 1: nothing half made is left behind.
"""

from __future__ import annotations

import sys

from seri.runtime.agent.running import parse_usage
from seri.runtime.session.profile import open_profile


def run(argv: list[str]) -> int:
    from seri.runtime.session.handoff import hand_off

    options = parse_usage(__doc__ or "", argv)
    new_id = hand_off(open_profile(), options["--session"], options["--focus"] or "")
    prompt = options["--prompt"]
    if prompt is None:
        print(new_id)
        return 0
    from seri.commands import chat

    sys.stdout.flush()
    return chat.run(
        ["chat", "--resume", new_id, "-p", prompt, "--output-format", options["--output-format"]]
    )
