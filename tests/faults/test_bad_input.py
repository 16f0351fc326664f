"""Bad input, B1–B5 of reliability-anchors §5: the older release's files, broken histories,
imports under kill -9 and beside a chat, the pairing invariant under random histories, and
bad command lines and profiles. Always the real seri, always its real store."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scripts.fake_model import FakeModel
from seri.pure.compaction.cuts import cut_messages
from seri.pure.session.records import Message
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    assert_request_ok,
    call,
    chat_env,
    check_store,
    database,
    one_line_error,
    rng_for,
    run,
    scalar,
    seed_for,
    seri,
    session_ids,
    start,
    unanswered_tail_only,
    wait_for,
    write_config,
)
from tests.legacy_support import (
    assistant_line,
    file_identity,
    header,
    jsonl,
    tool_line,
    user_line,
)
from tests.pairing import pairing_problems
from tests.property.strategies import small_paired_histories
from tests.store_writes import append_latest


def _hello(session_id: str, text: str = "hello") -> list[dict[str, Any]]:
    return [header(session_id), user_line(text), assistant_line("hi there")]


def _identities(directory: Path) -> dict[str, Any]:
    found = {}
    for path in directory.iterdir():
        info = os.lstat(path)
        found[path.name] = (
            file_identity(path)
            if path.is_file() and not path.is_symlink()
            else (info.st_ino, info.st_mode, info.st_mtime_ns)
        )
    return found


# --- B1 --------------------------------------------------------------------------------------


def test_B1_malformed_legacy_session_files(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """A truncated last line, an invalid line in the middle, blank lines, CRLF, a BOM,
    invalid UTF-8, one 50 MB line, unknown fields, missing required fields, an empty file, a
    directory and an unreadable file, in $SERI_HOME/sessions.

    Each problem is reported with file and line; each file is imported whole or not at all
    (a torn last line is dropped with a warning, as the policy says); nothing crashes; no
    source file is changed, moved or deleted; `seri sessions import` exits 1."""
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    big = "w" * (50 * 1024 * 1024)
    files: dict[str, tuple[bytes, str, str, int, str]] = {
        # name: bytes, its session, outcome, messages kept, what the report must say
        "torn.jsonl": (
            jsonl(_hello("b-torn")) + b'{"role": "user", "content": "ha',
            "b-torn",
            "imported",
            2,
            "torn.jsonl:4: torn last line dropped",
        ),
        "bad-middle.jsonl": (
            jsonl(_hello("b-bad")).replace(b'"hello"}', b'"hello",,}'),
            "b-bad",
            "rejected",
            0,
            "bad-middle.jsonl:2: not valid JSON",
        ),
        "blank.jsonl": (
            jsonl(_hello("b-blank")).replace(b"\n", b"\n\n  \n"),
            "b-blank",
            "imported",
            2,
            "",
        ),
        "crlf.jsonl": (
            jsonl(_hello("b-crlf")).replace(b"\n", b"\r\n"),
            "b-crlf",
            "imported",
            2,
            "",
        ),
        "bom.jsonl": (b"\xef\xbb\xbf" + jsonl(_hello("b-bom")), "b-bom", "imported", 2, ""),
        "bad-utf8.jsonl": (
            jsonl(_hello("b-utf8")).replace(b"hello", b"he\xff\xfello"),
            "b-utf8",
            "rejected",
            0,
            "bad-utf8.jsonl:2: not valid JSON (invalid UTF-8)",
        ),
        "big-line.jsonl": (jsonl(_hello("b-big", big)), "b-big", "imported", 2, ""),
        "unknown-fields.jsonl": (
            jsonl(
                [
                    header("b-unknown", futureField={"x": [1]}),
                    {"role": "user", "content": "hi", "id": "m1", "extra": 1},
                    assistant_line("yo"),
                ]
            ),
            "b-unknown",
            "imported",
            2,
            "",
        ),
        "no-id.jsonl": (
            jsonl([{"cwd": "/x"}, user_line("hi")]),
            "",
            "rejected",
            0,
            "no-id.jsonl:1: the header has no 'id'",
        ),
        "no-cwd.jsonl": (
            jsonl([{"id": "b-nocwd"}, user_line("hi")]),
            "b-nocwd",
            "rejected",
            0,
            "no-cwd.jsonl:1: the header has no 'cwd'",
        ),
        "empty.jsonl": (b"", "", "rejected", 0, "empty.jsonl: empty file"),
    }
    for name, (data, *_rest) in files.items():
        (sessions / name).write_bytes(data)
    (sessions / "a-directory.jsonl").mkdir()
    (sessions / "dangling.jsonl").symlink_to(sessions / "nowhere" / "gone.jsonl")
    unreadable = ["dangling.jsonl"]
    if os.geteuid() != 0:  # root reads a chmod 000 file anyway
        (sessions / "locked.jsonl").write_bytes(jsonl(_hello("b-locked")))
        (sessions / "locked.jsonl").chmod(0)
        unreadable.append("locked.jsonl")
    before = _identities(sessions)
    fault_ledger.injected("B1", len(files) + 1 + len(unreadable))

    first = run(seri("sessions", "--all", "--json"), home=seri_home, cwd=project, timeout=120)
    assert first.returncode == 0, first.stderr
    one_line_error(first.stderr)
    report = run(seri("sessions", "import"), home=seri_home, cwd=project)
    assert report.returncode == 1, "a rejected or unreadable file must show in the exit code"
    stored = check_store(seri_home)
    for name, (_data, session, outcome, kept, words) in files.items():
        if outcome == "imported":
            assert len(stored[session]) == kept, name
        else:
            assert not session or session not in stored, f"{name}: a rejected file left a session"
            assert f"rejected {words}" in first.stderr, (name, first.stderr)
        if words:
            assert words in first.stderr and words in report.stdout, (name, words)
    assert len(stored["b-big"][0].text) == len(big)
    assert "a-directory.jsonl: is a directory" in first.stderr
    for name in unreadable:
        assert f"skipped {name}: cannot read" in first.stderr, first.stderr
        assert name in report.stdout
    assert _identities(sessions) == before, "a source file was changed, moved or deleted"
    again = run(seri("sessions", "--all"), home=seri_home, cwd=project)
    assert check_store(seri_home) == stored, "a second run imported something again"
    assert "rejected" not in again.stderr
    fault_ledger.survived("B1", len(files) + 1 + len(unreadable))


# --- B2 --------------------------------------------------------------------------------------

BROKEN = [
    header("b2-broken"),
    tool_line([("orphan0", "read_file", "a result with no call before it")]),
    user_line("first task"),
    {
        **assistant_line(
            "calling",
            [
                ("t1", "read_file", {"path": "a"}),
                ("t1", "read_file", {"path": "b"}),
                ("t2", "glob", {"pattern": "*"}),
            ],
        ),
        "timestamp": "2026-05-02T10:00:00Z",
        "parentId": "nope",
    },
    tool_line([("t1", "read_file", "a's text")]),
    user_line("the results of t2 never came; a second task"),
    tool_line([("t2", "glob", "a result after a user message")]),
    {
        **assistant_line("", [("t3", "bash", {"command": "make"})]),
        "timestamp": "2025-01-01T00:00:00Z",
        "parentId": "elsewhere",
    },
]


def test_B2_structurally_broken_history_on_import(
    project: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """Tool results with no call, calls with no result, a repeated call id, a result after a
    user message, parent ids and timestamps that make no sense.

    The repair is deterministic (the same file gives the same history in two profiles), it
    is listed in the import report with file and line, and the imported session yields a
    valid request."""
    fault_ledger.injected("B2", 5)
    histories = []
    for n in range(2):
        home = tmp_path / f"profile{n}"
        (home / "sessions").mkdir(parents=True)
        (home / "sessions" / "broken.jsonl").write_bytes(jsonl(BROKEN))
        result = run(seri("sessions", "--all"), home=home, cwd=project)
        assert result.returncode == 0, result.stderr
        one_line_error(result.stderr)
        histories.append(check_store(home)["b2-broken"])
        assert "broken.jsonl:" in result.stderr, "the repairs are not reported"
        for line in (2, 4, 7, 8):
            assert f"broken.jsonl:{line}" in result.stderr, (line, result.stderr)
    assert histories[0] == histories[1], "the repair is not deterministic"
    assert pairing_problems(histories[0]) == ()
    with FakeModel([{"text": "resumed"}]) as fake:
        result = run(
            seri("chat", "--resume", "b2-broken", "-p", "go on"),
            home=home,
            cwd=project,
            env=chat_env(fake),
        )
        requests = list(fake.requests)
    assert result.returncode == 0, result.stderr
    assert_request_ok(requests[0])
    fault_ledger.survived("B2", 5)


# --- B3 --------------------------------------------------------------------------------------


def _write_legacy(directory: Path, first: int, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(first, first + count):
        lines = [
            header(f"b3-{n:04d}"),
            user_line(f"task {n}"),
            assistant_line("", [(f"c{n}", "glob", {"pattern": "*"})]),
            tool_line([(f"c{n}", "glob", "a.py")]),
            assistant_line(f"answer {n}"),
        ]
        (directory / f"b3-{n:04d}.jsonl").write_bytes(jsonl(lines))


def _assert_each_once(home: Path, expected: int) -> None:
    stored = check_store(home)
    legacy = {sid: m for sid, m in stored.items() if sid.startswith("b3-")}
    assert len(legacy) == expected
    assert all(len(messages) == 4 for messages in legacy.values())
    with database(home) as conn:
        assert scalar(conn, "SELECT count(*) FROM legacy_imports") == expected
        assert (
            scalar(
                conn, "SELECT count(DISTINCT source_key) FROM sessions WHERE source_key IS NOT NULL"
            )
            == expected
        )


def test_B3_import_is_idempotent_and_safe_to_run_concurrently(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """kill -9 in the middle of an import, three times, then a rerun; the same directory
    imported twice; two imports racing each other and a running chat.

    No session or message twice (a stable source key), no lock error for anyone, and the
    rerun finishes the job."""
    rng = rng_for("B3", fault_ledger)
    sessions = seri_home / "sessions"
    total = 400
    _write_legacy(sessions, 0, total)
    kills, done = 0, 0

    def imported() -> int:
        if not (seri_home / "seri.db").exists():
            return 0
        try:
            with database(seri_home, readonly=True) as conn:
                return int(scalar(conn, "SELECT count(*) FROM legacy_imports"))
        except apsw.SQLError:  # the first migration has not committed yet
            return 0

    for _ in range(3):
        # Somewhere in the middle of the import: once a random number of files are in.
        target = done + rng.randint(1, (total - done) // 2)
        proc = start(seri("sessions", "import"), home=seri_home, cwd=project)
        wait_for(
            lambda proc=proc, target=target: imported() >= target or proc.poll() is not None,
            interval=0.001,
        )
        if proc.poll() is None:
            fault_ledger.injected("B3")
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate()
        done = imported()
    print(f"B3: {kills} kills left {done} of {total} files imported")
    assert kills >= 2 and done < total, "the kills did not land in the middle of an import"
    for _ in range(2):  # the rerun finishes; a second one finds nothing to do
        result = run(seri("sessions", "import"), home=seri_home, cwd=project)
        assert result.returncode == 0, result.stderr
        assert "locked" not in result.stderr
        _assert_each_once(seri_home, total)
    fault_ledger.survived("B3", kills)

    fault_ledger.injected("B3", 3)
    _write_legacy(sessions, total, 60)
    script = [{"tool_calls": [call(f"g{k}", "glob", pattern="*")]} for k in range(25)]
    script.append({"text": "chat done"})
    with FakeModel(script) as fake:
        chat = start(seri("chat", "-p", "busy"), home=seri_home, cwd=project, env=chat_env(fake))
        importers = [
            start(seri("sessions", "import"), home=seri_home, cwd=project) for _ in range(2)
        ]
        outputs = [proc.communicate(timeout=60) for proc in (chat, *importers)]
    for proc, (_out, err) in zip((chat, *importers), outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower(), err
    assert outputs[0][0] == "chat done\n"
    _assert_each_once(seri_home, total + 60)
    fault_ledger.survived("B3", 3)


# --- B4 --------------------------------------------------------------------------------------

# Seeds that once failed are kept here and replayed with the day's seed.
REGRESSION_SEEDS: list[int] = []


def _random_turn(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """One task's script: 1–3 model turns of 1–3 parallel tool calls, then an answer."""
    steps: list[dict[str, Any]] = []
    for turn in range(rng.randint(1, 3)):
        calls = []
        for k in range(rng.randint(1, 3)):
            kind = rng.choice(["glob", "read", "denied", "shell"])
            cid = f"r{n}t{turn}c{k}"
            if kind == "glob":
                calls.append(call(cid, "glob", pattern="*"))
            elif kind == "read":
                calls.append(call(cid, "read_file", path="notes.txt"))
            elif kind == "denied":  # write_file is not allowed: denied with a reason
                calls.append(call(cid, "write_file", path="x.txt", content="no"))
            else:
                calls.append(call(cid, "bash", command="sleep 0.2; echo slept"))
        steps.append({"tool_calls": calls, "text": f"turn {turn}"})
    steps.append({"text": f"answer {n}"})
    return steps


def _b4_scenario(seed: int, project: Path, home: Path, fault_ledger: FaultLedger) -> int:
    rng = random.Random(seed)
    write_config(home, {"compaction": {"keep_tokens": 80}})
    (project / "notes.txt").write_text("some notes\n")
    faults = 0
    for n in range(6):
        action = "first" if n == 0 else rng.choice(["resume", "kill", "compact", "resume"])
        args = ["chat", *([] if n == 0 else ["--continue"]), "--allow", "bash", "-p", f"task {n}"]
        with FakeModel(_random_turn(rng, n)) as fake:
            if action == "compact":
                fault_ledger.injected("B4")
                faults += 1
                session = session_ids(home)[0]
                fake.add_steps({"text": '{"goal": "g", "progress": ["p"]}'})
                done = run(
                    seri("compact", "--session", session),
                    home=home,
                    cwd=project,
                    env=chat_env(fake),
                )
                assert done.returncode == 0, done.stderr
                requests = []
            elif action == "kill":
                fault_ledger.injected("B4")
                faults += 1
                proc = start(seri(*args), home=home, cwd=project, env=chat_env(fake))
                wait_for(lambda proc=proc: len(fake.requests) >= 1 or proc.poll() is not None)
                time.sleep(rng.uniform(0.02, 0.4))
                proc.send_signal(signal.SIGKILL)
                proc.communicate()
                requests = list(fake.requests)
            else:
                done = run(seri(*args), home=home, cwd=project, env=chat_env(fake))
                assert done.returncode == 0, done.stderr
                requests = list(fake.requests)
        for body in requests:
            assert_request_ok(body)
        stored = check_store(home)
        for messages in stored.values():
            assert unanswered_tail_only(messages) == [], (seed, n, action)
        if action in ("compact", "kill"):
            fault_ledger.survived("B4")
    with FakeModel([{"text": "finally"}]) as fake:
        done = run(
            seri("chat", "--continue", "-p", "last"), home=home, cwd=project, env=chat_env(fake)
        )
        assert done.returncode == 0, done.stderr
        assert_request_ok(fake.requests[-1])
    for messages in check_store(home).values():
        assert pairing_problems(messages) == ()
    return faults


def test_B4_the_pairing_invariant_under_random_histories(
    project: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """Random tasks with parallel tool calls and denials, random kill -9 between a call and
    its result, random `seri compact`, random resumes: every request seri sends is valid and
    every stored history pairs each call with exactly one result (the last turn of a killed
    run excepted, until the next run answers it)."""
    seeds = [seed_for("B4"), *REGRESSION_SEEDS]
    fault_ledger.seed("B4", seeds[0])
    for seed in seeds:
        home = tmp_path / f"seed{seed}"
        _b4_scenario(seed, project, home, fault_ledger)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(history=small_paired_histories(), keep=st.integers(1, 2000))
def test_B4_compaction_never_separates_a_call_from_its_result(
    history: list[Message], keep: int
) -> None:
    assert pairing_problems(history) == ()
    cut = cut_messages(history, keep)
    if cut is None:
        return
    kept = history[cut.index_of_first_kept :]
    assert kept[0].role in ("user", "assistant")
    assert pairing_problems(kept) == ()
    assert pairing_problems([Message(role="user", text="recap"), *kept]) == ()


# --- B5 --------------------------------------------------------------------------------------


def _seed_two_sessions(home: Path, project: Path) -> list[str]:
    """Two sessions whose ids share the prefix 'abc', each with a little history."""
    from seri.io.session import session_table
    from seri.io.session.store import open_store

    ids = ["abc1" + "0" * 28, "abc2" + "0" * 28]
    store = open_store(home)
    for sid in ids:
        session_table.create_session(
            store,
            session_id=sid,
            project=str(project),
            now=time.time(),
            model="fake/model",
            system_prompt="",
            prompt_hashes={},
        )
        append_latest(
            store,
            sid,
            [Message(role="user", text=f"hi {sid}"), Message(role="assistant", text="hello")],
            time.time(),
        )
    store.close()
    return ids


def _counts(home: Path) -> tuple[int, int, int, int]:
    with database(home) as conn:
        return tuple(
            scalar(conn, f"SELECT count(*) FROM {table}")  # type: ignore[return-value]
            for table in ("sessions", "messages", "runs", "compactions")
        )


def _damaged_profiles(tmp_path: Path, project: Path) -> dict[str, Path]:
    """A db of random bytes, a truncated one, one with a broken table page."""
    made = {}
    rng = random.Random(5)
    for kind in ("random bytes", "truncated", "corrupt page"):
        home = tmp_path / kind.replace(" ", "-")
        home.mkdir()
        db = home / "seri.db"
        if kind == "random bytes":
            db.write_bytes(rng.randbytes(64 * 1024))
        else:
            _seed_two_sessions(home, project)
            data = bytearray(db.read_bytes())
            if kind == "truncated":
                data = data[: len(data) // 2 + 100]
            else:
                with database(home, readonly=True) as conn:
                    page = scalar(
                        conn, "SELECT rootpage FROM sqlite_schema WHERE name = 'sessions'"
                    )
                    size = scalar(conn, "PRAGMA page_size")
                start = (page - 1) * size
                data[start : start + size] = rng.randbytes(size)
            db.write_bytes(bytes(data))
        made[kind] = home
    return made


def _ro_bind(path: Path) -> list[str] | None:
    """A command prefix that runs what follows with ``path`` mounted read-only (root: a
    private mount namespace), or None where that is not possible."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(path)]


def test_B5_bad_cli_and_profile(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """Unknown and ambiguous session ids, a profile that cannot be made, databases that are
    random bytes, truncated or corrupt, and a profile on a read-only filesystem.

    A clear message naming the id or the file and a non-zero exit; nothing created; a short
    id never picks one of two sessions; a damaged db is never written, recreated or cleaned
    up, and the message points to a backup and `.recover`; read-only still exports."""
    ids = _seed_two_sessions(seri_home, project)
    counts = _counts(seri_home)
    bad_ids: list[tuple[list[str], str]] = [
        (["compact", "--session", "deadbeef"], "no session matches 'deadbeef'"),
        (["compact", "--session", "abc"], "'abc' matches more than one session"),
        (["chat", "--resume", "abc", "-p", "x"], "'abc' matches more than one session"),
        (["sessions", "show", "abc"], "'abc' matches more than one session"),
        (
            ["rewind", "--session", "abc", "--to", "1", "--yes"],
            "'abc' matches more than one session",
        ),
        (["trajectory", "export", "--session", "abc"], "'abc' matches more than one session"),
        (["trajectory", "export", "--session", "nope"], "no session matches 'nope'"),
        (["chat", "--max-turns", "zero", "-p", "x"], "--max-turns must be a whole number"),
        (["compact"], "seri compact --session ID"),
    ]
    with FakeModel([{"text": "never"}]) as fake:
        for args, words in bad_ids:
            fault_ledger.injected("B5")
            result = run(seri(*args), home=seri_home, cwd=project, env=chat_env(fake))
            assert result.returncode == 2, (args, result.stderr)
            assert words in result.stderr, (args, result.stderr)
            if "more than one" in words:
                assert ids[0] in result.stderr and ids[1] in result.stderr
            one_line_error(result.stderr)
            assert _counts(seri_home) == counts, f"{args} wrote something"
            fault_ledger.survived("B5")
        assert fake.requests == []

    # A profile that cannot be created, and one that is not there: nothing is made.
    fault_ledger.injected("B5", 2)
    (tmp_path / "a-file").write_text("not a directory")
    result = run(seri("sessions"), home=tmp_path / "a-file" / "profile", cwd=project)
    assert result.returncode == 2 and "cannot create the profile directory" in result.stderr
    missing = tmp_path / "missing" / "profile"
    result = run(seri("trajectory", "export"), home=missing, cwd=project)
    assert result.returncode == 0 and result.stdout == ""
    assert not (tmp_path / "missing").exists(), "export created a profile"
    fault_ledger.survived("B5", 2)

    for kind, home in _damaged_profiles(tmp_path, project).items():
        db = home / "seri.db"
        before = db.read_bytes()
        commands = [["sessions"], ["chat", "-p", "x"], ["compact", "--session", "abc1"]]
        if kind != "corrupt page":  # export reads no session row: the broken page is not met
            commands.append(["trajectory", "export"])
        for args in commands:
            fault_ledger.injected("B5")
            with FakeModel([{"text": "never"}]) as fake:
                result = run(seri(*args), home=home, cwd=project, env=chat_env(fake))
            assert result.returncode == 2, (kind, args, result.stderr)
            assert str(db) in result.stderr, (kind, args, result.stderr)
            assert ".recover" in result.stderr and "backup" in result.stderr, result.stderr
            one_line_error(result.stderr)
            assert db.read_bytes() == before, f"{kind}: {args} wrote to the damaged db"
            # A read-only open of a WAL database makes SQLite create an empty -wal and its
            # -shm index before it finds the damage; nothing else may appear, and no byte of
            # the damaged file's history may be written.
            extra = {p.name for p in home.iterdir()} - {"seri.db"}
            assert extra <= {"seri.db-wal", "seri.db-shm"}, (kind, args, extra)
            if "seri.db-wal" in extra:
                assert (home / "seri.db-wal").stat().st_size == 0, (kind, args)
            fault_ledger.survived("B5")

    # A profile on a read-only filesystem: export works, writing fails clearly.
    prefix = _ro_bind(seri_home)
    if prefix is None:
        seri_home.chmod(0o500)
        (seri_home / "seri.db").chmod(0o400)
    try:
        fault_ledger.injected("B5", 2)
        db_bytes = (seri_home / "seri.db").read_bytes()
        exported = run(
            [*(prefix or []), *seri("trajectory", "export")], home=seri_home, cwd=project
        )
        assert exported.returncode == 0, exported.stderr
        with FakeModel([{"text": "never"}]) as fake:
            wrote = run(
                [*(prefix or []), *seri("chat", "-p", "x")],
                home=seri_home,
                cwd=project,
                env=chat_env(fake),
            )
        assert wrote.returncode in (1, 2), wrote.stderr
        assert "read-only" in wrote.stderr or "cannot write" in wrote.stderr, wrote.stderr
        one_line_error(wrote.stderr)
        assert (seri_home / "seri.db").read_bytes() == db_bytes
        fault_ledger.survived("B5", 2)
    finally:
        if prefix is None:
            seri_home.chmod(0o700)
            (seri_home / "seri.db").chmod(0o600)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a private mount namespace (root)")
def test_B5_the_read_only_helper_really_mounts_read_only(tmp_path: Path) -> None:
    prefix = _ro_bind(tmp_path)
    if prefix is None:
        pytest.skip("unshare -m is not available here")
    result = subprocess.run(
        [*prefix, "touch", str(tmp_path / "x")], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0 and "Read-only" in result.stderr
