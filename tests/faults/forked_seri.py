"""What race_child.py and fuzz_child.py share: a warm interpreter, and running seri's command
line in a forked child of it as if it were a fresh ``seri`` process.

Imported by those scripts as a sibling module (they run as scripts, with this directory
first on ``sys.path``); only the standard library and seri.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn


def preload() -> None:
    """Import what the commands import, before forking: the children start warm."""
    import certifi  # noqa: F401 (with httpcore: what httpx loads as its first client is made)
    import httpcore  # noqa: F401

    import seri.commands.chat
    import seri.commands.compact
    import seri.commands.memory
    import seri.commands.rewind
    import seri.commands.sessions
    import seri.commands.trajectory
    import seri.io.provider.provider
    import seri.io.session.codec
    import seri.pure.agent.turn
    import seri.runtime.agent.interpreter
    import seri.runtime.terminal.chat_session  # noqa: F401


def run_seri(
    argv: list[str],
    *,
    out: Path,
    stdin: Path | None = None,
    env: Mapping[str, str] | None = None,
    replace_env: bool = False,
    cwd: str | None = None,
    delay: float = 0.0,
    tag: str = "child",
) -> NoReturn:
    """In a forked child: set up stdio (``out``.stdout, ``out``.stderr), run seri, exit.

    Never returns: the child ends with seri's exit status (71 for an exception that escaped
    seri itself, reported on stderr with ``tag``), without running the parent's cleanup.
    """
    code = 70
    try:
        if delay:
            time.sleep(delay)
        if env is not None:
            if replace_env:
                os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        os.dup2(os.open(stdin or os.devnull, os.O_RDONLY), 0)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            os.dup2(os.open(f"{out}.{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        # The streams Python made at start-up wrap the old descriptors' settings: renew them
        # as a fresh interpreter would see these files.
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        from seri.commands.main import main

        code = main(argv)
        sys.stdout.flush()
        sys.stderr.flush()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:
        os.write(2, f"{tag}: {type(exc).__name__}: {exc}\n".encode())
        code = 71
    finally:
        os._exit(code)


def read_output(out: Path, name: str) -> str:
    try:
        return Path(f"{out}.{name}").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
