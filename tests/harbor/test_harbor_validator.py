"""Harbor's own ATIF validator on seri's exports (`make test-harbor`; not part of `make test`).

`python -m harbor.utils.trajectory_validator FILE` from harbor 0.26.0 in a Python 3.12
venv (scripts/harbor/setup.sh), on the documents of: the three real sessions of the corpus
as imported, a live run with tools, a denial and a subagent, and a session compacted from
the shell and resumed. Each document is one file, as Harbor writes `trajectory.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.e2e.test_atif_export import REAL_SESSIONS, call
from tests.e2e.test_compaction_windows import Seri, llama_slot, real_lines

HARBOR_PYTHON = os.environ.get("SERI_HARBOR_PYTHON", "")

pytestmark = pytest.mark.skipif(
    not HARBOR_PYTHON, reason="make test-harbor sets SERI_HARBOR_PYTHON (a 3.12 venv)"
)


def exported(seri: Seri) -> list[dict[str, Any]]:
    ran = seri("trajectory", "export", "--format", "atif")
    assert ran.code == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines()]


def corpus(root: Path) -> list[dict[str, Any]]:
    seri = Seri(root, 200_000)
    for name in REAL_SESSIONS:
        seri.import_session(real_lines(name))
    with FakeModel() as fake:
        seri.fake = fake
        assert seri("sessions", "--all").code == 0  # imports them
        return exported(seri)


def live(root: Path) -> list[dict[str, Any]]:
    seri = Seri(root, 200_000)
    script = [
        {
            "tool_calls": [
                call("c1", "write_file", path="a.py", content="x = 1\n"),
                call("c2", "bash", command="rm -rf /tmp/nothing"),
            ]
        },
        {"tool_calls": [call("t1", "task", description="look", prompt="list the files")]},
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"text": "a.py"},
        {"text": "Done.", "usage": {"cost": 0.001}},
    ]
    with FakeModel(script) as fake:
        seri.fake = fake
        ran = seri("chat", "--allow", "write_file", "--allow", "task", "-p", "write a.py")
        assert ran.code == 0, ran.stderr
        return exported(seri)


def compacted(root: Path) -> list[dict[str, Any]]:
    seri = Seri(root, 16_000)
    session_id = seri.import_session(real_lines("real-mini-django"))
    with llama_slot() as fake:
        seri.fake = fake
        seri.show(session_id)
        assert seri("compact", "--session", session_id).code == 0
        fake.add_steps({"text": "ok"})
        assert seri("chat", "--resume", session_id, "-p", "go on").code == 0
        return exported(seri)


@pytest.mark.parametrize("source", [corpus, live, compacted], ids=lambda f: f.__name__)
def test_harbor_accepts_every_document(tmp_path: Path, source: Any) -> None:
    documents = source(tmp_path / "profile")
    assert documents
    for index, document in enumerate(documents):
        path = tmp_path / f"trajectory-{index}.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
        done = subprocess.run(
            [HARBOR_PYTHON, "-m", "harbor.utils.trajectory_validator", str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "Trajectory is valid" in done.stdout
