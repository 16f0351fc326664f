"""Goals (`seri chat -p TASK --until CMD`, `/goal`) on the installed seri against the scripted
loopback model: the check's failures reach the model as its next task, exit 0 when the check
passes, each budget and the stall rule with its status and exit status, the goal kept with the
session (sessions show, sessions --json, --continue, a compaction), a check that hangs, and a
check that tries to write a protected path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

KEY = "sk-or-v1-" + "9b2c" * 16


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def seri(
    run_seri: RunSeri, fake: FakeModel, *argv: str, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_seri(
        "chat",
        *argv,
        env={"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY},
        input=input,
        timeout=timeout,
    )


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "result", lines
    record: dict[str, Any] = lines[-1]
    assert record["exit_status"] == done.returncode, (record, done.stderr)
    return record


def user_texts(fake: FakeModel) -> list[str]:
    """The newest user message of each request the model received."""
    texts = []
    for body in fake.requests:
        users = [m for m in body["messages"] if m["role"] == "user"]
        content = users[-1]["content"]
        texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def write(path: str, content: str, n: int) -> dict[str, Any]:
    return {"tool_calls": [call(f"w{n}", "write_file", path=path, content=content)]}


def test_a_goal_passes_after_two_failing_checks(run_seri: RunSeri, project: Path) -> None:
    check = (
        "python3 -c \"import sys; t = open('n.txt').read(); print('n is', t); sys.exit(t != '3')\""
    )
    steps = [
        write("n.txt", "1", 1),
        {"text": "wrote 1"},
        write("n.txt", "2", 2),
        {"text": "wrote 2"},
        write("n.txt", "3", 3),
        {"text": "wrote 3"},
    ]
    with FakeModel(steps) as fake:
        done = seri(
            run_seri,
            fake,
            "-p",
            "make n.txt hold 3",
            "--until",
            check,
            "--allow",
            "write_file",
            "--output-format",
            "json",
        )
        seen = user_texts(fake)
    assert done.returncode == 0, done.stderr
    record = result_of(done)
    assert record["status"] == "done" and record["answer"] == "wrote 3"
    assert record["goal"] == {
        "text": "make n.txt hold 3",
        "command": check,
        "status": "done",
        "last_end": "done",
        "checks": 3,
    }
    # The failing check's output (and its exit status) is the model's next task.
    assert seen[2].startswith(f"The check `{check}` failed with exit 1:")
    assert "n is 1" in seen[2] and "n is 2" in seen[4]
    assert (
        "check 1: " in done.stderr
        and "check 3: " in done.stderr
        and "the goal is met" in done.stderr
    )
    # Each check is in the trajectory as a goal_check, and the end as a goal_end.
    exported = run_seri("trajectory", "export", "--session", record["session"])
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    checks = [e for e in events if e["type"] == "goal_check"]
    assert [(c["n"], c["exit_code"], c["ok"]) for c in checks] == [
        (1, 1, False),
        (2, 1, False),
        (3, 0, True),
    ]
    assert "n is 1" in checks[0]["output"] and checks[0]["seconds"] >= 0
    assert [e["status"] for e in events if e["type"] == "goal_end"] == ["done"]
    # ... and in the other exports: ATIF (a step's extra) and OTLP (span events).
    atif = run_seri("trajectory", "export", "--format", "atif", "--session", record["session"])
    assert atif.returncode == 0 and atif.stdout.count("goal_check") >= 3, atif.stderr
    otlp = run_seri(
        "trajectory",
        "export",
        "--format",
        "otlp",
        "--session",
        record["session"],
        env={"OTEL_SERVICE_NAME": "offline"},
    )
    assert otlp.returncode == 0, otlp.stderr
    assert otlp.stdout.count('"seri.goal_check.exit_code"') == 3
    assert '"seri.goal_end.status"' in otlp.stdout


def json_run(
    run_seri: RunSeri, fake: FakeModel, *argv: str, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return seri(run_seri, fake, *argv, "--output-format", "json", **kw)


@pytest.mark.parametrize(
    ("status", "exit_code", "steps", "argv"),
    [
        # The same failure (numbers aside) and no file changed, three times in a row.
        ("stalled", 3, [{"text": "done"}] * 3, ("--until", 'echo "FAILED in 0.$RANDOM s"; exit 1')),
        ("max_checks", 4, [{"text": "done"}] * 2, ("--until", "exit 1", "--max-checks", "2")),
        # A task is two turns (a write, then the answer): the second task's write is turn 3.
        (
            "max_turns",
            1,
            [write("a.txt", "1", 1), {"text": "one"}, write("a.txt", "2", 2), {"text": "two"}],
            ("--until", "exit 1", "--max-turns", "3", "--allow", "write_file"),
        ),
        (
            "budget",
            1,
            [{"text": "one", "usage": {"cost": 0.3}}, {"text": "two", "usage": {"cost": 0.3}}],
            ("--until", "exit 1", "--max-budget-usd", "0.5"),
        ),
    ],
)
def test_each_end_of_a_goal_has_its_status_and_exit(
    run_seri: RunSeri,
    status: str,
    exit_code: int,
    steps: list[dict[str, Any]],
    argv: tuple[str, ...],
) -> None:
    with FakeModel(steps) as fake:
        done = json_run(run_seri, fake, "-p", "go", *argv)
    record = result_of(done)
    assert (record["status"], done.returncode) == (status, exit_code), done.stderr
    # Unmet, the goal stays open (the session's next task is checked by it again).
    assert (record["goal"]["status"], record["goal"]["last_end"]) == ("open", status)
    assert record["error"]
    listed = [json.loads(line) for line in run_seri("sessions", "--json").stdout.splitlines()]
    assert [s["goal"]["last_end"] for s in listed] == [status]


def test_wall_time_stops_a_task_under_way(run_seri: RunSeri) -> None:
    # The model never answers: only the wall-time alarm ends the run.
    with FakeModel([{"text": "x", "silent_seconds": 30}]) as fake:
        started = time.monotonic()
        done = json_run(run_seri, fake, "-p", "go", "--until", "exit 1", "--max-wall", "2")
        took = time.monotonic() - started
    record = result_of(done)
    assert (record["status"], done.returncode) == ("wall", 5), done.stderr
    assert took < 20 and "--max-wall" in record["error"]


def test_wall_time_after_a_check(run_seri: RunSeri) -> None:
    # Each check takes a while and fails differently; the wall limit ends the run (between
    # checks, or stopping one under way), however many checks ran by then.
    steps = [write("a.txt", str(n), n) if n % 2 else {"text": "done"} for n in range(1, 40)]
    with FakeModel(steps) as fake:
        done = json_run(
            run_seri,
            fake,
            "-p",
            "go",
            "--until",
            "sleep 0.4; exit 1",
            "--max-wall",
            "2",
            "--allow",
            "write_file",
        )
    record = result_of(done)
    assert (record["status"], done.returncode) == ("wall", 5), done.stderr
    exported = run_seri("trajectory", "export", "--session", record["session"])
    checks = [json.loads(x) for x in exported.stdout.splitlines() if '"goal_check"' in x]
    assert record["goal"]["checks"] == len(checks) >= 1


def test_a_hanging_check_is_stopped_at_its_time_limit(run_seri: RunSeri, seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"goal": {"check_timeout": 1}}))
    with FakeModel([{"text": "done"}, {"text": "again"}]) as fake:
        started = time.monotonic()
        done = json_run(run_seri, fake, "-p", "go", "--until", "sleep 60", "--max-checks", "2")
        took = time.monotonic() - started
        seen = user_texts(fake)
    record = result_of(done)
    assert (record["status"], done.returncode) == ("max_checks", 4), done.stderr
    assert took < 15
    assert seen[1].startswith("The check `sleep 60` did not finish within 1 s and was stopped")
    exported = run_seri("trajectory", "export", "--session", record["session"])
    checks = [json.loads(x) for x in exported.stdout.splitlines() if '"goal_check"' in x]
    assert [(c["timed_out"], c["exit_code"]) for c in checks] == [(True, None), (True, None)]


def test_the_goal_is_kept_with_the_session_and_continued(run_seri: RunSeri, project: Path) -> None:
    check = "test -f ok.txt"
    with FakeModel([{"text": "not yet"}, {"text": "still not"}]) as fake:
        first = json_run(
            run_seri, fake, "-p", "create ok.txt", "--until", check, "--max-checks", "2"
        )
    assert result_of(first)["status"] == "max_checks"
    session = result_of(first)["session"]
    shown = run_seri("sessions", "show", session)
    assert f"open (last run: max_checks), 2 checks, until `{check}` exits 0: create ok.txt" in (
        shown.stdout
    )
    head = json.loads(run_seri("sessions", "show", session, "--json").stdout.splitlines()[0])
    assert head["goal"] == {
        "text": "create ok.txt",
        "command": check,
        "status": "open",
        "last_end": "max_checks",
        "checks": 2,
    }
    # The goal is open: --continue goes on toward it without naming it, and the failing check
    # reaches the model again.
    steps = [{"text": "nothing yet"}, write("ok.txt", "ok", 1), {"text": "made it"}]
    with FakeModel(steps) as fake:
        again = json_run(run_seri, fake, "--continue", "-p", "go on", "--allow", "write_file")
        seen = user_texts(fake)
    record = result_of(again)
    assert (record["status"], record["session"]) == ("done", session), again.stderr
    assert seen[1].startswith(f"The check `{check}` failed with exit 1")
    assert record["goal"] == {
        "text": "create ok.txt",
        "command": check,
        "status": "done",
        "last_end": "done",
        "checks": 4,
    }


def test_an_open_goal_is_continued_without_naming_it(run_seri: RunSeri, project: Path) -> None:
    check = "test -f ok.txt"
    # /goal in a scripted chat that ends before its next task: the goal waits, open.
    with FakeModel([]) as fake:
        set_it = seri(run_seri, fake, input=f"/goal {check}\n")
    assert "goal set" in set_it.stderr, set_it.stderr
    steps = [{"text": "nothing yet"}, write("ok.txt", "ok", 1), {"text": "made it"}]
    with FakeModel(steps) as fake:
        done = json_run(run_seri, fake, "--continue", "-p", "make ok.txt", "--allow", "write_file")
        seen = user_texts(fake)
    record = result_of(done)
    assert (record["status"], done.returncode, record["goal"]["checks"]) == ("done", 0, 2)
    assert seen[1].startswith(f"The check `{check}` failed with exit 1")


def test_goal_slash_commands(run_seri: RunSeri) -> None:
    with FakeModel([]) as fake:
        done = seri(run_seri, fake, input="/goal\n/goal exit 0\n/goal\n/goal clear\n/goal\n")
    err = done.stderr
    assert err.count("No goal: /goal CMD") == 2, err
    assert "goal (open): until `exit 0` exits 0" in err and "goal cleared" in err


def test_a_check_the_rules_deny_is_refused_before_any_call(
    run_seri: RunSeri, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"permissions": {"deny": ["bash(rm *)"]}}))
    with FakeModel([{"text": "hi"}]) as fake:
        done = seri(run_seri, fake, "-p", "go", "--until", "rm -rf build")
        calls = len(fake.requests)
    assert done.returncode == 2 and calls == 0
    assert "the check `rm -rf build` is denied by rule bash(rm *)" in done.stderr


def _sandboxes() -> list[str]:
    from seri.io.permissions.sandbox import detect

    return [kind for kind in ("bubblewrap", "landlock") if detect(kind).kind == kind]


@pytest.mark.skipif(not _sandboxes(), reason="no OS sandbox on this machine")
def test_a_check_cannot_write_a_protected_path(run_seri: RunSeri, project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = project / ".git" / "config"
    before = config.read_bytes()
    # The path is put together at run time: only the OS sandbox can stop this write.
    check = "python3 -c \"import pathlib; pathlib.Path('.g' + 'it/config').write_text('pwned')\""
    with FakeModel([{"text": "done"}]) as fake:
        done = json_run(run_seri, fake, "-p", "go", "--until", check, "--max-checks", "1")
    record = result_of(done)
    assert record["status"] == "max_checks", done.stderr
    assert config.read_bytes() == before
    exported = run_seri("trajectory", "export", "--session", record["session"])
    checks = [json.loads(x) for x in exported.stdout.splitlines() if '"goal_check"' in x]
    assert checks[0]["exit_code"] == 1 and "Error" in checks[0]["output"]


def test_a_real_run_fixes_a_failing_test_until_pytest_passes(
    run_seri: RunSeri, project: Path
) -> None:
    """A small repository with a failing test, `python -m pytest -q` as the goal's check, and
    a scripted model that first answers without fixing anything (the check's real failure
    goes back to it), then fixes the bug."""
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    fix = call("e1", "edit", path="calc.py", old_string="return a - b", new_string="return a + b")
    steps = [
        {"text": "I looked; it should pass."},
        {"tool_calls": [fix]},
        {"text": "Fixed add: it subtracted."},
    ]
    venv_bin = str(Path(sys.executable).parent)  # `python` with pytest, first on PATH
    with FakeModel(steps) as fake:
        done = run_seri(
            "chat",
            "-p",
            "make the tests pass",
            "--until",
            "python -m pytest -q -p no:cacheprovider",
            "--allow",
            "edit",
            "--output-format",
            "json",
            env={
                "SERI_BASE_URL": fake.base_url,
                "OPENROUTER_API_KEY": KEY,
                "PATH": f"{venv_bin}:{os.environ['PATH']}",
            },
        )
        seen = user_texts(fake)
    record = result_of(done)
    assert (record["status"], done.returncode) == ("done", 0), done.stderr
    assert record["goal"]["checks"] == 2 and record["answer"] == "Fixed add: it subtracted."
    # pytest's own failure reached the model.
    assert "assert -1 == 5" in seen[1] and "1 failed" in seen[1]
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "check 1: `python -m pytest -q -p no:cacheprovider` failed (exit 1" in done.stderr
    assert "check 2: `python -m pytest -q -p no:cacheprovider` passed" in done.stderr


def test_a_check_sees_what_it_names_under_the_hosts_tmp(run_seri: RunSeri) -> None:
    """The check is the person's own command: a file it names under the host's /tmp (a
    virtual environment or a marker kept there) is there for it, under bubblewrap's private
    /tmp too; the model's bash does not see it."""
    import shutil
    import tempfile

    kept = Path(tempfile.mkdtemp(prefix="seri-goal-", dir="/tmp"))
    try:
        (kept / "ready").write_text("yes\n")
        check = f"grep -q yes {kept}/ready"
        with FakeModel([{"text": "nothing to do"}]) as fake:
            done = json_run(run_seri, fake, "-p", "check it", "--until", check)
    finally:
        shutil.rmtree(kept, ignore_errors=True)
    record = result_of(done)
    assert (record["status"], done.returncode, record["goal"]["checks"]) == ("done", 0, 1)
