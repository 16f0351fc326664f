"""Running one hook command: its JSON on stdin, a time limit, seri's sandbox, no secrets.

The command runs as bash would run it (``bash -c``), in the project directory, confined by the
session's OS sandbox like the bash tool's commands (``seri.io.permissions.sandbox``: it may write
the project, never a protected path) unless the person's own config.json says ``"sandbox": false``
for it. Its environment is the one bash gets (no API key, no secret-looking variable) with
``CLAUDE_PROJECT_DIR`` set, as Claude Code sets it for its hooks. A hook still running at its
time limit is ended with everything it started, detached or not, as a bash command is
(``seri.io.tools.command_process``); its output is kept to OUTPUT_CAP as it is read.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from seri.io.permissions.sandbox import Detected, Sandbox
from seri.io.tools.command_process import end_command, pump
from seri.pure.extensions.hook_decisions import HookResult
from seri.pure.tools.output_capture import OutputCapture

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
    # Outside the sandbox (the person's own say-so) a hook still runs under call_reaper, as
    # bash does with no sandbox: what it starts ends with it.
    runs_in = sandbox or Sandbox(Detected("none", "outside the sandbox"), cwd, ())
    with contextlib.ExitStack() as stack:
        argv, preexec, child_env = stack.enter_context(
            runs_in.confined(command, cwd, child_env, trusted=True)
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
        return _finish(proc, stdin, started, timeout, reaped=runs_in.reaps)


def _finish(
    proc: subprocess.Popen[bytes], stdin: str, started: float, timeout: float, *, reaped: bool
) -> HookResult:
    """Feed the hook its JSON and read what it says, each stream kept to OUTPUT_CAP as it
    comes (Claude Code reads stdout and stderr apart); at its time limit, or when it leaves
    something behind holding them open, it ends with everything it started."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = OutputCapture(OUTPUT_CAP, 0), OutputCapture(OUTPUT_CAP, 0)
    readers = {proc.stdout.fileno(): out.feed, proc.stderr.fileno(): err.feed}
    try:
        timed_out, abandoned = pump(
            proc, readers, started + timeout, stdin.encode("utf-8", "replace")
        )
        if timed_out or abandoned:
            end_command(proc, reaped=reaped)
        proc.wait()
    except BaseException:
        end_command(proc, reaped=reaped)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise
    finally:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    seconds = time.monotonic() - started
    if timed_out:
        return HookResult(None, "", "", seconds, timed_out=True)
    return HookResult(
        proc.returncode,
        bytes(out.head).decode("utf-8", "replace"),
        bytes(err.head).decode("utf-8", "replace"),
        seconds,
    )
