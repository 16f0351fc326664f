"""The context window a session's requests are sized for, and where it came from.

config.json's window when it sets one; else the provider's, asked in the background as
the session opens (``GET /models`` can take a second; the banner must not wait for it);
else the default. The event that records which one is used is made once, when it is known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from seri.pure.inputs.settings import DEFAULT_CONTEXT_WINDOW, Settings
from seri.pure.trajectories.events import ContextWindow

if TYPE_CHECKING:
    from seri.runtime.provider.window_lookup import WindowLookup

# How long a task waits for the background lookup before it asks the provider itself.
TASK_WAIT = 30.0


class ModelWindow:
    def __init__(self, settings: Settings, api_key: str) -> None:
        self._settings = settings
        self._api_key = api_key
        self.tokens: int | None = settings.context_window
        self._lookup: WindowLookup | None = None
        # Where the window in use came from ("server", "default") until it is recorded.
        self._source = ""

    def start_lookup(self) -> None:
        """Ask the provider for the model's window in the background (for the banner)."""
        if self.tokens is None and self._lookup is None:
            from seri.runtime.provider.window_lookup import (
                WindowLookup,  # none with a window in config
            )

            self._lookup = WindowLookup(self._settings, self._api_key)

    def known(self, wait: float = 0.0) -> int | None:
        """The window if known by now (waiting up to ``wait`` s for the lookup)."""
        lookup = self._lookup
        if self.tokens is None and lookup is not None and lookup.done(wait):
            self.tokens = lookup.window or DEFAULT_CONTEXT_WINDOW
            self._source = "server" if lookup.window else "default"
            self._lookup = None
        return self.tokens

    def in_use(self, learned: int, wait: float = 0.0) -> int | None:
        """The known window, or the smaller one a provider's overflow answer stated
        (``learned``, 0 when none did): what the next request is sized for."""
        known = self.known(wait)
        if known is not None and 0 < learned < known:
            return learned
        return known

    def settle(self, ask_provider: Callable[[], int | None]) -> int:
        """The window for a task: known by now, or asked of the provider now."""
        if self.known(wait=TASK_WAIT) is None:
            reported = ask_provider()
            self.tokens = reported or DEFAULT_CONTEXT_WINDOW
            self._source = "server" if reported else "default"
        assert self.tokens is not None
        return self.tokens

    def unrecorded(self) -> ContextWindow | None:
        """The event naming the window in use, once (the header has config.json's: null)."""
        if not self._source or self.tokens is None:
            return None
        event = ContextWindow(tokens=self.tokens, from_=self._source)
        self._source = ""
        return event
