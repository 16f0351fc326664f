"""The model's context window, asked of the provider in the background at start.

The banner wants the window, and ``GET /models`` can take a second on a slow link; the
prompt must not wait for it. A thread asks; whoever needs the number waits for it then.
"""

from __future__ import annotations

import threading

from seri.pure.inputs.settings import Settings


class WindowLookup:
    def __init__(self, settings: Settings, api_key: str) -> None:
        self.window: int | None = None
        self._settings = settings
        self._api_key = api_key
        self._thread = threading.Thread(target=self._run, name="seri-window", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            from seri.io.provider.provider import ProviderClient

            with ProviderClient(self._settings.base_url, self._api_key) as client:
                self.window = client.context_window(self._settings.model)
        except Exception:  # noqa: BLE001 - a failed lookup means the default window
            self.window = None

    def done(self, wait: float = 0.0) -> bool:
        self._thread.join(wait)
        return not self._thread.is_alive()
