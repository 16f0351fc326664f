"""A long session on a real server: one piped `seri chat` process, many tasks, several
compactions, to the end (issue 25's "long sessions finish", against llama.cpp rather than
seri's own scripted model).

The window is llama.cpp's, reported by its /v1/models; the token counts are its tokenizer's;
the summarizer is SmolLM2-135M, whose recaps are whatever such a small model writes: seri
must go on through all of it. Each task is one line (piped input is a task a line) asking the
model to repeat a paragraph of a real text, so the history grows by the paragraph twice every
task. (Asked what a paragraph is about, the 135M model rambles until the output limit: a task
cut at its limit is not a finished one. Copying, it stops by itself.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import REPO, RunSeri
from tests.real.conftest import ALIAS, LlamaServer

TASKS = 24


def _paragraphs() -> list[str]:
    """Paragraphs of prose (this repository's README), each on one line, ~1-2 KB."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [" ".join(b.split()) for b in text.split("\n\n")]
    prose = [b for b in blocks if 400 <= len(b) <= 1_800 and not b.startswith(("|", "```"))]
    assert len(prose) >= TASKS, len(prose)
    return prose[:TASKS]


def _events(run_seri: RunSeri, kind: str) -> list[dict[str, Any]]:
    lines = run_seri("trajectory", "export").stdout.splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_a_long_piped_session_compacts_several_times_and_finishes(
    run_seri: RunSeri, seri_home: Path, llama: LlamaServer
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    # Room for the answer to end by itself (a cut answer is a task that did not finish); the
    # summarizer has a budget of its own (issue 25).
    config = {"sampling": {"temperature": 0, "max_tokens": 1024}}
    (seri_home / "config.json").write_text(json.dumps(config))
    tasks = "".join(f"Repeat exactly: {p}\n" for p in _paragraphs())
    env = {"SERI_BASE_URL": llama.base_url, "SERI_API_KEY": "none", "SERI_MODEL": ALIAS}
    result = run_seri("chat", input=tasks, env=env, timeout=1_800)
    assert result.returncode == 0, result.stderr[-3_000:]
    assert "internal error" not in result.stderr
    ends = _events(run_seri, "turn_end")
    assert len(ends) == TASKS, [e["status"] for e in ends]
    assert all(e["status"] == "done" for e in ends), [e["status"] for e in ends]
    compactions = _events(run_seri, "compaction")
    assert len(compactions) >= 3, len(compactions)
    # Every request after a compaction fitted the server's window: none was refused.
    assert not _events(run_seri, "overflow")
    [window] = {e["tokens"] for e in _events(run_seri, "context_window")}
    assert window == llama.context
