"""Importing the older release's ``sessions/*.jsonl``: exactly once, never touching the
files, whole files or nothing, and always a history whose tool calls are paired.

Imports are driven through the installed `seri` (it imports on first use); the
outcome is read back from the real database.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from seri.io.session import conversations, session_table
from seri.io.session.legacy_import import import_legacy
from seri.io.session.store import DB_NAME, Store, open_store
from seri.pure.session.legacy import LEGACY_ID_TAG, LOST_RESULT, PLAIN_ID
from seri.pure.session.records import Message
from tests.conftest import SERI, RunSeri, seri_env
from tests.legacy_support import (
    FIXTURE_NAMES,
    assert_paired,
    assistant_line,
    copy_fixtures,
    file_identity,
    header,
    jsonl,
    system_line,
    tool_line,
    user_line,
)


def _read_store(home: Path) -> Store:
    return open_store(home, readonly=True)


def _counts(home: Path) -> tuple[int, int, int]:
    conn = apsw.Connection(str(home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchall()[0][0]
        messages = conn.execute("SELECT count(*) FROM messages").fetchall()[0][0]
        ledger = conn.execute("SELECT count(*) FROM legacy_imports").fetchall()[0][0]
        return int(sessions), int(messages), int(ledger)
    finally:
        conn.close()


def _ledger(home: Path) -> dict[str, tuple[str, str]]:
    conn = apsw.Connection(str(home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT name, status, detail FROM legacy_imports").fetchall()
        return {str(name): (str(status), str(detail)) for name, status, detail in rows}
    finally:
        conn.close()


def _messages(home: Path, session_id: str) -> tuple[Message, ...]:
    store = _read_store(home)
    try:
        return conversations.load_messages(store, session_id)
    finally:
        store.close()


def _all_sessions(home: Path) -> dict[str, tuple[Message, ...]]:
    store = _read_store(home)
    try:
        ids = [s.id for s in session_table.list_sessions(store, None)]
        return {sid: conversations.load_messages(store, sid) for sid in ids}
    finally:
        store.close()


# --- the shared fixtures -----------------------------------------------------------------


def test_fixtures_import_exactly_once_and_stay_untouched(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = copy_fixtures(seri_home)
    before = {name: file_identity(sessions / name) for name in FIXTURE_NAMES}

    first = run_seri("sessions", "--all", "--json")
    assert first.returncode == 0, first.stderr
    assert "seri: imported 3 sessions from the older release" in first.stderr
    assert "c9d0e1f2-torn.jsonl:6: torn last line dropped" in first.stderr
    counts = _counts(seri_home)
    assert counts[0] == 3
    assert counts[2] == 3

    second = run_seri("sessions", "--all", "--json")
    assert second.returncode == 0, second.stderr
    assert second.stderr == ""  # nothing imported, nothing to say
    assert _counts(seri_home) == counts
    assert second.stdout == first.stdout

    after = {name: file_identity(sessions / name) for name in FIXTURE_NAMES}
    assert after == before  # bytes, inode, size, mtime and mode
    assert sorted(os.listdir(sessions)) == sorted(FIXTURE_NAMES)

    for messages in _all_sessions(seri_home).values():
        assert_paired(messages)


def test_an_imported_session_keeps_its_header_id_and_cwd(
    seri_home: Path, run_seri: RunSeri
) -> None:
    copy_fixtures(seri_home)
    result = run_seri("sessions", "show", "e5f6a7b8-tools", "--json")
    assert result.returncode == 0, result.stderr
    head, *lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert head["id"] == "e5f6a7b8-tools"
    assert head["project"] == "/home/ana/src/shop"
    assert head["title"] == "fix the typo in README.md"
    # The system prompt equal to the header's is not repeated as a message.
    assert [line["role"] for line in lines] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert lines[1]["reasoning"] == "I should read the README first."
    assert lines[1]["tool_calls"] == [
        {"id": "call_01", "name": "read_file", "arguments": '{"path": "README.md"}'}
    ]
    assert lines[4]["text"] == '{"ok": true, "replacements": 1}'

    torn = run_seri("sessions", "show", "c9d0", "--json")
    head, *lines = [json.loads(line) for line in torn.stdout.splitlines()]
    assert head["project"] == "/home/ana/src/api"
    assert [line["role"] for line in lines] == ["user", "assistant", "tool"]
    assert lines[2]["is_error"] is True


def test_a_session_is_listed_under_its_cwd_as_project(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "here.jsonl").write_bytes(
        jsonl([header("here", cwd=str(project)), user_line("in this project")])
    )
    (sessions / "there.jsonl").write_bytes(
        jsonl([header("there", cwd="/somewhere/else"), user_line("elsewhere")])
    )
    listed = run_seri("sessions", "--json")
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == ["here"]


# --- B1: malformed files -----------------------------------------------------------------

HELLO = [header("s-plain"), system_line(), user_line("hello"), assistant_line("hi there")]


@dataclasses.dataclass(frozen=True)
class Case:
    """A file's bytes and what must become of it: status, session, messages, reported text."""

    data: bytes
    status: str
    session_id: str = ""
    count: int = 0
    text: str = ""


def _b1_files() -> dict[str, Case]:
    """The malformed files of B1 (and a few more), with what must become of each."""

    def hello(session_id: str) -> bytes:
        return jsonl(HELLO).replace(b'"s-plain"', json.dumps(session_id).encode())

    big_text = "z" * (5 * 1024 * 1024)
    unknown = [
        header("s-unknown", extraField={"nested": [1, 2]}),
        {"role": "user", "content": "hi", "providerOptions": {"x": 1}, "id": "m1"},
        {"role": "assistant", "content": [{"type": "text", "text": "yo", "extra": True}]},
    ]
    return {
        "torn.jsonl": Case(
            hello("s-torn") + b'{"role": "assistant", "content": "half',
            "imported", "s-torn", 2, "torn.jsonl:5: torn last line dropped",
        ),
        "bad-middle.jsonl": Case(
            hello("s-bad").replace(b'{"role": "user"', b'{"role": "user",,'),
            "rejected", text="bad-middle.jsonl:3: not valid JSON",
        ),
        "blank-lines.jsonl": Case(
            hello("s-blank").replace(b"\n", b"\n\n   \n"), "imported", "s-blank", 2
        ),
        "crlf.jsonl": Case(hello("s-crlf").replace(b"\n", b"\r\n"), "imported", "s-crlf", 2),
        "bom.jsonl": Case(b"\xef\xbb\xbf" + hello("s-bom"), "imported", "s-bom", 2),
        "bad-utf8.jsonl": Case(
            hello("s-utf8").replace(b"hello", b"hel\xff\xfelo"),
            "rejected", text="bad-utf8.jsonl:3: not valid JSON (invalid UTF-8)",
        ),
        "unknown-fields.jsonl": Case(jsonl(unknown), "imported", "s-unknown", 2),
        "no-cwd.jsonl": Case(
            jsonl([{"id": "s-nocwd", "systemPrompt": "x"}, user_line("hi")]),
            "rejected", text="no-cwd.jsonl:1: the header has no 'cwd'",
        ),
        "no-id.jsonl": Case(
            jsonl([{"cwd": "/x", "systemPrompt": "x"}, user_line("hi")]),
            "rejected", text="no-id.jsonl:1: the header has no 'id'",
        ),
        "header-not-object.jsonl": Case(
            jsonl([["s-array"], user_line("hi")]),
            "rejected", text="header-not-object.jsonl:1: the header is not a JSON object",
        ),
        "empty.jsonl": Case(b"", "rejected", text="empty.jsonl: empty file"),
        "only-blank.jsonl": Case(b"\n \r\n\n", "rejected", text="only-blank.jsonl: empty file"),
        "unknown-role.jsonl": Case(
            jsonl([header("s-role"), user_line("hi"), {"role": "robot"}, assistant_line("x")]),
            "rejected", text="unknown-role.jsonl:3: unknown role 'robot'",
        ),
        "big-line.jsonl": Case(
            jsonl([header("s-big"), user_line(big_text), assistant_line("ok")]),
            "imported", "s-big", 2,
        ),
        "lone-surrogate.jsonl": Case(
            jsonl([header("s-surrogate"), user_line("a"), assistant_line("ok")]).replace(
                b'"a"', b'"a\\ud800b"'
            ),
            "imported", "s-surrogate", 2,
            "lone-surrogate.jsonl:2: invalid unicode escapes replaced",
        ),
        "huge-int.jsonl": Case(
            jsonl([header("s-int"), user_line("x"), assistant_line("ok")]).replace(
                b'"x"', b"1" + b"0" * 5000
            ),
            "rejected", text="huge-int.jsonl:2: not valid JSON",
        ),
        "deep.jsonl": Case(
            jsonl([header("s-deep")]) + b"[" * 100_000 + b"]" * 100_000 + b"\n"
            + jsonl([assistant_line("ok")]),
            "rejected", text="deep.jsonl:2: not valid JSON",
        ),
    }  # fmt: skip


def test_malformed_files_are_reported_by_file_and_line_and_imported_whole_or_not_at_all(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = copy_fixtures(seri_home)
    cases = _b1_files()
    for name, case in cases.items():
        (sessions / name).write_bytes(case.data)
    (sessions / "a-directory.jsonl").mkdir()
    (sessions / "notes.txt").write_text("not a session file")
    identities = {p.name: file_identity(p) for p in sessions.iterdir() if p.is_file()}

    result = run_seri("sessions", "--all", "--json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    ledger = _ledger(seri_home)
    imported = _all_sessions(seri_home)

    for name, case in cases.items():
        status, detail = ledger[name]
        assert status == case.status, (name, detail)
        if case.text:
            assert case.text in result.stderr, (name, result.stderr)
            assert case.text in detail, (name, detail)
        if status == "imported":
            assert len(imported[case.session_id]) == case.count, name
            assert_paired(imported[case.session_id])
        else:
            assert f"seri: import: rejected {case.text}" in result.stderr
    assert ledger["a-directory.jsonl"] == (
        "rejected",
        "a-directory.jsonl: is a directory, not a session file",
    )
    assert "notes.txt" not in ledger
    assert len(imported["s-big"][0].text) == 5 * 1024 * 1024
    assert imported["s-surrogate"][0].text == "a\ufffdb"
    # The three fixtures import alongside the bad files; a rejected file leaves nothing.
    expected_ids = {c.session_id for c in cases.values() if c.status == "imported"}
    assert set(imported) == expected_ids | {"a1b2c3d4-hello", "c9d0e1f2-torn", "e5f6a7b8-tools"}

    # Nothing was changed, moved or deleted.
    assert {p.name: file_identity(p) for p in sessions.iterdir() if p.is_file()} == identities

    # `seri sessions import` reports the outcome of every file; exit 1 as some were rejected.
    report = run_seri("sessions", "import")
    assert report.returncode == 1
    rejected = [name for name, (status, _) in ledger.items() if status == "rejected"]
    for name in rejected:
        assert name in report.stdout
    assert "bad-middle.jsonl:3: not valid JSON" in report.stdout


def test_a_torn_file_keeps_everything_before_the_torn_line(seri_home: Path) -> None:
    store = open_store(seri_home)
    sessions = copy_fixtures(seri_home)
    report = import_legacy(store, seri_home, announce=False)
    store.close()
    assert len(report.warnings) == 1
    assert report.warnings[0].startswith("c9d0e1f2-torn.jsonl:6: torn last line dropped")
    messages = _messages(seri_home, "c9d0e1f2-torn")
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[1].tool_calls[0].id == "call_07"
    assert (sessions / "c9d0e1f2-torn.jsonl").read_bytes().endswith(b"Two tests fa")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")
def test_an_unreadable_file_is_skipped_and_imported_once_readable(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    locked = sessions / "locked.jsonl"
    locked.write_bytes(jsonl(HELLO))
    locked.chmod(0)
    try:
        result = run_seri("sessions", "--all")
        assert result.returncode == 0
        assert "locked.jsonl: cannot read" in result.stderr
        assert run_seri("sessions", "import").returncode == 1
    finally:
        locked.chmod(0o644)
    assert "imported 1 session" in run_seri("sessions", "--all").stderr


def test_a_fifo_named_like_a_session_file_does_not_hang_the_import(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = copy_fixtures(seri_home)
    os.mkfifo(sessions / "pipe.jsonl")
    result = run_seri("sessions", "--all", timeout=20)
    assert result.returncode == 0
    assert "pipe.jsonl: is not a regular file" in result.stderr
    assert _counts(seri_home)[0] == 3


def test_two_files_with_one_header_id_import_one_and_reject_the_other(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "a.jsonl").write_bytes(jsonl(HELLO))
    (sessions / "b.jsonl").write_bytes(jsonl(HELLO))
    result = run_seri("sessions", "--all")
    assert "b.jsonl: a session with id s-plain already exists" in result.stderr
    assert _counts(seri_home)[:2] == (1, 2)


# --- B2: structurally broken histories ---------------------------------------------------


def test_broken_tool_pairing_is_repaired_deterministically(
    seri_home: Path, run_seri: RunSeri
) -> None:
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    lines: list[dict[str, Any]] = [
        header("s-b2"),
        system_line(),
        tool_line([("ghost", "bash", "result before any call")]),  # 3: orphan
        user_line("go"),
        assistant_line("", [("c1", "bash", {"command": "ls"})]),  # 5: unanswered
        user_line("are you there?"),  # 6
        tool_line([("c1", "bash", "late result after a user message")]),  # 7: orphan now
        assistant_line("", [("p1", "read_file", {}), ("p2", "glob", {})]),  # 8: parallel
        tool_line([("p2", "glob", "b"), ("p1", "read_file", "a")]),  # 9: out of order
        tool_line([("p1", "read_file", "again")]),  # 10: second answer
        assistant_line("", [("d1", "bash", {}), ("d1", "bash", {"x": 1})]),  # 11: duplicate id
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "d1",
                                      "output": {"type": "text", "value": "no tool name"}}]},
        assistant_line("", [("e1", "edit", {})]),  # 13: the file ends unanswered
    ]  # fmt: skip
    (sessions / "b2.jsonl").write_bytes(jsonl(lines))

    result = run_seri("sessions", "show", "s-b2", "--json")
    assert result.returncode == 0, result.stderr
    for text in (
        "b2.jsonl:3: dropped a tool result for unknown call ghost",
        f"b2.jsonl:5: tool call c1 (bash) had no result: {LOST_RESULT}",
        "b2.jsonl:7: dropped a tool result for unknown call c1",
        "b2.jsonl:10: dropped a tool result for unknown call p1",
        "b2.jsonl:11: dropped a second tool call with id d1",
        f"b2.jsonl:13: tool call e1 (edit) had no result: {LOST_RESULT}",
    ):
        assert text in result.stderr, (text, result.stderr)

    messages = _messages(seri_home, "s-b2")
    assert_paired(messages)
    summary = [(m.role, m.tool_call_id or m.text, m.kind) for m in messages]
    assert summary == [
        ("user", "go", ""),
        ("assistant", "", ""),
        ("tool", "c1", "synthetic"),
        ("user", "are you there?", ""),
        ("assistant", "", ""),
        ("tool", "p2", ""),
        ("tool", "p1", ""),
        ("assistant", "", ""),
        ("tool", "d1", ""),
        ("assistant", "", ""),
        ("tool", "e1", "synthetic"),
    ]
    assert messages[2].text == LOST_RESULT
    assert messages[2].is_error
    assert messages[8].tool_name == "bash"  # filled in from its call
    assert [c.arguments for c in messages[7].tool_calls] == ["{}"]
    # The repairs are listed in the import report too.
    detail = _ledger(seri_home)["b2.jsonl"][1]
    assert "dropped a second tool call with id d1" in detail


# --- B3: idempotent under kill -9 and under concurrency ----------------------------------


def _write_generated(sessions: Path, count: int, seed: int) -> dict[str, int]:
    """``count`` valid legacy files; returns each session's expected message count."""
    rng = random.Random(seed)
    sessions.mkdir(parents=True, exist_ok=True)
    expected: dict[str, int] = {}
    for n in range(count):
        session_id = f"gen-{seed}-{n:04d}"
        lines: list[dict[str, Any]] = [header(session_id, cwd=f"/src/p{n % 7}"), system_line()]
        messages = 0
        for turn in range(rng.randint(1, 6)):
            lines.append(user_line(f"task {turn} " + "w" * rng.randint(0, 400)))
            messages += 1
            calls = [
                (f"c{turn}-{k}", "bash", {"command": f"echo {k}"}) for k in range(rng.randint(0, 3))
            ]
            lines.append(assistant_line("ok", calls))
            messages += 1
            if calls:
                lines.append(tool_line([(cid, name, "done") for cid, name, _ in calls]))
                messages += len(calls)
        (sessions / f"{session_id}.jsonl").write_bytes(jsonl(lines))
        expected[session_id] = messages
    return expected


def _assert_imported_once(home: Path, expected: dict[str, int]) -> None:
    conn = apsw.Connection(str(home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            "SELECT s.id, s.message_count, count(m.seq), count(DISTINCT s.source_key)"
            " FROM sessions s LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id"
        ).fetchall()
        got = {str(sid): int(stored) for sid, stored, _real, _keys in rows}
        assert got == expected
        assert all(stored == real for _sid, stored, real, _keys in rows)
        ledger = conn.execute(
            "SELECT count(*), count(DISTINCT name) FROM legacy_imports"
        ).fetchall()
        assert ledger == [(len(expected), len(expected))]
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def test_kill_9_in_the_middle_of_an_import_then_a_rerun_finishes_without_duplicates(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    expected = _write_generated(seri_home / "sessions", 300, seed=1234)
    proc = subprocess.Popen(
        [SERI, "sessions", "--all"],
        cwd=project,
        env=seri_env(seri_home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    done_at_kill = 0
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (seri_home / DB_NAME).exists():
                try:
                    done_at_kill = _counts(seri_home)[2]
                except apsw.Error:
                    done_at_kill = 0
                if done_at_kill >= 20:
                    break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL, "the import finished before the kill"
    assert 0 < done_at_kill < 300
    partial = _counts(seri_home)
    assert partial[0] == partial[2] < 300  # every recorded file is a whole session

    rerun = run_seri("sessions", "--all")
    assert rerun.returncode == 0, rerun.stderr
    assert "locked" not in rerun.stderr.lower()
    assert f"imported {300 - partial[2]} sessions" in rerun.stderr
    _assert_imported_once(seri_home, expected)
    assert run_seri("sessions", "--all").stderr == ""


def test_two_processes_importing_at_once_import_each_file_once(
    seri_home: Path, project: Path
) -> None:
    expected = _write_generated(seri_home / "sessions", 120, seed=99)
    env = seri_env(seri_home)
    procs = [
        subprocess.Popen(
            [SERI, "sessions", "--all", "--json"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
        assert "Traceback" not in err
    _assert_imported_once(seri_home, expected)


# --- ids are plain ids -----------------------------------------------------------------------


def test_a_header_id_that_is_not_a_plain_id_gets_a_fresh_one(
    seri_home: Path, run_seri: RunSeri, tmp_path: Path
) -> None:
    """`$(touch …)` as a header id (issue 24): stored under a plain id made from the file,
    the original kept as the session's legacy_id tag; imported once however often seri
    looks, even with the ledger row gone; nothing evaluated."""
    marker = tmp_path / "ran"
    hostile = f"$(touch {marker})`touch {marker}`'\"\n"
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    header = {"id": hostile, "cwd": "/home/ana/src/shop", "systemPrompt": ""}
    (sessions / "evil.jsonl").write_bytes(jsonl([header, {"role": "user", "content": "hi"}]))
    first = run_seri("sessions", "--all", "--json")
    assert first.returncode == 0, first.stderr
    assert "is not a plain id; imported as" in first.stderr
    (row,) = [json.loads(line) for line in first.stdout.splitlines()]
    assert PLAIN_ID.fullmatch(row["id"]) and len(row["id"]) == 32
    assert row["tags"] == {LEGACY_ID_TAG: hostile}
    again = run_seri("sessions", "--all", "--json")
    assert [json.loads(line)["id"] for line in again.stdout.splitlines()] == [row["id"]]
    # Without its ledger row (a copy of the profile that lost it) it is still not imported twice.
    conn = apsw.Connection(str(seri_home / DB_NAME))
    conn.execute("DELETE FROM legacy_imports")
    conn.close()
    third = run_seri("sessions", "--all", "--json")
    assert [json.loads(line)["id"] for line in third.stdout.splitlines()] == [row["id"]]
    assert _counts(seri_home)[:2] == (1, 1)
    assert not marker.exists()
