"""Running one hook command: its JSON on stdin, a time limit, seri's sandbox, no secrets.

The command runs as bash would run it (``bash -c``), in the project directory, confined by the
session's OS sandbox like the bash tool's commands (``seri.io.sandbox``: it may write the
project, never a protected path) unless the person's own config.json says ``"sandbox": false``
for it. Its environment is the one bash gets (no API key, no secret-looking variable) with
``CLAUDE_PROJECT_DIR`` set, as Claude Code sets it for its hooks. A hook still running at its
time limit is killed with everything it started (its own process group).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from seri.pure.hook_decisions import HookResult

if TYPE_CHECKING:
    from seri.io.sandbox import Sandbox

# What a hook may print before the rest is dropped (a hook is not a log).
OUTPUT_CAP = 256 * 1024


def run_hook(
    command: str,
    stdin: str,
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str],
    sandbox: Sandbox | None,
) -> HookResult:
    started = time.monotonic()
    child_env = {**env, "CLAUDE_PROJECT_DIR": str(cwd), "SERI_PROJECT_DIR": str(cwd)}
    with contextlib.ExitStack() as stack:
        argv, preexec = ["bash", "-c", command], None
        if sandbox is not None:
            argv, preexec, child_env = stack.enter_context(
                sandbox.confined(command, cwd, child_env)
            )
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                env=child_env,
                preexec_fn=preexec,  # noqa: PLW1509 - Landlock goes between fork and exec
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return HookResult(None, "", "", 0.0, failed=str(exc))
        try:
            out, err = proc.communicate(stdin.encode("utf-8", "replace"), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return HookResult(None, "", "", time.monotonic() - started, timed_out=True)
        except BaseException:
            _kill(proc)
            raise
    return HookResult(
        proc.returncode,
        out[:OUTPUT_CAP].decode("utf-8", "replace"),
        err[:OUTPUT_CAP].decode("utf-8", "replace"),
        time.monotonic() - started,
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The hook and whatever it started (its session's process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.communicate(timeout=5)
