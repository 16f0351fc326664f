"""The interpreter against fake ports: a whole task, carried out without a network, a store
or a terminal (cosmicpython's fakes, gidgethub's MockGitHubAPI: adapters, not mocks)."""

from __future__ import annotations

import json
from typing import Any

from seri.pure.agent.effects import (
    AskPerson,
    ModelFailed,
)
from seri.pure.agent.task_records import Conversation
from seri.pure.agent.turn import compact_on_demand, run_task
from seri.pure.permissions.approval import Answer
from seri.pure.permissions.permission_policy import parse_policy
from seri.pure.session.records import Message
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.interpreter import Interpreter
from seri.runtime.agent.ports import Nobody
from tests.flow.fakes import SECRET, FakeModel, FakeRecorder, FakeSession, FakeTools, reply
from tests.flow.steps import call, setup, user


class Approver(Nobody):
    """A person who approves, and remembers what was asked."""

    shows_tools = False

    def __init__(self) -> None:
        self.asked: list[AskPerson] = []
        self.notices: list[str] = []

    def ask(self, request: AskPerson) -> Answer:
        self.asked.append(request)
        return Answer(True)

    def notice(self, text: str) -> None:
        self.notices.append(text)


def interpreter(model: FakeModel, **ports: Any) -> Interpreter:
    return Interpreter(
        model=model,
        tools=ports.get("tools", FakeTools()),
        session=ports.get("session", FakeSession()),
        recorder=ports.get("recorder", FakeRecorder()),
        person=ports.get("person", Nobody()),
        redactor=Redactor.of([SECRET]),
    )


def test_a_task_runs_through_the_ports_and_secrets_never_reach_the_session() -> None:
    model = FakeModel(reply("", call("c1", "write_file", path="a.txt", content="x")), reply("ok"))
    tools, session, recorder, person = FakeTools(), FakeSession(), FakeRecorder(), Approver()
    runner = interpreter(model, tools=tools, session=session, recorder=recorder, person=person)
    end = runner.run(run_task(setup(interactive=True), Conversation(()), user("write a")))
    assert end.status == "done"
    assert [a.call.id for a in person.asked] == ["c1"]
    assert tools.ran == [("write_file", {"path": "a.txt", "content": "x"})]
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant"]
    assert SECRET not in json.dumps([m.text for m in session.messages])
    assert "[REDACTED]" in session.messages[2].text
    assert session.revision == 4
    assert [c.turns_used for c in session.counters] == [1, 2]
    assert [t for t, _ in recorder.events] == [
        "model_call",
        "tool_call",
        "tool_result",
        "model_call",
        "turn_end",
    ]
    assert recorder.flushed == 1
    assert len(model.requests) == 2


def test_no_summarizer_call_is_paid_for_when_the_session_changed_meanwhile() -> None:
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text="word " * 700) for n in range(12)
    )
    conversation = Conversation(history, total_chars=sum(len(m.text) for m in history))
    model = FakeModel()
    end = interpreter(model, session=FakeSession(changed=True)).run(
        compact_on_demand(setup(context_window=16_000), conversation, "")
    )
    assert model.requests == []
    assert end.not_compacted is not None
    assert end.not_compacted.reason.value == "session_changed"


def test_the_person_hears_what_the_loop_says() -> None:
    numbers_failure = ModelFailed("HTTP 500")
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text="word " * 700) for n in range(12)
    )
    conversation = Conversation(history, total_chars=sum(len(m.text) for m in history))
    person = Approver()
    model = FakeModel(numbers_failure, reply("done"))
    end = interpreter(model, person=person).run(
        run_task(setup(context_window=16_000, keep_tokens=2_000), conversation, user("go"))
    )
    assert end.status == "done"
    assert person.notices == [
        "seri: warning: automatic compaction skipped: the summarizer call failed: HTTP 500"
    ]


def test_a_denial_by_policy_never_reaches_the_tools_or_the_person() -> None:
    policy = parse_policy({"deny": ["bash"]})
    model = FakeModel(reply("", call("c1", "bash", command="ls")), reply("ok"))
    tools, person = FakeTools(), Approver()
    end = interpreter(model, tools=tools, person=person).run(
        run_task(setup(policy=policy, interactive=True), Conversation(()), user("ls"))
    )
    assert end.status == "done"
    assert tools.ran == [] and person.asked == []
