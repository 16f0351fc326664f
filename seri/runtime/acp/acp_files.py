"""The file port over an ACP client: read_file, write_file and edit go through the
client's ``fs/read_text_file`` and ``fs/write_text_file`` when its ``initialize`` offers
them, so the model reads the editor's unsaved buffer and an edit lands in the editor.

The tools call this only after seri's rules let the call through (``seri.io.tools.write_tools``).
A client that answers with an error, goes away or does not answer in time makes the tool
fail with that said: nothing falls back to the disk behind the editor's back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from seri.io.tools.file_port import AnsweredWithError, FilePortError
from seri.io.tools.shown_file import current_text
from seri.runtime.acp.acp_connection import Connection

# How long a file read or write may take the client (an editor answers from memory).
FS_TIMEOUT = 30.0


class ClientFiles:
    def __init__(
        self,
        conn: Connection,
        session_id: str,
        *,
        reads: bool,
        writes: bool,
        timeout: float = FS_TIMEOUT,
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.reads = reads
        self.writes = writes
        self.timeout = timeout

    def read_text(self, path: Path) -> str:
        result = self._ask("fs/read_text_file", {"path": str(path)})
        content = result.get("content")
        if not isinstance(content, str):
            raise FilePortError("its answer to fs/read_text_file has no content")
        return content

    def write_text(self, path: Path, text: str) -> None:
        self._ask("fs/write_text_file", {"path": str(path), "content": text})

    def shown_text(self, project: str) -> Callable[[str], str | None]:
        """A project file's text as the editor holds it (to show what a write changes)."""
        return lambda raw: current_text(Path(project), raw, self)

    def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.conn.ask(method, {"sessionId": self.session_id, **params}, self.timeout)
        if reply is None:
            if self.conn.input_closed or self.conn.gone:
                raise FilePortError(f"the editor went away before answering {method}")
            raise FilePortError(f"the editor did not answer {method} within {self.timeout:g} s")
        if reply.result is None:
            raise AnsweredWithError(f"the editor answered {method} with an error: {reply.error}")
        return reply.result
