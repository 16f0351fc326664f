"""The write_file and edit tools (``seri.io.tools.tools`` dispatches to them).

Both refuse what seri never writes (outside the project, a protected path, a FIFO or a
device, more than FILE_CAP_BYTES) before anything is read or written; then they read and
write the disk, or an editor's buffers when the context carries a file port (an ACP
client's fs methods). A port that fails makes the tool fail in its words: nothing falls
back to the disk, which would overwrite what the editor holds.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seri.io.tools.file_port import FilePortError
from seri.io.tools.files import (
    NotAFileError,
    atomic_write,
    open_confined,
    refuse_non_regular,
    refuse_protected,
    relative_name,
    resolve_in_project,
)
from seri.io.tools.tool_context import ToolContext
from seri.pure.tools.tool_outcome import ToolOutcome, failure, outcome
from seri.pure.tools.tool_specs import FILE_CAP_BYTES


def write_file(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    path = resolve_in_project(root, str(args["path"]))
    rel = relative_name(root, path)
    refuse_protected(root, path, ctx.protected, raw=str(args["path"]))
    try:
        data = str(args["content"]).encode("utf-8")
    except UnicodeEncodeError:
        return failure(
            "content is not valid Unicode (it holds a lone surrogate)",
            outcome="bad_content",
            path=rel,
        )
    if path.is_dir():
        return failure(f"{rel} is a directory", outcome="is_directory", path=rel)
    refused = _not_regular(path, rel)
    if refused is not None:
        return refused
    if len(data) > FILE_CAP_BYTES:
        return _too_large(rel, len(data))
    created = _store(root, path, rel, data, ctx)
    if isinstance(created, ToolOutcome):
        return created
    verb = "Created" if created else "Overwrote"
    return outcome(
        f"{verb} {rel} ({len(data)} bytes).",
        outcome="applied",
        path=rel,
        bytes=len(data),
        created=created,
    )


def edit(root: Path, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    from seri.pure.tools.edit_match import edit_failure, plan_edit

    path = resolve_in_project(root, str(args["path"]))
    rel = relative_name(root, path)
    refuse_protected(root, path, ctx.protected, raw=str(args["path"]))
    refused = _not_regular(path, rel)
    if refused is not None:
        return refused
    old, new = str(args["old_string"]), str(args["new_string"])
    replace_all = bool(args.get("replace_all", False))
    original = _text_for_edit(root, path, rel, ctx)
    if isinstance(original, ToolOutcome):
        return original
    plan = plan_edit(original, old, new, replace_all=replace_all, cap=FILE_CAP_BYTES)
    why = edit_failure(plan, rel)
    if why is not None:
        counted = {"occurrences": plan.occurrences} if plan.outcome == "ambiguous" else {}
        return failure(why, outcome=plan.outcome, path=rel, replacements=0, **counted)
    if plan.outcome == "too_large":
        return _too_large(rel, plan.size, edit=True)
    try:
        data = plan.updated.encode("utf-8")
    except UnicodeEncodeError:
        return failure(
            "new_string is not valid Unicode (it holds a lone surrogate)",
            outcome="bad_content",
            path=rel,
        )
    if len(data) > FILE_CAP_BYTES:
        return _too_large(rel, len(data), edit=True)
    stored = _store(root, path, rel, data, ctx)
    if isinstance(stored, ToolOutcome):
        return stored
    replaced = plan.replacements
    plural = "s" if replaced != 1 else ""
    return outcome(
        f"Edited {rel}: {replaced} replacement{plural}.",
        outcome="applied",
        path=rel,
        replacements=replaced,
        bytes=len(data),
    )


def _not_regular(path: Path, rel: str) -> ToolOutcome | None:
    """A FIFO, device or socket is refused before anything opens it."""
    try:
        refuse_non_regular(path)
    except NotAFileError as exc:
        return failure(
            f"{rel} is {exc.strerror}; seri reads and writes only regular files",
            outcome="not_regular",
            path=rel,
        )
    return None


def _too_large(rel: str, size: int, *, edit: bool = False) -> ToolOutcome:
    what = "the edited file" if edit else "the content"
    return failure(
        f"{what} would be {size} bytes, over the {FILE_CAP_BYTES // (1024 * 1024)} MiB seri "
        f"writes (and checkpoints for /rewind); {rel} was left as it is",
        outcome="too_large",
        path=rel,
    )


def _store(root: Path, path: Path, rel: str, data: bytes, ctx: ToolContext) -> bool | ToolOutcome:
    """Write ``data`` to the disk, or to the editor when it takes writes: whether the file
    is new, or why it was not written."""
    port = ctx.writes_through_port()
    if port is None:
        return atomic_write(root, path, data)
    created = not path.exists() and not _in_editor(path, ctx)
    try:
        port.write_text(path, data.decode("utf-8"))
    except FilePortError as exc:
        return failure(f"the editor did not write {rel}: {exc}", outcome="error", path=rel)
    return created


def _in_editor(path: Path, ctx: ToolContext) -> bool:
    """Whether the editor holds ``path`` (a buffer not saved to the disk): writing it is
    not creating it. Asked once per call (the checkpoint read it already: ``ReadOnce``)."""
    port = ctx.reads_through_port()
    if port is None:
        return False
    try:
        port.read_text(path)
    except FilePortError:
        return False
    return True


def _text_for_edit(root: Path, path: Path, rel: str, ctx: ToolContext) -> str | ToolOutcome:
    """The text an edit starts from: the editor's buffer when it offers reads, else the disk."""
    port = ctx.reads_through_port()
    if port is None:
        return _read_text_for_edit(root, path, rel)
    try:
        text = port.read_text(path)
    except FilePortError as exc:
        return failure(f"the editor did not read {rel}: {exc}", outcome="error", path=rel)
    if len(text.encode("utf-8", "surrogatepass")) > FILE_CAP_BYTES:
        return failure(f"{rel} is too large to edit", outcome="too_large", path=rel)
    return text


def _read_text_for_edit(root: Path, path: Path, rel: str) -> str | ToolOutcome:
    try:
        fd = open_confined(root, path, os.O_RDONLY)
    except FileNotFoundError:
        return failure(
            f"{rel} does not exist; use write_file to create it",
            outcome="not_found",
            path=rel,
            replacements=0,
        )
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return failure(f"{rel} is not a regular file", outcome="not_regular", path=rel)
    with os.fdopen(fd, "rb") as f:
        if st.st_size > FILE_CAP_BYTES:
            return failure(
                f"{rel} is too large to edit ({st.st_size} bytes)", outcome="too_large", path=rel
            )
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return failure(
            f"{rel} is not UTF-8 text; edit works on text files only", outcome="not_text", path=rel
        )
