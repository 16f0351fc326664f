"""A long session on a real server: one piped `seri chat` process, many tasks, several
compactions, to the end (issue 25's "long sessions finish", against llama.cpp rather than
seri's own scripted model).

The window is llama.cpp's, reported by its /v1/models; the token counts are its tokenizer's;
the answers and the recaps are whatever SmolLM2-135M writes: seri must go on through all of
it. Each task is one line (piped input is a task a line): a paragraph of a real text (this
repository's README), so the history grows by the task itself.

Left to itself the 135M model at temperature 0 does not end an answer: asked what a paragraph
is about, or told to reply with one word, it writes to the output limit (finish_reason
"length": a task that did not finish); told to, it copies its working directory's path, 35
tokens at ~1 token/s when the machine is busy. Stop sequences (`sampling.stop`, OpenAI's
`stop`) end every answer at its first space, slash, full stop or newline: "I'm" and done, in
a few tokens. They end the summarizer's answer too, so each recap is a word or two; seri must
carry on with whatever recap it gets.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from seri.pure.trajectories.redaction import Redactor
from tests.conftest import REPO, RunSeri
from tests.real.conftest import ALIAS, LlamaServer

# Characters of README prose sent in all: with a 1,024-token keep budget, SmolLM2's
# tokenizer (~4 characters a token on this text) and seri's ~2,100-token prompt, the 8,192
# window's 50% trigger compacts after ~8,000 characters and then every ~5,500.
PROSE_CHARS = 30_000

# How every recap opens (seri/pure/recap.py's RECAP_HEADER), as a person reads it.
RECAP_OPENING = "[Recap of the earlier conversation."


def _paragraphs() -> list[str]:
    """Paragraphs of prose (this repository's README and docs/), each on one line, ~0.3-2.4 KB."""
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n\n".join(path.read_text(encoding="utf-8") for path in sources)
    blocks = [" ".join(b.split()) for b in text.split("\n\n")]
    prose = [
        b for b in blocks if 300 <= len(b) <= 2_400 and not b.startswith(("|", "```", "/", "#"))
    ]
    chosen: list[str] = []
    while sum(map(len, chosen)) < PROSE_CHARS:
        assert len(chosen) < len(prose), "README.md and docs/ hold too little prose for this test"
        chosen.append(prose[len(chosen)])
    return chosen


def _events(run_seri: RunSeri, kind: str) -> list[dict[str, Any]]:
    lines = run_seri("trajectory", "export").stdout.splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_a_long_piped_session_compacts_several_times_and_finishes(
    run_seri: RunSeri, seri_home: Path, llama: LlamaServer
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    sampling = {"temperature": 0, "max_tokens": 48, "stop": [" ", "\n", "/", "."]}
    config = {"sampling": sampling, "compaction": {"keep_tokens": 1024}}
    (seri_home / "config.json").write_text(json.dumps(config))
    paragraphs = _paragraphs()
    tasks = "".join(f"{p} Reply with only the word OK.\n" for p in paragraphs)
    env = {"SERI_BASE_URL": llama.base_url, "SERI_API_KEY": "none", "SERI_MODEL": ALIAS}
    started = time.monotonic()
    result = run_seri("chat", input=tasks, env=env, timeout=1_800)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3_000:]
    assert "internal error" not in result.stderr
    ends = _events(run_seri, "turn_end")
    assert len(ends) == len(paragraphs), [e["status"] for e in ends]
    assert all(e["status"] == "done" for e in ends), [e["status"] for e in ends]
    compactions = _events(run_seri, "compaction")
    assert len(compactions) >= 3, (len(compactions), result.stderr[-3_000:])
    # Every request after a compaction fitted the server's window: none was refused.
    assert not _events(run_seri, "overflow")
    [window] = {e["tokens"] for e in _events(run_seri, "context_window")}
    assert window == llama.context
    # The session reads back whole: its head with one ledger entry a compaction, then the
    # messages after the last recap, in order: the newest tasks, each with its answer.
    session = _events(run_seri, "header")[-1]["session"]
    shown = run_seri("sessions", "show", session, "--json")
    assert shown.returncode == 0, shown.stderr
    head, *messages = map(json.loads, shown.stdout.splitlines())
    assert head["id"] == session and len(head["compactions"]) == len(compactions)
    # The history opens with the newest recap (a user message), then what it kept.
    recap, *kept = messages
    assert recap["role"] == "user" and recap["text"].startswith(RECAP_OPENING), recap
    asked = [m["text"] for m in kept if m["role"] == "user"]
    # Stored as seri stores every task: with what looks like a secret redacted (the prose
    # has `KEY=VALUE` examples).
    sent = [Redactor.of(()).text(line) for line in tasks.splitlines()]
    assert asked and asked == sent[len(sent) - len(asked) :], asked
    assert messages[-1]["role"] == "assistant"
    calls = _events(run_seri, "model_call")
    print(
        f"\nlong session: {len(paragraphs)} tasks, {len(compactions)} compactions, "
        f"{took:.0f} s, {len(calls)} model calls, server counted "
        f"{sum(c['usage']['input_tokens'] or 0 for c in calls):,} input and "
        f"{sum(c['usage']['output_tokens'] or 0 for c in calls):,} output tokens; "
        f"{len(messages)} messages read back"
    )
