"""A recorded run's `seri trajectory export`, against a reviewed golden file.

The run is a real one (the installed seri against the loopback model) that meets most event
types: a subagent with its own tool call, a checkpointed write and an edit each followed by
the project's check, a command the policy denies, a call refused before it ran, a retried
request, the window asked of the server, and the run's usage; then `seri compact`'s run of
the same session (its header, the summarizer's call, the compaction). What differs from one run to
the next (ids, times, the project's path, the port, the version) is replaced by placeholders; every
other byte is compared, so a change to what an event records, to a key's name or to the
order of keys shows up here as a diff to review.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_compaction import recap_step
from tests.golden_files import check_golden

GOLDEN = Path(__file__).parents[1] / "golden" / "trajectory" / "recorded_run.jsonl"


@pytest.fixture
def project() -> Iterator[Path]:
    """A project directory whose path has the same length on every run: the base prompt names
    it, and the model's token counts (and so the usage and estimates recorded) follow its
    length, so pytest's own temporary directory (longer under xdist) will not do."""
    path = Path(tempfile.mkdtemp(prefix="seri-golden-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _script() -> list[dict[str, Any]]:
    return [
        {"tool_calls": [call("t1", "task", description="look around", prompt="list files")]},
        {"tool_calls": [call("g1", "glob", pattern="*.txt")]},
        {"text": "one file: notes.txt"},
        {"status": 429, "headers": {"Retry-After": "0"}},
        {
            "tool_calls": [
                call("w1", "write_file", path="a.py", content="print('hi')\n"),
                call("e1", "edit", path="a.py", old_string="hi", new_string="ho"),
                call("b1", "bash", command="rm -rf build"),
                call("x1", "no_such_tool"),
            ]
        },
        {"text": "done", "usage": {"cost": 0.0125}},
    ]


def _placeholders(text: str, project: Path) -> str:
    """Ids, times, the project's path and the version, replaced by stable names."""
    names: dict[str, str] = {}

    def named(kind: str, value: str) -> str:
        taken = sum(name.startswith(f"<{kind}-") for name in names.values())
        return names.setdefault(value, f"<{kind}-{taken}>")

    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        record["session"] = named("session", record["session"])
        record["run"] = named("run", record["run"])
        record["at"] = "<at>"
        # Times, the loopback port, a retry's jittered delay, the sandbox this machine has.
        for key in ("started", "seconds", "base_url", "delay", "sandbox"):
            if key in record:
                record[key] = f"<{key}>"
        if record["type"] == "header":
            record["seri_version"] = "<version>"
            # The base prompt names the project's directory, so its hash differs each run.
            record["prompt_hashes"] = dict.fromkeys(record["prompt_hashes"], "<sha256>")
        if record["type"] in ("subagent_start", "subagent_end"):
            record["child"] = named("session", record["child"])
        lines.append(json.dumps(record, ensure_ascii=False))
    out = "\n".join(lines) + "\n"
    out = out.replace(str(project), "<project>")
    # The child session's id also appears inside the parent's tool result text.
    return re.sub(r"\[subagent [0-9a-f]{32}\]", "[subagent <child>]", out)


def test_a_recorded_runs_export_matches_its_golden_file(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    (project / "notes.txt").write_text("remember the milk\n")
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(
        json.dumps(
            {
                "check": {"command": "python3 -c 'print(1)'"},
                "sampling": {},
                "compaction": {"keep_tokens": 100},
            }
        )
    )
    with FakeModel(_script()) as fake:
        ran = run_seri(
            "chat",
            "--allow",
            "task",
            "--allow",
            "write_file",
            "--allow",
            "edit",
            "-p",
            "do it",
            env=chat_env(fake),
        )
    assert ran.returncode == 0, ran.stderr
    session = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]
    with FakeModel([recap_step(progress=["wrote a.py"], next_steps=["ship it"])]) as fake:
        compacted = run_seri("compact", "--session", session, env=chat_env(fake))
    assert compacted.returncode == 0, compacted.stderr
    exported = run_seri("trajectory", "export")
    assert exported.returncode == 0, exported.stderr
    check_golden(GOLDEN, _placeholders(exported.stdout, project))
