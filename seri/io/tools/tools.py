"""Running the model's tool calls in the project directory.

``run_tool`` takes arguments already checked by ``tool_arguments.parse_arguments``
and a decision already made by ``permissions.decide``; it never asks anyone.
Every failure the model can do something about comes back as an error outcome
with a plain sentence, never as an exception. Only KeyboardInterrupt escapes
(after the bash tool has killed its process group).

read_file shows lines numbered like ``cat -n`` (``     1<TAB>text``): the
model needs line numbers to talk about code and to page with ``offset``, and
the edit tool's description tells it the numbers are not part of the file.

``task`` and ``remember`` are not run here: a subagent and the memory files
belong to other parts of seri.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from seri.io.compaction.spill import spilled_file
from seri.io.tools.file_port import FilePort, FilePortError
from seri.io.tools.files import (
    PathRefusedError,
    iter_lines,
    iter_pieces,
    open_confined,
    project_root,
    relative_name,
    resolve_in_project,
    snapshot_file,
)
from seri.io.tools.tool_context import ToolContext
from seri.io.tools.write_tools import edit, write_file
from seri.pure.compaction.result_cap import PIECE_CHARS
from seri.pure.tools.output_capture import HEAD_BYTES, TAIL_BYTES
from seri.pure.tools.tool_outcome import ToolOutcome, failure, outcome
from seri.pure.tools.tool_specs import BASH_DEFAULT_TIMEOUT, BASH_MAX_TIMEOUT, spec_of

__all__ = ["ToolContext", "resolve_subject", "run_tool", "snapshot_file", "spill_file"]

READ_DEFAULT_LIMIT = 2_000
READ_MAX_BYTES = 50_000
# The longest line read_file shows (a spill file's longer lines are shown in pieces this long).
READ_MAX_LINE_CHARS = PIECE_CHARS
_SNIFF_BYTES = 8_192


def spill_file(raw: str, spill_dir: Path | None) -> Path | None:
    """The spill file ``raw`` names, if it names one: read_file may page through those,
    outside the project (a marker in a cut result points the model at them)."""
    if spill_dir is None or not raw.startswith(("/", "~")):
        return None
    return spilled_file(raw, spill_dir)


def run_tool(name: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    """Run one validated tool call and say what happened."""
    runner = _RUNNERS.get(name)
    if runner is None:
        return failure(f"{name} is not a tool this part of seri runs", outcome="unsupported")
    root = project_root(ctx.project)
    try:
        return runner(root, args, ctx)
    except PathRefusedError as exc:
        return failure(f"refused: {exc}", outcome="refused", resolved=exc.resolved)
    except OSError as exc:
        return failure(f"{name} failed: {_os_error_text(exc)}", outcome="error")


def resolve_subject(
    name: str, args: Mapping[str, Any], ctx: ToolContext
) -> tuple[str | None, str | None]:
    """The (project-relative, absolute) real path a file tool would touch.

    This is what ``permissions.decide`` should match rules against, so that a
    symlink cannot lead past a deny rule. (None, None) for tools without a
    path, or when the path is refused (``run_tool`` will then refuse it too).
    """
    spec = spec_of(name)
    if spec is None or not spec.path_args:
        return None, None
    raw = args.get(spec.path_args[0], ".")
    if not isinstance(raw, str):
        return None, None
    root = project_root(ctx.project)
    try:
        path = resolve_in_project(root, raw)
    except PathRefusedError:
        return None, None
    return relative_name(root, path), str(path)


# -- read_file ------------------------------------------------------------


def _read_file(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    raw = str(args["path"])
    offset = int(args.get("offset") or 1)
    limit = int(args.get("limit") or READ_DEFAULT_LIMIT)
    spilled = spill_file(raw, ctx.spill_dir)
    port = ctx.reads_through_port()
    if port is not None and spilled is None:
        return _read_from_port(port, root, raw, offset, limit, ctx.output_bytes(READ_MAX_BYTES))
    try:
        if spilled is not None:
            rel = str(spilled)
            fd = os.open(spilled, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        else:
            path = resolve_in_project(root, raw)
            rel = relative_name(root, path)
            fd = open_confined(root, path, os.O_RDONLY)
    except FileNotFoundError:
        return failure(f"{rel} does not exist", outcome="not_found", path=rel)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            return failure(
                f"{rel} is a directory; use glob to list it", outcome="is_directory", path=rel
            )
        return failure(f"{rel} is not a regular file", outcome="not_regular", path=rel)
    with os.fdopen(fd, "rb") as f:
        if b"\0" in f.read(_SNIFF_BYTES):
            return outcome(
                f"{rel} is a binary file ({st.st_size} bytes); not shown.",
                path=rel,
                bytes=st.st_size,
                binary=True,
            )
        f.seek(0)
        max_bytes = ctx.output_bytes(READ_MAX_BYTES)
        return _numbered_lines(
            f, rel, st.st_size, offset, limit, max_bytes, in_pieces=spilled is not None
        )


def _read_from_port(
    port: FilePort, root: Path, raw: str, offset: int, limit: int, max_bytes: int
) -> ToolOutcome:
    """read_file through the editor: its buffer's text, numbered as a file's would be."""
    path = resolve_in_project(root, raw)
    rel = relative_name(root, path)
    if path.is_dir():
        return failure(
            f"{rel} is a directory; use glob to list it", outcome="is_directory", path=rel
        )
    try:
        text = port.read_text(path)
    except FilePortError as exc:
        return failure(f"the editor did not read {rel}: {exc}", outcome="error", path=rel)
    data = text.encode("utf-8", "replace")
    if "\0" in text[:_SNIFF_BYTES]:
        return outcome(
            f"{rel} is a binary file ({len(data)} bytes); not shown.",
            path=rel,
            bytes=len(data),
            binary=True,
        )
    return _numbered_lines(io.BytesIO(data), rel, len(data), offset, limit, max_bytes)


def _numbered_lines(
    f: BinaryIO,
    rel: str,
    size: int,
    offset: int,
    limit: int,
    max_bytes: int = READ_MAX_BYTES,
    *,
    in_pieces: bool = False,
) -> ToolOutcome:
    """``limit`` lines from line ``offset`` on, numbered. ``in_pieces`` (a spill file): a line
    longer than READ_MAX_LINE_CHARS is numbered as its pieces, none is cut."""
    shown: list[str] = []
    used = 0
    total = 0
    last = offset - 1
    cut_by_size = False
    invalid = False
    lines: Iterator[tuple[bytes, int] | str] = (
        iter_pieces(f, PIECE_CHARS) if in_pieces else iter_lines(f, READ_MAX_LINE_CHARS * 4)
    )
    for total, line_read in enumerate(lines, start=1):
        if total < offset or cut_by_size or len(shown) >= limit:
            continue
        if isinstance(line_read, str):
            text, bad = line_read.rstrip("\r"), False
        else:
            text, bad = _line_text(*line_read)
        invalid = invalid or bad
        line = f"{total:6}\t{text}"
        if used + len(line.encode()) + 1 > max_bytes and shown:
            cut_by_size = True
            continue
        shown.append(line)
        used += len(line.encode()) + 1
        last = total
    if total == 0:
        return outcome(
            f"{rel} is empty.",
            path=rel,
            bytes=size,
            total_lines=0,
            first_line=0,
            last_line=0,
            truncated=False,
        )
    if offset > total:
        return failure(
            f"offset {offset} is past the end of {rel}, which has {total} lines",
            outcome="past_end",
            path=rel,
            total_lines=total,
        )
    notes: list[str] = []
    if invalid:
        notes.append("[not valid UTF-8; undecodable bytes are shown as �]")
    more = last < total
    if more:
        why = f"the {max_bytes:,}-byte output cap" if cut_by_size else "the line limit"
        notes.append(
            f"[… showing lines {offset}–{last} of {total} ({why}); "
            f"continue with offset={last + 1} …]"
        )
    return outcome(
        "\n".join([*shown, *notes]),
        path=rel,
        bytes=size,
        total_lines=total,
        first_line=offset,
        last_line=last,
        truncated=more,
        invalid_utf8=invalid,
    )


def _line_text(raw: bytes, length: int) -> tuple[str, bool]:
    """One line for display: decoded, end-of-line removed, over-long lines cut."""
    try:
        text, bad = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, bad = raw.decode("utf-8", "replace"), True
    text = text.rstrip("\r\n")
    if len(text) > READ_MAX_LINE_CHARS or length > len(raw):
        text = f"{text[:READ_MAX_LINE_CHARS]}… [line cut: {length} bytes in all]"
    return text, bad


# -- glob, grep, bash -----------------------------------------------------


def _glob(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    from seri.io.tools.search import glob_files

    return glob_files(root, str(args["pattern"]))


def _grep(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    from seri.io.tools.search import grep_files

    return grep_files(
        root, str(args["pattern"]), str(args.get("path") or "."), hidden=ctx.read_denied
    )


def _bash(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    from seri.io.tools.shell import run_bash

    timeout = float(args.get("timeout") or BASH_DEFAULT_TIMEOUT)
    timeout = min(max(timeout, 1.0), float(BASH_MAX_TIMEOUT))
    return run_bash(
        str(args["command"]),
        cwd=root,
        timeout=timeout,
        spill_dir=ctx.spill_dir,
        redact=ctx.redact,
        max_bytes=ctx.output_bytes(HEAD_BYTES + TAIL_BYTES),
        sandbox=ctx.sandbox,
        env=ctx.env,
        on_output=ctx.on_output,
    )


def _os_error_text(exc: OSError) -> str:
    where = f" ({exc.filename})" if isinstance(exc.filename, str) else ""
    return f"{exc.strerror or exc}{where}"


_RUNNERS: dict[str, Callable[[Path, Mapping[str, Any], ToolContext], ToolOutcome]] = {
    "read_file": _read_file,
    "write_file": write_file,
    "edit": edit,
    "glob": _glob,
    "grep": _grep,
    "bash": _bash,
}
