"""The interactive loop on a terminal, built on prompt_toolkit (as aider and IPython are).

Keys at the prompt:
  Enter                  send the message
  Alt-Enter (Esc Enter)  a new line (so does a line ending in a backslash, then Enter)
  a paste                stays one message, however many lines (bracketed paste), also
                         when it is made while a task runs: keys pressed then wait for
                         the next prompt (an Enter among them sends what came before)
                         a paste over 10 lines shows as [pasted N lines #k]; Ctrl-O shows
                         it whole (it is sent whole either way)
  Up, Down, Ctrl-R       history, kept across sessions in $SERI_HOME/input_history
  Tab                    complete a slash command
  Esc                    while a task runs, stop it (as Ctrl-C does)
  Ctrl-C                 clear the line; while a task runs, cancel the task
  Ctrl-D                 on an empty line: leave (exit status 0, or the last task's)

prompt_toolkit is imported here only, when seri chat starts on a terminal: no other command
pays for it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from seri.io.terminal.busy_keys import BusyKeys
from seri.io.terminal.terminal import Screen
from seri.pure.inputs.errors import EXIT_OK
from seri.pure.terminal.terminal_text import neutralise

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    from seri.pure.terminal.paste_fold import PasteFold
    from seri.runtime.session.profile import Profile
    from seri.runtime.terminal.chat_opening import ChatOpener
    from seri.runtime.terminal.chat_options import ChatOptions

HISTORY_FILE = "input_history"
PROMPT = "seri> "
CONTINUATION = "    … "
KEYS_HINTS = ("Alt-Enter newline", "/help", "Ctrl-D quit")
# How long leaving waits for a session still opening behind the prompt (its imports, the
# store, MCP servers starting) before the chat ends without closing it.
LEAVE_WAIT = 10.0


def interactive(profile: Profile, project: str, options: ChatOptions) -> int:
    """The loop: prompt, task, prompt. Settings and the key are checked before the prompt."""
    import attrs

    from seri.runtime.agent.running import load_settings_warned
    from seri.runtime.terminal.chat_opening import ChatOpener
    from seri.runtime.terminal.chat_options import api_key_from

    settings = load_settings_warned(profile.root)
    if options.model:
        settings = attrs.evolve(settings, model=options.model)
    api_key_from(os.environ, settings.base_url)  # no key: say so now, not after the first task
    opener = ChatOpener(profile, project, options, settings, Screen())
    try:
        return _loop(opener)
    finally:
        opener.leave(LEAVE_WAIT)
        if opener.ready and opener.chat is not None:
            opener.chat.close()


def _loop(opener: ChatOpener) -> int:
    from prompt_toolkit.application import get_app
    from prompt_toolkit.utils import is_dumb_terminal

    from seri.runtime.terminal.chat_info import RESUME_BANNER_WAIT, banner_line, show_replay
    from seri.runtime.terminal.chat_opening import LateLine

    folds = Folds()
    session = _prompt_session(opener, folds)
    banner = LateLine(opener.screen)
    start_opening: Callable[[], None] | None = None
    # A resumed session is read first (its last exchange comes before the prompt); so is any
    # session in a dumb terminal, where nothing can be printed above a prompt.
    if opener.options.resume or opener.options.continue_last or is_dumb_terminal():
        chat = opener.open_now()
        banner.print_once(banner_line(chat, wait=RESUME_BANNER_WAIT))
        show_replay(chat)
    else:

        def when_open() -> None:
            error = opener.failed
            if error is not None:
                _abort(session.app, error)
            elif opener.chat is not None:
                chat = opener.chat
                banner.above_prompt(session.app, banner_line(chat), before=chat.show_notes)

        def start() -> None:
            # Once the prompt is drawn (the loop runs this after the first frame): the
            # thread's imports must not hold the interpreter while the prompt is drawn.
            loop = get_app().loop
            if not opener.started and loop is not None:
                loop.call_soon(lambda: opener.open_behind(when_open))

        start_opening = start
    busy = BusyKeys(sys.stdin.fileno(), sys.stdout.fileno())
    try:
        return _prompts(opener, session, banner, start_opening, busy, folds)
    finally:
        busy.paste_mode_off()


def _prompts(
    opener: ChatOpener,
    session: PromptSession[str],
    banner: Any,
    start_opening: Callable[[], None] | None,
    busy: BusyKeys,
    folds: Folds,
) -> int:
    from seri.runtime.terminal.chat_info import banner_line
    from seri.runtime.terminal.chat_lines import line_outcome

    status = EXIT_OK
    while True:
        if opener.ready and opener.chat is not None:
            opener.chat.show_notes()
            banner.print_once(banner_line(opener.chat))
        try:
            line = session.prompt(_prompt_message(), pre_run=_after_drawing(start_opening))
        except KeyboardInterrupt:
            continue  # the line is cleared; Ctrl-D leaves
        except EOFError:
            _goodbye(opener)
            return status
        line = folds.unfold(line)
        if not line.strip():
            continue
        chat = opener.result()
        chat.view.read_line = lambda question: _read_line(session, busy, question)
        chat.view.stop_key = lambda: "Esc" if busy.escaped else "Ctrl-C"
        chat.view.screen.keys_paused = busy.paused  # a pager (/last, /diff) reads the keys
        chat.show_notes()
        banner.print_once(banner_line(chat))
        try:
            with busy:
                outcome = line_outcome(chat, line)
        except KeyboardInterrupt:
            chat.view.close()
            key = "Esc" if busy.escaped else "Ctrl-C"
            chat.view.notice(f"seri: cancelled ({key}); the session is as it was stored")
            continue
        finally:
            _type_ahead(session, busy.kept())
        if outcome == "exit":
            _goodbye(opener)
            return status
        if isinstance(outcome, int):
            status = outcome


def _goodbye(opener: ChatOpener) -> None:
    """Leaving: the way back to this session (as Claude Code prints it), if one was started."""
    chat = opener.chat if opener.ready else None
    if chat is not None and chat.session.session_id:
        opener.screen.say(
            f"seri: to go on with this session: seri chat --resume {chat.session.session_id}"
        )


def _abort(app: Any, error: BaseException) -> None:
    """Opening the session failed behind the prompt: end the prompt with that error."""
    loop = getattr(app, "loop", None)
    if app.is_running and loop is not None:
        loop.call_soon_threadsafe(lambda: app.exit(exception=error))


def _prompt_message() -> Any:
    from prompt_toolkit.formatted_text import FormattedText

    return FormattedText([("bold fg:ansicyan", PROMPT)])


class Folds:
    """The long pastes of this chat, shown folded at the prompt (see ``paste_fold``)."""

    def __init__(self) -> None:
        self.folds: tuple[PasteFold, ...] = ()

    def fold(self, text: str) -> str:
        """What the prompt shows for a paste: the paste, or its label."""
        from seri.pure.terminal.paste_fold import PasteFold, fold_label, needs_folding

        if not needs_folding(text):
            return text
        label = fold_label(text, len(self.folds) + 1)
        self.folds += (PasteFold(label, text),)
        return label

    def unfold(self, text: str) -> str:
        from seri.pure.terminal.paste_fold import unfold

        return unfold(text, self.folds)


def _after_drawing(start_opening: Callable[[], None] | None) -> Callable[[], None]:
    """What runs once the prompt is drawn: the cycle collector, off while the chat started
    (``seri.commands.chat``: ~100 collections among prompt_toolkit's classes found next to
    nothing), runs from here on, past what start-up made (frozen: later collections skip
    it); then the session opens behind the prompt."""

    def drawn() -> None:
        import gc

        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        if start_opening is not None:
            start_opening()

    return drawn


def _prompt_session(opener: ChatOpener, folds: Folds) -> PromptSession[str]:
    from prompt_toolkit import PromptSession

    from seri.runtime.terminal.prompt_completer import chat_completer

    # Not prompt_toolkit's multi-line mode: Enter must send even in a dumb terminal, where
    # only the bindings below (not our Enter) decide; a new line is always an explicit key.
    return PromptSession(
        multiline=False,
        key_bindings=_key_bindings(folds),
        history=_history(str(opener.profile.root), folds),
        completer=chat_completer(opener),
        complete_while_typing=True,
        # No rows kept empty under the prompt for the menu: it opens over the output when
        # it needs the room.
        reserve_space_for_menu=0,
        prompt_continuation=CONTINUATION,
        bottom_toolbar=lambda: _toolbar(opener),
        enable_history_search=False,
    )


def _toolbar(opener: ChatOpener) -> Any:
    from prompt_toolkit.formatted_text import FormattedText

    chat = opener.chat if opener.ready else None
    status = opener.settings.model
    if chat is not None:
        from seri.runtime.terminal.chat_info import status_line

        status = status_line(chat)
    from prompt_toolkit.application import get_app

    from seri.pure.terminal.chat_status import fit_toolbar

    width = get_app().output.get_size().columns
    return FormattedText([("", fit_toolbar(neutralise(status), KEYS_HINTS, width))])


def _key_bindings(folds: Folds) -> Any:
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        # As prompt_toolkit's own: a terminal's \r (and \r\n) line ends are new lines.
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        event.current_buffer.insert_text(folds.fold(text))

    @bindings.add("c-o")
    def _unfold(event: Any) -> None:
        buffer = event.current_buffer
        whole = folds.unfold(buffer.text)
        if whole != buffer.text:
            buffer.text = whole
            buffer.cursor_position = len(whole)

    @bindings.add("enter")
    def _send(event: Any) -> None:
        buffer = event.current_buffer
        before = buffer.document.text_before_cursor
        if before.endswith("\\") and buffer.document.is_cursor_at_the_end:
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        # Enter picks from the menu: the entry chosen, or the only one (when it adds something).
        state = buffer.complete_state
        if state is not None:
            chosen = state.current_completion
            if chosen is None and len(state.completions) == 1:
                chosen = state.completions[0]
            if chosen is not None and not before.endswith(chosen.text):
                buffer.apply_completion(chosen)
                return
        buffer.validate_and_handle()

    # Not Ctrl-J: a terminal still in cooked mode (keys typed while a task runs) turns Enter
    # into a line feed, which must send like Enter does, as prompt_toolkit has it.
    @bindings.add("escape", "enter")
    def _new_line(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


def _history(root: str, folds: Folds) -> FileHistory:
    from prompt_toolkit.history import FileHistory

    class History(FileHistory):
        """prompt_toolkit's history file, private to the user, that also reads the plain
        one-line-per-entry file earlier seri versions wrote through readline."""

        def load_history_strings(self) -> Iterable[str]:
            return _history_entries(os.fsdecode(self.filename))

        def store_string(self, string: str) -> None:
            # The whole paste, not its label: a label means nothing in the next chat.
            super().store_string(folds.unfold(string))
            with contextlib.suppress(OSError):
                os.chmod(self.filename, 0o600)

    return History(os.path.join(root, HISTORY_FILE))


def _history_entries(path: str) -> list[str]:
    """Newest first, as prompt_toolkit wants them: ``+``-lines of one entry, ``#`` between
    entries; any other line is one entry of the older plain format."""
    entries: list[str] = []
    lines: list[str] = []
    try:
        with open(path, "rb") as handle:
            raw = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    for line in raw.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
            continue
        if lines:
            entries.append("\n".join(lines))
            lines = []
        if line and not line.startswith("#"):
            entries.append(line)
    if lines:
        entries.append("\n".join(lines))
    return entries[::-1]


def _type_ahead(session: PromptSession[str], keys: bytes) -> None:
    """Keys pressed while the task ran go to the next prompt, as if typed there."""
    if not keys:
        return
    from prompt_toolkit.input.typeahead import store_typeahead
    from prompt_toolkit.input.vt100_parser import Vt100Parser
    from prompt_toolkit.key_binding import KeyPress

    presses: list[KeyPress] = []
    parser = Vt100Parser(presses.append)
    parser.feed(keys.decode("utf-8", "replace"))
    parser.flush()
    store_typeahead(session.input, presses)


def _read_line(session: PromptSession[str], busy: BusyKeys, question: str) -> str:
    """One line from the person, for approvals: Ctrl-D counts as no, Ctrl-C cancels the task.

    Keys typed ahead for the next prompt are not an answer: they wait while it is asked.
    """
    from prompt_toolkit import prompt
    from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead

    with busy.paused():
        waiting = get_typeahead(session.input)
        try:
            return prompt(question)
        except EOFError:
            return "n"
        finally:
            store_typeahead(session.input, waiting)
