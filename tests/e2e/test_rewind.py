"""Checkpoints and rewind, end to end: `/rewind` from scripted stdin and `seri rewind` from the
shell, against the loopback fake model and real files in a real project directory.

What is proved here (issue 6, points 1 to 3):
- before every write_file and edit the prior content (or that the file did not exist) is kept
  in seri.db, grouped under the user message that led to it;
- a rewind puts the conversation, the files, or both back to just before a user message, and
  the files come back byte for byte (CRLF, no final newline, non-UTF-8 bytes, deleted files);
- it never steps across a compaction: the refusal says why and changes nothing;
- files changed outside seri since its write are named and need a confirmation;
- the list says bash changes are not tracked;
- only the 20 most recently touched sessions of a project keep their checkpoints; an older
  session keeps its conversation, and a rewind in it says its file history is gone.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env

WRITE = ("--allow", "write_file", "--allow", "edit")
# Bytes that a text round trip would damage: CRLF, a NUL, invalid UTF-8, no final newline.
ORIGINAL_A = b"first line\r\nsecond \x00 line\r\n\xff\xfe not utf-8\r\nno final newline"


def _write(id_: str, path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [call(id_, "write_file", path=path, content=content)]}


def _edit(id_: str, path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [call(id_, "edit", path=path, old_string=old, new_string=new)]}


def _only_session(run_seri: RunSeri) -> str:
    lines = run_seri("sessions", "--json").stdout.splitlines()
    assert len(lines) == 1, lines
    return str(json.loads(lines[0])["id"])


def _listing(run_seri: RunSeri, session_id: str) -> list[dict[str, Any]]:
    result = run_seri("rewind", "--session", session_id, "--list", "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _roles(run_seri: RunSeri, session_id: str) -> list[str]:
    shown = run_seri("sessions", "show", session_id, "--json").stdout.splitlines()
    return [json.loads(line)["role"] for line in shown[1:]]


def _three_turns() -> list[dict[str, Any]]:
    """Turn 1 rewrites a.txt and creates b.txt; turn 2 edits a.txt; turn 3 creates c/d.txt."""
    return [
        _write("w1", "a.txt", "version one\n"),
        _write("w2", "b.txt", "brand new\n"),
        {"text": "turn one done"},
        _edit("e1", "a.txt", "one", "two"),
        {"text": "turn two done"},
        _write("w3", "c/d.txt", "deep\n"),
        _edit("e2", "c/d.txt", "deep", "deeper"),
        {"text": "turn three done"},
    ]


def test_checkpoints_are_stored_per_user_message(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    (project / "a.txt").write_bytes(ORIGINAL_A)
    with FakeModel(_three_turns()) as fake:
        result = run_seri("chat", *WRITE, input="one\ntwo\nthree\n", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    session_id = _only_session(run_seri)
    db = sqlite3.connect(seri_home / "seri.db")
    rows = db.execute(
        "SELECT m.body, c.path, c.existed, c.content FROM checkpoints c JOIN messages m"
        " ON m.session_id = c.session_id AND m.seq = c.user_seq WHERE c.session_id = ?"
        " ORDER BY c.id",
        (session_id,),
    ).fetchall()
    db.close()
    got = [
        (json.loads(body)["text"], path, bool(existed), content)
        for body, path, existed, content in rows
    ]
    assert got == [
        ("one", "a.txt", True, ORIGINAL_A),
        ("one", "b.txt", False, None),
        ("two", "a.txt", True, b"version one\n"),
        # Within one turn only the state before the turn is kept.
        ("three", "c/d.txt", False, None),
    ]
    listed = _listing(run_seri, session_id)
    assert [(t["n"], t["text"], t["files"]) for t in listed] == [
        (1, "one", ["a.txt", "b.txt"]),
        (2, "two", ["a.txt"]),
        (3, "three", ["c/d.txt"]),
    ]


def test_scripted_rewind_of_both_restores_files_byte_for_byte(
    run_seri: RunSeri, project: Path
) -> None:
    (project / "a.txt").write_bytes(ORIGINAL_A)
    script = [*_three_turns(), {"text_from_last_user": True}]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            *WRITE,
            input="one\ntwo\nthree\n/rewind\n/rewind 2\nagain\n",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    # The list: each user message with the files its turn changed, and the bash caveat.
    assert "one" in result.stderr and "[a.txt, b.txt]" in result.stderr
    assert "[c/d.txt]" in result.stderr
    assert "bash" in result.stderr and "not tracked" in result.stderr
    # Files as they were just before message 2: after turn one.
    assert (project / "a.txt").read_bytes() == b"version one\n"
    assert (project / "b.txt").read_bytes() == b"brand new\n"
    assert not (project / "c" / "d.txt").exists()
    # The conversation as it was just before message 2: "again" follows turn one's answer.
    last = requests[-1]["messages"]
    texts = [m.get("content") for m in last if m["role"] == "user"]
    assert texts == ["one", "again"]
    assert last[-2] == {"role": "assistant", "content": "turn one done"}
    session_id = _only_session(run_seri)
    assert [t["text"] for t in _listing(run_seri, session_id)] == ["one", "again"]


def test_shell_rewind_files_then_conversation(run_seri: RunSeri, project: Path) -> None:
    (project / "a.txt").write_bytes(ORIGINAL_A)
    with FakeModel(_three_turns()) as fake:
        result = run_seri("chat", *WRITE, input="one\ntwo\nthree\n", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    session_id = _only_session(run_seri)
    roles_before = _roles(run_seri, session_id)

    # --files: the files go back to before message 2; the conversation stays whole.
    files = run_seri("rewind", "--session", session_id[:8], "--to", "2", "--files")
    assert files.returncode == 0, files.stderr
    assert files.stdout == ""
    assert (project / "a.txt").read_bytes() == b"version one\n"
    assert (project / "b.txt").read_bytes() == b"brand new\n"
    assert not (project / "c" / "d.txt").exists()
    assert _roles(run_seri, session_id) == roles_before
    assert len(_listing(run_seri, session_id)) == 3

    # --files again, further back: nothing was changed outside seri, so no confirmation.
    again = run_seri("rewind", "--session", session_id, "--to", "1", "--files")
    assert again.returncode == 0, again.stderr
    assert (project / "a.txt").read_bytes() == ORIGINAL_A
    assert not (project / "b.txt").exists()

    # --conversation: the messages from 3 on go, the files stay as they are.
    conv = run_seri("rewind", "--session", session_id, "--to", "3", "--conversation")
    assert conv.returncode == 0, conv.stderr
    assert (project / "a.txt").read_bytes() == ORIGINAL_A
    assert [t["text"] for t in _listing(run_seri, session_id)] == ["one", "two"]
    assert _roles(run_seri, session_id)[-1] == "assistant"

    # And the default, both, with --to 1: nothing left of the conversation.
    both = run_seri("rewind", "--session", session_id, "--to", "1")
    assert both.returncode == 0, both.stderr
    assert _listing(run_seri, session_id) == []
    assert _roles(run_seri, session_id) == []
    assert (project / "a.txt").read_bytes() == ORIGINAL_A
    # Only files are restored: seri's new c/d.txt is gone (its empty directory c/ may stay).
    assert sorted(p.name for p in project.rglob("*") if not p.is_dir()) == ["a.txt"]


def test_list_shapes(run_seri: RunSeri, project: Path) -> None:
    script: list[dict[str, Any]] = [
        _write("w1", "x.txt", "x\n"),
        {"tool_calls": [call("b1", "bash", command="echo hi > y.txt")]},
        {"text": "ok"},
    ]
    with FakeModel(script) as fake:
        run_seri("chat", *WRITE, "--allow", "bash", input="make x and y\n", env=chat_env(fake))
    session_id = _only_session(run_seri)
    listed = run_seri("rewind", "--session", session_id, "--list", "--json")
    objects = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [{k: o[k] for k in ("n", "text", "files")} for o in objects] == [
        {"n": 1, "text": "make x and y", "files": ["x.txt"]}
    ]
    human = run_seri("rewind", "--session", session_id)
    assert human.returncode == 0
    assert "make x and y" in human.stdout and "x.txt" in human.stdout
    assert "bash" in human.stdout + human.stderr and "not tracked" in human.stdout + human.stderr
    # bash's file is not put back, and the rewind says so.
    both = run_seri("rewind", "--session", session_id, "--to", "1")
    assert both.returncode == 0, both.stderr
    assert not (project / "x.txt").exists()
    assert (project / "y.txt").exists()
    assert "bash" in both.stderr


def _compacted_session(run_seri: RunSeri, seri_home: Path, project: Path) -> str:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"compaction": {"keep_tokens": 40}}))
    script: list[dict[str, Any]] = [
        _write("w1", "a.txt", "one\n"),
        {"text": "first done " + "x" * 400},
        _write("w2", "a.txt", "two\n"),
        {"text": "second done " + "y" * 400},
        {"text": '{"goal": "test", "progress": ["wrote a.txt"], "blockers": [], "next_steps": []}'},
        _write("w3", "a.txt", "three\n"),
        {"text": "third done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat", *WRITE, input="first\nsecond\n/compact\nthird\n", env=chat_env(fake)
        )
    assert result.returncode == 0, result.stderr
    assert "compacted: " in result.stderr, result.stderr
    return _only_session(run_seri)


def test_rewind_never_steps_across_a_compaction(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    session_id = _compacted_session(run_seri, seri_home, project)
    listed = _listing(run_seri, session_id)
    assert [t["text"] for t in listed] == ["third"]
    roles = _roles(run_seri, session_id)
    content = (project / "a.txt").read_bytes()

    refused = run_seri("rewind", "--session", session_id, "--to", "0")
    assert refused.returncode != 0
    assert "compaction" in refused.stderr and "recap" in refused.stderr
    assert "nothing" in refused.stderr.lower()
    assert _roles(run_seri, session_id) == roles
    assert (project / "a.txt").read_bytes() == content

    with FakeModel([]) as fake:
        scripted = run_seri(
            "chat",
            "--resume",
            session_id,
            input="/rewind\n/rewind 0 files\n",
            env=chat_env(fake),
        )
    assert scripted.returncode != 0
    listing, _, refusal = scripted.stderr.partition("seri: cannot rewind")
    # The list offers only what came after the recap.
    assert "third" in listing and "first" not in listing and "second" not in listing
    assert "compaction" in refusal and "recap" in refusal
    assert _roles(run_seri, session_id) == roles
    assert (project / "a.txt").read_bytes() == content

    # Message 1 is the oldest since the recap: rewinding to it keeps the recap.
    ok = run_seri("rewind", "--session", session_id, "--to", "1")
    assert ok.returncode == 0, ok.stderr
    assert (project / "a.txt").read_bytes() == b"two\n"
    shown = run_seri("sessions", "show", session_id, "--json").stdout.splitlines()
    kinds = [json.loads(line).get("kind") for line in shown[1:]]
    assert "recap" in kinds


def test_files_changed_outside_seri_need_a_confirmation(run_seri: RunSeri, project: Path) -> None:
    (project / "a.txt").write_bytes(b"original\n")
    script = [_write("w1", "a.txt", "seri's\n"), _write("w2", "b.txt", "b\n"), {"text": "ok"}]
    with FakeModel(script) as fake:
        run_seri("chat", *WRITE, input="change a\n", env=chat_env(fake))
    session_id = _only_session(run_seri)
    (project / "a.txt").write_bytes(b"the person's own edit\n")

    refused = run_seri("rewind", "--session", session_id, "--to", "1", "--files")
    assert refused.returncode != 0
    assert "a.txt" in refused.stderr and "b.txt" not in refused.stderr
    assert "--yes" in refused.stderr
    assert (project / "a.txt").read_bytes() == b"the person's own edit\n"
    assert (project / "b.txt").exists()

    with FakeModel([]) as fake:
        scripted = run_seri("chat", "--continue", input="/rewind 1 files\n", env=chat_env(fake))
    assert scripted.returncode != 0
    assert "a.txt" in scripted.stderr
    assert (project / "a.txt").read_bytes() == b"the person's own edit\n"
    assert (project / "b.txt").exists()

    with FakeModel([]) as fake:
        confirmed = run_seri(
            "chat", "--continue", input="/rewind 1 files --yes\n", env=chat_env(fake)
        )
    assert confirmed.returncode == 0, confirmed.stderr
    assert (project / "a.txt").read_bytes() == b"original\n"
    assert not (project / "b.txt").exists()

    # The conversation alone needs no confirmation: no file is touched.
    (project / "a.txt").write_bytes(b"edited again\n")
    conv = run_seri("rewind", "--session", session_id, "--to", "1", "--conversation")
    assert conv.returncode == 0, conv.stderr
    assert (project / "a.txt").read_bytes() == b"edited again\n"


def test_only_the_20_most_recent_sessions_keep_checkpoints(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    sessions = 21
    script: list[dict[str, Any]] = []
    lines = []
    for i in range(sessions):
        script += [_write(f"w{i}", "f.txt", f"version {i}\n"), {"text": f"wrote {i}"}]
        lines += [f"task {i}", "/clear"]
    with FakeModel(script) as fake:
        result = run_seri("chat", *WRITE, input="\n".join(lines) + "\n", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    # /clear printed each previous session's id on stdout (between the answers), oldest first.
    ids = [line for line in result.stdout.split() if len(line) == 32]
    assert len(ids) == sessions
    db = sqlite3.connect(seri_home / "seri.db")
    kept = {row[0] for row in db.execute("SELECT DISTINCT session_id FROM checkpoints")}
    stored = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    db.close()
    assert kept == set(ids[1:])
    assert stored == sessions

    # The oldest keeps its conversation, but its file history is gone, and a rewind says so.
    assert _roles(run_seri, ids[0]) == ["user", "assistant", "tool", "assistant"]
    before = (project / "f.txt").read_bytes()
    gone = run_seri("rewind", "--session", ids[0], "--to", "1", "--files")
    assert "file history" in gone.stderr and "gone" in gone.stderr
    assert (project / "f.txt").read_bytes() == before
    listed = run_seri("rewind", "--session", ids[0])
    assert "gone" in listed.stdout + listed.stderr

    # The second oldest still has its own.
    second = run_seri("rewind", "--session", ids[1], "--to", "1", "--files", "--yes")
    assert second.returncode == 0, second.stderr
    assert (project / "f.txt").read_bytes() == b"version 0\n"


def test_writes_that_change_nothing_leave_no_checkpoint(run_seri: RunSeri, project: Path) -> None:
    (project / "adir").mkdir()
    (project / "a.txt").write_bytes(b"keep\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                # A directory cannot be checkpointed or written: an error result, not a crash.
                call("w1", "write_file", path="adir", content="x"),
                call("e1", "edit", path="a.txt", old_string="missing", new_string="y"),
            ]
        },
        {"text": "neither worked"},
        {
            "tool_calls": [
                call("e2", "edit", path="a.txt", old_string="missing", new_string="y"),
                call("e3", "edit", path="a.txt", old_string="keep", new_string="kept"),
            ]
        },
        {"text": "the second edit worked"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", *WRITE, input="try\ntry again\n", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    failed = [m for m in requests[1]["messages"] if m["role"] == "tool"]
    assert "directory" in failed[0]["content"]
    session_id = _only_session(run_seri)
    assert [t["files"] for t in _listing(run_seri, session_id)] == [[], ["a.txt"]]
    assert (project / "a.txt").read_bytes() == b"kept\n"
    back = run_seri("rewind", "--session", session_id, "--to", "2", "--files")
    assert back.returncode == 0, back.stderr
    assert (project / "a.txt").read_bytes() == b"keep\n"


def test_seris_own_writes_are_never_taken_for_someone_elses(
    run_seri: RunSeri, project: Path
) -> None:
    (project / "a.txt").write_bytes(b"0\n")
    script: list[dict[str, Any]] = []
    for i in range(1, 4):
        script += [_write(f"w{i}", "a.txt", f"{i}\n"), {"text": f"wrote {i}"}]
    with FakeModel(script) as fake:
        run_seri("chat", *WRITE, input="one\ntwo\nthree\n", env=chat_env(fake))
    session_id = _only_session(run_seri)
    # The conversation goes back, the file stays as seri left it in turn three...
    conv = run_seri("rewind", "--session", session_id, "--to", "3", "--conversation")
    assert conv.returncode == 0, conv.stderr
    assert (project / "a.txt").read_bytes() == b"3\n"
    # ...so a later file rewind needs no confirmation: nobody else changed it.
    files = run_seri("rewind", "--session", session_id, "--to", "2", "--files")
    assert files.returncode == 0, files.stderr
    assert (project / "a.txt").read_bytes() == b"1\n"
    # Nor after a file rewind, nor after one of both.
    both = run_seri("rewind", "--session", session_id, "--to", "2")
    assert both.returncode == 0, both.stderr
    assert (project / "a.txt").read_bytes() == b"1\n"
    first = run_seri("rewind", "--session", session_id, "--to", "1", "--files")
    assert first.returncode == 0, first.stderr
    assert (project / "a.txt").read_bytes() == b"0\n"
