"""`seri chat` in a real terminal: a private tmux server, keys sent, screens captured.

Each ``TmuxTerminal`` has its own server (its own socket), so tests run side by side and
never touch anyone's tmux. Waiting is always for text on the screen, polled with a generous
deadline, never a fixed sleep: a loaded two-core machine is slow, not wrong.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.conftest import SERI
from tests.terminal_programs import require_program

COLUMNS, ROWS = 100, 40
PROMPT = "seri>"  # as captured: the space after it is trailing blank
TOOLBAR_END = "Ctrl-D quit"
DEADLINE = 45.0
# scroll-on-clear off: prompt_toolkit erases its prompt to print a line above it (the
# banner, once the window is known); tmux would otherwise keep the erased frame in the
# scrollback, which capture-pane reads.
_CONF = """\
set -g remain-on-exit on
set -g status off
set -g history-limit 20000
set -g default-terminal "screen-256color"
set -g escape-time 0
set -g scroll-on-clear off
"""


class TmuxTerminal:
    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str],
        args: Sequence[str] = ("chat",),
        program: str = SERI,
        columns: int = COLUMNS,
    ) -> None:
        self.tmux = require_program("tmux")
        self.dir = Path(tempfile.mkdtemp(prefix="seri-tmux-"))
        self.socket = self.dir / "sock"
        conf = self.dir / "tmux.conf"
        conf.write_text(_CONF)
        launcher = self.dir / "run.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        command = " ".join(shlex.quote(a) for a in (program, *args))
        # The shell waits for seri and writes its exit status: tmux can be slow to notice
        # that a pane's process is gone (it was seen leaving seri a zombie for a minute).
        self.status_file = self.dir / "status"
        # `trap : INT`: Ctrl-C is for seri; the shell must outlive it to write the status
        # (a handler, unlike an ignored signal, is not inherited by seri).
        launcher.write_text(
            f"{exports}cd {shlex.quote(str(cwd))}\ntrap : INT\n{command}\n"
            f"echo $? > {shlex.quote(str(self.status_file))}\n"
        )
        self.started = time.monotonic()
        self._tmux(
            "-f",
            str(conf),
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(columns),
            "-y",
            str(ROWS),
            f"sh {shlex.quote(str(launcher))}",
        )

    def _tmux(self, *args: str, input: str | None = None) -> str:
        done = subprocess.run(
            [self.tmux, "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            input=input,
            check=True,
            timeout=30,
        )
        return done.stdout

    def resize(self, columns: int) -> None:
        """The window made ``columns`` wide, as a person drags it (seri gets SIGWINCH)."""
        self._tmux("resize-window", "-t", "t", "-x", str(columns), "-y", str(ROWS))

    # -- looking -------------------------------------------------------------------------------

    def screen(self) -> str:
        """What is on the screen now, trailing blanks dropped."""
        return _tidy(self._tmux("capture-pane", "-p", "-t", "t"))

    def history(self) -> str:
        """The scrollback and the screen, top to bottom."""
        return _tidy(self._tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "t"))

    def coloured(self) -> str:
        return self._tmux("capture-pane", "-p", "-e", "-S", "-", "-t", "t")

    def wait_for(self, text: str, count: int = 1, timeout: float = DEADLINE) -> str:
        """Until ``text`` shows ``count`` times in the scrollback; returns the scrollback."""
        deadline = time.monotonic() + timeout
        died_at: float | None = None
        while True:
            shown = self.history()
            if shown.count(text) >= count:
                return shown
            if died_at is None and self.dead():
                died_at = time.monotonic()
            # tmux marks the pane dead a moment before it draws its last line ("Pane is
            # dead"), so a dead pane gets five seconds more before a text counts as never shown.
            gone = died_at is not None and time.monotonic() - died_at > 5.0
            if gone or time.monotonic() > deadline:
                raise AssertionError(
                    f"never saw {text!r} ({count}x) in {timeout:g} s; the terminal shows:\n{shown}"
                )
            time.sleep(0.1)

    def wait_for_prompt(self, count: int = 1) -> str:
        """Until the ``count``-th prompt is up, with its toolbar drawn (the last thing drawn)."""
        self.wait_for(PROMPT, count)
        deadline = time.monotonic() + DEADLINE
        while TOOLBAR_END not in self.screen().rstrip("\n").rsplit("\n", 1)[-1]:
            if time.monotonic() > deadline:
                raise AssertionError(f"the prompt's toolbar never showed:\n{self.screen()}")
            time.sleep(0.05)
        return self.history()

    def title(self) -> str:
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def dead(self) -> bool:
        return self.status_file.exists()

    def exit_status(self, timeout: float = DEADLINE) -> int:
        deadline = time.monotonic() + timeout
        while True:
            text = self.status_file.read_text() if self.dead() else ""
            if text.endswith("\n"):
                return int(text)
            if time.monotonic() > deadline:
                raise AssertionError(f"seri did not exit; the terminal shows:\n{self.history()}")
            time.sleep(0.1)

    # -- typing --------------------------------------------------------------------------------

    def type(self, text: str) -> None:
        """Literal text, as typed (no Enter)."""
        self._tmux("send-keys", "-t", "t", "-l", text)

    def keys(self, *names: str) -> None:
        """Named keys: Enter, C-c, C-d, Escape ..."""
        self._tmux("send-keys", "-t", "t", *names)

    def line(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def paste(self, text: str) -> None:
        """A paste as a terminal delivers it: bracketed (ESC[200~ … ESC[201~) when the
        program asked for bracketed paste, as prompt_toolkit does."""
        self._tmux("load-buffer", "-b", "p", "-", input=text)
        self._tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "t")

    def close(self) -> None:
        subprocess.run(
            [self.tmux, "-S", str(self.socket), "kill-server"], capture_output=True, check=False
        )
        for path in self.dir.iterdir():
            path.unlink(missing_ok=True)
        self.dir.rmdir()

    def __enter__(self) -> TmuxTerminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


_SESSION = re.compile(r"\b[0-9a-f]{32}\b")
# The short id of a session whose full id is not on the screen (the banner of --continue).
_PREFIX = re.compile(r"(?<=session )[0-9a-f]{8}\b|(?<=sessions show )[0-9a-f]{8}\b")


def normalised(screen: str, *, project: Path, version: str) -> str:
    """A screen with what changes from run to run replaced: ids, paths, the version."""
    ids: dict[str, str] = {}

    def session(match: re.Match[str]) -> str:
        return ids.setdefault(match.group(0), f"<session-{len(ids) + 1}>")

    text = _SESSION.sub(session, screen)
    for full, label in list(ids.items()):
        text = text.replace(full[:8], label.replace(">", "-prefix>"))
    text = _PREFIX.sub("<session-prefix>", text)
    text = text.replace(str(project), "<project>").replace(f"seri {version}", "seri <version>")
    # tmux's own line under a program that has left (remain-on-exit): its clock says nothing.
    text = re.sub(r"^(Pane is dead \(status \d+), [^)]*\)$", r"\1)", text, flags=re.M)
    # Which OS sandbox confines bash depends on the machine (bubblewrap, Landlock).
    text = re.sub(r"(seri: bash runs under ).*?( \(README: Sandbox\))", r"\1<sandbox>\2", text)
    # The empty rows between the prompt and its toolbar at the bottom: as many as the
    # screen has left, which says nothing.
    return re.sub(r"\n(?:\n){3,}", lambda m: f"\n[{len(m.group(0)) - 1} empty rows]\n", text)
