"""Hooks: list what runs at which event and where it is configured; approve a project's.

Usage:
  seri hooks list [--json]
  seri hooks approve [<name>...]
  seri hooks revoke [<name>...]
  seri hooks (-h | --help)

Options:
  --json     One JSON object a line: name, event, matcher, command, timeout, source,
             sandbox, runs, state (and digest, for a project's hook).
  -h --help  Show this help.

Hooks are written as for Claude Code (the same JSON, matchers and exit codes): `hooks` in
config.json (yours: they always run) and in the project's .seri/hooks.json or
.claude/settings.json (the project's: each runs only once approved for this project, as it
is now; any change to it asks again). `approve` with no name approves every waiting hook of
the project; NAME is as `list` shows it ("<file> <event> #N"). `revoke` withdraws
approvals (all of the project's when none is named). Events: SessionStart,
UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, PostCompact, Stop, SessionEnd.
README: Hooks and skills.
"""

from __future__ import annotations

import sys
from pathlib import Path

from seri.pure.errors import EXIT_OK
from seri.runtime.profile import current_project, open_profile
from seri.runtime.running import parse_usage


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    from seri.runtime import hook_review

    profile = open_profile()
    project = Path(current_project())
    if options["list"]:
        for line in hook_review.list_lines(profile, project, as_json=options["--json"]):
            print(line)
        return EXIT_OK
    if options["approve"]:
        lines = hook_review.approve(profile, project, options["<name>"])
    else:
        lines = hook_review.revoke(profile, project, options["<name>"])
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_OK
