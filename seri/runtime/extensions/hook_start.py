"""Where a chat starts and ends its hooks: nothing is loaded for a session without any."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seri.pure.extensions.hook_events import PROJECT_SOURCES

if TYPE_CHECKING:
    from seri.io.permissions.sandbox import Sandbox
    from seri.io.session.store import Store
    from seri.pure.trajectories.events import HookRun
    from seri.runtime.extensions.hook_host import HookHost
    from seri.runtime.trajectories.run_events import RunEvents


def open_hooks(
    store: Store,
    person_hooks: Mapping[str, Any],
    project: Path,
    sandbox: Sandbox,
    env: Mapping[str, str],
    show: Callable[[HookRun], None],
) -> tuple[HookHost | None, tuple[str, ...]]:
    """The session's hooks (None: none configured anywhere) and the notes for stderr."""
    if not person_hooks and not any(os.path.exists(project / s) for s in PROJECT_SOURCES):
        return None, ()
    from seri.runtime.extensions.hook_host import HookHost, load_hooks

    found = load_hooks(store, person_hooks, project)
    if not found.hooks:
        return None, found.notes()
    host = HookHost(found, project=project, sandbox=sandbox, env=env)
    host.show = show
    return host, found.notes()


def session_started(
    hooks: HookHost | None, session_id: str, events: RunEvents | None, resumed: bool
) -> None:
    """The session records from now on: SessionStart hooks run (their context waits for
    the next prompt)."""
    if hooks is not None:
        hooks.session_id, hooks.events = session_id, events
        hooks.session_start("resume" if resumed else "startup")


def session_ended(hooks: HookHost | None, interactive: bool) -> None:
    if hooks is not None and hooks.session_id:
        hooks.session_end("prompt_input_exit" if interactive else "other")
