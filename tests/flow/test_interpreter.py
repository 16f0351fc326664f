"""The interpreter against fake ports: a whole task, carried out without a network, a store
or a terminal (cosmicpython's fakes, gidgethub's MockGitHubAPI: adapters, not mocks)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from seri.pure.approval import Answer
from seri.pure.effects import (
    ApplyCompaction,
    AskPerson,
    CallModel,
    ModelFailed,
    ModelReply,
    ResolvedPath,
    ShrinkPayloads,
    ToolRun,
    UpdateCounters,
)
from seri.pure.events import Event
from seri.pure.permission_policy import parse_policy
from seri.pure.records import Message, ToolCall
from seri.pure.redaction import Redactor
from seri.pure.turn import Conversation, compact_on_demand, run_task
from seri.runtime.interpreter import Interpreter
from seri.runtime.ports import Nobody
from tests.flow.steps import call, setup, user

SECRET = "sk-or-v1-abcdefghijklmnop"


class FakeModel:
    """Answers requests from a script, and keeps them."""

    def __init__(self, *replies: ModelReply | ModelFailed) -> None:
        self.replies = list(replies)
        self.requests: list[CallModel] = []

    def call(self, request: CallModel) -> ModelReply | ModelFailed:
        self.requests.append(request)
        return self.replies.pop(0)


class FakeTools:
    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def resolve(self, raw: str) -> ResolvedPath:
        return ResolvedPath(raw, f"/project/{raw}")

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun:
        self.ran.append((call.name, dict(arguments)))
        return ToolRun(f"{call.name} ran; the key is {SECRET}", touched_paths=("a.txt",))

    def current_text(self, raw: str) -> str | None:
        return None


class FakeSession:
    """The session log in memory: a list of messages and a revision."""

    def __init__(self, *, changed: bool = False) -> None:
        self.messages: list[Message] = []
        self.revision = 0
        self.counters: list[UpdateCounters] = []
        self.changed = changed
        self.swaps: list[str] = []

    def changed_elsewhere(self) -> bool:
        return self.changed

    def append(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)
        self.revision += 1

    def note_counters(self, counters: UpdateCounters) -> None:
        self.counters.append(counters)

    def flush_counters(self) -> None:
        return

    def swap_compaction(self, effect: ApplyCompaction, recap_message: Message) -> bool:
        self.swaps.append("compaction")
        return not self.changed

    def swap_shrink(self, effect: ShrinkPayloads, replacements: Sequence[Any]) -> bool:
        self.swaps.append("shrink")
        return not self.changed


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.flushed = 0

    def record(self, event: Event) -> None:
        self.events.append((event.type, event.export()))

    def flush(self) -> None:
        self.flushed += 1


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


def reply(text: str, *calls: ToolCall) -> ModelReply:
    return ModelReply(Message(role="assistant", text=text, tool_calls=calls))


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
