"""`seri sessions search | rm | rename | export | list --limit`, on real processes and a real
store: the search index in step with appends, compactions, rewinds and deletes; hostile
queries answered in one line; no secret searchable; deletes that leave nothing behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import apsw
import pytest

from scripts.fake_model import FakeModel
from seri.io.session.schema import MIGRATIONS
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_compaction_windows import Seri, llama_slot

KEY = "sk-or-v1-" + "5eC7" * 16


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def chat(run_seri: RunSeri, fake: FakeModel, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
    done = run_seri("chat", *argv, env=env)
    assert done.returncode == 0, done.stderr
    return done


def search(run_seri: RunSeri, *argv: str) -> list[dict[str, Any]]:
    done = run_seri("sessions", "search", *argv, "--json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def only_session(run_seri: RunSeri) -> str:
    [line] = run_seri("sessions", "--json").stdout.splitlines()
    return str(json.loads(line)["id"])


def test_search_finds_what_was_written_ranked_with_a_snippet(run_seri: RunSeri) -> None:
    script = [
        {"tool_calls": [call("c1", "bash", command="echo zanzibar-flamingo")]},
        {"text": "The flamingo lives in Zanzibar, said the output."},
        {"text": "Nothing about birds here."},
    ]
    with FakeModel(script) as fake:
        chat(run_seri, fake, "--allow", "bash", "-p", "where does the flamingo live?")
        chat(run_seri, fake, "-p", "and something else")
    hits = search(run_seri, "flamingo")
    assert len(hits) == 4  # the prompt, the call, its output, the answer
    assert {hit["role"] for hit in hits} == {"user", "assistant", "tool"}
    assert all("[flamingo]" in hit["snippet"].lower() for hit in hits)
    assert hits == sorted(hits, key=lambda h: -h["score"])
    assert [h["seq"] for h in search(run_seri, '"said the output"')] == [4]
    assert search(run_seri, "flamin*") and not search(run_seri, "flamin")
    assert search(run_seri, "zanzibar flamingo", "--fts") == search(run_seri, "zanzibar flamingo")
    assert len(search(run_seri, "birds OR zanzibar", "--fts")) >= 2
    human = run_seri("sessions", "search", "Zanzibar")
    assert human.returncode == 0 and "[Zanzibar]" in human.stdout
    # Another project's sessions are found with --all only.
    elsewhere = run_seri("sessions", "search", "flamingo", cwd=Path("/"))
    assert elsewhere.stdout == "" and "no message matches" in elsewhere.stderr
    assert len(search(run_seri, "flamingo", "--all")) == 4


@pytest.mark.parametrize(
    ("text", "fts", "exit_code"),
    [
        ('"', False, 2),
        ("NEAR(", False, 0),
        ("AND OR NOT", False, 0),
        ("a:b ^c -d (e", False, 0),
        ("app.py", False, 0),
        ("'; DROP TABLE messages; --", False, 0),
        ("x" * 1001, False, 2),
        (" ".join(["w"] * 65), False, 2),
        ("NEAR(", True, 2),
        ('"unclosed', True, 2),
        ("nosuchcolumn:word", True, 2),
        ("*", True, 2),
        ("\x1b[2J \u2603", False, 0),
        ("\x1b[2J", True, 2),
    ],
)
def test_hostile_queries_get_one_clear_line(
    run_seri: RunSeri, text: str, fts: bool, exit_code: int
) -> None:
    with FakeModel([{"text": "app.py is here, near the end"}]) as fake:
        chat(run_seri, fake, "-p", "hello app.py")
    done = run_seri("sessions", "search", text, *(["--fts"] if fts else []))
    assert done.returncode == exit_code, done.stderr
    if exit_code:
        assert done.stderr.startswith("seri: ") and done.stderr.count("\n") == 1
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
        assert "\x1b" not in done.stderr
    assert run_seri("sessions", "--json").returncode == 0  # the store is as it was


def test_search_follows_rewinds_compactions_and_deletes(tmp_path: Path) -> None:
    seri = Seri(tmp_path, 16_000, compaction={"keep_tokens": 500})
    (seri.project / "notes.txt").write_text("x" * 9_000)
    with llama_slot() as fake:
        seri.fake = fake
        for task, word in enumerate(["aardvark", "bandicoot", "capybara", "dugong"]):
            fake.add_steps({"tool_calls": [call(f"n{task}", "read_file", path="notes.txt")]})
            fake.add_steps({"text": f"read it, {word}"})
            argv = ["chat", "-p", f"the {word} task"]
            assert seri(*(argv if task == 0 else [*argv[:1], "--continue", *argv[1:]])).code == 0
        session_id = seri.only_session()

        def found(word: str, kind: str = "") -> list[int]:
            ran = seri("sessions", "search", word, "--json")
            assert ran.code == 0, ran.stderr
            hits = [json.loads(line) for line in ran.stdout.splitlines()]
            return [hit["seq"] for hit in hits if hit["kind"] == kind]

        assert found("dugong") and found("aardvark")
        # A rewind to before the last task removes its messages from the search too.
        ran = seri("rewind", "--session", session_id, "--to", "4", "--conversation", "--yes")
        assert ran.code == 0, ran.stderr
        assert found("dugong") == [] and found("capybara")
        # A compaction evicts the oldest messages: gone from the search, the recap is there.
        assert seri("compact", "--session", session_id).code == 0
        assert found("aardvark") == []
        assert found("aardvark", kind="recap")  # the summarizer's words are searched instead
        # A deleted session leaves no word behind, in the index or in the file.
        assert seri("sessions", "rm", session_id, "--yes").code == 0
        assert found("capybara") == []
    data = b"".join(p.read_bytes() for p in seri.home.glob("seri.db*"))
    assert b"capybara" not in data and b"bandicoot" not in data


def test_no_secret_is_searchable(run_seri: RunSeri, seri_home: Path) -> None:
    script = [
        {"tool_calls": [call("c1", "bash", command="echo $OPENROUTER_API_KEY")]},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        chat(run_seri, fake, "--allow", "bash", "-p", f"use the key {KEY} please")
    for query in (KEY, "5eC75eC7*", f'"{KEY[:20]}"'):
        assert search(run_seri, query) == []
    data = b"".join(p.read_bytes() for p in seri_home.glob("seri.db*"))
    assert KEY.encode() not in data
    assert search(run_seri, "REDACTED")  # what is stored instead is what is found


def test_the_migration_indexes_messages_stored_before_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    conn = apsw.Connection(str(home / "seri.db"))
    conn.execute("PRAGMA journal_mode=WAL")
    for migration in MIGRATIONS[:3]:
        conn.execute(migration)
    conn.execute("PRAGMA user_version=3; PRAGMA application_id=1397051977")
    conn.execute(
        "INSERT INTO sessions(id, project, created, updated, title, message_count)"
        " VALUES ('old1', '/', 1, 2, 'old', 1)"
    )
    conn.execute(
        "INSERT INTO messages VALUES ('old1', 1, 'user', '', ?, 10, 1)",
        (json.dumps({"role": "user", "text": "a wombat from before"}),),
    )
    conn.execute(
        "INSERT INTO runs(id, session_id, started, header, last_at)"
        " VALUES ('r', 'old1', 1, '{}', 2)"
    )
    conn.execute(
        "INSERT INTO events(run_id, session_id, at, type, body) VALUES ('r', 'old1', 2,"
        " 'model_call', ?)",
        (json.dumps({"usage": {"input_tokens": 1200, "output_tokens": 30, "cost": 0.5}}),),
    )
    conn.close()
    done = subprocess.run(
        [SERI, "sessions", "search", "wombat", "--all", "--json"],
        env=seri_env(home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [hit] = [json.loads(line) for line in done.stdout.splitlines()]
    assert hit["session"] == "old1" and hit["snippet"] == "a [wombat] from before"
    listed = subprocess.run(
        [SERI, "sessions", "--all", "--json"],
        env=seri_env(home),
        capture_output=True,
        text=True,
        check=False,
    )
    row = json.loads(listed.stdout)
    assert (row["input_tokens"], row["output_tokens"], row["cost"]) == (1200, 30, 0.5)


def test_rm_rename_export_and_list(run_seri: RunSeri, seri_home: Path) -> None:
    script = [
        {"tool_calls": [call("t1", "task", description="look", prompt="count files")]},
        {"text": "none"},
        {"text": "No files.", "usage": {"cost": 0.25}},
        {"text": "second"},
    ]
    with FakeModel(script) as fake:
        chat(run_seri, fake, "--allow", "task", "-p", "how many files?")
        first = only_session(run_seri)
        chat(run_seri, fake, "-p", "another session")
    listed = [json.loads(line) for line in run_seri("sessions", "--json").stdout.splitlines()]
    assert [row["title"] for row in listed] == ["another session", "how many files?"]
    assert listed[1]["calls"] == 3 and listed[1]["cost"] == pytest.approx(0.25)
    assert run_seri("sessions", "--limit", "1", "--json").stdout.count("\n") == 1
    assert run_seri("sessions", "--limit", "0").returncode == 2
    table = run_seri("sessions").stdout
    assert "TOKENS" in table and "$0.2500" in table

    # rename: the title only; the conversation (and its revision) stays.
    before = run_seri("sessions", "show", first, "--json").stdout.splitlines()[1:]
    assert run_seri("sessions", "rename", first[:8], "counting", "files").returncode == 0
    assert (
        json.loads(run_seri("sessions", "show", first, "--json").stdout.splitlines()[0])["title"]
        == "counting files"
    )
    assert run_seri("sessions", "show", first, "--json").stdout.splitlines()[1:] == before
    assert run_seri("sessions", "rename", first, " ").returncode == 2

    # export: jsonl is `show --json`; markdown reads as a document.
    shown = run_seri("sessions", "show", first, "--json").stdout
    assert run_seri("sessions", "export", first).stdout == shown
    markdown = run_seri("sessions", "export", first, "--format", "markdown").stdout
    assert markdown.startswith("# counting files\n") and "## Assistant" in markdown
    assert "### Tool result `task` `t1`" in markdown
    assert run_seri("sessions", "export", first, "--format", "html").returncode == 2

    # rm: refused without --yes off a terminal; then the session, its subagent, its runs,
    # events and usage are gone, and the other session is untouched.
    refused = run_seri("sessions", "rm", first)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert run_seri("sessions", "rm", first, "nosuchid", "--yes").returncode == 2
    assert run_seri("sessions", "show", first).returncode == 0  # one typo deletes nothing
    done = run_seri("sessions", "rm", first[:6], "--yes")
    assert done.returncode == 0 and "deleted 2 sessions" in done.stderr
    conn = apsw.Connection(str(seri_home / "seri.db"))
    left = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        for table in ("sessions", "runs", "session_usage", "message_text")
    }
    conn.close()
    assert left["sessions"] == 1 and left["runs"] == 1 and left["session_usage"] == 1
    assert left["message_text"] == 2
    assert [
        json.loads(line)["title"] for line in run_seri("sessions", "--json").stdout.splitlines()
    ] == ["another session"]


def test_rm_refuses_a_session_a_live_chat_holds(run_seri: RunSeri, seri_home: Path) -> None:
    from seri.io.session.leases import Holder, release, take, this_process
    from seri.io.session.store import open_store

    with FakeModel([{"text": "hi"}]) as fake:
        chat(run_seri, fake, "-p", "hold me")
    session_id = only_session(run_seri)
    store = open_store(seri_home)
    me = this_process("seri chat")  # this test process: alive, on this host
    take(store, session_id, me)
    refused = run_seri("sessions", "rm", session_id, "--yes")
    assert refused.returncode == 1, refused.stderr
    assert f"pid {me.pid}" in refused.stderr and "nothing was deleted" in refused.stderr
    assert run_seri("sessions", "show", session_id).returncode == 0
    release(store, session_id, me)
    # A lease left by a process that is gone does not keep the session.
    take(store, session_id, Holder(2**22 + 7, me.host, "gone:1", "seri chat", 0.0))
    store.close()
    assert run_seri("sessions", "rm", session_id, "--yes").returncode == 0
    assert run_seri("sessions", "--json").stdout == ""


def test_a_fleet_of_sixteen_runs_on_one_store(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    """Sixteen `seri chat -p` at once on one profile (issue 15's fleet): none meets a busy
    store, and each run's messages, usage and trajectory are all there: searchable, summed,
    exported as a valid ATIF document."""
    from atif import Trajectory

    from tests.e2e.test_otlp_export import run_concurrently

    run_concurrently(seri_home, project, runs=16)
    listed = [json.loads(line) for line in run_seri("sessions", "--json").stdout.splitlines()]
    assert len(listed) == 16
    assert all(row["calls"] == 2 and row["messages"] == 4 for row in listed)
    for n in range(16):
        [hit] = search(run_seri, f'"task {n}"')
        assert hit["role"] == "user"
    exported = run_seri("trajectory", "export", "--format", "atif")
    documents = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(documents) == 16
    for document in documents:
        Trajectory.model_validate(document)
        assert document["final_metrics"]["extra"]["status"] == "done"
