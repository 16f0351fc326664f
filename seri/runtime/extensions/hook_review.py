"""``seri hooks``: what runs at which event, from where, and the person's approvals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seri.pure.extensions.hooks import HookCommand
from seri.pure.terminal.terminal_text import one_line
from seri.runtime.agent.running import load_settings_warned
from seri.runtime.extensions import approval_review
from seri.runtime.extensions.approval_review import HOOKS, Candidate
from seri.runtime.extensions.hook_host import HookSet, approval_name, load_hooks
from seri.runtime.session.profile import Profile


def _loaded(profile: Profile, project: Path) -> HookSet:
    settings = load_settings_warned(profile.root)
    return load_hooks(profile.store, settings.hooks, project)


def _row(hook: HookCommand, state: str, runs: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": approval_name(hook) if hook.is_project else hook.name,
        "event": hook.event,
        "matcher": hook.matcher,
        "command": hook.command,
        "timeout": hook.timeout,
        "source": hook.source,
        "sandbox": hook.sandbox,
        "runs": runs,
        "state": state,
    }
    if hook.is_project:
        row["digest"] = hook.digest
    return row


def list_lines(profile: Profile, project: Path, *, as_json: bool) -> list[str]:
    found = _loaded(profile, project)
    rows = [_row(h, "approved" if h.is_project else "yours", True) for h in found.hooks]
    rows += [_row(hook, state, False) for hook, state in found.waiting]
    if as_json:
        return [json.dumps(row, ensure_ascii=False) for row in rows]
    lines = [
        f"{row['event']}  {one_line(row['matcher'] or '*')}  {one_line(row['command'])}\n"
        f"  from {row['source']}, {row['state']}"
        + ("" if row["sandbox"] else ", outside the sandbox")
        + ("" if row["runs"] else f": approve with `seri hooks approve '{row['name']}'`")
        for row in rows
    ]
    lines += [f"warning: {one_line(problem)}" for problem in found.problems]
    return lines or ["No hooks configured (README: Hooks and skills)."]


def approve(profile: Profile, project: Path, names: list[str]) -> list[str]:
    """Approve the project's hooks named (every waiting one when none is), as they are now."""
    from seri.pure.permissions.trust import shown_entry
    from seri.runtime.mcp.mcp_review import screen_redactor

    # The row keeps the entry masked, as an MCP server's: a token in a command stays out.
    redactor = screen_redactor()
    waiting = [
        Candidate(
            approval_name(h),
            h.digest,
            shown_entry(dict(h.entry), redactor),
            redactor.text(h.command),
        )
        for h, _ in _loaded(profile, project).waiting
    ]
    return approval_review.approve_waiting(profile.store, project, HOOKS, waiting, names)


def revoke(profile: Profile, project: Path, names: list[str]) -> list[str]:
    return approval_review.revoke(profile.store, project, HOOKS, names)
