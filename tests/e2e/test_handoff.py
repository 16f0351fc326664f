"""`seri handoff`: a new session from the source's recap and pins, on real processes and a
real store; the source is left byte for byte as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

KEY = "sk-or-v1-" + "4a0f" * 16


def env(fake: FakeModel) -> dict[str, str]:
    return {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}


def source_bytes(home: Path, session_id: str) -> list[Any]:
    """Every row that belongs to the session, as stored (bytes and all)."""
    conn = apsw.Connection(str(home / "seri.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows: list[Any] = []
        for table, column in (
            ("sessions", "id"),
            ("messages", "session_id"),
            ("pins", "session_id"),
            ("checkpoints", "session_id"),
            ("compactions", "session_id"),
            ("runs", "session_id"),
            ("events", "session_id"),
            ("session_usage", "session_id"),
        ):
            query = f"SELECT * FROM {table} WHERE {column} = ? "
            rows.append((table, sorted(conn.execute(query, (session_id,)), key=repr)))
        return rows
    finally:
        conn.close()


def test_handoff_seeds_a_new_session_and_leaves_the_source_untouched(
    run_seri: RunSeri, seri_home: Path
) -> None:
    words = ["ant", "bee", "cat", "dog", "eel"]
    steps = [{"text": f"noted, {word} " + "x" * 400} for word in words]
    with FakeModel([*steps, {"text": "carrying on from the recap"}], auto_recap=True) as fake:
        first = run_seri("chat", "-p", "task about the ant", env=env(fake))
        assert first.returncode == 0, first.stderr
        source = json.loads(run_seri("sessions", "--json").stdout)["id"]
        for word in words[1:]:
            done = run_seri("chat", "--continue", "-p", f"task about the {word}", env=env(fake))
            assert done.returncode == 0, done.stderr
        assert run_seri("pin", "--session", source, "always use tabs").returncode == 0
        before = source_bytes(seri_home, source)
        handed = run_seri("handoff", "--session", source[:8], env=env(fake))
        assert handed.returncode == 0, handed.stderr
        new_id = handed.stdout.strip()
        assert len(new_id) == 32 and new_id != source
        assert f"handed session {source} off to {new_id}" in handed.stderr
        assert source_bytes(seri_home, source) == before
        # The new session: a recap, the pin, the newest turn; it records where it came from.
        lines = run_seri("sessions", "show", new_id, "--json").stdout.splitlines()
        head, *messages = [json.loads(line) for line in lines]
        assert head["forked_from"] == source
        assert messages[0]["kind"] == "recap" and "Goal" in messages[0]["text"]
        assert messages[-1]["text"].startswith("noted, eel") and len(messages) < 5
        pins = run_seri("pin", "--session", new_id, "--list")
        assert "always use tabs" in pins.stdout
        # Going on in it with -p: the answer, from the new session.
        go_on = run_seri("handoff", "--session", source, "-p", "carry on", env=env(fake))
        assert go_on.returncode == 0, go_on.stderr
        assert source_bytes(seri_home, source) == before


def test_a_failed_handoff_leaves_nothing(run_seri: RunSeri, seri_home: Path) -> None:
    steps = [{"text": f"noted {n} " + "y" * 400} for n in range(5)]
    failing = {"status": 400, "body": {"error": {"message": "model gone"}}}
    with FakeModel([*steps, failing]) as fake:
        for n in range(5):
            argv = ["chat", *(["--continue"] if n else []), "-p", f"task {n}"]
            assert run_seri(*argv, env=env(fake)).returncode == 0
        sessions = run_seri("sessions", "--json").stdout
        source = json.loads(sessions)["id"]
        before = source_bytes(seri_home, source)
        done = run_seri("handoff", "--session", source, env=env(fake))
    assert done.returncode == 1 and done.stdout == ""
    assert "nothing was created" in done.stderr
    assert run_seri("sessions", "--json").stdout == sessions
    assert source_bytes(seri_home, source) == before


def test_nothing_to_hand_off(run_seri: RunSeri) -> None:
    done = run_seri("handoff", "--session", "nosuch")
    assert done.returncode == 2 and done.stderr.startswith("seri: ")


def test_a_handoff_killed_halfway_leaves_no_copy_that_continue_picks(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    """SIGKILL of a real `seri handoff` while its summarizer call is under way: the copy is
    made but not compacted. `seri chat --continue` goes on in the original all the same, the
    listing shows the original alone, and the next handoff deletes the leftover."""
    import os
    import signal
    import subprocess

    from tests.conftest import SERI, seri_env

    steps = [{"text": f"noted {n} " + "z" * 400} for n in range(5)]
    with FakeModel([*steps, {"stall_seconds": 30}]) as fake:
        first = run_seri("chat", "-p", "task 0", env=env(fake))
        assert first.returncode == 0, first.stderr
        source = json.loads(run_seri("sessions", "--json").stdout)["id"]
        for n in range(1, 5):
            assert run_seri("chat", "--continue", "-p", f"task {n}", env=env(fake)).returncode == 0
        handoff = subprocess.Popen(
            [SERI, "handoff", "--session", source],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=seri_env(seri_home, env(fake)),
            cwd=project,
        )
        in_call = fake.wait_for_requests(6, timeout=30)
        assert in_call == 6, "the handoff is in its summarizer call"
        os.kill(handoff.pid, signal.SIGKILL)
        handoff.communicate()
    with FakeModel([{"text": "went on in the original"}], auto_recap=True) as fake:
        went_on = run_seri("chat", "--continue", "-p", "task 5", env=env(fake))
        assert went_on.returncode == 0, went_on.stderr
        sent = fake.requests[-1]["messages"]
    assert f"resumed session {source}" in went_on.stderr
    assert any("task 4" in str(m.get("content")) for m in sent), "the original's history"
    conn = apsw.Connection(str(seri_home / "seri.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        [(copy, incomplete)] = conn.execute(
            "SELECT id, incomplete FROM sessions WHERE forked_from = ?", (source,)
        ).fetchall()
    finally:
        conn.close()
    assert incomplete == 1, "the copy was made, and is marked as not done"
    assert copy not in went_on.stderr
    listed = [json.loads(line)["id"] for line in run_seri("sessions", "--json").stdout.splitlines()]
    assert listed == [source]
    shown = run_seri("sessions", "show", source, "--json").stdout.splitlines()
    assert json.loads(shown[-1])["text"] == "went on in the original"
    # The next handoff deletes the leftover (its holder is dead) and makes a whole one.
    with FakeModel([], auto_recap=True) as fake:
        handed = run_seri("handoff", "--session", source, env=env(fake))
    assert handed.returncode == 0, handed.stderr
    conn = apsw.Connection(str(seri_home / "seri.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        left = conn.execute("SELECT id, incomplete FROM sessions WHERE forked_from = ?", (source,))
        assert left.fetchall() == [(handed.stdout.strip(), 0)]
    finally:
        conn.close()
