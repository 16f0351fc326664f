"""``seri hooks``: what runs at which event, from where, and the person's approvals."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from seri.io import mcp_approvals
from seri.pure.errors import SeriError
from seri.pure.hooks import HookCommand
from seri.pure.terminal_text import one_line
from seri.pure.trust import HOOK, short_digest
from seri.runtime.hook_host import HookSet, approval_name, load_hooks
from seri.runtime.profile import Profile
from seri.runtime.running import load_settings_warned


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
    waiting = {approval_name(hook): hook for hook, _ in _loaded(profile, project).waiting}
    unknown = [name for name in names if name not in waiting]
    if unknown:
        listed = ", ".join(map(repr, waiting)) or "none"
        raise SeriError(
            f"no project hook waiting for approval named {', '.join(map(repr, unknown))}; "
            f"waiting: {listed} (seri hooks list shows them)"
        )
    chosen = [waiting[name] for name in (names or list(waiting))]
    rows = [(approval_name(h), h.digest, json.dumps(dict(h.entry))) for h in chosen]
    mcp_approvals.approve(profile.store, str(project), rows, time.time(), HOOK)
    if not chosen:
        return ["No project hook waits for approval here."]
    return [
        f"Approved project hook {approval_name(h)!r} for {one_line(str(project))} "
        f"({short_digest(h.digest)}): {one_line(h.command)}"
        for h in chosen
    ]


def revoke(profile: Profile, project: Path, names: list[str]) -> list[str]:
    approved = mcp_approvals.approved_digests(profile.store, str(project), HOOK)
    chosen = names or sorted(approved)
    unknown = [name for name in chosen if name not in approved]
    if unknown:
        raise SeriError(f"no approved project hook {', '.join(map(repr, unknown))} here")
    mcp_approvals.revoke(profile.store, str(project), chosen, HOOK)
    return [f"Revoked the approval of project hook {one_line(repr(name))}." for name in chosen]
