"""What opening a session decides before it is read: which session (new, the last one
here, the one named, or a copy of it), its lease, the permission policy, the OS sandbox."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from seri.io.session import leases, session_table
from seri.io.session.ids import random_id
from seri.io.session.leases import Lease
from seri.io.session.store import Store
from seri.pure.inputs.errors import SeriError
from seri.pure.inputs.settings import Settings
from seri.pure.permissions.permission_policy import Policy, parse_policy, with_allowed
from seri.pure.permissions.protected_paths import protected_paths
from seri.runtime.session.ports import Tell
from seri.runtime.terminal.chat_options import ChatOptions

if TYPE_CHECKING:
    from seri.io.inputs.prompt_files import StartupFiles
    from seri.io.permissions.sandbox import Sandbox
    from seri.runtime.extensions.skill_catalogue import SkillSet

# What a session's lease names as its holder.
LEASE_COMMAND = "seri chat"


def chosen_session(store: Store, project: str, options: ChatOptions, tell: Tell) -> str:
    """The session asked for: --resume's, --continue's (the last one here), or "" (new)."""
    if options.resume:
        return session_table.resolve_session_id(store, options.resume)
    if options.continue_last:
        last = session_table.most_recent_session(store, project)
        if last is not None:
            return last.id
        tell("seri: no earlier session in this directory; starting a new one")
    return ""


def claim(store: Store, session_id: str, *, fork: bool, tell: Tell) -> tuple[str, Lease]:
    """The session this run will write, with its lease: the one asked for, or a copy.

    Without --fork a session leased by another live process is refused (SessionBusy names
    the holder); with --fork the run goes on in a new session with the same history.
    """
    if not fork:
        return session_id, leases.Lease.take(store, session_id, LEASE_COMMAND)
    fork_id = random_id()
    me = leases.this_process(LEASE_COMMAND)
    with store.write() as conn:
        session_table.fork_session(conn, session_id, fork_id, time.time())
        leases.take_in(conn, fork_id, me)
    tell(f"seri: forked session {session_id} into {fork_id}")
    return fork_id, leases.Lease(store, fork_id, me)


def build_policy(
    settings: Settings, root: Path, allow: tuple[str, ...], project: str = ""
) -> Policy:
    """config.json's rules and --allow's (the session's stored "always" rules come later)."""
    home = os.path.expanduser("~")
    profile = os.path.realpath(root)
    try:
        policy = parse_policy(
            dict(settings.permissions),
            protected=protected_paths(profile, home),
            home=home,
            project=project,
        )
        return with_allowed(policy, allow)
    except ValueError as exc:
        raise SeriError(f"{exc} (in config.json or --allow)") from exc


def open_sandbox(project: str, protected: tuple[str, ...], env: Mapping[str, str]) -> Sandbox:
    """The OS sandbox for this run's commands; with none, seri says so once, at start."""
    from seri.io.permissions.sandbox import CHOICES, Sandbox, detect

    choice = env.get("SERI_SANDBOX", "").strip().lower() or "auto"
    if choice not in CHOICES:
        raise SeriError(f"SERI_SANDBOX must be one of {', '.join(CHOICES)}, not {choice!r}")
    detected = detect(choice, probe=False)
    return Sandbox(detected, Path(project), protected, choice=choice)


def no_sandbox_note(detail: str) -> str:
    return (
        f"seri: warning: bash runs without an OS sandbox ({detail}); only the permission "
        "policy keeps it from writing outside the project (README: Sandbox)"
    )


def opening_notes(startup: StartupFiles, sandbox: Sandbox, *, interactive: bool) -> tuple[str, ...]:
    """What opening found wrong: prompt files skipped, no OS sandbox (and which one runs
    bash, for a person; headless runs name it in the header and the result record)."""
    notes = tuple(f"seri: warning: {w}" for w in startup.warnings)
    if sandbox.kind == "none":
        notes += (no_sandbox_note(sandbox.detected.detail),)
    elif interactive:
        notes += (f"seri: bash runs under {sandbox.detected.detail} (README: Sandbox)",)
    return notes


def prompt_drift(
    session_id: str, frozen: Mapping[str, str], now: tuple[tuple[str, str], ...]
) -> str:
    """On resume: the prompt files (AGENTS.md, rules, memory) that changed since the
    session's prompt was last frozen, in one note ("" when none did)."""
    from seri.pure.agent.prompt_drift import drift_note, prompt_changes

    return drift_note(session_id, prompt_changes(dict(frozen), dict(now)))


def startup_files(
    store: Store, root: Path, project: str, settings: Settings
) -> tuple[StartupFiles, SkillSet]:
    """The frozen prompt's files and the session's Agent Skills, whose catalogue is frozen
    with them (README: Hooks and skills)."""
    from seri.io.inputs.prompt_files import load_startup_files
    from seri.runtime.extensions.skill_catalogue import load_skills

    skills = load_skills(store, Path(project), root, settings.context_window)
    return load_startup_files(root, Path(project), (skills.prompt_source(),)), skills
