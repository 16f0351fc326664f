"""``seri chat`` on a terminal (or a pipe): the view, and the session controller it drives.

What a session is and does lives in ``seri.runtime.session`` (``SessionController``); this
is the terminal's seat at it: the ``ChatView`` that shows a task and asks the person, the
opening's notes on stderr, and a task's end said as a person (or a script) needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import attrs

from seri.io.terminal.terminal import Screen
from seri.pure.agent.task_records import TaskEnd
from seri.pure.inputs.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from seri.pure.inputs.settings import Settings
from seri.pure.session.records import MessageKind
from seri.pure.terminal.terminal_text import neutralise
from seri.runtime.agent.ports import EventObserver
from seri.runtime.agent.run_output import unfinished_line
from seri.runtime.extensions.skill_catalogue import SkillSet
from seri.runtime.session.controller import SessionController
from seri.runtime.session.profile import Profile
from seri.runtime.terminal.chat_options import ChatOptions
from seri.runtime.terminal.chat_view import ChatView


class ChatSession:
    """A person's (or a script's) seat at one session: a new session starts lazily."""

    def __init__(self, profile: Profile, session: SessionController, view: ChatView) -> None:
        self.profile = profile
        self.session = session
        self.view = view

    @property
    def interactive(self) -> bool:
        return self.session.interactive

    @property
    def project(self) -> str:
        return self.session.project

    @property
    def skills(self) -> SkillSet:
        """The session's Agent Skills (``/name`` starts one)."""
        return self.session.skills

    @classmethod
    def open(
        cls,
        profile: Profile,
        project: str,
        options: ChatOptions,
        *,
        settings: Settings | None = None,
        screen: Screen | None = None,
        show_notes: bool = True,
        observers: Sequence[EventObserver] = (),
    ) -> ChatSession:
        """``settings`` when the caller has read them already (their warnings shown),
        ``screen`` when it has started writing to the terminal; ``show_notes=False`` when
        the caller shows the opening's warnings itself (above a prompt already drawn);
        ``observers`` watch each run's events live (see ``EventObserver``)."""
        if settings is None:
            from seri.runtime.agent.running import load_settings_warned

            settings = load_settings_warned(profile.root)
            if options.model:
                settings = attrs.evolve(settings, model=options.model)
        interactive = sys.stdin.isatty() and options.prompt is None
        view = ChatView(screen or Screen(), interactive=interactive)
        session = SessionController.open(
            profile,
            project,
            options,
            view,
            settings=settings,
            interactive=interactive,
            observers=observers,
        )
        view.redact = session.redact
        view.read_file = session.file_text
        view.had_recap = session.conversation.recap is not None
        chat = cls(profile, session, view)
        if options.prompt is not None:
            # A -p run asks for the window (when config.json sets none) while it opens the
            # session, not after: GET /models goes out beside the store's first writes.
            session.start_window_lookup()
        if show_notes:
            chat.show_notes()
        if session.session_id and not interactive and not options.fork:
            print(f"seri: resumed session {session.session_id}", file=sys.stderr)
        return chat

    def show_notes(self) -> None:
        """The warnings of opening, once."""
        for note in self.session.take_notes():
            print(neutralise(note), file=sys.stderr)

    def run_task(self, text: str, kind: MessageKind = "") -> TaskEnd:
        try:
            return self.session.run_task(text, kind=kind)
        finally:
            self.view.close()

    def report(self, end: TaskEnd, *, print_answer: bool) -> int:
        """A task's end for the person (the answer, or why it did not finish): its status."""
        streamed = self.view.answer_was_streamed()
        if end.status == "done":
            if print_answer or (self.interactive and not streamed and end.answer):
                # Redacted as the store has it (the key the model quoted is [REDACTED]).
                self.view.show_answer(self.session.redact(end.answer))
            return EXIT_OK
        if end.by_user and self.interactive:
            key = self.view.stop_key()
            self.view.notice(f"seri: cancelled ({key}); what was done so far is kept")
        else:
            message = unfinished_line(end, self.session.redact)
            if self.interactive:
                self.view.notice(message)
            else:
                print(message, file=sys.stderr)
            if end.status == "refused":
                return EXIT_USAGE
        from seri.pure.agent.goals import exit_status_of

        return EXIT_INTERRUPTED if end.by_user else exit_status_of(end.status)

    def close(self) -> None:
        self.session.close()
