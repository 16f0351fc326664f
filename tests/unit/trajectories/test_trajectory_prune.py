"""Ageing recordings out: the edges of the window, what is never touched, and erasing for good."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from seri.io.inputs.config import load_settings
from seri.io.trajectories.trajectory_prune import prune
from seri.runtime.session.profile import Profile
from seri.runtime.trajectories.trajectory_start import prune_at_session_start
from tests.conftest import RunSeri
from tests.trajectory_seed import CANARY, DAY, counts, raw, scalar, session_with_run, store_at

# Seconds either side of the edge: far more than a subprocess takes to start.
MARGIN = 300.0


def seed_ages(home: Path) -> dict[str, str]:
    """Sessions whose most recent records sit at telling distances from a 30-day window."""
    now = time.time()
    edge = now - 30 * DAY
    store = store_at(home)
    ids = {
        "inside": "1" * 32,
        "outside": "2" * 32,
        "old_start_recent_end": "3" * 32,
        "header_only": "4" * 32,
        "ancient": "5" * 32,
    }
    session_with_run(store, ids["inside"], edge + MARGIN - 120, events=3)  # last: edge + MARGIN
    session_with_run(store, ids["outside"], edge - MARGIN - 120, events=3)  # last: edge - MARGIN
    # Began long ago, but its last record is an hour old: the last record decides.
    session_with_run(store, ids["old_start_recent_end"], now - 90 * DAY, events=2, step=89 * DAY)
    session_with_run(store, ids["header_only"], edge - MARGIN, events=0)
    session_with_run(store, ids["ancient"], now - 400 * DAY, events=5)
    store.close()
    return ids


def legacy_files(home: Path) -> dict[str, Path]:
    now = time.time()
    trajectories = home / "trajectories"
    trajectories.mkdir(parents=True)
    sessions = home / "sessions"
    sessions.mkdir()
    paths = {
        "old": trajectories / "old-run.jsonl",
        "fresh": trajectories / "fresh-run.jsonl",
        "not_jsonl": trajectories / "notes.txt",
        "legacy_session": sessions / "old-session.jsonl",
    }
    for path in paths.values():
        path.write_text('{"type":"header"}\n{"type":"tool_call"}\n')
    for name in ("old", "not_jsonl", "legacy_session"):
        os.utime(paths[name], (now - 31 * DAY, now - 31 * DAY))
    os.utime(paths["fresh"], (now - 29 * DAY, now - 29 * DAY))
    return paths


def test_prune_deletes_exactly_what_is_older_than_the_window(
    run_seri: RunSeri, seri_home: Path
) -> None:
    ids = seed_ages(seri_home)
    files = legacy_files(seri_home)

    done = run_seri("trajectory", "prune")

    assert done.returncode == 0, done.stderr
    store = store_at(seri_home)
    assert counts(store, ids["inside"]) == (1, 3)
    assert counts(store, ids["old_start_recent_end"]) == (1, 2)
    assert counts(store, ids["outside"]) == (0, 0)
    assert counts(store, ids["header_only"]) == (0, 0)
    assert counts(store, ids["ancient"]) == (0, 0)
    # The conversations themselves are not recordings: they stay.
    sessions = scalar(store, "SELECT count(*) FROM sessions")
    assert sessions == 5
    store.close()
    assert not files["old"].exists()
    assert files["fresh"].exists()
    assert files["not_jsonl"].exists()
    assert files["legacy_session"].exists()
    listed = done.stdout.splitlines()[1:]
    assert [line.split()[:2] for line in listed] == [
        ["session", ids["ancient"]],
        ["session", ids["outside"]],
        ["session", ids["header_only"]],
        ["file", str(files["old"])],
    ]
    assert [line.split()[-1] for line in listed] == ["5", "3", "0", "2"]
    assert "deleted the recordings of 3 sessions and 1 files (10 events)" in done.stderr


def test_dry_run_lists_exactly_what_a_real_run_deletes(run_seri: RunSeri, seri_home: Path) -> None:
    seed_ages(seri_home)
    files = legacy_files(seri_home)

    dry = run_seri("trajectory", "prune", "--dry-run")

    assert dry.returncode == 0, dry.stderr
    assert files["old"].exists()
    store = store_at(seri_home)
    assert scalar(store, "SELECT count(*) FROM runs") == 5
    store.close()
    real = run_seri("trajectory", "prune")
    assert real.returncode == 0, real.stderr
    assert dry.stdout == real.stdout
    assert len(dry.stdout.splitlines()) == 1 + 4
    assert "would delete" in dry.stderr
    again = run_seri("trajectory", "prune", "--dry-run")
    assert again.stdout == ""
    assert "nothing to prune" in again.stderr


def test_the_session_being_recorded_is_kept_however_old(seri_home: Path) -> None:
    ids = seed_ages(seri_home)
    files = legacy_files(seri_home)
    store = store_at(seri_home)
    settings = load_settings(seri_home, {})

    prune_at_session_start(Profile(seri_home, store), settings, current_session=ids["ancient"])

    assert counts(store, ids["ancient"]) == (1, 5)
    assert counts(store, ids["outside"]) == (0, 0)
    assert not files["old"].exists()
    # A file of the older release belongs to the session it is named after.
    current_file = seri_home / "trajectories" / f"{ids['outside']}.jsonl"
    current_file.write_text("{}\n")
    os.utime(current_file, (1.0, 1.0))
    prune_at_session_start(Profile(seri_home, store), settings, current_session=ids["outside"])
    assert current_file.exists()
    store.close()


def test_session_start_says_what_it_aged_out(
    seri_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_ages(seri_home)
    store = store_at(seri_home)

    prune_at_session_start(Profile(seri_home, store), load_settings(seri_home, {}), "")

    err = capsys.readouterr().err
    assert err == "seri: aged out recordings older than 30 days: 3 sessions, 8 events\n"
    store.close()


def test_nothing_old_costs_no_write_lock(seri_home: Path) -> None:
    store = store_at(seri_home)
    session_with_run(store, "6" * 32, time.time() - DAY, events=2)
    session_with_run(store, "7" * 32, time.time() - 90 * DAY, events=2)
    holder = store_at(seri_home)
    holder.connection.execute("BEGIN IMMEDIATE")
    try:
        began = time.monotonic()
        # The current session is the only old one: nothing to do, and no lock needed.
        result = prune(store, seri_home, time.time(), 30, current_session="7" * 32)
        assert time.monotonic() - began < 1.0
    finally:
        holder.connection.execute("ROLLBACK")
        holder.close()
    assert result.plan.empty
    store.close()


@pytest.mark.parametrize("window", ["forever", -1, "abc", 0])
def test_an_invalid_window_is_a_config_error_that_deletes_nothing(
    run_seri: RunSeri, seri_home: Path, window: object, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = seed_ages(seri_home)
    files = legacy_files(seri_home)
    (seri_home / "config.json").write_text(json.dumps({"trajectory": {"retention_days": window}}))

    done = run_seri("trajectory", "prune")

    assert done.returncode == 2
    assert "retention_days" in done.stderr and "nothing was pruned" in done.stderr
    assert done.stdout == ""
    store = store_at(seri_home)
    prune_at_session_start(Profile(seri_home, store), load_settings(seri_home, {}), "")
    assert "warning" in capsys.readouterr().err
    assert counts(store, ids["ancient"]) == (1, 5)
    assert scalar(store, "SELECT count(*) FROM events") == 13
    store.close()
    assert files["old"].exists()
    status = run_seri("trajectory", "status")
    assert "invalid" in status.stdout


def test_the_window_comes_from_config(run_seri: RunSeri, seri_home: Path) -> None:
    ids = seed_ages(seri_home)
    (seri_home / "config.json").write_text(json.dumps({"trajectory": {"retention_days": 500}}))

    done = run_seri("trajectory", "prune")

    assert done.returncode == 0, done.stderr
    assert "nothing to prune: no recording is older than 500 days" in done.stderr
    store = store_at(seri_home)
    assert counts(store, ids["ancient"]) == (1, 5)
    store.close()


def test_pruned_secrets_are_gone_from_the_database_files(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    old = time.time() - 60 * DAY
    recorder = session_with_run(store, "8" * 32, old, events=50)
    session_with_run(store, "9" * 32, time.time(), events=50)
    # As an older release might have stored it: straight in, not through the redactor.
    with store.write() as conn:
        conn.execute(
            "INSERT INTO events(run_id, session_id, at, type, body) VALUES (?,?,?,?,?)",
            (recorder.run_id, "8" * 32, old + 1, "tool_result", json.dumps({"out": CANARY * 3})),
        )
    store.close()
    before = b"".join(
        (seri_home / name).read_bytes()
        for name in ("seri.db", "seri.db-wal")
        if (seri_home / name).exists()
    )
    assert CANARY.encode() in before

    done = run_seri("trajectory", "prune")

    assert done.returncode == 0, done.stderr
    for name in ("seri.db", "seri.db-wal"):
        path = seri_home / name
        if path.exists():
            assert CANARY.encode() not in path.read_bytes(), name


def test_a_run_aged_out_under_a_live_recorder_keeps_recording(seri_home: Path) -> None:
    store = store_at(seri_home)
    started = time.time() - 40 * DAY
    recorder = session_with_run(store, "a" * 32, started, events=1)
    other = store_at(seri_home)
    prune(other, seri_home, time.time(), 30, current_session="")
    other.close()
    assert counts(store, "a" * 32) == (0, 0)

    recorder.record(raw("turn_end", status="done"))
    recorder.flush()

    assert counts(store, "a" * 32) == (1, 1)
    store.close()


def test_concurrent_pruners_delete_once_and_agree(seri_home: Path) -> None:
    seed_ages(seri_home)
    results = []

    def one() -> None:
        own = store_at(seri_home)
        results.append(prune(own, seri_home, time.time(), 30, current_session=""))
        own.close()

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(r.plan.sessions) for r in results) == [0, 0, 3]


def test_runs_recorded_before_last_at_existed_get_it_from_their_events(seri_home: Path) -> None:
    import apsw

    from seri.io.session.schema import APPLICATION_ID, MIGRATIONS

    seri_home.mkdir()
    conn = apsw.Connection(str(seri_home / "seri.db"))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(MIGRATIONS[0])
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute("PRAGMA user_version=1")
    conn.execute("INSERT INTO sessions(id, project, created, updated) VALUES ('s', '/p', 1, 1)")
    conn.execute("INSERT INTO runs(id, session_id, started, header) VALUES ('r1', 's', 10, '{}')")
    conn.execute("INSERT INTO runs(id, session_id, started, header) VALUES ('r2', 's', 20, '{}')")
    conn.execute(
        "INSERT INTO events(run_id, session_id, at, type, body) VALUES ('r1', 's', 15, 't', '{}')"
    )
    conn.close()

    store = store_at(seri_home)

    rows = store.connection.execute("SELECT id, last_at FROM runs ORDER BY id").fetchall()
    assert rows == [("r1", 15.0), ("r2", 20.0)]
    store.close()
