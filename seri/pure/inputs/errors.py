"""Errors a person is meant to read: one clear line, a fix, and an exit status.

Anything else that escapes is a bug and gets a traceback (with SERI_DEBUG=1) or
a one-line 'internal error' otherwise.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_UNFINISHED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class SeriError(Exception):
    """An expected failure: bad input, a bad profile, a refused operation."""

    exit_code = EXIT_USAGE


class TaskUnfinished(SeriError):
    """The task ran but did not finish: turn budget spent, or the turn failed."""

    exit_code = EXIT_UNFINISHED


class SessionChanged(SeriError):
    """Another process wrote to the session between our read and our write."""

    exit_code = EXIT_UNFINISHED
