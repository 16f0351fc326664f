"""`seri sessions [list] [--json] [--all]` and `seri sessions show ID [--json]`,
through the installed `seri` against sessions written with the store API."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from seri.io.session import conversations, session_table
from seri.io.session.store import open_store
from seri.pure.session.records import Message, ToolCall, assistant, tool_result, user
from tests.conftest import SERI, RunSeri, seri_env
from tests.store_writes import append_latest

SESSION_KEYS = [
    "type",
    "id",
    "project",
    "created",
    "updated",
    "model",
    "messages",
    "title",
    "parent",
]
# The listing adds the recorded usage of each session.
LIST_KEYS = [
    *SESSION_KEYS,
    "calls",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cost",
    "tags",
    "goal",
]
T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z


def _make(
    home: Path,
    session_id: str,
    project: str,
    updated: float,
    messages: list[Message],
    parent: str = "",
    model: str = "test/model",
) -> None:
    store = open_store(home)
    try:
        session_table.create_session(
            store,
            session_id=session_id,
            project=project,
            now=updated - 100,
            model=model,
            system_prompt="sys",
            prompt_hashes={},
            parent_id=parent,
        )
        if messages:
            append_latest(store, session_id, messages, updated)
    finally:
        store.close()


@pytest.fixture
def populated(seri_home: Path, project: Path) -> Path:
    call = ToolCall("call_1", "read_file", '{"path": "a.py"}')
    here = str(project)
    _make(seri_home, "abc111", here, T0 + 10, [user("oldest here"), assistant("ok")])
    _make(
        seri_home,
        "abc222",
        here,
        T0 + 30,
        [user("newest here"), assistant("", (call,)), tool_result(call, "print(1)")],
    )
    _make(seri_home, "abd333", here, T0 + 20, [user("middle here")])
    _make(seri_home, "zzz999", "/elsewhere", T0 + 40, [user("another project")])
    _make(seri_home, "kid-of-abc222", here, T0 + 50, [user("subagent task")], parent="abc222")
    return seri_home


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_list_shows_the_current_project_newest_first(populated: Path, run_seri: RunSeri) -> None:
    for args in (("sessions",), ("sessions", "list")):
        result = run_seri(*args)
        assert result.returncode == 0, result.stderr
        rows = result.stdout.splitlines()
        assert rows[0].split() == ["ID", "UPDATED", "MSGS", "TOKENS", "COST", "MODEL", "TITLE"]
        assert [row.split()[0] for row in rows[1:]] == ["abc222", "abd333", "abc111"]
        assert "zzz999" not in result.stdout  # another project
        assert "kid-of-abc222" not in result.stdout  # subagents are shown under their parent


# What the listing once imported and never needed: pathlib (with urllib.parse and ipaddress
# behind it); json is for --json only. Its command line is docopt's to read, like every other.
NOT_FOR_LISTING = {"pathlib", "json", "urllib.parse", "ipaddress"}


@pytest.mark.parametrize("args", [("sessions",), ("sessions", "list", "--all", "--limit", "9")])
def test_the_listing_loads_no_path_or_json(
    populated: Path, project: Path, args: tuple[str, ...]
) -> None:
    """A title cut with "…" (not ASCII) goes through the neutraliser, and docopt reads the
    command line."""
    _make(populated, "abe444", str(project), T0 + 60, [user("long title " * 20)])
    env = seri_env(populated, {"PYTHONPROFILEIMPORTTIME": "1"})
    done = subprocess.run(
        [SERI, *args], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "…" in done.stdout and "abe444" in done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert not NOT_FOR_LISTING & loaded
    assert "docopt" in loaded


def test_list_all_includes_every_project_with_a_project_column(
    populated: Path, run_seri: RunSeri
) -> None:
    result = run_seri("sessions", "--all")
    assert result.returncode == 0
    rows = result.stdout.splitlines()
    assert "PROJECT" in rows[0].split()
    assert [row.split()[0] for row in rows[1:]] == ["zzz999", "abc222", "abd333", "abc111"]


def test_list_json_has_stable_keys_in_a_stable_order(
    populated: Path, project: Path, run_seri: RunSeri
) -> None:
    result = run_seri("sessions", "--json", "--all")
    assert result.returncode == 0
    assert result.stderr == ""
    lines = _json_lines(result.stdout)
    assert [list(line) for line in lines] == [LIST_KEYS] * 4
    assert [line["id"] for line in lines] == ["zzz999", "abc222", "abd333", "abc111"]
    newest = lines[1]
    assert newest == {
        "type": "session",
        "id": "abc222",
        "project": str(project),
        "created": "2026-05-28T20:25:30.000Z",
        "updated": "2026-05-28T20:27:10.000Z",
        "model": "test/model",
        "messages": 3,
        "title": "newest here",
        "parent": None,
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_tokens": 0,
        "cost": None,
        "tags": {},
        "goal": None,
    }
    only_here = _json_lines(run_seri("sessions", "list", "--json").stdout)
    assert [line["id"] for line in only_here] == ["abc222", "abd333", "abc111"]


def test_the_project_is_the_resolved_working_directory(
    populated: Path, project: Path, tmp_path: Path, run_seri: RunSeri
) -> None:
    link = tmp_path / "link-to-project"
    os.symlink(project, link)
    result = run_seri("sessions", "--json", cwd=link)
    assert [line["id"] for line in _json_lines(result.stdout)] == ["abc222", "abd333", "abc111"]


def test_show_accepts_a_unique_prefix_and_prints_messages(
    populated: Path, run_seri: RunSeri
) -> None:
    result = run_seri("sessions", "show", "abd")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("session    abd333\n")
    assert "[1] user\n    middle here\n" in result.stdout

    tools = run_seri("sessions", "show", "abc222")  # exact id, though a prefix of another
    assert tools.returncode == 0, tools.stderr
    assert "subagents  kid-of-abc222" in tools.stdout
    assert '-> read_file({"path": "a.py"})  [call_1]' in tools.stdout
    assert "[3] tool read_file [call_1]" in tools.stdout


def test_show_json_is_a_session_line_then_message_lines(populated: Path, run_seri: RunSeri) -> None:
    result = run_seri("sessions", "show", "abc2", "--json")
    assert result.returncode == 0, result.stderr
    head, *messages = _json_lines(result.stdout)
    assert list(head)[: len(SESSION_KEYS)] == SESSION_KEYS
    assert head["id"] == "abc222"
    assert head["children"] == ["kid-of-abc222"]
    assert head["compactions"] == []
    assert [m["type"] for m in messages] == ["message"] * 3
    assert [m["seq"] for m in messages] == [1, 2, 3]
    assert all(m["session"] == "abc222" for m in messages)
    assert messages[0]["role"] == "user"
    assert messages[0]["text"] == "newest here"
    assert messages[1]["tool_calls"] == [
        {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'}
    ]
    assert messages[2]["tool_call_id"] == "call_1"


def test_an_ambiguous_prefix_is_an_error_listing_the_candidates(
    populated: Path, run_seri: RunSeri
) -> None:
    result = run_seri("sessions", "show", "abc")
    assert result.returncode == 2
    assert result.stdout == ""
    line = _one_line_error(result)
    assert "'abc' matches more than one session" in line
    for candidate in ("abc111", "abc222"):
        assert candidate in line
    assert "abd333" not in line


@pytest.mark.parametrize("raw", ["nope", "ABC", "a*", "ab?", "[a]bc"])
def test_an_unknown_id_is_a_one_line_error(populated: Path, run_seri: RunSeri, raw: str) -> None:
    result = run_seri("sessions", "show", raw)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"no session matches '{raw}'" in _one_line_error(result)


@pytest.mark.parametrize(
    "args",
    [
        ("sessions", "show"),
        ("sessions", "show", "a", "b"),
        ("sessions", "--bogus"),
        ("sessions", "list", "extra"),
        ("sessions", "frobnicate"),
    ],
)
def test_usage_errors_are_one_line_on_stderr_and_exit_2(
    seri_home: Path, run_seri: RunSeri, args: tuple[str, ...]
) -> None:
    result = run_seri(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("seri: ")
    assert result.stderr.rstrip().endswith("; see seri sessions --help")
    assert "Traceback" not in result.stderr
    assert "Warning: found unmatched" not in result.stderr
    assert not seri_home.exists()  # a usage error opens nothing


def test_help_goes_to_stdout_with_exit_0(run_seri: RunSeri) -> None:
    result = run_seri("sessions", "--help")
    assert result.returncode == 0
    assert "Usage:" in result.stdout
    assert "--all" in result.stdout


def test_an_empty_profile_lists_nothing_and_says_so_on_stderr(run_seri: RunSeri) -> None:
    result = run_seri("sessions")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "No sessions in" in result.stderr
    json_result = run_seri("sessions", "--json")
    assert json_result.returncode == 0
    assert json_result.stdout == ""


def test_text_that_utf8_cannot_hold_is_stored_and_shown_without_crashing(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    lone = "half an emoji \ud83d here"
    _make(seri_home, "odd1", str(project), T0, [user(lone), assistant("ünïcödé ✓ 日本")])
    store = open_store(seri_home)
    try:
        assert conversations.load_messages(store, "odd1")[0].text == lone
    finally:
        store.close()
    result = run_seri("sessions", "show", "odd1", "--json")
    assert result.returncode == 0, result.stderr
    _head, first, second = _json_lines(result.stdout)
    assert first["text"] == lone  # the \ud83d escape round-trips through JSON
    assert second["text"] == "ünïcödé ✓ 日本"
    human = run_seri("sessions", "show", "odd1")
    assert human.returncode == 0, human.stderr
    listing = run_seri("sessions", "--json")
    assert listing.returncode == 0, listing.stderr
    assert _json_lines(listing.stdout)[0]["title"] == "half an emoji \ufffd here"
