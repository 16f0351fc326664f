"""A real file shown through a small window, then compacted: the summarizer is told the size of
what the tool produced (as its spill file has it), not the size of the cut copy the session
holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.fake_model import FakeModel
from tests.conftest import REPO, RunSeri


def call(id_: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": id_, "name": name, "arguments": arguments}


RECAP = '{"goal": "g", "progress": ["p"], "blockers": [], "next_steps": ["n"]}'


def test_the_summarizer_sees_the_whole_results_size(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    # Real text, over 100 KB: the README's reference, which lives in docs/ now.
    reference = sorted((REPO / "docs").glob("*.md"))
    (project / "notes.md").write_bytes(b"".join(path.read_bytes() for path in reference))
    seri_home.mkdir(parents=True, exist_ok=True)
    config = {"context_window": 8_000, "compaction": {"keep_tokens": 60, "elide_bytes": 1_000}}
    (seri_home / "config.json").write_text(json.dumps(config))
    script = [
        {"tool_calls": [call("r1", "bash", command="cat notes.md")]},
        {"text": "read it"},
        {"text": "noted"},
    ]
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        first = run_seri("chat", "--allow", "bash", "-p", "show notes.md", env=env)
        assert first.returncode == 0, first.stderr
        second = run_seri("chat", "--continue", "-p", "thanks", env=env)
        assert second.returncode == 0, second.stderr
    # bash kept the whole output in its log and showed the model a cut: what the tool produced
    # was the file, then its exit line.
    assert list((seri_home / "spill").glob("bash-*.log")), "the output was not cut"
    whole = (project / "notes.md").stat().st_size + len("[exit code 0]")
    with FakeModel([{"text": RECAP}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        session = second.stderr.split()[-1]  # "seri: resumed session ID"
        compacted = run_seri("compact", "--session", session, env=env)
        assert fake.requests, (compacted.stdout, compacted.stderr)
        summarizer = json.dumps(fake.requests[0]["messages"])
    assert compacted.returncode == 0, compacted.stderr
    sizes = [int(n) for n in re.findall(r'originalBytes\\\\?": (\d+)', summarizer)]
    # Exact unless the capture's head or tail cut a UTF-8 character in two: the part shown
    # then holds U+FFFD (3 bytes) for the 1-2 bytes it kept, up to 2 bytes more at each cut.
    assert len(sizes) == 1 and whole <= sizes[0] <= whole + 4, (sizes, whole)
