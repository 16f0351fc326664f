"""`seri chat -p --output-format json|stream-json` on the installed seri against the scripted
fake: every way a run can end (each status) leaves exactly one `result` record, last on
stdout, whose status and exit_status are what the process exited with; stdout holds JSON
only; the stream's events are those of `seri trajectory export`; goldens for both shapes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.golden_files import check_golden

KEY = "sk-or-v1-" + "7a1e" * 16
GOLDEN = Path(__file__).parent.parent / "golden" / "cli"


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def headless(
    run_seri: RunSeri, fake: FakeModel, fmt: str, *argv: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    done = run_seri(
        "chat",
        *argv,
        "--output-format",
        fmt,
        env={"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, **env},
    )
    return done, lines_of(done.stdout)


def lines_of(stdout: str) -> list[dict[str, Any]]:
    """Every stdout line is one JSON object (nothing else is on stdout)."""
    assert stdout.endswith("\n"), stdout
    return [json.loads(line) for line in stdout.splitlines()]


def the_result(lines: list[dict[str, Any]], exit_code: int) -> dict[str, Any]:
    """Exactly one result, the last line, naming the exit status the process exited with."""
    results = [line for line in lines if line["type"] == "result"]
    assert len(results) == 1 and lines[-1] is results[0], lines
    result = results[0]
    assert result["exit_status"] == exit_code
    assert (result["status"] == "done") == (exit_code == 0)
    return result


STOP = {"text": "All done: the answer is 42.", "usage": {"cost": 0.25}}
TOOL = {"tool_calls": [call("c1", "bash", command="echo hi")], "usage": {"cost": 0.25}}


@pytest.mark.parametrize(
    ("status", "exit_code", "steps", "argv"),
    [
        ("done", 0, [STOP], ()),
        ("max_turns", 1, [TOOL, STOP], ("--max-turns", "1", "--allow", "bash")),
        ("budget", 1, [TOOL, TOOL, STOP], ("--max-budget-usd", "0.5", "--allow", "bash")),
        ("length", 1, [{"text": "The answer is", "finish_reason": "length"}], ()),
        ("overflow", 1, [{"overflow": True, "repeat": 3}], ()),
        ("error", 1, [{"status": 400, "body": {"error": {"message": "bad model id"}}}], ()),
        # A stream the provider cut: a failed turn, not an interruption (exit 1, not 130).
        ("error", 1, [{"text": "The answer is", "cut_after_chunks": 2, "repeat": 9}], ()),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_each_ending_has_one_result_matching_the_exit_status(
    run_seri: RunSeri,
    fmt: str,
    status: str,
    exit_code: int,
    steps: list[dict[str, Any]],
    argv: tuple[str, ...],
) -> None:
    with FakeModel(steps) as fake:
        done, lines = headless(run_seri, fake, fmt, *argv, "-p", "what is the answer?")
    assert done.returncode == exit_code, done.stderr
    result = the_result(lines, exit_code)
    assert result["status"] == status, result
    assert re.fullmatch(r"[0-9a-f]{32}", result["session"])
    if status == "done":
        assert result["answer"] == "All done: the answer is 42." and result["error"] is None
    else:
        assert result["answer"] == "" and result["error"]
    if fmt == "json":
        assert len(lines) == 1
    else:
        assert lines[0]["type"] == "header"
        assert {line["session"] for line in lines} == {result["session"]}
        ends = [line for line in lines if line["type"] == "turn_end"]
        assert [end["status"] for end in ends] == [status]


def test_budget_stops_before_the_call_that_would_pass_it(run_seri: RunSeri) -> None:
    with FakeModel([TOOL, TOOL, TOOL, STOP]) as fake:
        done, lines = headless(
            run_seri, fake, "json", "--max-budget-usd", "0.5", "--allow", "bash", "-p", "go"
        )
        requests = len(fake.requests)
    result = the_result(lines, 1)
    # 0.25 after the first call, 0.50 after the second: the third never starts.
    assert (result["status"], result["cost"], result["turns"], requests) == ("budget", 0.5, 2, 2)
    assert "cost budget spent" in done.stderr and "0.5" in result["error"]


def test_budget_from_config_and_a_subagent_counts(run_seri: RunSeri, seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"max_budget_usd": 0.3}))
    task = {"tool_calls": [call("t1", "task", description="look", prompt="look around")]}
    steps = [
        {**task, "usage": {"cost": 0.1}},
        {"text": "child's answer", "usage": {"cost": 0.25}},  # the subagent's call
        STOP,
    ]
    with FakeModel(steps) as fake:
        _, lines = headless(run_seri, fake, "json", "--allow", "task", "-p", "delegate it")
        requests = len(fake.requests)
    result = the_result(lines, 1)
    # The child's 0.25 counts: 0.35 >= 0.3, so the parent's second call never starts.
    assert (result["status"], result["cost"], requests) == ("budget", 0.35, 2)
    assert result["usage"]["calls"] == 2


def test_a_provider_that_reports_no_cost_cannot_keep_a_budget(run_seri: RunSeri) -> None:
    unpriced = {**TOOL, "usage": {"cost": None}}
    with FakeModel([unpriced, STOP]) as fake:
        done, lines = headless(
            run_seri, fake, "json", "--max-budget-usd", "1", "--allow", "bash", "-p", "go"
        )
        requests = len(fake.requests)
    result = the_result(lines, 1)
    assert (result["status"], result["cost"], requests) == ("error", None, 1)
    assert "reported no cost" in result["error"] and "reported no cost" in done.stderr
    # Without a budget the same provider is fine.
    with FakeModel([{**STOP, "usage": {"cost": None}}]) as fake:
        done, lines = headless(run_seri, fake, "json", "-p", "go")
    assert the_result(lines, 0)["cost"] is None


def test_a_failure_before_the_run_still_ends_in_a_result(run_seri: RunSeri) -> None:
    # No key for a remote server: refused before anything is sent.
    done = run_seri(
        "chat",
        "-p",
        "go",
        "--output-format",
        "stream-json",
        env={"SERI_BASE_URL": "https://llm.example.com/v1"},
    )
    result = the_result(lines_of(done.stdout), 2)
    assert result["status"] == "error" and result["session"] is None
    assert "no API key" in result["error"] and done.stderr.startswith("seri: no API key")


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_a_signal_mid_call_ends_in_a_result(
    seri_home: Path, project: Path, fmt: str, signum: int, exit_code: int
) -> None:
    with FakeModel([{"text": "thinking", "stall_seconds": 30, "stall_after_chunks": 1}]) as fake:
        env = seri_env(seri_home, {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY})
        argv = [SERI, "chat", "-p", "go", "--output-format", fmt]
        process = subprocess.Popen(
            argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 30
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # into the stalled stream
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == exit_code, stderr
    result = the_result(lines_of(stdout), exit_code)
    assert result["status"] == "interrupted" and result["session"]


def test_stdout_is_json_only_and_the_stream_is_the_trajectory(
    run_seri: RunSeri, seri_home: Path
) -> None:
    steps = [
        {"tool_calls": [call("c1", "bash", command="echo $OPENROUTER_API_KEY")]},
        {"text": "done"},
    ]
    with FakeModel(steps) as fake:
        done, lines = headless(run_seri, fake, "stream-json", "--allow", "bash", "-p", "go")
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout  # redacted as the recording is
    the_result(lines, 0)
    exported = run_seri("trajectory", "export")
    recorded = [json.loads(line) for line in exported.stdout.splitlines()]
    # The stream's events are the recording's, line for line, `at` included (the result is the
    # stream's own).
    assert [line for line in lines if line["type"] != "result"] == recorded


def normalised(stdout: str, home: Path, project: Path) -> str:
    text = stdout.replace(str(project), "<project>").replace(str(home), "<home>")
    text = re.sub(r'"seri":"[0-9a-f]{64}"', '"seri":"<sha256>"', text)
    text = re.sub(r"[0-9a-f]{32}", "<id>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<at>", text)
    text = re.sub(r'"(started|duration_ms)":[\d.]+', r'"\1":0', text)
    text = re.sub(r'"base_url":"[^"]*"', '"base_url":"<url>"', text)
    return re.sub(r'"sandbox":"\w+"', '"sandbox":"<sandbox>"', text)


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_golden_shapes(run_seri: RunSeri, seri_home: Path, project: Path, fmt: str) -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 6}
    cached = {"prompt_tokens_details": {"cached_tokens": 200}}
    steps = [
        {
            "tool_calls": [call("c1", "read_file", path="notes.txt")],
            "usage": {**usage, "cost": 0.001},
        },
        {"text": "The notes say hello.", "usage": {**usage, **cached, "cost": 0.002}},
    ]
    (project / "notes.txt").write_text("hello\n")
    with FakeModel(steps) as fake:
        done, _ = headless(run_seri, fake, fmt, "-p", "what do the notes say?")
    assert done.returncode == 0, done.stderr
    got = normalised(done.stdout, seri_home, project)
    check_golden(GOLDEN / f"chat_output_{fmt.replace('-', '_')}.jsonl", got)
