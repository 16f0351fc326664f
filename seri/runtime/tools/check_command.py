"""The project's check command (``check.command``), run after every successful write or
edit: its outcome is recorded and goes back to the model with the tool's result."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from seri.pure.trajectories.tool_events import Check

if TYPE_CHECKING:
    from seri.io.permissions.sandbox import Sandbox
    from seri.runtime.trajectories.run_events import RunEvents

CHECK_TIMEOUT = 300
CHECK_OUTPUT_CHARS = 4000


def check_after_write(
    command: str,
    *,
    project: Path,
    sandbox: Sandbox | None,
    env: Mapping[str, str] | None,
    redact: Callable[[str], str],
    events: RunEvents,
) -> str:
    """Run ``command`` in the project (under the sandbox bash gets): what the model is told
    after the write's result, the end of its output when it failed."""
    from seri.io.tools.shell import run_bash

    started = time.monotonic()
    result = run_bash(command, cwd=project, timeout=CHECK_TIMEOUT, sandbox=sandbox, env=env)
    details = result.details_dict()
    code = details.get("exit_code")
    exit_code = code if isinstance(code, int) else None
    ok = exit_code == 0 and not details.get("timed_out")
    output = redact(result.text)
    events.record(
        Check(
            command=command,
            exit_code=exit_code,
            ok=ok,
            seconds=round(time.monotonic() - started, 3),
            output=output,
        )
    )
    if ok:
        return f"\n\n[check `{command}` passed]"
    shown = output if len(output) <= CHECK_OUTPUT_CHARS else output[-CHECK_OUTPUT_CHARS:]
    return f"\n\n[check `{command}` failed (exit {exit_code})]\n{shown}"
