"""Process races on one session, R1–R3 (issue 13): hundreds of rounds of real seri processes.

Each round forks two real seri processes from ``race_child.py`` (each its own pid, its own
lease) and lets them race on one session: two ``seri chat --resume`` of it (R1), a chat
running a command while ``seri rewind`` tries to cut the conversation (R2), a chat turn while
``seri compact`` tries to swap in a recap (R3). The second starts at a random (seeded) moment
within the first's run. Whatever the timing, one of them writes and the other is refused
with the writer's pid, or they take turns; afterwards every stored history is whole: each
tool call followed by its one result, in order, every turn complete, no lease left behind.

``FAULT_ROUNDS`` sets the number of rounds per race: 40 in ``make test`` (under ten seconds a
race on an idle machine), 500 in ``make races``, the long run. 40 is enough for each
outcome checked below to happen in every run: the late rounds (one in five) reach past the
first child's end on the machine as loaded (``race_child.py``), so the children take turns
as well as refuse each other; every round, few or many, is checked whole.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from seri.pure.session.records import Message
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    HERE,
    call,
    chat_env,
    check_store,
    database,
    rows,
    run,
    seed_for,
    seri,
    seri_env,
    write_config,
)
from tests.pairing import pairing_problems

ROUNDS = int(os.environ.get("FAULT_ROUNDS", "40"))
# The races are about who writes when, not about fsync: a profile in memory (tmpfs) makes a
# round cost seri's own work. (Durability has its own tests: S1-S4.)
MEMORY = Path("/dev/shm")


@pytest.fixture
def seri_home(tmp_path: Path) -> Iterator[Path]:
    if not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK)):
        yield tmp_path / "profile"
        return
    home = Path(tempfile.mkdtemp(prefix="seri-race-", dir=MEMORY))
    try:
        yield home / "profile"
    finally:
        shutil.rmtree(home, ignore_errors=True)


BUSY = re.compile(r"session \w+ is in use by (seri \w+) \(pid (\d+) on host ")


def _race(
    home: Path,
    project: Path,
    env: dict[str, str],
    case: str,
    first: list[str],
    second: list[str],
    max_delay: float,
    tmp: Path,
    second_env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    spec = {
        "rounds": ROUNDS,
        "seed": seed_for(case),
        "cwd": str(project),
        "out": str(tmp / f"{case}-out"),
        "max_delay": max_delay,
        "first": first,
        "second": second,
        "second_env": second_env or {},
    }
    spec_path = tmp / f"{case}.json"
    spec_path.write_text(json.dumps(spec))
    result = subprocess.run(
        [sys.executable, str(HERE / "race_child.py"), str(spec_path)],
        capture_output=True,
        text=True,
        env=seri_env(home, env),
        cwd=project,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    print(f"{case}: {ROUNDS} rounds in {report['seconds']:.1f} s")
    rounds: list[dict[str, Any]] = report["rounds"]
    return rounds


def _outcomes(rounds: list[dict[str, Any]], writer: str, other: str) -> dict[str, int]:
    """Check each child's ending; count who wrote and who was refused by whom."""
    counts = {"both": 0, "refused": 0}
    for number, race in enumerate(rounds):
        children = race["children"]
        for child, rival in ((children[0], children[1]), (children[1], children[0])):
            err = child["stderr"]
            assert "Traceback" not in err and "internal error" not in err, (number, err)
            assert "race_child" not in err, (number, err)
            if child["status"] == 1 and BUSY.search(err):
                holder = BUSY.search(err)
                assert holder is not None
                # Refused by the one process that raced it, named by its pid.
                assert int(holder.group(2)) == rival["pid"], (number, err, rival["pid"])
                assert holder.group(1) in (writer, other), err
                counts["refused"] += 1
        if all(c["status"] == 0 for c in children):
            counts["both"] += 1
    return counts


def assert_whole(messages: list[Message]) -> int:
    """Paired and in order: user, then (assistant call, its result)*, then an answer.

    Returns the number of complete turns."""
    assert not pairing_problems(messages), pairing_problems(messages)
    turns = 0
    i = 0
    if messages and messages[0].kind == "recap":
        # A compaction cuts between turns' parts, never inside a call and its result: the
        # kept tail may begin inside a turn.
        i = _turn_rest(messages, 1, tail=True)
    while i < len(messages):
        assert messages[i].role == "user", (i, messages[i])
        i = _turn_rest(messages, i + 1)
        turns += 1
    return turns


def _turn_rest(messages: list[Message], i: int, *, tail: bool = False) -> int:
    """Past a turn's (call, results)* and its answer, from ``i``; returns the next index."""
    while i < len(messages) and messages[i].tool_calls:
        ids = [c.id for c in messages[i].tool_calls]
        results = [m.tool_call_id for m in messages[i + 1 : i + 1 + len(ids)]]
        assert results == ids, (i, ids, results)
        i += 1 + len(ids)
    if tail and i < len(messages) and messages[i].role == "user":
        return i  # a recap's tail that began with the last answer
    assert i < len(messages) and messages[i].role == "assistant", (i, messages[i : i + 2])
    assert messages[i].text.startswith("answer "), messages[i]
    return i + 1


# Whole answers in one piece: the race is about the store, not about streaming.
FAST = {"piece_chars": 10_000, "split_bytes": 1 << 16}


def _chat_script(prefix: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for k in range(4 * ROUNDS):
        steps.append({"tool_calls": [call(f"{prefix}{k}", tool, **arguments)], **FAST})
        steps.append({"text": f"answer {k}", **FAST})
    return steps


def _seed_session(home: Path, project: Path, fake: FakeModel) -> str:
    result = run(
        seri("chat", "--allow", "bash", "-p", "first"), home=home, cwd=project, env=chat_env(fake)
    )
    assert result.returncode == 0, result.stderr
    return next(iter(check_store(home)))


def _no_leases_left(home: Path) -> None:
    with database(home) as conn:
        assert rows(conn, "SELECT session_id, command FROM leases") == []


def _all_whole(home: Path, session: str, ledger: FaultLedger, case: str) -> None:
    """After the races: the store whole, the history paired and in order, no lease left."""
    assert_whole(check_store(home)[session])
    _no_leases_left(home)
    ledger.survived(case, ROUNDS)


def test_R1_two_resumes_of_one_session(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    write_config(seri_home, {"context_window": 1_000_000})
    with FakeModel(_chat_script("g", "glob", pattern="*")) as fake:
        session = _seed_session(seri_home, project, fake)
        chat = ["chat", "--resume", session, "-p", "turn {round}"]
        fault_ledger.injected("R1", ROUNDS)
        rounds = _race(seri_home, project, chat_env(fake), "R1", chat, chat, 0.06, tmp_path)
    counts = _outcomes(rounds, "seri chat", "seri chat")
    stored = check_store(seri_home)
    assert list(stored) == [session], "a refused resume must not create a session"
    turns = assert_whole(stored[session])
    written = sum(c["status"] == 0 for r in rounds for c in r["children"])
    assert turns == 1 + written
    # Both orders happen: refused while the other runs, and one after the other.
    assert counts["refused"] > 0 and counts["both"] > 0, counts
    assert counts["refused"] + written == 2 * ROUNDS
    _no_leases_left(seri_home)
    fault_ledger.survived("R1", ROUNDS)
    print(f"R1: {counts}")


def test_R2_rewind_while_a_chat_runs_a_tool(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    write_config(seri_home, {"context_window": 1_000_000})
    script = _chat_script("b", "bash", command="sleep 0.02; echo ran")
    with FakeModel(script) as fake:
        session = _seed_session(seri_home, project, fake)
        chat = ["chat", "--resume", session, "--allow", "bash", "-p", "turn {round}"]
        rewind = ["rewind", "--session", session, "--to", "1", "--conversation"]
        fault_ledger.injected("R2", ROUNDS)
        # The sandbox is not what is raced here: the cheapest one (no extra process per call).
        env = chat_env(fake, SERI_SANDBOX="landlock")
        rounds = _race(seri_home, project, env, "R2", chat, rewind, 0.08, tmp_path)
    counts = _outcomes(rounds, "seri chat", "seri rewind")
    rewound = 0
    for race in rounds:
        chat_child, rewind_child = race["children"]
        assert chat_child["status"] in (0, 1), chat_child["stderr"]
        # 0 rewound; 1 refused (busy); 2 nothing to rewind to (an empty history).
        assert rewind_child["status"] in (0, 1, 2), rewind_child["stderr"]
        rewound += rewind_child["status"] == 0
    assert counts["refused"] > 0 and rewound > 0, (counts, rewound)
    _all_whole(seri_home, session, fault_ledger, "R2")
    print(f"R2: {counts}, {rewound} rewinds done")


def test_R3_compact_during_a_turn(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    write_config(seri_home, {"context_window": 1_000_000, "compaction": {"keep_tokens": 40}})
    recap = '{"goal": "race", "progress": ["took turns"], "blockers": [], "next_steps": ["go on"]}'
    with (
        FakeModel(_chat_script("g", "glob", pattern="*")) as fake,
        FakeModel([{"text": recap, "repeat": 2 * ROUNDS, **FAST}]) as summarizer,
    ):
        session = _seed_session(seri_home, project, fake)
        for n in range(3):
            more = run(
                seri("chat", "--resume", session, "-p", f"warm-up {n}"),
                home=seri_home,
                cwd=project,
                env=chat_env(fake),
            )
            assert more.returncode == 0, more.stderr
        chat = ["chat", "--resume", session, "-p", "turn {round}"]
        # The compact child talks to its own summarizer: the base URL is per process.
        compact = ["compact", "--session", session]
        fault_ledger.injected("R3", ROUNDS)
        rounds = _race(
            seri_home,
            project,
            chat_env(fake),
            "R3",
            chat,
            compact,
            0.06,
            tmp_path,
            {"SERI_BASE_URL": summarizer.base_url},
        )
    counts = _outcomes(rounds, "seri chat", "seri compact")
    # Exit 0 is also "Not enough history to compact." (just after another compaction).
    compacted = sum(
        r["children"][1]["status"] == 0 and "Compacted session" in r["children"][1]["stderr"]
        for r in rounds
    )
    with database(seri_home) as conn:
        ledger = rows(conn, "SELECT count(*) FROM compactions WHERE session_id = ?", (session,))
    assert counts["refused"] > 0 and compacted > 0, (counts, compacted)
    assert ledger[0][0] >= compacted
    _all_whole(seri_home, session, fault_ledger, "R3")
    print(f"R3: {counts}, {compacted} compactions")
