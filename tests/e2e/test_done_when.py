"""Issue 15's "Done when", as a user would write it: a shell script (with jq) runs a task,
reads its result record, finds the session, searches it, exports it, hands it off and
deletes it (scripts/examples/script_a_run.sh), against the installed seri and the fake."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from scripts.fake_model import FakeModel
from tests.conftest import REPO, SERI, seri_env

SCRIPT = REPO / "scripts" / "examples" / "script_a_run.sh"


def test_a_shell_script_runs_finds_searches_exports_hands_off_and_deletes(
    seri_home: Path, project: Path, tmp_path: Path
) -> None:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo zanzibar"}}]},
        {"text": "The flamingo lives in Zanzibar.", "usage": {"cost": 0.002}},
    ]
    with FakeModel(steps, auto_recap=True) as fake:
        env = seri_env(
            seri_home,
            {
                "SERI_BASE_URL": fake.base_url,
                "OPENROUTER_API_KEY": "sk-or-v1-" + "9b3c" * 16,
                "PATH": f"{Path(SERI).parent}{os.pathsep}{os.environ['PATH']}",
            },
        )
        (seri_home).mkdir(parents=True, exist_ok=True)
        (seri_home / "config.json").write_text('{"permissions": {"allow": ["bash(echo *)"]}}')
        done = subprocess.run(
            ["bash", str(SCRIPT), "where does the flamingo live?", "flamingo", str(tmp_path)],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line.split(":", 1)[0] for line in done.stdout.splitlines() if line.startswith("ok")]
    assert len(said) == 6, done.stdout
    assert "The flamingo lives in Zanzibar." in done.stdout
    assert (tmp_path / "session.md").read_text().count("flamingo") >= 2
