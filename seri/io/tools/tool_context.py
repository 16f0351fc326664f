"""Where and under which limits the tools run (``seri.io.tools.tools`` runs them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from seri.io.permissions.sandbox import Sandbox
    from seri.io.tools.file_port import FilePort


@attrs.frozen
class ToolContext:
    """Where and under which limits tools run.

    ``protected`` are absolute paths never written (see ``files.default_protected``);
    ``spill_dir``, when set, receives the full output of a bash command too large
    to show (0600 files), passed through ``redact`` (seri's secret redaction) first.
    """

    project: Path
    protected: tuple[Path, ...] = ()
    spill_dir: Path | None = None
    redact: Callable[[str], str] | None = None
    # The window's cap on one result, in characters: read_file and bash keep within it.
    max_output_chars: int | None = None

    # A project-relative path whose reading the permission rules deny (grep skips it).
    read_denied: Callable[[str], bool] | None = None
    # The OS sandbox bash runs in, and the environment it gets (no API key, no secrets).
    sandbox: Sandbox | None = None
    env: Mapping[str, str] | None = None
    # Told each piece of a command's output as it comes (the chat shows the last lines live).
    on_output: Callable[[bytes], None] | None = None
    # An editor's buffers the file tools read and write instead of the disk (an ACP client's
    # fs methods), once seri's own rules have let the call through (None: the disk).
    files: FilePort | None = None

    def reads_through_port(self) -> FilePort | None:
        return self.files if self.files is not None and self.files.reads else None

    def writes_through_port(self) -> FilePort | None:
        return self.files if self.files is not None and self.files.writes else None

    def output_bytes(self, default: int) -> int:
        """A tool's output cap in bytes: its own, or less when the window's cap is lower."""
        if self.max_output_chars is None:
            return default
        # Room for the tool's own notes after the output.
        return max(1_000, min(default, self.max_output_chars - 300))
