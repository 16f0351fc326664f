"""`seri compact` keeps the window a refused summarizer request stated, as `seri chat` does.

config.json says 200k; the endpoint behind it holds 131,072 tokens. The first summarizer
request of `seri compact` is refused with OpenRouter's documented overflow body (tests/captures,
`openrouter-of-text-input`: "maximum context length is 131072 tokens ... 148000 of text
input"). The compaction learns the window from it and goes on sized for it; the window is
stored with the session (migration 8's column, by the same counters write a chat's task uses),
so the next `seri compact` plans for 131,072 and the next `seri chat` on that model shows and
sizes for it, with no refusal to pay again.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.captures.table import load
from tests.conftest import RunSeri
from tests.e2e.test_chat import chat_env

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real-sessions"
# The model the imported session last ran with (the older release recorded it).
MODEL = "anthropic/claude"


def _capture(capture_id: str) -> dict[str, Any]:
    return next(c for c in load() if c["id"] == capture_id)


def import_meridian(seri_home: Path) -> str:
    raw = gzip.decompress((REAL / "real-cc-meridian.jsonl.gz").read_bytes()).decode("utf-8")
    session_id = str(json.loads(raw.splitlines()[0])["id"])
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True)
    (sessions / f"{session_id}.jsonl").write_text(raw, encoding="utf-8")
    return session_id


def _counters(seri_home: Path, session_id: str) -> tuple[int, int]:
    """The session's stored (learned_window, turns_used), read from its real SQLite file."""
    with sqlite3.connect(seri_home / "seri.db") as db:
        [(window, turns)] = db.execute(
            "SELECT learned_window, turns_used FROM sessions WHERE id = ?", (session_id,)
        ).fetchall()
    return int(window), int(turns)


def _set_turns_used(seri_home: Path, session_id: str, turns: int) -> None:
    """As a chat whose last task ran ``turns`` turns would have left it."""
    with sqlite3.connect(seri_home / "seri.db") as db:
        db.execute("UPDATE sessions SET turns_used = ? WHERE id = ?", (turns, session_id))


def test_seri_compact_stores_the_window_a_refused_summary_stated(
    run_seri: RunSeri, seri_home: Path
) -> None:
    refusal = _capture("openrouter-of-text-input")
    session_id = import_meridian(seri_home)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 200_000}))
    script: list[dict[str, Any]] = [
        {"status": refusal["status"], "body": refusal["body"]},
        {"text": '{"goal": "build Meridian"}', "repeat": 60},
    ]
    with FakeModel(script) as fake:
        env = chat_env(fake, SERI_MODEL=MODEL)
        before = run_seri("compact", "--session", session_id, "--dry-run", "--json", env=env)
        assert before.returncode == 0, before.stderr
        _set_turns_used(seri_home, session_id, 7)
        ran = run_seri("compact", "--session", session_id, env=env)
        assert ran.returncode == 0, ran.stderr
        summaries = list(fake.requests)
        learned, turns = _counters(seri_home, session_id)
        after = run_seri("compact", "--session", session_id, "--dry-run", "--json", env=env)
        status = run_seri("chat", "--resume", session_id, input="/status\n", env=env)
    assert json.loads(before.stdout)["context_window"] == 200_000
    # The refused request was the first; the ones after it were cut smaller to fit.
    assert len(summaries) >= 2
    first, *rest = summaries
    assert max(fake.prompt_tokens(body) for body in rest) < fake.prompt_tokens(first)
    assert learned == 131_072
    # A compaction runs no turns: the count the last task left stays.
    assert turns == 7
    # The next compaction plans for the learned window, not config.json's.
    assert json.loads(after.stdout)["context_window"] == 131_072
    # And the next chat on that model shows the window its requests are sized for.
    assert status.returncode == 0, status.stderr
    window_line = next(line for line in status.stderr.splitlines() if "window:" in line)
    assert "of 131k" in window_line, window_line
