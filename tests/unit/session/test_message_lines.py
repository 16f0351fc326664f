"""`seri sessions show --json`'s lines, read from a real store a thousand at a time
(``conversations.message_line_chunks``): every live message once, in order, from the
compaction's wall up, and each chunk as cheap as the first however long the session."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from seri.io.session import conversations, session_table
from seri.io.session.store import Store, open_store
from seri.pure.session.records import user
from tests.inprocess import run_seri_here
from tests.store_writes import append_latest

# Eight agents' transcripts nobody here wrote (their sources: the folder's README).
REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real-sessions"

T0 = 1_780_000_000.0


def _session(home: Path, count: int) -> tuple[Store, str]:
    store = open_store(home)
    session_table.create_session(
        store,
        session_id="lines",
        project="/p",
        now=T0,
        model="m",
        system_prompt="",
        prompt_hashes={},
    )
    append_latest(store, "lines", [user(f"message {n}") for n in range(count)], T0)
    return store, "lines"


def _vm_steps_per_chunk(store: Store, session_id: str) -> list[int]:
    """SQLite's virtual-machine steps (in hundreds) spent on each chunk: a count, not a time."""
    steps = [0]

    def count() -> bool:
        steps[0] += 1
        return False  # go on

    store.connection.set_progress_handler(count, 100)
    per_chunk = []
    try:
        for _ in conversations.message_line_chunks(store, session_id):
            per_chunk.append(steps[0])
            steps[0] = 0
    finally:
        store.connection.set_progress_handler(None)
    return per_chunk


def test_each_live_message_once_in_order_from_the_wall_up(tmp_path: Path) -> None:
    store, session_id = _session(tmp_path, 3_001)
    wall = 1_500  # as a compaction leaves it: the rows below wait for the purge
    with store.write() as conn:
        conn.execute("UPDATE sessions SET compacted_before = ? WHERE id = ?", (wall, session_id))
    text = "".join(conversations.message_line_chunks(store, session_id))
    lines = [json.loads(line) for line in text.splitlines()]
    seqs = [line["seq"] for line in lines]
    assert seqs == list(range(wall, 3_001 + 1))  # seq 1 is the first message
    assert [line["text"] for line in lines] == [f"message {seq - 1}" for seq in seqs]


def test_a_late_chunk_costs_what_the_first_does(tmp_path: Path) -> None:
    store, session_id = _session(tmp_path, 8_000)
    steps = _vm_steps_per_chunk(store, session_id)
    assert len(steps) == 8
    # Before: each chunk walked the index from the session's first row and skipped what
    # earlier chunks had read, so here the eighth cost 1.6 times the first, and at 100,000
    # messages the hundredth ~7 times (`sessions show --json`: 3.4 s, now 0.9 s).
    assert max(steps) <= 1.1 * steps[0], steps


def test_real_transcripts_come_back_line_for_line_across_chunks_and_a_wall(
    tmp_path: Path,
) -> None:
    """All eight real transcripts as one older-release session (Russian, Japanese, tool
    calls with JSON arguments, long tool results), twice over so it crosses two chunk
    boundaries, imported by seri itself; then walled off as a compaction leaves it. Each
    line is the stored message as it is, with the keys show adds, from the wall up."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "sessions").mkdir(parents=True)
    project.mkdir()
    files = sorted(REAL.glob("*.jsonl.gz"))
    assert len(files) == 8
    transcripts = [
        gzip.decompress(path.read_bytes()).decode("utf-8").splitlines() for path in files
    ]
    header = json.loads(transcripts[0][0])
    header["id"] = "all-real"
    body = [line for lines in transcripts for line in lines[2:]]  # past header and system
    text = "\n".join([json.dumps(header), transcripts[0][1], *body, *body]) + "\n"
    (home / "sessions" / "all-real.jsonl").write_text(text, encoding="utf-8")
    env = {"SERI_HOME": str(home)}
    assert run_seri_here(("sessions", "show", "all-real", "--json"), env=env, cwd=project).code == 0
    store = open_store(home)
    try:
        total = store.connection.execute(
            "SELECT count(*) FROM messages WHERE session_id = 'all-real'"
        ).fetchall()[0][0]
        assert total > 2 * conversations.LINE_CHUNK
        wall = 333
        with store.write() as conn:
            conn.execute("UPDATE sessions SET compacted_before = ? WHERE id = 'all-real'", (wall,))
        stored = list(conversations.iter_message_bodies(store, "all-real"))
    finally:
        store.close()
    shown = run_seri_here(("sessions", "show", "all-real", "--json"), env=env, cwd=project)
    assert shown.code == 0, shown.stderr
    lines = [json.loads(line) for line in shown.stdout.splitlines()[1:]]
    assert [line["seq"] for line in lines] == [seq for seq, _ in stored]
    assert lines[0]["seq"] == wall
    for line, (seq, raw) in zip(lines, stored, strict=True):
        added = {key: line.pop(key) for key in ("type", "session", "seq", "created")}
        assert added["type"] == "message" and added["session"] == "all-real"
        assert line == json.loads(raw), seq
