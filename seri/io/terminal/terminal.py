"""The terminal seri talks to: its two streams, whether to colour them, and the spinner.

Answers go to stdout, everything else for people to stderr; on a terminal both land on
one screen, so one ``Screen`` writes both under one lock and knows whether the cursor is
at the start of a line (a cancelled turn then leaves it on a fresh one). The spinner runs
in a thread of its own and paints only on stderr, only when stderr is a terminal, only on
an empty line, and wipes itself before anything else is written.

Colour is on for a stream that is a terminal, unless ``NO_COLOR`` is set (to anything)
or ``TERM`` is ``dumb`` (no-color.org).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TextIO

from seri.pure.terminal.human_units import seconds_short, tokens_short
from seri.pure.terminal.terminal_style import Span, paint, paint_spans, wrap_spans

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_INTERVAL = 0.1
# The spinner shows after this long without output, so a fast stream never flickers.
SPINNER_DELAY = 0.3
# The spinner may stand under a few lines of live output: it is wiped from the start of
# its first line to the end of the screen.
CLEAR_BELOW = "\r\x1b[J"


def wants_colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _supports_hyperlinks(env: Mapping[str, str]) -> bool:
    from seri.pure.terminal.hyperlink_support import supports_hyperlinks

    return supports_hyperlinks(env)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False


class Screen:
    """stdout and stderr as one screen."""

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        env = os.environ if env is None else env
        self.out_colour = wants_colour(self.out, env)
        self.err_colour = wants_colour(self.err, env)
        self.out_tty = _isatty(self.out)
        # The pager reads the keyboard: whatever else reads it (the chat's keys typed
        # while a task runs) stops meanwhile. The chat sets this; elsewhere nothing reads.
        self.keys_paused: Callable[[], contextlib.AbstractContextManager[None]] = (
            contextlib.nullcontext
        )
        # Links in answers as OSC 8 hyperlinks (else the URL after the text).
        self.out_links = self.out_colour and _supports_hyperlinks(env)
        self.err_tty = _isatty(self.err)
        self.lock = threading.RLock()
        self.at_line_start = True
        self.last_write = time.monotonic()
        self._spinner_shown = False

    def width(self) -> int:
        """The terminal's width as it is now (asked of the terminal itself: a COLUMNS left
        in the environment by whoever started seri may be stale); else COLUMNS, else 100."""
        for stream in (self.err, self.out):
            try:
                columns = os.get_terminal_size(stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                continue
            if columns > 0:  # 0: a terminal that was never given a size
                return max(20, columns)
        import shutil  # here, not at the top: shutil loads bz2 and lzma (~3 ms of each start)

        return max(20, shutil.get_terminal_size((100, 24)).columns)

    # -- writing -------------------------------------------------------------------------------

    def say(self, text: str, style: str = "") -> None:
        """A line for people, on stderr."""
        # Measured only when it may be too wide: a wide character takes two columns.
        longest = len(text) if text.isascii() else 2 * len(text)
        if self.err_tty and longest > self.width():
            self.say_spans([(style, text + "\n")])
            return
        self.write_err(paint(text, style, colour=self.err_colour) + "\n")

    def say_spans(self, spans: Iterable[Span]) -> None:
        """Styled lines for people, on stderr; on a terminal a line too long for it is
        broken under its own indent (the terminal would start it again at column 0)."""
        if self.err_tty:
            spans = wrap_spans(spans, self.width())
        self.write_err(paint_spans(spans, colour=self.err_colour))

    def say_long(self, spans: Iterable[Span]) -> None:
        """Like ``say_spans``, but output taller than the terminal goes through the pager
        (``seri.io.terminal.pager``: ``$PAGER``, else ``less``), as git shows a long diff."""
        if not self.err_tty:
            self.say_spans(spans)
            return
        wrapped = wrap_spans(spans, self.width())
        text = paint_spans(wrapped, colour=self.err_colour)
        if text.count("\n") < self.height() - 1:
            self.write_err(text)
            return
        from seri.io.terminal.pager import paged

        with self.lock, self.keys_paused():
            self._wipe_spinner()
            with paged(self.err) as out:
                out.write(text)
            self.at_line_start = True

    def height(self) -> int:
        """The terminal's rows (24 when it cannot say)."""
        try:
            return os.get_terminal_size(self.err.fileno()).lines or 24
        except (OSError, ValueError, AttributeError):
            return 24

    def answer_spans(self, spans: Iterable[Span]) -> None:
        self.write_out(paint_spans(spans, colour=self.out_colour))

    def write_out(self, text: str) -> None:
        self._write(self.out, text)

    def write_err(self, text: str) -> None:
        self._write(self.err, text)

    def fresh_line(self) -> None:
        """End the current line if something was left on it."""
        with self.lock:
            if not self.at_line_start:
                self._write(self.err, "\n")

    def _write(self, stream: TextIO, text: str) -> None:
        if not text:
            return
        with self.lock:
            self._wipe_spinner()
            if stream is self.err:
                self.out.flush()
            try:
                stream.write(text)
            except UnicodeEncodeError:
                # A terminal that is not UTF-8 (PYTHONIOENCODING=ascii): show what it can.
                encoding = getattr(stream, "encoding", None) or "ascii"
                stream.write(text.encode(encoding, "replace").decode(encoding))
            stream.flush()
            self.at_line_start = text.endswith("\n")
            self.last_write = time.monotonic()

    # -- the spinner ---------------------------------------------------------------------------

    def paint_spinner(self, lines: list[str]) -> None:
        """Called by the spinner thread: draw ``lines`` (live output, then the spinner's
        own line) if the screen is free for them; the cursor goes back to their first line,
        so that what is written next replaces them."""
        with self.lock:
            if not self.at_line_start or not lines:
                return
            if time.monotonic() - self.last_write < SPINNER_DELAY and not self._spinner_shown:
                return
            back = f"\x1b[{len(lines) - 1}F" if len(lines) > 1 else ""
            self.err.write(CLEAR_BELOW + "\n".join(lines) + back)
            self.err.flush()
            self._spinner_shown = True

    def _wipe_spinner(self) -> None:
        if self._spinner_shown:
            self.err.write(CLEAR_BELOW)
            self.err.flush()
            self._spinner_shown = False

    def wipe_spinner(self) -> None:
        with self.lock:
            self._wipe_spinner()


class Spinner:
    """A line that says seri is busy: what with, for how long, tokens so far, how to stop.

    ``label`` and ``tokens`` are read on every frame, so the caller can change them.
    """

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.label = ""
        self.tokens: Callable[[], int] | None = None
        # The last lines of a running command's output, shown above the spinner's line.
        self.live: Callable[[int], tuple[str, ...]] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def start(
        self,
        label: str,
        tokens: Callable[[], int] | None = None,
        live: Callable[[int], tuple[str, ...]] | None = None,
    ) -> None:
        self.label, self.tokens, self.live = label, tokens, live
        if self._thread is not None or not self.screen.err_tty:
            return
        self._started = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="seri-spinner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()
        self.screen.wipe_spinner()

    def _run(self) -> None:
        frame = 0
        while not self._stop.wait(SPINNER_INTERVAL):
            self.screen.paint_spinner(self.block(frame))
            frame += 1

    def block(self, frame: int) -> list[str]:
        """The live output's last lines (dim, under a rule), then the spinner's line."""
        lines = self.live(self.screen.width() - 5) if self.live is not None else ()
        colour = self.screen.err_colour
        shown = [paint(f"  │ {line}", "notice", colour=colour) for line in lines]
        return [*shown, self.line(frame)]

    def line(self, frame: int) -> str:
        elapsed = time.monotonic() - self._started
        parts = [f"{SPINNER_FRAMES[frame % len(SPINNER_FRAMES)]} {self.label}"]
        parts.append(seconds_short(elapsed))
        tokens = self.tokens() if self.tokens is not None else 0
        if tokens:
            parts.append(f"{tokens_short(tokens)} tokens")
        parts.append("Esc to interrupt")
        text = " · ".join(parts)
        width = self.screen.width() - 1
        if len(text) > width:
            text = text[: width - 1] + "…"
        return paint(text, "spinner", colour=self.screen.err_colour)


@contextlib.contextmanager
def keys_echoed(fd: int) -> Iterator[None]:
    """A line typed at a plain question (/rewind's confirmation) is seen while typed."""
    try:
        import termios

        saved = termios.tcgetattr(fd)
    except (ImportError, OSError):
        yield
        return
    loud = list(saved)
    loud[3] |= termios.ECHO | termios.ICANON
    try:
        termios.tcsetattr(fd, termios.TCSANOW, loud)
        yield
    finally:
        with contextlib.suppress(OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


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
    from seri.io.terminal.busy_keys import keyboard_for_a_question

    with keyboard_for_a_question():
        return _ask_tty(prompt)


def _ask_tty(prompt: str) -> str | None:
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        os.write(fd, prompt.encode("utf-8", "replace"))
        line = b""
        with keys_echoed(fd):
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
