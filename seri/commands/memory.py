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

import sys

from seri.pure.inputs.errors import EXIT_OK
from seri.runtime.agent.running import parse_usage
from seri.runtime.session.profile import open_profile
from seri.runtime.tools.memory_review import decide, entry_number, show_pending


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    if options["list"]:
        show_pending(profile.store, as_json=options["--json"])
        return EXIT_OK
    n = entry_number(options["<n>"])
    print(decide(profile.store, profile.root, n, approve=options["approve"]), file=sys.stderr)
    return EXIT_OK
