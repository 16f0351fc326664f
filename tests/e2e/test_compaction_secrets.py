"""A secret quoted by the summarizer never reaches the stored recap."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

CANARY = "sk-or-v1-" + "5eed" * 16


def test_the_stored_recap_is_redacted(run_seri: RunSeri, seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"compaction": {"keep_tokens": 10}}))
    recap = {"goal": f"use the key {CANARY}", "progress": [f"set {CANARY}"], "blockers": []}
    long = "x" * 200
    script = [{"text": f"one {long}"}, {"text": f"two {long}"}, {"text": f"three {long}"}]
    script.append({"text": json.dumps(recap)})
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", input="first\nsecond\nthird\n/compact\n", env=env)
    assert result.returncode == 0, result.stderr
    assert "compacted: " in result.stderr
    stored = b"".join(p.read_bytes() for p in seri_home.glob("seri.db*"))
    assert CANARY.encode() not in stored
    shown = run_seri("sessions", "--json").stdout
    session = json.loads(shown.splitlines()[0])["id"]
    show = run_seri("sessions", "show", session, "--json").stdout
    assert "[REDACTED]" in show
