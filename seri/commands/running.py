"""Turning outcomes into exit statuses and one-line messages, the same for every command."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from seri.pure.errors import EXIT_INTERRUPTED, EXIT_UNFINISHED, EXIT_USAGE, SeriError


def run_guarded(action: Callable[[], int]) -> int:
    """Run a command; expected errors become one line on stderr, never a traceback."""
    debug = os.environ.get("SERI_DEBUG") == "1"
    try:
        return action()
    except SeriError as exc:
        if debug:
            raise
        print(f"seri: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("seri: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from
        # complaining again while it flushes stdout at exit.
        _silence_stdout()
        return 0
    except Exception as exc:
        if debug:
            raise
        described = _describe_storage(exc)
        if described:
            message, code = described
            print(f"seri: {message}", file=sys.stderr)
            return code
        print(
            f"seri: internal error: {type(exc).__name__}: {exc} (SERI_DEBUG=1 shows where)",
            file=sys.stderr,
        )
        return EXIT_UNFINISHED


def describe_failure(exc: BaseException) -> tuple[str, int] | None:
    """An expected failure (a SeriError, a storage fault) as one line and a status."""
    if isinstance(exc, SeriError):
        return str(exc), exc.exit_code
    return _describe_storage(exc)


def _describe_storage(exc: BaseException) -> tuple[str, int] | None:
    """A storage error met after opening: one line, and the exit status it deserves.

    A damaged database is an input error (2), as when it is found on opening;
    a full disk or an I/O error means the task did not finish (1).
    """
    if "apsw" not in sys.modules:
        return None
    import apsw

    from seri.io.store import describe_sqlite_error, profile_root

    message = describe_sqlite_error(exc, Path(os.path.realpath(profile_root())) / "seri.db")
    if message is None:
        return None
    damaged = False
    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        damaged = damaged or isinstance(current, apsw.NotADBError | apsw.CorruptError)
        current = current.__cause__ or current.__context__
    return message, EXIT_USAGE if damaged else EXIT_UNFINISHED


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def parse_usage(doc: str, argv: Sequence[str]) -> dict[str, Any]:
    """docopt for a subcommand; a usage error prints the usage on stderr (exit 2)."""
    from docopt import DocoptExit, docopt

    try:
        options: dict[str, Any] = docopt(doc, list(argv))
    except DocoptExit as exc:
        if str(exc).startswith("Warning: found unmatched"):
            # docopt-ng's own wording ('Warning: found unmatched (duplicate?)
            # arguments [Argument(None, 'x')]') is about its parser, not the command.
            shown = " ".join(["seri", *argv])
            print(f"seri: unexpected or missing arguments in `{shown}`", file=sys.stderr)
            print(DocoptExit.usage.strip(), file=sys.stderr)
        else:
            print(str(exc), file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    return options


def whole_number(text: str, what: str) -> int:
    """``text`` as an int, or a usage error naming ``what`` was expected."""
    try:
        return int(text)
    except ValueError:
        raise SeriError(f"{what} is needed, not {text!r}") from None
