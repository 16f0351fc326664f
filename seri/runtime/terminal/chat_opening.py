"""Opening a new chat behind the prompt, so the prompt is on screen at once.

The agent's machinery (the loop, the store's codecs, the tools, the provider client) takes
longer to load than a person takes to notice a missing prompt. So for a new session the
prompt comes first, and a thread opens the session and asks the provider for the model's
window meanwhile; the banner line, which names that window, is printed above the prompt
when it is known. A first task typed before then simply waits for it. A session being
resumed is opened first (its last exchange is shown before the prompt).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seri.io.terminal.terminal import Screen
from seri.pure.inputs.settings import Settings
from seri.runtime.session.profile import Profile
from seri.runtime.terminal.chat_options import ChatOptions

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession

# How long the opener waits for GET /models before the banner goes without the window.
LOOKUP_WAIT = 10.0
# How often that wait looks whether the window has come.
LEAVE_POLL = 0.05


class ChatOpener:
    def __init__(
        self,
        profile: Profile,
        project: str,
        options: ChatOptions,
        settings: Settings,
        screen: Screen,
    ) -> None:
        self.profile = profile
        self.project = project
        self.options = options
        self.settings = settings
        self.screen = screen
        self.chat: ChatSession | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._done = threading.Event()  # set once opened or failed
        self._leaving = threading.Event()  # the person left: the window is not waited for

    def open_now(self) -> ChatSession:
        """Open here and now (a resumed session: its history is shown before the prompt)."""
        self._open(wait_for_window=False)
        return self.result()

    def open_behind(self, when_ready: Callable[[], None]) -> None:
        """Open in a thread; ``when_ready`` is called from it, error or not."""

        def run() -> None:
            self._open(wait_for_window=True)
            when_ready()  # after _open set _done: ready and failed already tell

        self._thread = threading.Thread(target=run, name="seri-open", daemon=True)
        self._thread.start()

    def _open(self, *, wait_for_window: bool) -> None:
        try:
            from seri.runtime.terminal.chat_session import ChatSession

            # Behind the prompt, its warnings wait to be shown above it (show_notes).
            chat = ChatSession.open(
                self.profile,
                self.project,
                self.options,
                settings=self.settings,
                screen=self.screen,
                show_notes=not wait_for_window,
            )
            chat.session.start_window_lookup()
            if wait_for_window:
                self._wait_for_window(chat)
            self.chat = chat
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread by result()
            self._error = exc
        finally:
            self._done.set()

    def _wait_for_window(self, chat: ChatSession) -> None:
        """Until the window is known, LOOKUP_WAIT has passed, or the person has left (noticed
        at once; the window within LEAVE_POLL)."""
        deadline = time.monotonic() + LOOKUP_WAIT
        while chat.session.known_window() is None:
            left = deadline - time.monotonic()
            if left <= 0 or self._leaving.wait(min(LEAVE_POLL, left)):
                return

    def leave(self, timeout: float) -> None:
        """The person is leaving (Ctrl-D, /exit): an opening under way stops waiting for the
        window and is let finish, for at most ``timeout`` s, so that the session it opened is
        closed like any other (``ChatSession.close``) and no thread of it is still importing
        while the interpreter shuts down, which can crash it (a lock freed under the import:
        SIGSEGV, as ``-p`` runs did)."""
        self._leaving.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def started(self) -> bool:
        return self._thread is not None or self._done.is_set()

    @property
    def ready(self) -> bool:
        """Opened (or failed); False while the thread works, and before it started."""
        return self._done.is_set()

    @property
    def failed(self) -> BaseException | None:
        return self._error if self.ready else None

    def result(self) -> ChatSession:
        """The open session (waiting for it, or opening it now if no thread did); its
        opening's error is raised here."""
        if self._thread is not None:
            self._thread.join()
        elif not self.started:
            self._open(wait_for_window=False)
        if self._error is not None:
            raise self._error
        assert self.chat is not None
        return self.chat


class LateLine:
    """A line printed once: at once if it can be, else above the running prompt."""

    def __init__(self, screen: Screen, style: str = "bold") -> None:
        self.screen = screen
        self.style = style
        self._lock = threading.Lock()
        self._printed = False

    def print_once(self, text: str) -> None:
        with self._lock:
            if self._printed:
                return
            self._printed = True
        self.screen.say(text, self.style)

    def above_prompt(self, app: Any, text: str, before: Callable[[], None] = lambda: None) -> None:
        """From another thread: print above the prompt ``app`` is showing, if it is;
        ``before`` prints what must come first."""
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.application.current import set_app

        def lines() -> None:
            before()
            self.print_once(text)

        def show() -> None:
            # Called in the loop's thread, but not in the app's context: without set_app,
            # run_in_terminal would not know the prompt to lift the line above.
            if not self._printed:
                with set_app(app):
                    run_in_terminal(lines)

        loop = getattr(app, "loop", None)
        if app.is_running and loop is not None:
            loop.call_soon_threadsafe(show)
