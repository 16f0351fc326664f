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
UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, PostCompact, Stop, SubagentStart,
SubagentStop, SessionEnd. README: Hooks and skills.
"""

from __future__ import annotations

from seri.runtime.agent.running import parse_usage


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    from seri.runtime.extensions import hook_review
    from seri.runtime.extensions.approval_review import run_review

    return run_review(hook_review, options)
