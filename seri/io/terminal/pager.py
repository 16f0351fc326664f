"""Long output through a pager, as git shows it: ``$SERI_PAGER``, else ``$PAGER``, else
``less``, with ``LESS=FRX`` when ``LESS`` is not set (quit when it fits on one screen,
keep the colours, leave the text on the screen after ``q``).

Only ever on a terminal: piped or redirected output is written as it is. An empty pager or
``cat`` means no pager; a pager that cannot be started is skipped and the text is written
after all, so nothing is lost.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Iterator, Mapping
from typing import IO, TextIO

NO_PAGER = ("", "cat")


def pager_command(env: Mapping[str, str]) -> list[str] | None:
    """The pager to run (None: none), from ``SERI_PAGER`` or ``PAGER``."""
    chosen = env.get("SERI_PAGER", env.get("PAGER", "less"))
    try:
        words = shlex.split(chosen)
    except ValueError:
        return None
    if not words or words[0] in NO_PAGER:
        return None
    return words


@contextlib.contextmanager
def paged(stream: TextIO, env: Mapping[str, str] | None = None) -> Iterator[IO[str]]:
    """A stream that goes to the pager when ``stream`` is a terminal and a pager is set,
    else ``stream`` itself. The pager's end (``q`` before the end) ends the writing
    quietly; Ctrl-C while it shows is the pager's, not seri's."""
    env = os.environ if env is None else env
    command = pager_command(env) if _isatty(stream) else None
    process = _start(command, stream, env) if command else None
    if process is None or process.stdin is None:
        yield stream
        return
    stream.flush()
    pipe = process.stdin
    try:
        with contextlib.suppress(BrokenPipeError):
            yield pipe
            pipe.flush()
    finally:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()
        while True:
            try:
                process.wait()
                break
            except KeyboardInterrupt:
                continue  # less reads Ctrl-C itself; seri waits for it to end


def _start(
    command: list[str], stream: TextIO, env: Mapping[str, str]
) -> subprocess.Popen[str] | None:
    child_env = dict(env)
    child_env.setdefault("LESS", "FRX")
    child_env.setdefault("LV", "-c")  # lv, like less, keeps the colours
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=stream.fileno(),
            env=child_env,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError:
        return None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError, AttributeError):
        return False
