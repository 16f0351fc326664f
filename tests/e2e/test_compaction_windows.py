"""Compaction where real sessions broke it: huge tool results, small windows, dense tokenizers.

The loopback fake counts tokens the way a provider would (``token_ratio`` times seri's
ceil(chars/4), framing included), refuses what is over its window in a real provider's words
and answers the summarizer itself (``auto_recap``). The commands run in this process
(tests/inprocess.py); every one is the whole seri command over real HTTP, a real store and
real files.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel, Utf8Ratio
from seri.pure.compaction.recap_rendering import RECAP_HEADER
from tests.inprocess import Ran, run_seri_here
from tests.request_schema import pairing_ok

KEY = "sk-or-v1-" + "0a1b" * 16
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real-sessions"
MARKER = re.compile(r"the whole result is in (\S+): page through it")


def real_lines(name: str) -> list[dict[str, Any]]:
    """A real session of tests/fixtures/real-sessions, as the older release's lines."""
    raw = gzip.decompress((REAL / f"{name}.jsonl.gz").read_bytes()).decode("utf-8")
    return [json.loads(line) for line in raw.splitlines()]


def llama_slot(**overrides: Any) -> FakeModel:
    """A llama.cpp slot of 16k whose tokenizer counts twice seri's estimate."""
    settings: dict[str, Any] = {
        "context_length": 16_000,
        "enforce_context": True,
        "token_ratio": 2,
        "overflow_style": "llamacpp",
        "auto_recap": True,
    }
    return FakeModel(**{**settings, **overrides})


class Seri:
    """A profile and a project, and ``seri`` run against a fake in them."""

    def __init__(self, root: Path, window: int, **config: Any) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir()
        settings = {"model": "fake/model", "context_window": window, **config}
        (self.home / "config.json").write_text(json.dumps(settings))
        self.fake: FakeModel | None = None

    def __call__(self, *argv: str, stdin: str = "") -> Ran:
        assert self.fake is not None
        env = {
            "SERI_HOME": str(self.home),
            "SERI_BASE_URL": self.fake.base_url,
            "OPENROUTER_API_KEY": KEY,
        }
        return run_seri_here(argv, env=env, cwd=self.project, stdin=stdin)

    def import_session(self, lines: Sequence[Mapping[str, Any]]) -> str:
        sessions = self.home / "sessions"
        sessions.mkdir(exist_ok=True)
        session_id = str(lines[0]["id"])
        body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (sessions / f"{session_id}.jsonl").write_text(body, encoding="utf-8")
        return session_id

    def show(self, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        shown = self("sessions", "show", session_id, "--json")
        assert shown.code == 0, shown.stderr
        rows = [json.loads(line) for line in shown.stdout.splitlines()]
        return rows[0], rows[1:]

    def only_session(self) -> str:
        listed = self("sessions", "--json").stdout.splitlines()
        assert len(listed) == 1, listed
        return str(json.loads(listed[0])["id"])

    def events(self, kind: str) -> list[dict[str, Any]]:
        exported = self("trajectory", "export")
        rows = [json.loads(line) for line in exported.stdout.splitlines()]
        return [row for row in rows if row["type"] == kind]


def turns(fake: FakeModel) -> list[dict[str, Any]]:
    return [body for body in fake.requests if "tools" in body]


def summaries(fake: FakeModel) -> list[dict[str, Any]]:
    return [body for body in fake.requests if "tools" not in body]


def check_turn_requests(fake: FakeModel) -> None:
    for body in turns(fake):
        assert pairing_ok(body["messages"][1:]), [m["role"] for m in body["messages"]]


def history_tokens(fake: FakeModel, body: Mapping[str, Any]) -> int:
    """The provider's count of a turn request's history, its newest user message left out."""
    return fake.prompt_tokens({"messages": list(body["messages"][1:-1])})


def the_four_steps(seri: Seri, session_id: str) -> list[Ran]:
    """`-p continue`, `/compact`, `seri compact`, another task: the issue's sequence."""
    return [
        seri("chat", "--resume", session_id, "-p", "continue"),
        seri("chat", "--resume", session_id, stdin="/compact\n"),
        seri("compact", "--session", session_id),
        seri("chat", "--resume", session_id, "-p", "another task"),
    ]


def legacy_with_a_huge_last_output(size: int) -> list[dict[str, Any]]:
    """An older release's session whose newest message is a tool output of ``size`` bytes."""
    lines: list[dict[str, Any]] = [
        {
            "id": "huge-last",
            "cwd": "/home/ana/src/shop",
            "systemPrompt": "You are seri.",
            "permissionMode": "auto",
        },
        {
            "role": "user",
            "content": "Find out why the nightly build is slow; the goal is under 5 min.",
        },
    ]
    for n in range(8):
        call = f"call_{n}"
        lines += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {n}: checking stage {n}."},
                    {
                        "type": "tool-call",
                        "toolCallId": call,
                        "toolName": "read_file",
                        "input": {"path": f"/home/ana/src/shop/ci/stage{n}.yml"},
                    },
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call,
                        "toolName": "read_file",
                        "output": {"type": "text", "value": f"stage {n}: " + "step " * 300},
                    }
                ],
            },
        ]
    log = "".join(f"[{i:06d}] compiling module_{i % 97}.c ... ok\n" for i in range(size // 30))
    lines += [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "call_log",
                    "toolName": "bash",
                    "input": {"command": "make -j1 V=1 2>&1"},
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "call_log",
                    "toolName": "bash",
                    "output": {"type": "text", "value": log[:size]},
                }
            ],
        },
    ]
    return lines


@pytest.mark.parametrize(("window", "ratio"), [(8_000, 1), (8_000, 3), (16_000, 2), (32_000, 3)])
def test_an_imported_session_ending_in_a_200_kb_output_stays_usable(
    tmp_path: Path, window: int, ratio: int
) -> None:
    """Failure 1 of the issue: the newest message, a huge output, is newer than every cut.

    The request carries it cut to an eighth of the window with a marker naming the spill
    file that holds all of it; the store keeps its bytes until a ladder step elides it.
    """
    seri = Seri(tmp_path, window)
    session_id = seri.import_session(legacy_with_a_huge_last_output(200_000))
    with FakeModel(
        context_length=window, enforce_context=True, token_ratio=ratio, auto_recap=True
    ) as fake:
        seri.fake = fake
        ran = the_four_steps(seri, session_id)
        assert [r.code for r in ran] == [0, 0, 0, 0], [r.stderr for r in ran]
        assert fake.refused == 0
        check_turn_requests(fake)
        # Wherever the output still goes out (at the smallest windows the first compaction
        # may evict it with its call), it goes out cut, naming the file that holds all of it.
        shown = [
            m["content"]
            for body in turns(fake)
            for m in body["messages"]
            if m.get("tool_call_id") == "call_log"
        ]
        for text in shown:
            assert len(text) <= window // 8 * 4
            assert MARKER.search(text) or text.startswith('{"elided": true'), text[:200]
        [whole] = [
            p.read_text()
            for p in (seri.home / "spill").iterdir()
            if "[000000] compiling" in p.read_text()
        ]
        assert len(whole) == 200_000
        assert history_tokens(fake, turns(fake)[-1]) < window // 2
        # The summarizer saw the user's goal, and the recap keeps the paths, relative.
        assert any("nightly build is slow" in b["messages"][1]["content"] for b in summaries(fake))
        _head, stored = seri.show(session_id)
        recap = next(m for m in stored if m.get("kind") == "recap")
        assert "ci/stage0.yml" in recap["text"] and "/home/ana/src/shop/" not in recap["text"]


def test_a_live_200_kb_output_enters_the_history_cut_and_pageable(tmp_path: Path) -> None:
    """A command printing 200 KB at an 8k window: the model gets an eighth of the window,
    the whole output is in a spill file it can page through with read_file."""
    seri = Seri(tmp_path, 8_000)
    script = [
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "seq 1 40000"}}]},
        {"text": "counted"},
        {"text": "ok"},
    ]
    with FakeModel(
        script, context_length=8_000, enforce_context=True, token_ratio=2, auto_recap=True
    ) as fake:
        seri.fake = fake
        first = seri("chat", "--allow", "bash", "-p", "count to 40000")
        assert first.code == 0, first.stderr
        result = next(m for m in turns(fake)[1]["messages"] if m.get("tool_call_id") == "b1")
        assert len(result["content"]) <= 8_000 // 8 * 4
        assert result["content"].startswith("1\n2\n3\n")
        where = re.search(r"the full output is in (\S+?) …", result["content"])
        assert where is not None, result["content"]
        assert "40000" in Path(where.group(1)).read_text()
        session_id = seri.only_session()
        ran = the_four_steps(seri, session_id)[1:]
        assert [r.code for r in ran] == [0, 0, 0], [r.stderr for r in ran]
        assert fake.refused == 0
        check_turn_requests(fake)


@pytest.mark.parametrize("ratio", [1, 3])
def test_many_10k_token_reads_at_a_16k_window(tmp_path: Path, ratio: int) -> None:
    """Failure 2: a single 10k-token read made the next request overflow at a small window.

    Twelve 40 KB files read one after another: every read comes in cut to the window's share,
    compaction keeps up, no request is refused, and the recap lists the files, relative.
    """
    seri = Seri(tmp_path, 16_000)
    names = []
    for n in range(12):
        name = f"src/module_{n:02d}.py"
        path = seri.project / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(
            "".join(f"def function_{n}_{i}(x):\n    return x * {i}\n" for i in range(1400))
        )
        names.append(name)
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"id": f"r{n}", "name": "read_file", "arguments": {"path": name}}]}
        for n, name in enumerate(names)
    ]
    script += [{"text": "read them all"}, {"text": "next"}, {"text": "and again"}]
    with FakeModel(
        script, context_length=16_000, enforce_context=True, token_ratio=ratio, auto_recap=True
    ) as fake:
        seri.fake = fake
        first = seri("chat", "-p", "read every module and summarize the API")
        assert first.code == 0, first.stderr
        assert first.stdout == "read them all\n"
        session_id = seri.only_session()
        ran = the_four_steps(seri, session_id)[1:]
        assert [r.code for r in ran] == [0, 0, 0], [r.stderr for r in ran]
        assert fake.refused == 0
        check_turn_requests(fake)
        cap = 16_000 // 8 * 4
        for body in turns(fake):
            for message in body["messages"]:
                if message["role"] == "tool":
                    assert len(message["content"]) <= cap + 400
        head, stored = seri.show(session_id)
        assert head["compactions"]
        recap = next(m for m in stored if m.get("kind") == "recap")
        assert "src/module_00.py" in recap["text"]
        assert str(seri.project) not in recap["text"]
        assert history_tokens(fake, turns(fake)[-1]) < 16_000 // 2


def test_parallel_reads_over_the_window_climb_the_shrink_ladder(tmp_path: Path) -> None:
    """Eight parallel reads, each within its share, together fill the window: the newest group
    alone is too big for any cut, so the oldest payloads are elided (with their spill files),
    in the ledger and the trajectory, and the request fits."""
    seri = Seri(tmp_path, 16_000)
    calls = []
    for n in range(8):
        (seri.project / f"part{n}.txt").write_text(f"part {n} line\n" * 3000)
        calls.append({"id": f"p{n}", "name": "read_file", "arguments": {"path": f"part{n}.txt"}})
    script = [{"tool_calls": calls}, {"text": "read all eight"}]
    with FakeModel(
        script, context_length=16_000, enforce_context=True, token_ratio=2, auto_recap=True
    ) as fake:
        seri.fake = fake
        ran = seri("chat", "-p", "read the eight parts at once")
        assert ran.code == 0, ran.stderr
        assert ran.stdout == "read all eight\n"
        assert fake.refused == 0
        check_turn_requests(fake)
        last = turns(fake)[-1]["messages"]
        elided = [
            json.loads(m["content"])
            for m in last
            if m["role"] == "tool" and m["content"].startswith('{"elided": true')
        ]
        assert elided, [m["content"][:80] for m in last if m["role"] == "tool"]
        for marker in elided:
            assert marker["originalBytes"] > 0
            assert Path(marker["fullText"]).read_text().startswith("     1\tpart ")
        session_id = seri.only_session()
        head, _ = seri.show(session_id)
        assert any(entry["elided"] > 0 for entry in head["compactions"])
        [shrink, *_] = seri.events("shrink")
        assert shrink["elided"] == len(elided)


def test_a_refused_summarizer_request_is_shrunk_by_the_stated_numbers_and_retried(
    tmp_path: Path,
) -> None:
    """A tokenizer denser than any seri assumes (10x): the first summarizer request of an
    imported session is refused; the numbers in llama.cpp's refusal give the scale, the
    request is cut to fit and sent again, and compaction goes on sized right."""
    lines = real_lines("real-gemini-teams")
    seri = Seri(tmp_path, 32_000)
    session_id = seri.import_session(lines)
    with llama_slot(context_length=32_000, token_ratio=10) as fake:
        seri.fake = fake
        ran = seri("chat", "--resume", session_id, "-p", "continue")
        assert ran.code == 0, ran.stderr
        assert fake.refused == 1
        first, second = summaries(fake)[:2]
        assert len(second["messages"][1]["content"]) < len(first["messages"][1]["content"])
        head, _ = seri.show(session_id)
        [entry] = head["compactions"]
        assert entry["summary_calls"] == len(summaries(fake))
        [compaction] = seri.events("compaction")
        assert compaction["token_scale"] >= 5


def test_a_resumed_session_never_measured_is_priced_not_refused(tmp_path: Path) -> None:
    """A llama.cpp slot of 32k whose tokenizer counts 3 tokens per 4 bytes (three times
    seri's estimate on English). The imported session is under half of 32k by seri's count,
    and was sent whole and refused before (issue 31: a session never measured was judged at
    scale 1). Now its first request is priced by its own text (seri.pure.provider.token_prior),
    compacted before it is sent, and nothing is refused. (Learning a window from a refusal:
    test_learned_window.)"""
    seri = Seri(tmp_path, 32_000)
    session_id = seri.import_session(real_lines("real-terminus-invoices"))
    with llama_slot(context_length=32_000, token_ratio=Utf8Ratio(3)) as fake:
        seri.fake = fake
        ran = seri("chat", "--resume", session_id, "-p", "continue")
        assert ran.code == 0, ran.stderr
        assert fake.refused == 0
        head, _ = seri.show(session_id)
        assert [c["trigger"] for c in head["compactions"]] == ["auto"]
        assert history_tokens(fake, turns(fake)[-1]) < 32_000 // 2


def test_a_slot_smaller_than_the_config_costs_one_refused_summarizer_request(
    tmp_path: Path,
) -> None:
    """A 16k slot behind a 32k config, met first by the summarizer. Its requests are sized for
    32k, by the prior of their text until a reply shows the real density (2x), then by that:
    one of the first two is over what only the slot's real size refuses (nothing seri could
    know before; the fold sizes by what the provider shows, so that a sparse tokenizer is not
    paid for in summarizer calls). That one refusal states the slot's 16k: every later
    request fits it, and the compaction goes through."""
    seri = Seri(tmp_path, 32_000)
    session_id = seri.import_session(real_lines("real-mini-django"))
    with llama_slot() as fake:
        seri.fake = fake
        ran = seri("chat", "--resume", session_id, "-p", "continue")
        assert ran.code == 0, ran.stderr
        assert fake.refused == 1
        # The fake refuses what is over its window with the answer's room (max_tokens) added.
        counts = [
            fake.prompt_tokens(body) + int(body.get("max_tokens") or 0) for body in fake.requests
        ]
        over = [n > 16_000 for n in counts]
        assert over.count(True) == 1 and over.index(True) <= 1
        assert not any(over[over.index(True) + 1 :])
        head, _ = seri.show(session_id)
        assert [c["trigger"] for c in head["compactions"]] == ["auto"]
        assert head["compactions"][0]["summary_calls"] == len(summaries(fake))


def test_seri_compact_exits_1_when_nothing_can_make_the_session_fit(tmp_path: Path) -> None:
    """A pasted 100 KB user message at an 8k window: no cut helps, no tool payload can give
    way. `seri compact` changes nothing more, says what is too big, and exits 1."""
    seri = Seri(tmp_path, 8_000)
    lines: list[dict[str, Any]] = [
        {"id": "pasted", "cwd": "/w", "systemPrompt": "You are seri.", "permissionMode": "auto"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": "here is the log:\n" + "E1234 something failed\n" * 4500},
    ]
    session_id = seri.import_session(lines)
    with FakeModel(context_length=8_000, enforce_context=True, auto_recap=True) as fake:
        seri.fake = fake
        # The dry run says so first (review-1 N11), in the words the compaction then uses.
        planned = seri("compact", "--session", session_id, "--dry-run", "--json")
        shown = seri("compact", "--session", session_id, "--dry-run")
        ran = seri("compact", "--session", session_id)
        assert ran.code == 1
        assert "does not fit the window" in ran.stderr
        assert "user message of" in ran.stderr and "/clear" in ran.stderr
        assert fake.requests == []
    assert planned.code == 0 and shown.code == 0
    would_fail = json.loads(planned.stdout)["would_fail"]
    assert ran.stderr.strip().endswith(f"failed: {would_fail}")
    assert f"would fail (exit 1): {would_fail}" in shown.stdout
    head, stored = seri.show(session_id)
    assert head["compactions"] == [] and len(stored) == 3


def test_compact_dry_run_shows_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    lines = real_lines("real-cc-meridian")
    seri = Seri(tmp_path, 16_000)
    session_id = seri.import_session(lines)
    with FakeModel(context_length=16_000, enforce_context=True) as fake:
        seri.fake = fake
        before = seri.show(session_id)
        ran = seri("compact", "--session", session_id, "--dry-run", "--json")
        assert ran.code == 0, ran.stderr
        plan = json.loads(ran.stdout)
        text = seri("compact", "--session", session_id, "--dry-run")
        assert fake.requests == []
        assert seri.show(session_id) == before
        # A real compaction from the shell measures the tokenizer and keeps what it learned.
        fake.add_steps({"text": '{"goal": "build Meridian"}', "repeat": 40})
        assert seri("compact", "--session", session_id).code == 0
        again = json.loads(seri("compact", "--session", session_id, "--dry-run", "--json").stdout)
        assert again["token_scale_measured"] is True
    assert plan["context_window"] == 16_000 and plan["token_scale_measured"] is False
    assert plan["cut"]["evicted"] > 200
    assert plan["estimate_before"] > plan["estimate_after"]
    assert len(plan["chunks"]) >= 2
    assert plan["chunks"][0]["first"] == 0
    assert all(
        b["first"] == a["last"] + 1
        for a, b in zip(plan["chunks"], plan["chunks"][1:], strict=False)
    )
    assert plan["chunks"][-1]["last"] == plan["cut"]["evicted"] - 1
    request = plan["summarizer_request"]
    # The session's own model, as the older release recorded it.
    assert request["model"] == "anthropic/claude" and "tools" not in request
    assert "You are building the Meridian" in request["messages"][1]["content"]
    assert "summarizer: " in text.stdout and "the first summarizer request, exactly:" in text.stdout


def _old_log_session() -> list[dict[str, Any]]:
    """An older release's session whose first tool result is a 150,000-byte log."""
    lines: list[dict[str, Any]] = [
        {"id": "old-log", "cwd": "/w", "systemPrompt": "You are seri.", "permissionMode": "auto"},
        {"role": "user", "content": "look at the build log"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "c0",
                    "toolName": "bash",
                    "input": {"command": "cat b.log"},
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c0",
                    "toolName": "bash",
                    "output": {"type": "text", "value": "line\n" * 30_000},
                }
            ],
        },
    ]
    for n in range(1, 8):
        lines.append({"role": "user", "content": f"step {n} " + "please go on " * 200})
        lines.append({"role": "assistant", "content": [{"type": "text", "text": "ok " * 300}]})
    return lines


def test_compact_dry_run_shows_the_request_the_compaction_then_sends(tmp_path: Path) -> None:
    """The dry run's summarizer request is the one `seri compact` sends, also for a session
    whose evicted part holds a stored result over the window's cap (the request carries that
    result cut; the summarizer is told the stored size it had)."""
    seri = Seri(tmp_path, 16_000)
    session_id = seri.import_session(_old_log_session())
    with FakeModel(context_length=16_000, auto_recap=True) as fake:
        seri.fake = fake
        planned = seri("compact", "--session", session_id, "--dry-run", "--json")
        assert planned.code == 0, planned.stderr
        plan = json.loads(planned.stdout)
        assert fake.requests == []
        ran = seri("compact", "--session", session_id)
        assert ran.code == 0, ran.stderr
        sent = summaries(fake)
    head, _ = seri.show(session_id)
    [entry] = head["compactions"]
    assert plan["cut"]["evicted"] == entry["evicted"]
    assert len(plan["chunks"]) == entry["summary_calls"] == len(sent)
    assert plan["summarizer_request"] == sent[0]
    assert '{"elided": true, "originalBytes": 150000}' in sent[0]["messages"][1]["content"]


def test_a_chats_later_compaction_reads_stored_results_whole(tmp_path: Path) -> None:
    """review-1 N6: in one chat process, the conversation kept after a task held the cut
    views of over-cap stored results, so a /compact (or an automatic compaction) from the
    second task on told the summarizer the view's size, not the stored result's."""
    seri = Seri(tmp_path, 64_000, compaction={"keep_tokens": 3_000})
    session_id = seri.import_session(_old_log_session())
    with FakeModel([{"text": "fine"}], context_length=64_000, auto_recap=True) as fake:
        seri.fake = fake
        ran = seri("chat", "--resume", session_id, stdin="one more step\n/compact\n")
        assert ran.code == 0, ran.stderr
        sent = summaries(fake)
        [turn] = turns(fake)
    assert sent, (ran.stdout, ran.stderr)
    # The task itself went out with the log cut (it is over a 64k window's cap), or, priced
    # for an unmeasured tokenizer, compacted away before it was sent ...
    shown = "".join(str(m.get("content")) for m in turn["messages"])
    assert re.search(r"the whole result \(\d+ bytes\) is in", shown) or turn["messages"][1][
        "content"
    ].startswith("[Recap of the earlier conversation"), shown[:300]
    # ... and the compaction after it read the stored log, as a fresh process would.
    assert sent
    told = "".join(m["content"] for body in sent for m in body["messages"])
    assert re.findall(r"originalBytes.: [0-9]+", told) == ['originalBytes": 150000']


def test_pins_ride_along_in_every_recap(tmp_path: Path) -> None:
    lines = real_lines("real-terminus-invoices")
    seri = Seri(tmp_path, 8_000)
    session_id = seri.import_session(lines)
    with FakeModel(context_length=8_000, enforce_context=True, auto_recap=True) as fake:
        seri.fake = fake
        assert (
            seri("pin", "--session", session_id, "Totals", "use", "the", "Total", "line").code == 0
        )
        assert seri("pin", "--session", session_id, "VAT may be 0").code == 0
        assert seri("pin", "--session", session_id, "temporary").code == 0
        removed = seri("pin", "--session", session_id, "--rm", "3")
        assert removed.code == 0 and "temporary" in removed.stderr
        listed = seri("pin", "--session", session_id, "--list", "--json")
        assert [json.loads(line)["text"] for line in listed.stdout.splitlines()] == [
            "Totals use the Total line",
            "VAT may be 0",
        ]
        assert seri("pin", "--session", session_id, "--rm", "9").code == 2
        # Not a pin number: a clear usage error, never an internal one.
        for bad in ("9" * 30, "1_0", "0", "-1"):
            refused = seri("pin", "--session", session_id, "--rm", bad)
            assert refused.code == 2 and "internal error" not in refused.stderr, refused.stderr
        assert len(seri("pin", "--session", session_id, "--list").stdout.splitlines()) == 2
        # All pins together are capped too (review-1 N12): the one over the cap is refused,
        # naming the cap and how to make room, and the pins stay as they were.
        for n in range(3):
            assert seri("pin", "--session", session_id, f"long {n} " + "x" * 1_990).code == 0
        over = seri("pin", "--session", session_id, "one too many " + "y" * 1_980)
        assert over.code == 2, over.stderr
        assert "at most 8,000 characters in all" in over.stderr and "--rm N" in over.stderr
        assert len(seri("pin", "--session", session_id, "--list").stdout.splitlines()) == 5
        for _ in range(3):
            assert seri("pin", "--session", session_id, "--rm", "3").code == 0
        chat = seri(
            "chat", "--resume", session_id, stdin="/pin keep summary.csv columns\n/compact\n"
        )
        assert chat.code == 0, chat.stderr
        assert seri("compact", "--session", session_id).code == 0
        ran = seri("chat", "--resume", session_id, "-p", "next")
        assert ran.code == 0, ran.stderr
        recaps = [
            m["content"]
            for body in turns(fake)
            for m in body["messages"]
            if str(m.get("content", "")).startswith(RECAP_HEADER)
        ]
        assert recaps
        for pin in ("Totals use the Total line", "VAT may be 0", "keep summary.csv columns"):
            assert f"- {pin}" in recaps[-1]
        assert "temporary" not in recaps[-1]
