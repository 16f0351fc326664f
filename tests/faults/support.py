"""What the fault tests share: running the real seri (plain or through ``seri_child.py``),
reading its database back from outside, and the checks that say "nothing was lost"."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import apsw

from scripts.fake_model import FakeModel
from seri.io.session.codec import message_from_json
from seri.pure.session.records import Message
from tests.conftest import SERI, seri_env
from tests.pairing import pairing_problems
from tests.request_schema import assert_valid_request

HERE = Path(__file__).resolve().parent
CHILD = HERE / "seri_child.py"
# An OpenRouter-shaped key: 64 hex digits that must never be found on disk.
KEY = "sk-or-v1-" + "c0ffee15" * 8
DEFAULT_SEED = 20260821


def chat_env(fake: FakeModel | str, **extra: str) -> dict[str, str]:
    base = fake if isinstance(fake, str) else fake.base_url
    return {"SERI_BASE_URL": base, "OPENROUTER_API_KEY": KEY, **extra}


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def seed_for(case: str) -> int:
    """FAULT_SEED replays a run; by default each case has its own fixed seed."""
    chosen = os.environ.get("FAULT_SEED")
    seed = int(chosen) if chosen else DEFAULT_SEED + sum(map(ord, case))
    print(f"{case}: seed {seed} (FAULT_SEED={seed} replays it)")
    return seed


def rng_for(case: str, ledger: Any) -> random.Random:
    seed = seed_for(case)
    ledger.seed(case, seed)
    return random.Random(seed)


# --- running seri ---------------------------------------------------------------------------


def child_command(*options: str) -> list[str]:
    """``seri_child.py`` with its options, ready for the seri arguments."""
    return [sys.executable, str(CHILD), *options, "--"]


def run(
    command: Sequence[str],
    *,
    home: Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
    preexec_fn: Any = None,
    stdout: Any = subprocess.PIPE,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command),
        input=input,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=seri_env(home, env),
        cwd=cwd,
        timeout=timeout,
        check=False,
        preexec_fn=preexec_fn,
    )


def start(
    command: Sequence[str],
    *,
    home: Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: Any = subprocess.DEVNULL,
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        list(command),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=seri_env(home, env),
        cwd=cwd,
    )


def seri(*args: str) -> list[str]:
    return [SERI, *args]


def wait_for(condition: Any, timeout: float = 20, interval: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        time.sleep(interval)


def one_line_error(stderr: str) -> None:
    """An expected failure: no traceback, no 'internal error'."""
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr, stderr


# --- the database, read from outside --------------------------------------------------------


def db_path(home: Path) -> Path:
    return home / "seri.db"


@contextlib.contextmanager
def database(home: Path, *, readonly: bool = False) -> Iterator[apsw.Connection]:
    """A plain connection (the default VFS, none of seri's code) to the profile's db."""
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    conn = apsw.Connection(str(db_path(home)), flags=flags)
    conn.set_busy_timeout(10_000)
    try:
        yield conn
    finally:
        conn.close()


def rows(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    return list(conn.execute(sql, params).fetchall())


def scalar(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    return rows(conn, sql, params)[0][0]


def check_store(home: Path) -> dict[str, list[Message]]:
    """The db is whole: integrity, foreign keys, the search index, every session's counters
    agree with its live messages (from its latest recap on: what a compaction walled off may
    wait for its purge), every stored message decodes. Returns each session's live messages."""
    with database(home) as conn:
        assert rows(conn, "PRAGMA integrity_check") == [("ok",)]
        assert rows(conn, "PRAGMA foreign_key_check") == []
        conn.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
        sessions: dict[str, list[Message]] = {}
        for sid, count, chars, next_seq, wall in rows(
            conn, "SELECT id, message_count, total_chars, next_seq, compacted_before FROM sessions"
        ):
            stored = rows(
                conn,
                "SELECT seq, body, chars FROM messages WHERE session_id = ? AND seq >= ?"
                " ORDER BY seq",
                (sid, wall),
            )
            assert count == len(stored), f"session {sid}: message_count {count} != {len(stored)}"
            assert chars == sum(r[2] for r in stored), f"session {sid}: total_chars is off"
            assert not stored or next_seq > stored[-1][0], f"session {sid}: next_seq is behind"
            sessions[sid] = [message_from_json(body) for _, body, _ in stored]
        return sessions


def unanswered_tail_only(messages: Sequence[Message]) -> list[str]:
    """Pairing problems other than the last assistant message's calls still lacking results
    (the state a kill between the call and its result leaves; seri answers them on resume)."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    problems = []
    for problem in pairing_problems(messages):
        if problem.startswith(f"message {last}:") and "has no result" in problem:
            continue
        problems.append(problem)
    return problems


def assert_request_ok(body: Mapping[str, Any]) -> None:
    """A request seri sent: the schema holds and every tool call is answered just after it."""
    assert_valid_request(body)
    pending: set[str] = set()
    for message in body["messages"]:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending, f"orphan or repeated result: {message}"
            pending.discard(message["tool_call_id"])
            continue
        assert not pending, f"calls {pending} unanswered before a {message['role']} message"
        ids = [c["id"] for c in message.get("tool_calls") or []]
        assert len(ids) == len(set(ids)), f"duplicate tool call ids {ids}"
        pending = set(ids)
    assert not pending, f"calls {pending} unanswered at the end"


def export(home: Path, cwd: Path, *args: str) -> list[dict[str, Any]]:
    result = run(seri("trajectory", "export", *args), home=home, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def events(lines: Sequence[Mapping[str, Any]], type_: str) -> list[Mapping[str, Any]]:
    return [line for line in lines if line["type"] == type_]


def session_ids(home: Path) -> list[str]:
    with database(home) as conn:
        return [r[0] for r in rows(conn, "SELECT id FROM sessions ORDER BY created")]


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root`` (links not followed) with its bytes' hash and mtime."""
    import hashlib

    state = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            state[str(path)] = (f"-> {os.readlink(path)}", 0)
        elif path.is_file():
            info = path.stat()
            state[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mtime_ns)
    return state


def copy_profile(source: Path, target: Path) -> None:
    """A consistent copy of a profile's db (the backup API, never ``cp``) and its config."""
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    destination = db_path(target)
    os.close(os.open(destination, os.O_CREAT | os.O_WRONLY, 0o600))
    with database(source) as src:
        dest = apsw.Connection(str(destination))
        try:
            with dest.backup("main", src, "main") as backup:
                backup.step()
        finally:
            dest.close()
    config = source / "config.json"
    if config.exists():
        (target / "config.json").write_bytes(config.read_bytes())


def write_config(home: Path, config: Mapping[str, Any]) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(config))


def file_size_limit(limit: int) -> Any:
    """A preexec_fn: the child may write no file beyond ``limit`` bytes (EFBIG, not SIGXFSZ)."""
    import resource
    import signal

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply
