"""Tab at the chat's prompt: slash commands with what they do, the server's models after
``/model ``, project files after ``@`` (prompt_toolkit's menu, loaded with the prompt)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document

    from seri.runtime.terminal.chat_opening import ChatOpener


def chat_completer(opener: ChatOpener) -> Completer:
    from prompt_toolkit.completion import Completer, Completion

    from seri.runtime.terminal.slash import command_menu

    class ChatCompleter(Completer):
        """A menu as typed: a slash command with what it does; after ``/model ``, the
        models the server offers (once /model has asked for them); ``@`` a project file."""

        def get_completions(
            self, document: Document, complete_event: CompleteEvent
        ) -> Iterable[Completion]:
            text = document.text_before_cursor
            if text.startswith("/") and " " not in text and "\n" not in text:
                for name, form, what in command_menu():
                    if name.startswith(text):
                        yield Completion(name, -len(text), display=form, display_meta=what)
                return
            if text.startswith("/model ") and "\n" not in text:
                chat = opener.chat if opener.ready else None
                typed = text.removeprefix("/model ").strip()
                for model in chat.session.known_models if chat is not None else ():
                    if typed in model:
                        yield Completion(model, -len(typed))
                return
            word = text.rsplit(None, 1)[-1] if text.strip() else ""
            if word.startswith("@") and not text.endswith((" ", "\n")):
                for path, is_dir in _project_paths(opener.project, word[1:]):
                    shown = path + ("/" if is_dir else "")
                    yield Completion("@" + shown, -len(word), display=shown)

    return ChatCompleter()


def _project_paths(project: str, typed: str) -> list[tuple[str, bool]]:
    """Entries of the project's directory that ``typed`` is in, starting with its last part
    (dot-files only when asked for), directories first; at most 50."""
    from seri.io.tools.files import is_within

    folder, _, start = typed.rpartition("/")
    where = os.path.join(project, folder)
    # By path parts, not by text: /srv/proj-other does not start inside /srv/proj.
    if not is_within(os.path.realpath(project), os.path.realpath(where)):
        return []
    try:
        with os.scandir(where) as entries:
            found = [
                (os.path.join(folder, e.name) if folder else e.name, e.is_dir())
                for e in entries
                if e.name.startswith(start)
                and (start.startswith(".") or not e.name.startswith("."))
            ]
    except OSError:
        return []
    return sorted(found, key=lambda item: (not item[1], item[0]))[:50]
