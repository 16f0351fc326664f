"""Compaction on real sessions, at every window and tokenizer density that matters.

Each real transcript (tests/fixtures/real-sessions, sources in its README) is imported from
the older release's format and resumed against the loopback fake, which counts 1, 2 or 3
tokens per 4 bytes of UTF-8 (seri's ceil(chars/4) and denser, Japanese three times as dense
as English), refuses whatever is over its window by its own count
(in llama.cpp's, OpenAI's or OpenRouter's words) and reports prompt_tokens by that count. For
each session, window and density: `seri chat --resume ID -p continue`, `/compact`, `seri
compact`, then another task. Every case must finish; no request may be refused; the summarizer
must have seen the user's first message; and the history after compaction must be under half
the window, counted by the provider.

The commands run in this process (tests/inprocess.py): a case is four whole seri commands
over real HTTP and a real store, without paying for four interpreter starts, so the whole
matrix (120 cases, eight transcripts) and the dry-run cases take about 70 s of CPU on two
cores. With SERI_MATRIX_OUT=FILE each case also
writes one JSON line; `make compaction-matrix` renders them as the table in
bench-results/compaction-matrix.md.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from scripts.fake_model import OVERFLOW_STYLES, FakeModel, Utf8Ratio
from tests.inprocess import Ran, run_seri_here
from tests.request_schema import pairing_ok

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real-sessions"
SESSIONS = (
    "real-aider-mozgoslav-ru",
    "real-cc-brain-mcp",
    "real-cc-meridian",
    "real-cc-repiq-ja",
    "real-cc-serena-json",
    "real-gemini-teams",
    "real-mini-django",
    "real-terminus-invoices",
)
WINDOWS = (8_000, 16_000, 32_000, 64_000, 128_000)
RATIOS = (1, 2, 3)
KEY = "sk-or-v1-" + "ef56" * 16

MATRIX = [
    (session, window, ratio) for session in SESSIONS for window in WINDOWS for ratio in RATIOS
]


def legacy_lines(session: str) -> list[dict[str, Any]]:
    raw = gzip.decompress((REAL / f"{session}.jsonl.gz").read_bytes()).decode("utf-8")
    return [json.loads(line) for line in raw.splitlines()]


def first_user_text(session: str) -> str:
    for line in legacy_lines(session)[1:]:
        if line.get("role") == "user":
            content = line["content"]
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content)
    raise AssertionError(f"{session} has no user message")


@attrs.frozen
class Case:
    """One session resumed at one window and density, and what happened."""

    session: str
    window: int
    ratio: int
    style: str
    codes: tuple[int, ...]
    errors: tuple[str, ...]
    requests: int
    refused: int
    summaries: int
    saw_first_message: bool
    history_before: int
    history_after: int
    ledger: tuple[Mapping[str, Any], ...]

    def row(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "window": self.window,
            "ratio": self.ratio,
            "style": self.style,
            "finished": all(code == 0 for code in self.codes),
            "requests": self.requests,
            "refused": self.refused,
            "summarizer_calls": self.summaries,
            "ledger_summary_calls": sum(int(c["summary_calls"]) for c in self.ledger),
            "elided": sum(int(c["elided"]) for c in self.ledger),
            "compactions": len(self.ledger),
            "saw_first_message": self.saw_first_message,
            "history_before": self.history_before,
            "history_after": self.history_after,
        }


def wire_like(lines: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Legacy lines as chat messages, close enough for the fake to count their tokens."""
    messages: list[dict[str, Any]] = []
    for line in lines:
        content = line.get("content")
        if isinstance(content, str):
            messages.append({"role": line["role"], "content": content})
            continue
        texts, calls = [], []
        for part in content or []:
            kind = part.get("type")
            if kind in ("text", "reasoning"):
                texts.append(part.get("text", ""))
            elif kind == "tool-call":
                arguments = part.get("input")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                calls.append({"function": {"name": part["toolName"], "arguments": arguments}})
            elif kind == "tool-result":
                value = (part.get("output") or {}).get("value")
                texts.append(value if isinstance(value, str) else json.dumps(value))
        message: dict[str, Any] = {"role": line["role"], "content": "".join(texts)}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
    return messages


def texts_of(body: Mapping[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def history_tokens(fake: FakeModel, body: Mapping[str, Any], *, drop_last: bool) -> int:
    """The provider's count of a turn request's history (no system prompt, no tools)."""
    messages = list(body["messages"][1:])
    if drop_last:
        messages = messages[:-1]
    return fake.prompt_tokens({"messages": messages})


def profile_with(
    tmp_path: Path, session: str, window: int
) -> tuple[Path, Path, list[dict[str, Any]]]:
    """A seri home holding the real transcript ``session`` as an older release's session
    file (seri imports it when it is first named), configured for a ``window``-token model,
    and an empty project: the home, the project and the transcript's lines."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "sessions").mkdir(parents=True)
    project.mkdir()
    lines = legacy_lines(session)
    (home / "sessions" / f"{session}.jsonl").write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    (home / "config.json").write_text(json.dumps({"model": "fake/model", "context_window": window}))
    return home, project, lines


def run_case(tmp_path: Path, session: str, window: int, ratio: int, style: str) -> Case:
    home, project, lines = profile_with(tmp_path, session, window)
    with FakeModel(
        context_length=window,
        enforce_context=True,
        token_ratio=Utf8Ratio(ratio),
        overflow_style=style,
        auto_recap=True,
    ) as fake:
        env = {"SERI_HOME": str(home), "SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        steps: list[tuple[Sequence[str], str]] = [
            (("chat", "--resume", session, "-p", "continue"), ""),
            (("chat", "--resume", session), "/compact\n"),
            (("compact", "--session", session), ""),
            (("chat", "--resume", session, "-p", "another task"), ""),
        ]
        ran: list[Ran] = [run_seri_here(argv, env=env, cwd=project, stdin=i) for argv, i in steps]
        requests = list(fake.requests)
        refused = fake.refused
        shown = run_seri_here(("sessions", "show", session, "--json"), env=env, cwd=project)
        head = json.loads(shown.stdout.splitlines()[0])
        turns = [body for body in requests if "tools" in body]
        summaries = [body for body in requests if "tools" not in body]
        before = fake.prompt_tokens({"messages": wire_like(lines[1:])})
        after = history_tokens(fake, turns[-1], drop_last=True) if turns else 0
    first = " ".join(first_user_text(session).split())[:100]
    # With nothing compacted the first message is still in the conversation itself.
    seen_by = summaries if head["compactions"] else turns[-1:]
    saw = any(first in " ".join(texts_of(body).split()) for body in seen_by)
    for body in turns:
        assert pairing_ok(body["messages"][1:]), [m["role"] for m in body["messages"]]
    return Case(
        session=session,
        window=window,
        ratio=ratio,
        style=style,
        codes=tuple(r.code for r in ran),
        errors=tuple(r.stderr for r in ran if r.code != 0),
        requests=len(requests),
        refused=refused,
        summaries=len(summaries),
        saw_first_message=saw,
        history_before=before,
        history_after=after,
        ledger=tuple(head["compactions"]),
    )


@pytest.mark.parametrize(("session", "window", "ratio"), MATRIX)
def test_a_real_session_keeps_working_at_any_window_and_density(
    tmp_path: Path, session: str, window: int, ratio: int
) -> None:
    style = OVERFLOW_STYLES[(WINDOWS.index(window) + ratio) % len(OVERFLOW_STYLES)]
    case = run_case(tmp_path, session, window, ratio, style)
    out = os.environ.get("SERI_MATRIX_OUT")
    if out:
        with open(out, "a", encoding="utf-8") as report:
            report.write(json.dumps(case.row()) + "\n")
    assert case.codes == (0, 0, 0, 0), case.errors
    assert case.refused == 0, "a request was over the provider's window"
    assert case.saw_first_message, "the summarizer never saw the user's first message"
    if case.history_before >= window // 2:
        assert case.ledger, "a history past half the window was not compacted"
    assert sum(int(c["summary_calls"]) for c in case.ledger) == case.summaries
    assert case.history_after < window // 2, (case.history_after, window)


PLAN_WINDOWS = (8_000, 16_000)


def plan_then_compact(
    tmp_path: Path, session: str, window: int, ratio: int
) -> tuple[dict[str, Any], Ran, dict[str, Any] | None, int]:
    """`seri compact --dry-run --json`, then `seri compact`: the plan, the real run, its
    ledger entry (None: nothing compacted) and the summarizer requests it sent."""
    home, project, _ = profile_with(tmp_path, session, window)
    with FakeModel(
        context_length=window, enforce_context=True, token_ratio=Utf8Ratio(ratio), auto_recap=True
    ) as fake:
        env = {"SERI_HOME": str(home), "SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        planned = run_seri_here(
            ("compact", "--session", session, "--dry-run", "--json"), env=env, cwd=project
        )
        assert planned.code == 0, planned.stderr
        assert fake.requests == [], "a dry run called the model"
        ran = run_seri_here(("compact", "--session", session), env=env, cwd=project)
        shown = run_seri_here(("sessions", "show", session, "--json"), env=env, cwd=project)
        sent = len([body for body in fake.requests if "tools" not in body])
        assert fake.refused == 0, "a summarizer request was over the window"
    head = json.loads(shown.stdout.splitlines()[0])
    entry = head["compactions"][0] if head["compactions"] else None
    return json.loads(planned.stdout), ran, entry, sent


@pytest.mark.parametrize(
    ("session", "window", "ratio"),
    # (An unmeasured session is planned for each density its first reply may show.)
    [(s, w, r) for s in SESSIONS for w in PLAN_WINDOWS for r in RATIOS],
)
def test_the_dry_run_is_the_plan_that_runs(
    tmp_path: Path, session: str, window: int, ratio: int
) -> None:
    """Issue 31: the dry run planned 54 chunks where the real fold made 11, and predicted
    success where the real compaction failed. Now both size alike (the same cut at the same
    price, the same room for the recap): the cut, the tokens after and whether it fails are
    the plan's. A session never measured is planned for each density its first reply may
    show (its first request sized for the densest); the fake counts ``ratio`` tokens per 4
    bytes of UTF-8 and the chat template's framing, which seri's own framing covers, so the
    real fold follows the plan of step ``ratio``."""
    plan, ran, entry, sent = plan_then_compact(tmp_path, session, window, ratio)
    rows = {row["density"]: row for row in plan["requests_by_density"]}
    by_density = {density: row["requests"] for density, row in rows.items()}
    would_fail = rows[float(ratio)]["would_fail"]
    out = os.environ.get("SERI_PLAN_OUT")
    if out:
        row = {
            "session": session,
            "window": window,
            "ratio": ratio,
            "planned_chunks": by_density.get(float(ratio)),
            "planned_at_1": len(plan["chunks"]),
            "real_calls": sent,
            "planned_evicted": (plan["cut"] or {}).get("evicted"),
            "real_evicted": entry["evicted"] if entry else None,
            "planned_after": plan["estimate_after"],
            "real_after": entry["estimate_after"] if entry else None,
            "would_fail": bool(would_fail),
            "failed": ran.code != 0,
        }
        with open(out, "a", encoding="utf-8") as report:
            report.write(json.dumps(row) + "\n")
    # Whether it fits is judged at the scale the fold's last reply measures: per density.
    assert bool(would_fail) == (ran.code != 0), (would_fail, ran.stderr)
    if plan["cut"] is None:
        assert entry is None
        return
    assert entry is not None, ran.stderr
    assert entry["evicted"] == plan["cut"]["evicted"]
    assert entry["summary_calls"] == sent == by_density[float(ratio)]
    assert len(plan["chunks"]) == by_density[1.0]
    # The recap to come is counted at the most it may take: the plan is an upper bound.
    assert entry["estimate_after"] <= plan["estimate_after"]


def test_a_command_run_here_leaves_no_thread_of_its_own_and_the_environment_as_it_was(
    tmp_path: Path,
) -> None:
    """The in-process runs above share one pytest worker: a compaction's purge thread left
    running while the environment was put back (SQLite asks getenv for TMPDIR meanwhile)
    killed a worker with SIGSEGV. The runner stops what a command's exit would stop."""
    before = dict(os.environ)
    _, ran, entry, _ = plan_then_compact(tmp_path, SESSIONS[0], PLAN_WINDOWS[0], 1)
    assert ran.code == 0 and entry is not None, ran.stderr  # a compaction ran: a purge started
    assert [t.name for t in threading.enumerate() if t.name.startswith("seri-")] == []
    assert dict(os.environ) == before
