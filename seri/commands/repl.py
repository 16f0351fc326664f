"""The interactive loop on a terminal: line editing and history, Ctrl-C cancels the turn."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING

from seri.pure.effects import AskPerson
from seri.pure.errors import EXIT_OK

if TYPE_CHECKING:
    from seri.commands.chat_session import ChatSession

HISTORY_FILE = "input_history"
HISTORY_LENGTH = 1000


def _setup_readline(root: str) -> None:
    try:
        import readline
    except ImportError:  # not on every platform; input() still works without it
        return
    path = os.path.join(root, HISTORY_FILE)
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)

    import atexit

    def save() -> None:
        try:
            readline.write_history_file(path)
            os.chmod(path, 0o600)
        except OSError:
            pass

    atexit.register(save)


def interactive(chat: ChatSession) -> int:
    from seri.commands.chat import line_outcome

    _setup_readline(str(chat.profile.root))
    print("seri: type a task, /help for commands, Ctrl-D to leave", file=sys.stderr)
    status = EXIT_OK
    while True:
        try:
            line = input("seri> ")
        except EOFError:
            print(file=sys.stderr)
            return status
        except KeyboardInterrupt:
            print(file=sys.stderr)
            continue
        if not line.strip():
            continue
        try:
            outcome = line_outcome(chat, line)
        except KeyboardInterrupt:
            print("\nseri: turn cancelled", file=sys.stderr)
            continue
        print()
        if outcome == "exit":
            return status
        if isinstance(outcome, int):
            status = outcome


def ask_permission(effect: AskPerson) -> bool:
    """Ask the person at the terminal; anything but yes is no."""
    call = effect.call
    try:
        arguments = json.loads(call.arguments)
        shown = arguments.get("command") or arguments.get("path") or call.arguments
    except (json.JSONDecodeError, AttributeError):
        shown = call.arguments
    prompt = f"\nseri: allow {call.name}: {shown}\n      ({effect.reason}) [y/N] "
    return _yes(_ask_terminal(prompt))


def confirm(question: str) -> bool:
    """A yes/no question on the terminal; anything but yes is no."""
    return _yes(_ask_terminal(f"seri: {question} [y/N] "))


def _yes(answer: str | None) -> bool:
    return answer is not None and answer.strip().lower() in ("y", "yes")


def _ask_terminal(prompt: str) -> str | None:
    """Write ``prompt`` to the controlling terminal and read one line back; None if there is
    no terminal.

    Unbuffered file-descriptor I/O on purpose: ``open("/dev/tty", "r+")`` builds a
    seekable buffered stream, which a terminal is not, so it always fails.
    """
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        os.write(fd, prompt.encode("utf-8", "replace"))
        line = b""
        while not line.endswith(b"\n"):
            chunk = os.read(fd, 1024)
            if not chunk:
                break
            line += chunk
        return line.decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
