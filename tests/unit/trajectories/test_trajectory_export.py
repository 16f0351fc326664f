"""`seri trajectory export`: JSON Lines jq accepts, in constant memory, beside a live writer."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from seri.pure.trajectories.redaction import Redactor
from tests.conftest import SERI, RunSeri, seri_env
from tests.trajectory_seed import (
    CANARY,
    DAY,
    add_session,
    raw,
    record_run,
    scalar,
    session_with_run,
    store_at,
)

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def lines_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def jq_accepts(stdout: str) -> int:
    """jq parses the whole stream; returns the number of objects it read."""
    done = subprocess.run(
        ["/usr/bin/jq", "-c", "."], input=stdout, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return len(done.stdout.splitlines())


def test_every_line_has_type_session_run_and_at_and_headers_lead_their_runs(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    first = session_with_run(store, "a" * 32, T0, events=4)
    second = record_run(store, "a" * 32, T0 + 3600, [("turn_end", {"status": "done"}, T0 + 3601)])
    third = session_with_run(store, "b" * 32, T0 + 7200, events=2)
    store.close()

    done = run_seri("trajectory", "export")

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = lines_of(done.stdout)
    assert jq_accepts(done.stdout) == len(lines) == 3 + 4 + 2 + 1
    for line in lines:
        assert set(line) >= {"type", "session", "run", "at"}
        assert line["at"].endswith("Z") and "T" in line["at"]
    assert [(line["type"], line["run"]) for line in lines] == [
        ("header", first.run_id),
        *[("tool_call", first.run_id)] * 4,
        ("header", second.run_id),
        ("turn_end", second.run_id),
        ("header", third.run_id),
        *[("tool_call", third.run_id)] * 2,
    ]
    header = lines[0]
    assert header["session"] == "a" * 32
    assert header["at"] == "2026-01-01T00:00:00.000Z"
    assert header["sampling"] == {"temperature": 0.2}
    assert lines[2] == {
        "type": "tool_call",
        "session": "a" * 32,
        "run": first.run_id,
        "at": "2026-01-01T00:01:00.000Z",
        "id": "call_1",
        "name": "read_file",
        "n": 1,
    }


def test_large_values_are_elided_with_their_size_and_secrets_never_recorded(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    add_session(store, "c" * 32, T0)
    redactor = Redactor.of([])
    record_run(
        store,
        "c" * 32,
        T0,
        [
            ("tool_result", {"id": "x", "output": "é" * 3000}, T0 + 1),
            ("tool_call", {"arguments": f"curl -H 'Authorization: Bearer {CANARY}'"}, T0 + 2),
            ("retry", {"reason": f"401 for key {CANARY}", CANARY: "as a key too"}, T0 + 3),
            # A field named like one of export's own keys must not shadow it.
            ("check", {"type": "pytest", "at": "later", "ok": True}, T0 + 4),
        ],
        header={"model": "m", "note": f"key {CANARY}"},
        redactor=redactor,
    )
    store.close()

    done = run_seri("trajectory", "export")

    assert done.returncode == 0, done.stderr
    assert CANARY not in done.stdout
    header, result, call, retry, check = lines_of(done.stdout)
    assert result["output"] == {"elided": True, "originalBytes": 6000}
    assert "[REDACTED]" in call["arguments"] and "[REDACTED]" in retry["reason"]
    assert "[REDACTED]" in header["note"]
    assert check["type"] == "check" and check["data_type"] == "pytest"
    assert check["data_at"] == "later"
    for name in ("seri.db", "seri.db-wal"):
        path = seri_home / name
        if path.exists():
            assert CANARY.encode() not in path.read_bytes()


def test_head_ends_the_export_quietly(seri_home: Path, project: Path) -> None:
    store = store_at(seri_home)
    # More than the pipe and the write buffer hold, so the writer really meets a closed pipe.
    session_with_run(store, "d" * 32, T0, events=8000, step=0.01)
    store.close()

    done = subprocess.run(
        ["bash", "-c", f"{SERI} trajectory export | head -1; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        env=seri_env(seri_home),
        cwd=project,
        check=False,
        timeout=60,
    )

    assert done.returncode == 0
    assert done.stderr == ""
    assert json.loads(done.stdout)["type"] == "header"


def test_lines_come_in_id_order_across_chunks_and_interleaved_runs(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    add_session(store, "e" * 32, T0)
    one = record_run(store, "e" * 32, T0)
    two = record_run(store, "e" * 32, T0 + 1)
    # Two runs writing at once, each more than one export chunk long.
    for n in range(1300):
        for recorder in (one, two):
            recorder.record(raw("tool_call", n=n), at=T0 + 2 + n)
        if n % 97 == 0:
            one.flush()
            two.flush()
    one.flush()
    two.flush()
    store.close()

    done = run_seri("trajectory", "export")

    lines = lines_of(done.stdout)
    assert len(lines) == 2 + 2 * 1300
    assert lines[0] == {**lines[0], "type": "header", "run": one.run_id}
    assert [line["n"] for line in lines[1:1301]] == list(range(1300))
    assert lines[1301]["type"] == "header" and lines[1301]["run"] == two.run_id
    assert [line["n"] for line in lines[1302:]] == list(range(1300))


def test_since_keeps_recent_records_and_the_headers_they_need(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    add_session(store, "f" * 32, T0)
    spans = record_run(
        store, "f" * 32, T0, [("tool_call", {"n": 1}, T0 + 1), ("tool_call", {"n": 2}, T0 + DAY)]
    )
    record_run(store, "f" * 32, T0 + 10, [("tool_call", {"n": 3}, T0 + 11)])
    late = record_run(store, "f" * 32, T0 + 2 * DAY, [("turn_end", {"n": 4}, T0 + 2 * DAY)])
    store.close()

    done = run_seri("trajectory", "export", "--since", "2026-01-01T12:00")

    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    assert [(line["type"], line["run"], line.get("n")) for line in lines] == [
        ("header", spans.run_id, None),
        ("tool_call", spans.run_id, 2),
        ("header", late.run_id, None),
        ("turn_end", late.run_id, 4),
    ]
    assert run_seri("trajectory", "export", "--since", "2026-02-01").stdout == ""
    bad = run_seri("trajectory", "export", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr


def test_session_takes_an_id_or_a_unique_prefix(run_seri: RunSeri, seri_home: Path) -> None:
    store = store_at(seri_home)
    session_with_run(store, "12ab" + "0" * 28, T0)
    session_with_run(store, "12cd" + "0" * 28, T0 + 10)
    session_with_run(store, "99ef" + "0" * 28, T0 + 20)
    store.close()

    done = run_seri("trajectory", "export", "--session", "12ab")

    assert done.returncode == 0, done.stderr
    assert {line["session"] for line in lines_of(done.stdout)} == {"12ab" + "0" * 28}
    assert len(lines_of(done.stdout)) == 4
    ambiguous = run_seri("trajectory", "export", "--session", "12")
    assert ambiguous.returncode == 2 and "more than one" in ambiguous.stderr
    assert ambiguous.stdout == ""
    unknown = run_seri("trajectory", "export", "--session", "77")
    assert unknown.returncode == 2 and unknown.stdout == ""


def test_a_body_seri_did_not_write_still_makes_a_line_jq_reads(
    run_seri: RunSeri, seri_home: Path
) -> None:
    store = store_at(seri_home)
    recorder = session_with_run(store, "a1" * 16, T0, events=0)
    with store.write() as conn:
        for body in ("not json", "{ }", '{ "spaced" : 1 }', "[1, 2]", "{}", '{"cut": "tr'):
            conn.execute(
                "INSERT INTO events(run_id, session_id, at, type, body) VALUES (?,?,?,?,?)",
                (recorder.run_id, "a1" * 16, T0 + 5, "odd", body),
            )
    store.close()

    done = run_seri("trajectory", "export")

    assert jq_accepts(done.stdout) == 7
    bodies = [
        {k: v for k, v in line.items() if k not in ("type", "session", "run", "at")}
        for line in lines_of(done.stdout)[1:]
    ]
    assert bodies == [
        {"body": "not json"},
        {},
        {"spaced": 1},
        {"body": "[1, 2]"},
        {},
        {"body": '{"cut": "tr'},
    ]


def test_export_with_nothing_recorded_prints_nothing(run_seri: RunSeri, seri_home: Path) -> None:
    done = run_seri("trajectory", "export")
    assert done.returncode == 0
    assert done.stdout == ""
    assert not (seri_home / "seri.db").exists()


def test_export_beside_a_live_writer_neither_blocks_it_nor_mixes_moments(
    seri_home: Path, project: Path
) -> None:
    store = store_at(seri_home)
    session_with_run(store, "0f" * 16, T0, events=30_000, step=0.001)
    add_session(store, "1f" * 16, T0)
    live = record_run(store, "1f" * 16, T0)
    before = scalar(store, "SELECT count(*) FROM events")

    stop = threading.Event()
    slowest = [0.0]
    written = [0]

    def writer() -> None:
        # Its own connection, as a chat in another process would have.
        own = store_at(seri_home)
        live.store = own
        n = 0
        while not stop.is_set():
            for _ in range(5):
                live.record(raw("tool_call", n=n), at=T0 + 1 + n)
                n += 1
            began = time.monotonic()
            live.flush()
            slowest[0] = max(slowest[0], time.monotonic() - began)
            written[0] = n
            time.sleep(0.002)
        own.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        time.sleep(0.1)
        done = subprocess.run(
            [SERI, "trajectory", "export"],
            capture_output=True,
            text=True,
            env=seri_env(seri_home),
            cwd=project,
            check=False,
            timeout=60,
        )
    finally:
        stop.set()
        thread.join()

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert slowest[0] < 1.0
    lines = lines_of(done.stdout)
    assert before + 2 <= len(lines) <= before + 2 + written[0]
    # Export fixed its bounds when it began: the live run shows a gap-free prefix.
    seen = [line["n"] for line in lines if line["run"] == live.run_id and "n" in line]
    assert seen == list(range(len(seen)))
    # With no reader left, a checkpoint empties the WAL: nothing kept it growing.
    busy, _, _ = store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
    assert busy == 0
    assert (seri_home / "seri.db-wal").stat().st_size == 0
    store.close()


@pytest.mark.parametrize("chunk", [1, 7])
def test_chunked_reader_matches_one_big_read(seri_home: Path, chunk: int, monkeypatch: Any) -> None:
    from seri.io.trajectories import trajectory_store

    store = store_at(seri_home)
    session_with_run(store, "2f" * 16, T0, events=23)
    session_with_run(store, "3f" * 16, T0 + 5, events=0)
    whole = b"".join(trajectory_store.export_chunks(store))
    monkeypatch.setattr(trajectory_store, "CHUNK_ROWS", chunk)
    assert b"".join(trajectory_store.export_chunks(store)) == whole
    assert whole.count(b"\n") == 2 + 23
    store.close()


def test_a_full_disk_is_a_clear_error(seri_home: Path, project: Path) -> None:
    store = store_at(seri_home)
    session_with_run(store, "4f" * 16, T0, events=10)
    store.close()

    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [SERI, "trajectory", "export"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=seri_env(seri_home),
            cwd=project,
            check=False,
            timeout=60,
        )

    assert done.returncode == 1
    assert done.stderr == (
        "seri: cannot write the export: No space left on device; the output is incomplete\n"
    )
