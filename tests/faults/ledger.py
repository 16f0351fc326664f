"""The fault suite's ledger: what each test injected or tried, and what it survived.

A pytest plugin, registered from ``tests/conftest.py`` (``pytest_plugins``) rather than from
``tests/faults/conftest.py``: under xdist the controller process never collects, so a conftest
below ``tests/`` is never loaded there, and the controller is the process that prints.

Every test of ``tests/faults`` takes the ``fault_ledger`` fixture and calls
``injected(case, n)`` before a fault or attack and ``survived(case, n)`` once it has checked
that nothing was lost and nothing got in. Each call appends one JSON line to a file of its own
process, in a directory the controller creates and hands to the workers through the
environment, so a worker that dies still leaves its counts. At the end of the session the
controller adds them up per group (S and P: faults, R: process races on one session, B and H:
bad and hostile inputs, T: attacks, C: confinement) and prints one line per group in the
terminal summary, which ``-q`` keeps.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "FAULT_LEDGER_DIR"
GROUPS = (
    ("faults", "SP", "injected"),
    ("races", "R", "raced"),
    ("bad inputs", "B", "tried"),
    ("hostile inputs", "H", "tried"),
    ("attacks", "T", "tried"),
    ("confinement", "C", "tried"),
)

VERDICTS = {
    "attacks": "nothing got in, nothing lost",
    "confinement": "nothing got out, nothing leaked",
    "hostile inputs": "no internal error, nothing lost",
    "races": "every history whole and in order",
}
ORDER = "SPRBHTC"


class FaultLedger:
    """Counts for one test; ``case`` is the test's id in reliability-anchors §5 (``"S1"``)."""

    def __init__(self, directory: Path | None, test: str) -> None:
        self._path = directory / f"{os.getpid()}.jsonl" if directory else None
        self._test = test
        self.counts: dict[tuple[str, str], int] = defaultdict(int)

    def _add(self, case: str, kind: str, n: int, **extra: Any) -> None:
        self.counts[(case, kind)] += n
        if self._path is None:
            return
        line = {"case": case, "kind": kind, "n": n, "test": self._test, **extra}
        with self._path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def injected(self, case: str, n: int = 1) -> None:
        """``n`` faults, bad inputs or attacks of ``case`` are about to be tried."""
        self._add(case, "injected", n)

    def survived(self, case: str, n: int = 1) -> None:
        """``n`` of them were checked: nothing lost, nothing written outside, no secret kept."""
        self._add(case, "survived", n)

    def seed(self, case: str, seed: int) -> None:
        """The seed a randomised test ran with, shown in the summary to reproduce it."""
        self._add(case, "seed", 0, seed=seed)


def _directory() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


@pytest.fixture
def fault_ledger(request: pytest.FixtureRequest) -> Iterator[FaultLedger]:
    ledger = FaultLedger(_directory(), request.node.nodeid)
    yield ledger
    if request.node.stash.get(_XFAILED, False):
        # A known gap (the test is marked xfail): what it did not survive is counted as such.
        for (case, kind), n in list(ledger.counts.items()):
            if kind == "injected":
                gap = n - ledger.counts.get((case, "survived"), 0)
                if gap > 0:
                    ledger._add(case, "known", gap)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and hasattr(report, "wasxfail") and report.skipped:
        item.stash[_XFAILED] = True


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # a worker: the controller made the directory and put it in our environment
    directory = tempfile.mkdtemp(prefix="seri-fault-ledger-")
    os.environ[ENV] = directory
    config.stash[_DIR] = directory


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or _DIR not in config.stash:
        return
    directory = Path(config.stash[_DIR])
    config.stash[_SUMMARY] = summarise(directory)
    shutil.rmtree(directory, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(_SUMMARY, [])
    if lines:
        terminalreporter.write_sep("-", "fault and attack suite (reliability-anchors §5)")
        for line in lines:
            terminalreporter.write_line(line)


def summarise(directory: Path) -> list[str]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cases: dict[str, set[str]] = defaultdict(set)
    seeds: dict[str, set[int]] = defaultdict(set)
    for path in sorted(directory.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue  # a worker killed mid-line: its other lines still count
            case = str(entry["case"])
            if entry["kind"] == "seed":
                seeds[case].add(int(entry["seed"]))
                continue
            group = next((name for name, letters, _ in GROUPS if case[:1] in letters), "other")
            totals[group][entry["kind"]] += int(entry["n"])
            cases[group].add(case)
    lines = []
    for name, _letters, verb in GROUPS:
        if name not in totals:
            continue
        counts = totals[name]
        tried, survived, known = counts["injected"], counts["survived"], counts["known"]
        ids = ", ".join(sorted(cases[name], key=_case_order))
        verdict = VERDICTS.get(name, "nothing lost")
        line = f"{name}: {tried} {verb}, {survived} survived with {verdict} ({ids})"
        if known:
            line += f"; {known} not survived: known gaps, tests marked xfail"
        if survived + known < tried:
            line += f"  <-- {tried - survived - known} NOT survived"
        lines.append(line)
    if seeds:
        shown = ", ".join(
            f"{case}={'/'.join(map(str, sorted(s)))}" for case, s in sorted(seeds.items())
        )
        lines.append(f"seeds: {shown} (set FAULT_SEED to replay)")
    return lines


def _case_order(case: str) -> tuple[int, int]:
    digits = "".join(ch for ch in case[1:] if ch.isdigit())
    return ORDER.find(case[:1]), int(digits or 0)


_DIR = pytest.StashKey[str]()
_XFAILED = pytest.StashKey[bool]()
_SUMMARY = pytest.StashKey[list[str]]()
