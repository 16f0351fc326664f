"""Turning outcomes into exit statuses and one-line messages, the same for every command."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from seri.pure.inputs.errors import EXIT_INTERRUPTED, EXIT_UNFINISHED, EXIT_USAGE, SeriError
from seri.pure.inputs.number_ranges import ROW_NUMBERS, Range, range_problem, shown, whole_number_in
from seri.pure.terminal.terminal_text import neutralise

# Every command but --version imports this module first: pathlib (~7 ms of `seri sessions`)
# loads only when a path needs it.
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any, NoReturn

    from seri.pure.inputs.settings import Settings


def run_guarded(action: Callable[[], int]) -> int:
    """Run a command; expected errors become one line on stderr, never a traceback."""
    debug = os.environ.get("SERI_DEBUG") == "1"
    try:
        return action()
    except SeriError as exc:
        if debug:
            raise
        print(neutralise(f"seri: {exc}"), file=sys.stderr)
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
            print(neutralise(f"seri: {message}"), file=sys.stderr)
            return code
        print(
            neutralise(
                f"seri: internal error: {type(exc).__name__}: {exc} (SERI_DEBUG=1 shows where)"
            ),
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

    from seri.io.session.profile_files import profile_dir
    from seri.io.session.store import DB_NAME, describe_sqlite_error

    message = describe_sqlite_error(exc, os.path.join(os.path.realpath(profile_dir()), DB_NAME))
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


def load_settings_warned(root: Path) -> Settings:
    """config.json and the environment as settings; unknown keys are named on stderr."""
    from seri.io.inputs.config import load_settings

    settings = load_settings(root)
    for warning in settings.warnings:
        print(f"seri: warning: {warning}", file=sys.stderr)
    return settings


def parse_usage(doc: str, argv: Sequence[str]) -> dict[str, Any]:
    """docopt for a subcommand; a usage error prints the usage on stderr (exit 2)."""
    from docopt import DocoptExit, docopt

    try:
        options: dict[str, Any] = docopt(doc, list(argv))
    except DocoptExit:
        usage_error(doc, argv[1:], f"seri {argv[0]}")
    return options


def positive_number(text: str, name: str, allowed: Range) -> int:
    """``text`` as a whole number in ``allowed``, or a usage error naming the option and
    the range (``seri.pure.inputs.number_ranges``)."""
    value = whole_number_in(text, allowed)
    if value is None:
        raise SeriError(range_problem(name, text, allowed))
    return value


def whole_number(text: str, what: str) -> int:
    """``text`` as an int (one a row number can be), or a usage error naming ``what`` was
    expected."""
    value = whole_number_in(text, ROW_NUMBERS)
    if value is None:
        raise SeriError(f"{what} is needed, not {shown(text)}")
    return value


def usage_error(doc: str, words: Sequence[str], command: str) -> NoReturn:
    """docopt refused the command line: say what is wrong in our words, exit 2.

    docopt-ng's own ('Warning: found unmatched (duplicate?) arguments [Option('-v', None, 0,
    True)]') is about its parser, not the command.
    """
    from seri.pure.inputs.usage_errors import usage_problem

    print(neutralise(f"seri: {usage_problem(doc, words, command)}"), file=sys.stderr)
    raise SystemExit(EXIT_USAGE)
