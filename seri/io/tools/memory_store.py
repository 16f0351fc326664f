"""Memory writes: staged by the model's `remember` tool, written only once approved.

An approved entry is appended to its memory file at once, and enters the prompt
the next time seri starts (the running session's prompt is frozen).
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from seri.io.inputs.prompt_files import MEMORY_CAP_BYTES, global_memory_file, project_memory_file
from seri.io.session.store import Store
from seri.pure.inputs.errors import SeriError

SCOPES = ("project", "global")


@attrs.frozen
class PendingMemory:
    n: int
    scope: str
    project: str
    text: str
    session_id: str
    at: float


def stage(store: Store, scope: str, project: str, text: str, session_id: str, now: float) -> int:
    if scope not in SCOPES:
        scope = "project"
    with store.write() as conn:
        conn.execute(
            "INSERT INTO memory_pending(scope, project, text, session_id, at) VALUES (?,?,?,?,?)",
            (scope, project, text, session_id, now),
        )
        return int(conn.last_insert_rowid())


def pending(store: Store) -> list[PendingMemory]:
    rows = store.connection.execute(
        "SELECT id, scope, project, text, coalesce(session_id, ''), at FROM memory_pending"
        " ORDER BY id"
    )
    return [PendingMemory(*row) for row in rows]


def _take(store: Store, n: int) -> PendingMemory:
    for entry in pending(store):
        if entry.n == n:
            return entry
    raise SeriError(f"no staged memory entry {n}; `seri memory list` shows them")


def memory_file(root: Path, entry: PendingMemory) -> Path:
    if entry.scope == "global":
        return global_memory_file(root)
    return project_memory_file(root, entry.project)


def approve(store: Store, root: Path, n: int) -> Path:
    """Append entry ``n`` to its memory file (atomically), then forget the staged copy."""
    entry = _take(store, n)
    path = memory_file(root, entry)
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        current = b""
    addition = f"- {entry.text.strip()}\n".encode()
    if len(current) + len(addition) > MEMORY_CAP_BYTES:
        raise SeriError(
            f"{path} would grow past its cap of {MEMORY_CAP_BYTES // 1024} KiB; consolidate it "
            f"(edit it down) and approve entry {n} again"
        )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    import tempfile  # here: it loads shutil, random and more, which a chat start need not

    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".memory.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(current + addition)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    reject(store, n)
    return path


def reject(store: Store, n: int) -> None:
    _take(store, n)
    with store.write() as conn:
        conn.execute("DELETE FROM memory_pending WHERE id = ?", (n,))
