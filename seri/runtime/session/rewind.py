"""Rewinding a session: its turns since the last compaction, and putting its conversation
and files back to before one of them (``seri rewind`` and ``/rewind``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.session import conversations, session_table
from seri.io.session.store import Store
from seri.io.tools import checkpoints
from seri.io.tools.files import atomic_write, directory_identity, project_root, remove_within
from seri.pure.inputs.errors import SeriError
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.tools.tool_specs import CHECKPOINTED
from seri.runtime.agent.running import whole_number

if TYPE_CHECKING:
    from seri.io.tools.file_port import FilePort

BASH_NOTE = "Changes made by bash are not tracked; only write_file and edit are put back."
HISTORY_GONE_NOTE = (
    "The file history of this session is gone (only the 20 most recently touched sessions "
    "of a project keep it); a rewind can restore its conversation only."
)


@attrs.frozen
class Turn:
    n: int
    seq: int
    text: str
    files: tuple[str, ...]


@attrs.frozen
class RewindPlan:
    target: Turn
    restore: tuple[checkpoints.Checkpoint, ...]
    changed_outside: tuple[str, ...]
    history_gone: bool


def turns(store: Store, session_id: str) -> list[Turn]:
    """User messages the person typed, since the last compaction, oldest first."""
    state = session_table.load_state(store, session_id)
    files = checkpoints.files_by_turn(store, session_id)
    typed = conversations.typed_messages_after(store, session_id, state.compacted_before)
    return [
        Turn(n, seq, message.text, tuple(files.get(seq, ())))
        for n, (seq, message) in enumerate(typed, start=1)
    ]


def _turn(store: Store, session_id: str, n: int) -> Turn:
    listed = turns(store, session_id)
    compacted = session_table.load_state(store, session_id).compacted_before > 0
    if n < 1 and compacted:
        raise SeriError(
            "cannot rewind to before the recap: compaction replaced the messages before it "
            "with that one summary, so there is no earlier state to go back to; message 1 is "
            "the oldest since the last compaction. Nothing was changed."
        )
    if n < 1:
        raise SeriError(
            f"user messages are numbered from 1 (the oldest); there is no message {n}. "
            "Nothing was changed."
        )
    if n > len(listed):
        since = " since the last compaction" if compacted else ""
        raise SeriError(
            f"there is no user message {n}; this session has {len(listed)}{since}. "
            "Nothing was changed."
        )
    return listed[n - 1]


def plan_rewind(
    store: Store, session_id: str, project: Path, n: int, files: FilePort | None = None
) -> RewindPlan:
    """What a rewind to before message ``n`` puts back, and which of those files changed
    since seri's last write (as the editor holds them when ``files`` reads: seri acp)."""
    from seri.runtime.session.rewind_files import held_now

    target = _turn(store, session_id, n)
    earliest: dict[str, checkpoints.Checkpoint] = {}
    for checkpoint in checkpoints.checkpoints_since(store, session_id, target.seq):
        earliest.setdefault(checkpoint.path, checkpoint)
    changed = []
    for path in earliest:
        current = (
            held_now(project_root(project), path, files)
            if files is not None and files.reads
            else _current_bytes(project / path)
        )
        written = checkpoints.last_written_hash(store, session_id, path)
        if written and checkpoints.written_digest(current) != written:
            changed.append(path)
    gone = not earliest and file_history_gone(store, session_id, target.seq)
    return RewindPlan(target, tuple(earliest.values()), tuple(changed), gone)


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def file_history_gone(store: Store, session_id: str, seq: int) -> bool:
    """seri wrote files from message ``seq`` on, yet none of their checkpoints is left.

    That happens when the session fell out of the 20 most recently touched sessions of its
    project: its conversation stays, its file history is deleted.
    """
    if checkpoints.has_checkpoints(store, session_id):
        return False
    return any(
        message.tool_name in CHECKPOINTED and not message.is_error
        for message in conversations.tool_results_from(store, session_id, seq)
    )


def restore_files(
    store: Store,
    session_id: str,
    plan: RewindPlan,
    project: Path,
    files: FilePort | None = None,
) -> list[str]:
    """Put back each file's checkpoint: into the editor's buffer when ``files`` takes
    writes (seri acp; ``rewind_files.put_back``), else onto the disk. A file that did not
    exist is removed from the disk (ACP has no way to delete through the editor)."""
    from seri.runtime.session.rewind_files import put_back

    root = project_root(project)
    restored: list[str] = []
    for checkpoint in plan.restore:
        path = root / checkpoint.path
        content = checkpoint.content if checkpoint.existed else None
        if content is not None and files is not None and files.writes:
            put_back(root, checkpoint.path, content, files, restored)
        elif content is not None:
            atomic_write(root, path, content)
        else:
            with contextlib.suppress(FileNotFoundError):
                remove_within(root, path)
        # What seri left there now, so the next rewind does not take it for someone else's.
        checkpoints.note_written(store, session_id, checkpoint.path, content)
        restored.append(checkpoint.path)
    return restored


def rewind_conversation(store: Store, session_id: str, seq: int) -> int:
    """Drop the messages from ``seq`` on, in one transaction; returns how many went."""
    with store.write() as conn:
        count = conversations.truncate_in(conn, session_id, seq)
        checkpoints.forget_from(conn, session_id, seq)
    return count


def files_directory(store: Store, session_id: str) -> Path:
    """The directory whose files a rewind of ``session_id`` may change: the session's own
    project directory, still where it was and still the same directory, or a refusal.

    Never the current directory: a rewind run elsewhere after the project was renamed must
    not delete or overwrite same-named files of whatever directory it happens to run in.
    """
    project = Path(session_table.get_session(store, session_id).project)
    expected = session_table.project_identity(store, session_id)
    actual = directory_identity(project)
    if not actual:
        raise SeriError(
            f"the project directory of session {session_id}, {project}, is gone (moved or "
            f"deleted); its files were there, so none can be put back here. Move it back to "
            "rewind files, or rewind only the conversation with --conversation. "
            "Nothing was changed."
        )
    if expected and actual != expected:
        raise SeriError(
            f"{project} is not the directory session {session_id} worked in: that one was "
            "moved or replaced since (its files were in the directory that was at this "
            "path). Move it back to rewind files, or rewind only the conversation with "
            "--conversation. Nothing was changed."
        )
    return project


def perform(
    store: Store,
    session_id: str,
    n: int,
    mode: str,
    *,
    confirmed: bool,
    confirm_hint: str = "--yes",
    files: FilePort | None = None,
) -> list[str]:
    """Carry out a rewind; returns lines for the person. Refuses before changing anything.

    The directory whose files change is printed (stderr) before anything is changed.
    """
    if mode in ("files", "both"):
        project = files_directory(store, session_id)
    else:
        project = Path(session_table.get_session(store, session_id).project)
    plan = plan_rewind(store, session_id, project, n, files)
    lines = []
    if mode in ("files", "both"):
        if plan.history_gone:
            lines.append(
                "The file history of this session is gone (only the 20 most recently touched "
                "sessions of a project keep it); no files were restored."
            )
        if plan.changed_outside and not confirmed:
            raise SeriError(
                "changed outside seri since its checkpoint: "
                + ", ".join(plan.changed_outside)
                + f"; confirm with {confirm_hint} to overwrite them. Nothing was changed."
            )
        if plan.restore:
            print(neutralise(f"Rewinding files in {project}"), file=sys.stderr, flush=True)
        restored = restore_files(store, session_id, plan, project, files)
        lines.append(f"Restored {len(restored)} file(s): {', '.join(restored) or '-'}")
    if mode in ("conversation", "both"):
        dropped = rewind_conversation(store, session_id, plan.target.seq)
        lines.append(f"Conversation rewound to before message {n}: {dropped} message(s) removed.")
    lines.append(BASH_NOTE)
    return lines


def message_number(text: str) -> int:
    return whole_number(text, "a user message number")


def turn_dict(turn: Turn) -> dict[str, Any]:
    return {"n": turn.n, "seq": turn.seq, "text": turn.text, "files": list(turn.files)}


def listing(listed: list[Turn], *, history_gone: bool = False) -> str:
    if not listed:
        return "No user messages since the last compaction."
    lines = []
    if history_gone:
        lines.append(HISTORY_GONE_NOTE)
    for turn in listed:
        text = " ".join(turn.text.split())
        text = text if len(text) <= 70 else text[:69] + "…"
        files = f"  [{', '.join(turn.files)}]" if turn.files else ""
        lines.append(f"{turn.n:>3}  {text}{files}")
    lines.append(BASH_NOTE)
    return "\n".join(lines)


# Asked whether to overwrite files changed outside seri since their checkpoint (named).
Confirm = Callable[[tuple[str, ...]], bool]


def rewind_session(
    store: Store,
    session_id: str,
    n: int,
    mode: str,
    *,
    yes: bool,
    confirm: Confirm | None,
    files: FilePort | None = None,
) -> tuple[str, ...] | None:
    """Restore ``mode`` (files, conversation or both) to just before user message ``n``:
    what was done, one line each. Files changed outside seri since their checkpoint are
    overwritten when ``yes``, or when ``confirm`` (someone asked) says so; None when it
    said no (nothing changed then). A SeriError says why nothing was changed (with no one
    to ask, that such files need --yes). ``files``: an editor's buffers the session's
    tools went through (seri acp), read and written in place of the disk here too."""
    project = (
        files_directory(store, session_id)
        if mode != "conversation"
        else Path(session_table.get_session(store, session_id).project)
    )
    plan = plan_rewind(store, session_id, project, n, files)
    confirmed = yes or not plan.changed_outside
    if not confirmed and mode != "conversation" and confirm is not None:
        confirmed = confirm(plan.changed_outside)
        if not confirmed:
            return None
    hint = f"`/rewind {n} {mode} --yes`"
    return tuple(
        perform(store, session_id, n, mode, confirmed=confirmed, confirm_hint=hint, files=files)
    )
