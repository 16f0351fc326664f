"""Importing ``$SERI_HOME/sessions/*.jsonl`` into seri.db, exactly once per file.

Each file is imported in one ``BEGIN IMMEDIATE`` transaction that also records
its name in ``legacy_imports``; the check for that name happens inside the
same transaction. So a second run, a rerun after a kill -9, or two processes
importing at once never duplicate anything. The files are opened read-only
and nothing else is done to them: not written, moved, renamed or touched.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import apsw
import attrs

from seri.io.session.conversations import insert_messages
from seri.io.session.store import Store
from seri.pure.inputs.bounded_input import LEGACY_SESSION_FILE, total_too_big
from seri.pure.session.legacy import (
    LEGACY_ID_TAG,
    LegacyFileError,
    LegacySession,
    imported_id,
    parse_legacy_file,
)
from seri.pure.session.session_titles import title_from_prompt

LEGACY_DIR = "sessions"


@attrs.frozen
class ImportReport:
    imported: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # Files that could not be read this time: not recorded, tried again next run.
    unreadable: tuple[str, ...] = ()
    # Header-only files: recorded as imported, no session made.
    empty: tuple[str, ...] = ()


def pending_files(store: Store, root: Path) -> list[Path]:
    """Legacy files not yet imported or rejected, cheaply: one listing, one query."""
    directory = root / LEGACY_DIR
    try:
        with os.scandir(directory) as listing:
            entries = sorted(
                (e for e in listing if e.name.endswith(".jsonl")), key=lambda e: e.name
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        print(f"seri: import: cannot list {directory} ({exc.strerror})", file=sys.stderr)
        return []
    done = {name for (name,) in store.connection.execute("SELECT name FROM legacy_imports")}
    return [Path(e.path) for e in entries if e.name not in done]


def import_legacy(store: Store, root: Path, *, announce: bool = True) -> ImportReport:
    imported: list[str] = []
    rejected: list[str] = []
    warnings: list[str] = []
    unreadable: list[str] = []
    empty: list[str] = []
    for path in pending_files(store, root):
        outcome, detail, notes = _import_one(store, path)
        warnings.extend(notes)
        if outcome == "imported":
            imported.append(path.name)
        elif outcome == "rejected":
            rejected.append(detail)
        elif outcome == "unreadable":
            unreadable.append(detail)
        elif outcome == "empty":
            empty.append(path.name)
    report = ImportReport(
        tuple(imported), tuple(rejected), tuple(warnings), tuple(unreadable), tuple(empty)
    )
    if announce:
        _announce(report)
    return report


def _announce(report: ImportReport) -> None:
    for warning in report.warnings:
        print(f"seri: import: {warning}", file=sys.stderr)
    for problem in report.rejected:
        print(f"seri: import: rejected {problem}", file=sys.stderr)
    for problem in report.unreadable:
        print(f"seri: import: skipped {problem}; will try again next time", file=sys.stderr)
    if report.imported:
        count = len(report.imported)
        print(
            f"seri: imported {count} session{'s' * (count != 1)} from the older release",
            file=sys.stderr,
        )


def _read(path: Path) -> tuple[bytes, float]:
    """The file's bytes and mtime, through one read-only descriptor.

    O_NONBLOCK keeps a FIFO named ``x.jsonl`` from hanging seri; only regular
    files are read. Nothing is written: the mtime, inode and bytes stay as they were.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError as exc:
        raise LegacyFileError(f"{path.name}: is a directory, not a session file") from exc
    except OSError as exc:
        raise _UnreadableError(f"{path.name}: cannot read ({exc.strerror})") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise LegacyFileError(f"{path.name}: is a directory, not a session file")
        if not stat.S_ISREG(info.st_mode):
            raise LegacyFileError(f"{path.name}: is not a regular file")
        chunks, size, limit = [], 0, LEGACY_SESSION_FILE.max_total_bytes
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise LegacyFileError(f"{path.name}: {total_too_big(LEGACY_SESSION_FILE).reason}")
        return b"".join(chunks), info.st_mtime
    except OSError as exc:
        raise _UnreadableError(f"{path.name}: cannot read ({exc.strerror})") from exc
    finally:
        os.close(fd)


class _UnreadableError(Exception):
    """Reading failed (permissions, I/O): reported on every run, not recorded, so
    that the file is imported once it can be read."""


def _import_one(store: Store, path: Path) -> tuple[str, str, tuple[str, ...]]:
    try:
        data, mtime = _read(path)
        parsed = parse_legacy_file(path.name, data)
    except _UnreadableError as exc:
        return "unreadable", str(exc), ()
    except LegacyFileError as exc:
        _mark(store, path.name, "rejected", str(exc))
        return "rejected", str(exc), ()
    with store.write() as conn:
        seen = conn.execute(
            "SELECT status FROM legacy_imports WHERE name = ?", (path.name,)
        ).fetchall()
        if seen:
            return "skipped", "", ()
        if not parsed.messages:
            # Opened and quit, or /clear: nothing was said. Recorded as imported, so it is not
            # read again, but no session is made: `seri sessions` and --continue skip it.
            _insert_mark(conn, path.name, "imported", "header only: no messages")
            return "empty", "", parsed.warnings
        session_id = imported_id(path.name, parsed.header.id)
        clash = conn.execute(
            "SELECT source_key FROM sessions WHERE id = ?", (session_id,)
        ).fetchall()
        if clash:
            detail = f"{path.name}: a session with id {session_id} already exists"
            _insert_mark(conn, path.name, "rejected", detail)
            return "rejected", detail, ()
        warnings = parsed.warnings
        if session_id != parsed.header.id:
            warnings += (
                f"{path.name}: its id {json.dumps(parsed.header.id)} is not a plain id; imported"
                f" as {session_id}, the original kept as the session's {LEGACY_ID_TAG} tag",
            )
        _insert_session(conn, path.name, parsed, mtime, session_id)
        _insert_mark(conn, path.name, "imported", "; ".join(warnings))
    return "imported", "", warnings


def _insert_session(
    conn: apsw.Connection, name: str, parsed: LegacySession, mtime: float, session_id: str
) -> None:
    header = parsed.header
    # The title is the first thing the person asked: not a compaction recap, not a blank line.
    first_user = next(
        (m.text for m in parsed.messages if m.role == "user" and not m.kind and m.text.strip()),
        "",
    )
    conn.execute(
        "INSERT INTO sessions(id, project, created, updated, model, title, source_key,"
        " system_prompt) VALUES (?,?,?,?,?,?,?,?)",
        (
            session_id,
            header.cwd,
            mtime,
            mtime,
            header.model,
            title_from_prompt(first_user),
            f"legacy:{name}",
            header.system_prompt,
        ),
    )
    insert_messages(conn, session_id, parsed.messages, mtime, revision=0)
    if session_id != header.id:
        conn.execute(
            "INSERT INTO session_tags(session_id, key, value) VALUES (?,?,?)",
            (session_id, LEGACY_ID_TAG, header.id),
        )
    # Appending moved 'updated' to the import time; the session is as old as its file.
    conn.execute("UPDATE sessions SET updated = ? WHERE id = ?", (mtime, session_id))


def _insert_mark(conn: apsw.Connection, name: str, status: str, detail: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO legacy_imports(name, status, detail, at) VALUES (?,?,?,?)",
        (name, status, detail, time.time()),
    )


def _mark(store: Store, name: str, status: str, detail: str) -> None:
    with store.write() as conn:
        _insert_mark(conn, name, status, detail)
