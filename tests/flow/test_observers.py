"""Watching a run live: observers handed to the agent get its header, every event with its
time and its end, whether or not the trajectory is recorded; one that raises is told once on
stderr and dropped, and the run goes on.

The agent is the one ``build_agent`` makes, over fake model, tools and session ports; the
events go through the real ``RunEvents`` into the real ``Recorder`` on a real store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts.bench.data import synthetic_header
from seri.io.trajectories.recorder import Recorder
from seri.pure.agent.task_records import Conversation
from seri.pure.inputs.settings import Settings
from seri.pure.tools.tool_specs import select_specs
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header, TurnEnd
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.agent import AgentBrief, AgentPorts, Role, build_agent
from seri.runtime.trajectories.run_events import RunEvents
from tests.flow.fakes import SECRET, FakeModel, FakeSession, FakeTools, reply
from tests.flow.steps import call
from tests.trajectory_seed import add_session, store_at

SESSION = "5e" * 16


class Watcher:
    """An observer that keeps what it was told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, Any, float]] = []

    def started(self, header: Header, at: float) -> None:
        self.told.append(("started", header, at))

    def observe(self, event: Event, at: float) -> None:
        self.told.append(("observe", event, at))

    def finished(self, at: float) -> None:
        self.told.append(("finished", None, at))

    def events(self) -> list[Event]:
        return [event for kind, event, _ in self.told if kind == "observe"]


class Breaks(Watcher):
    """An observer that fails on the second event it is shown."""

    def observe(self, event: Event, at: float) -> None:
        super().observe(event, at)
        if len(self.events()) == 2:
            raise ConnectionError("collector went away")


class Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def run_watched(
    home: Path, *observers: Any, recording: bool
) -> tuple[RunEvents, list[tuple[str, str]]]:
    """One task (a tool call, then an answer) watched by ``observers``: the run's events and
    what the store recorded of it, as (type, body) rows."""
    store = store_at(home)
    add_session(store, SESSION, 0.0)
    recorder = Recorder(store, SESSION, Redactor.of([SECRET]), enabled=recording)
    events = RunEvents(recorder, observers, clock=Clock())
    events.start(synthetic_header(SESSION, recorder.run_id))
    model = FakeModel(reply("", call("c1", "read_file", path="a.txt")), reply("read it"))
    brief = AgentBrief(
        settings=Settings(),
        window=100_000,
        system_prompt="you read files",
        project="/project",
        offered=select_specs(("read_file",)),
    )
    ports = AgentPorts(
        model=model,
        session=FakeSession(),
        events=events,
        redactor=Redactor.of([SECRET]),
        spill_dir=None,
        tools=FakeTools(),
    )
    agent = build_agent(Role.SUBAGENT, brief, ports)
    end = agent.run_task(Conversation(()), "read a.txt")
    assert end.status == "done"
    events.flush()
    events.finish()
    rows = store.connection.execute("SELECT type, body FROM events ORDER BY id").fetchall()
    store.close()
    return events, [(str(kind), str(body)) for kind, body in rows]


TYPES = ["model_call", "tool_call", "tool_result", "model_call", "turn_end"]


@pytest.mark.parametrize("recording", [True, False])
def test_observers_see_the_header_every_event_with_its_time_and_the_end(
    tmp_path: Path, recording: bool
) -> None:
    watcher = Watcher()
    events, rows = run_watched(tmp_path / "profile", watcher, recording=recording)

    kinds = [kind for kind, _, _ in watcher.told]
    assert kinds == ["started", *["observe"] * len(TYPES), "finished"]
    header = watcher.told[0][1]
    assert isinstance(header, Header)
    assert (header.session, header.run) == (SESSION, events.run_id)
    assert [event.type for event in watcher.events()] == TYPES
    times = [at for _, _, at in watcher.told]
    assert times == sorted(times) and len(set(times)) == len(times)
    if recording:
        # The same events, in the same order, as the trajectory keeps them.
        assert [kind for kind, _ in rows] == TYPES
        assert [json.loads(body) for _, body in rows][-1] == watcher.events()[-1].export()
    else:
        assert rows == []


def test_observers_see_events_redacted(tmp_path: Path) -> None:
    watcher = Watcher()
    run_watched(tmp_path / "profile", watcher, recording=False)
    shown = json.dumps([event.export() for event in watcher.events()])
    assert '"name": "read_file"' in shown
    assert SECRET not in shown  # the fake tool's result names the key
    assert "[REDACTED]" in shown


def test_an_observer_that_raises_is_told_once_and_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken, watcher = Breaks(), Watcher()
    _, rows = run_watched(tmp_path / "profile", broken, watcher, recording=True)

    assert len(broken.events()) == 2, "not told again once it failed"
    assert ("finished", None) not in [(kind, event) for kind, event, _ in broken.told]
    assert [event.type for event in watcher.events()] == TYPES, "the others go on"
    assert watcher.told[-1][0] == "finished"
    assert [kind for kind, _ in rows] == TYPES, "the recording goes on"
    assert capsys.readouterr().err == (
        "seri: warning: event observer Breaks failed (ConnectionError: collector went away); "
        "the run goes on without it\n"
    )


def test_the_end_is_told_once_and_events_after_it_are_not(tmp_path: Path) -> None:
    watcher = Watcher()
    events, _ = run_watched(tmp_path / "profile", watcher, recording=False)
    told = len(watcher.told)
    events.finish()
    events.record(TurnEnd(status="done", turns=0))
    assert len(watcher.told) == told
