"""The keyboard while a task runs: Esc stops the task, everything else waits for the prompt.

A thread reads the terminal (no echo, no line editing, Ctrl-C still a signal) with
bracketed paste on, so a paste made while the answer streams arrives marked as one paste.
Esc interrupts the task as Ctrl-C does (SIGINT to seri itself, which stops a blocking read
at once); the other bytes are handed to the next prompt, which reads them as typed: a
paste is one message, an Enter sends what was typed before it.

A question asked during the task (an approval) pauses the reader, so the terminal and its
keys are the question's alone.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Iterator
from typing import Any

from seri.pure.terminal.busy_keys import KeysSoFar, scan_burst

# A burst ends after this long without a byte: an Esc key is one byte with nothing after.
QUIET = 0.03
BRACKETED_PASTE_ON = b"\x1b[?2004h"
BRACKETED_PASTE_OFF = b"\x1b[?2004l"


# The reader of the task running now, if any: a question asked from deep in the task
# (/rewind's confirmation) pauses it without being handed it.
_ACTIVE: list[BusyKeys] = []


def keyboard_for_a_question() -> contextlib.AbstractContextManager[None]:
    """The keyboard given back to the terminal's line editing while a question is asked."""
    return _ACTIVE[-1].paused() if _ACTIVE else contextlib.nullcontext()


class BusyKeys:
    """Use as a context around a task; ``kept()`` then gives the keys for the next prompt."""

    def __init__(self, fd: int, out_fd: int) -> None:
        self.fd = fd
        self.out_fd = out_fd
        self.escaped = False
        self._kept = bytearray()
        self._state = KeysSoFar()
        self._saved: list[Any] | None = None
        self._thread: threading.Thread | None = None
        self._stop_read, self._stop_write = -1, -1

    def __enter__(self) -> BusyKeys:
        self.escaped = False
        self._start()
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _ACTIVE.remove(self)
        self._stop()

    def kept(self) -> bytes:
        """The keys pressed while busy (Esc taken out), once."""
        kept, self._kept = bytes(self._kept + self._state.tail), bytearray()
        self._state = KeysSoFar()
        return kept

    def paste_mode_off(self) -> None:
        """Leaving the chat: the terminal's bracketed paste as a shell expects it (off)."""
        with contextlib.suppress(OSError):
            os.write(self.out_fd, BRACKETED_PASTE_OFF)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The terminal as it was, for a question asked in the middle of the task."""
        running = self._thread is not None
        self._stop()
        try:
            yield
        finally:
            if running:
                self._start()

    # -- the reader ----------------------------------------------------------------------------

    def _start(self) -> None:
        try:
            import termios

            saved = termios.tcgetattr(self.fd)
            quiet = list(saved)
            quiet[3] &= ~(termios.ECHO | termios.ECHOCTL | termios.ICANON)  # lflags
            quiet[6] = list(quiet[6])
            quiet[6][termios.VMIN] = 1
            quiet[6][termios.VTIME] = 0
            termios.tcsetattr(self.fd, termios.TCSANOW, quiet)
        except (ImportError, OSError, ValueError):
            return  # not a terminal: nothing to read
        self._saved = saved
        with contextlib.suppress(OSError):
            os.write(self.out_fd, BRACKETED_PASTE_ON)
        self._stop_read, self._stop_write = os.pipe()
        self._thread = threading.Thread(target=self._read, name="seri-keys", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            os.write(self._stop_write, b"x")
            thread.join()
            os.close(self._stop_read)
            os.close(self._stop_write)
        saved, self._saved = self._saved, None
        if saved is not None:
            import termios

            # Bracketed paste stays on: a paste made between the task's end and the next
            # prompt then still arrives marked (the prompt reads it as one paste); the
            # chat turns it off when it ends (``paste_mode_off``).
            with contextlib.suppress(OSError):
                termios.tcsetattr(self.fd, termios.TCSANOW, saved)

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd, self._stop_read], [], [])
            if self._stop_read in ready:
                return
            burst = self._burst()
            if not burst:
                return  # the terminal is gone
            scanned = scan_burst(self._state, burst)
            self._state = scanned.state
            self._kept += scanned.kept
            if scanned.escapes and not self.escaped:
                self.escaped = True
                os.kill(os.getpid(), signal.SIGINT)

    def _burst(self) -> bytes:
        try:
            burst = os.read(self.fd, 65536)
            while burst and select.select([self.fd], [], [], QUIET)[0]:
                more = os.read(self.fd, 65536)
                if not more:
                    break
                burst += more
        except OSError:
            return b""
        return burst
