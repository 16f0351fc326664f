"""The session controller built directly, as a front-end builds it, with ports a test fills.

No terminal and no `seri` process: a scripted person answers the approvals, the session
lives in a real seri.db in a temporary profile, and the model is the loopback scripted
server (scripts/fake_model.py) the other tests use. Each test drives the controller only
through its interface (open, run_task, compact, pin, rewind, close) and reads values back:
the task's end, the conversation, the store.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from seri.io.session import conversations, leases
from seri.io.session.leases import SessionBusy
from seri.io.session.store import open_store
from seri.pure.agent.effects import Answer, AskPerson, ToolRun
from seri.pure.inputs.settings import Settings
from seri.pure.session.leases import Holder
from seri.pure.session.records import ToolCall
from seri.pure.trajectories.event_record import Event
from seri.runtime.session.controller import SessionController
from seri.runtime.session.ports import ToolHooks
from seri.runtime.session.profile import Profile
from seri.runtime.terminal.chat_options import ChatOptions

KEY = "sk-or-v1-" + "ab12" * 16
MODEL = "fake/model"


class ScriptedPerson:
    """A front-end with no terminal: answers each approval from its script (yes when it
    runs out), declines every MCP server, and keeps what it was told."""

    shows_tools = True

    def __init__(self, *answers: Answer, always: bool = False) -> None:
        self.answers = list(answers)
        # Say "always" to whatever is asked (with the rules the ask offers).
        self.always = always
        self.asked: list[AskPerson] = []
        self.notices: list[str] = []
        self.text: list[str] = []
        self.tools: list[str] = []
        self.events: list[str] = []

    def ask(self, request: AskPerson) -> Answer:
        self.asked.append(request)
        if self.always:
            return Answer(True, always=request.offered)
        return self.answers.pop(0) if self.answers else Answer(True)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def model_call_started(self, purpose: str) -> None:
        return

    def model_call_finished(self) -> None:
        return

    def model_text(self, text: str) -> None:
        self.text.append(text)

    def model_reasoning(self, text: str) -> None:
        return

    def command_output(self, chunk: bytes) -> None:
        return

    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        self.tools.append(call.name)

    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None:
        return

    def recorded(self, event: Event) -> None:
        self.events.append(event.type)

    def approve_server(self, name: str, review: str) -> bool:
        return False


class Place:
    """A profile (its real seri.db), a project, and the loopback model, for one test."""

    def __init__(self, tmp_path: Path, fake: FakeModel) -> None:
        self.root = tmp_path / "profile"
        self.root.mkdir()
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.profile = Profile(str(self.root), open_store(self.root))
        self.fake = fake
        self.told: list[str] = []

    def settings(self, **changes: Any) -> Settings:
        given: dict[str, Any] = {"context_window": 200_000, **changes}
        return Settings(model=MODEL, base_url=self.fake.base_url, **given)

    def open(
        self,
        person: ScriptedPerson,
        options: ChatOptions | None = None,
        hooks: ToolHooks | None = None,
        **settings: Any,
    ) -> SessionController:
        env = {"OPENROUTER_API_KEY": KEY, "SERI_SANDBOX": "none", "PATH": os.environ["PATH"]}
        return SessionController.open(
            self.profile,
            os.path.realpath(self.project),
            options or ChatOptions(),
            person,
            settings=self.settings(**settings),
            interactive=True,
            tell=self.told.append,
            env=env,
            hooks=hooks,
        )


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel(auto_recap=True) as server:
        yield server


@pytest.fixture
def place(tmp_path: Path, fake: FakeModel) -> Iterator[Place]:
    made = Place(tmp_path, fake)
    yield made
    made.profile.store.close()


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    arguments = {"path": path, "content": content}
    return {"tool_calls": [{"id": call_id, "name": "write_file", "arguments": arguments}]}


def stored_texts(place: Place, session_id: str) -> list[tuple[str, str]]:
    messages = conversations.load_messages(place.profile.store, session_id)
    return [(message.role, message.text) for message in messages]


def test_a_task_asks_the_person_writes_and_is_stored(place: Place, fake: FakeModel) -> None:
    fake.script(write("c1", "a.txt", "one\n"), {"text": "written"})
    person = ScriptedPerson(Answer(True))
    session = place.open(person)
    assert session.session_id == ""  # a new session starts with its first task
    end = session.run_task("write a.txt")
    session.close()
    assert (end.status, end.answer, end.turns) == ("done", "written", 2)
    assert (place.project / "a.txt").read_text() == "one\n"
    assert [asked.call.name for asked in person.asked] == ["write_file"]
    assert person.tools == ["write_file"]
    assert "".join(person.text) == "written"
    assert person.notices[0] == f"seri: new session {session.session_id}"
    assert stored_texts(place, session.session_id)[0] == ("user", "write a.txt")
    assert session.usage().reported == 2
    assert session.run_id is not None


def test_a_refusal_reaches_the_model_and_nothing_is_written(place: Place, fake: FakeModel) -> None:
    fake.script(write("c1", "a.txt", "one\n"), {"text": "as you wish"})
    session = place.open(ScriptedPerson(Answer(False, reason="not that file")))
    end = session.run_task("write a.txt")
    session.close()
    assert end.answer == "as you wish"
    assert not (place.project / "a.txt").exists()
    result = fake.requests[1]["messages"][-1]
    assert result["role"] == "tool" and "not that file" in result["content"]


def test_always_is_kept_with_the_session_and_not_asked_again(place: Place, fake: FakeModel) -> None:
    fake.script(
        write("c1", "a.txt", "one\n"),
        {"text": "one"},
        write("c2", "b.txt", "two\n"),
        {"text": "two"},
    )
    session = place.open(ScriptedPerson(always=True))
    session.run_task("write a.txt")
    assert [stored.rule for stored in session.session_rules] == ["write_file"]
    session.close()
    person = ScriptedPerson()
    again = place.open(person, ChatOptions(continue_last=True))
    assert [stored.rule for stored in again.session_rules] == ["write_file"]
    end = again.run_task("write b.txt")
    again.close()
    assert end.answer == "two"
    assert person.asked == []
    assert (place.project / "b.txt").read_text() == "two\n"


def test_a_continue_reads_the_session_back_and_goes_on(place: Place, fake: FakeModel) -> None:
    fake.script({"text": "first answer"}, {"text": "second answer"})
    session = place.open(ScriptedPerson())
    session.run_task("first question")
    session.close()
    resumed = place.open(ScriptedPerson(), ChatOptions(continue_last=True))
    assert resumed.session_id == session.session_id
    assert [m.text for m in resumed.conversation.history] == ["first question", "first answer"]
    end = resumed.run_task("second question")
    resumed.close()
    assert end.answer == "second answer"
    sent = [m["content"] for m in fake.requests[1]["messages"] if m["role"] != "system"]
    assert sent == ["first question", "first answer", "second question"]
    assert stored_texts(place, session.session_id)[-1] == ("assistant", "second answer")


def test_a_session_in_use_is_refused_and_a_fork_goes_on_beside_it(
    place: Place, fake: FakeModel
) -> None:
    fake.script({"text": "hello"}, {"text": "in the fork"})
    first = place.open(ScriptedPerson())
    first.run_task("hi")
    first.close()
    session_id = first.session_id
    # Another live process (this test's parent, say) holds the session now.
    ppid = os.getppid()
    other = Holder(ppid, socket.gethostname(), leases.start_token(ppid), "seri chat")
    leases.take(place.profile.store, session_id, other)
    with pytest.raises(SessionBusy, match=rf"pid {ppid} on host"):
        place.open(ScriptedPerson(), ChatOptions(resume=session_id))
    fork = place.open(ScriptedPerson(), ChatOptions(resume=session_id, fork=True))
    assert fork.session_id != session_id
    assert f"seri: forked session {session_id} into {fork.session_id}" in place.told
    assert [m.text for m in fork.conversation.history] == ["hi", "hello"]
    assert fork.run_task("go on").answer == "in the fork"
    fork.close()
    assert stored_texts(place, session_id) == [("user", "hi"), ("assistant", "hello")]
    # Once the other process lets go, the session is this run's again.
    leases.release(place.profile.store, session_id, other)
    place.open(ScriptedPerson(), ChatOptions(resume=session_id)).close()


def test_a_pin_is_carried_by_the_recap_of_a_compaction(place: Place, fake: FakeModel) -> None:
    fake.script(*({"text": f"seen {n} " + "and more words " * 40} for n in range(1, 7)))
    session = place.open(ScriptedPerson(), keep_tokens=200, context_window=20_000)
    assert session.pin("the parser lives in lex.py") == 1
    for n in range(1, 7):
        session.run_task(f"task {n}: " + "look at the parser " * 40)
    before = len(session.conversation.history)
    assert session.compact("the parser") is None
    summary = fake.requests[-1]
    session.close()
    assert "tools" not in summary  # the summarizer's request
    assert "Focus instructions from the user for this recap: the parser" in str(summary)
    assert session.conversation.recap is not None
    # The recap message that replaced the evicted history carries the pin verbatim, as
    # stored (the next request begins with it).
    role, recap_text = stored_texts(place, session.session_id)[0]
    assert role == "user" and "- the parser lives in lex.py" in recap_text
    assert session.conversation.history[0].text == recap_text
    assert session.conversation.pins == ("the parser lives in lex.py",)
    assert len(session.conversation.history) < before
    assert session.pins() == ("the parser lives in lex.py",)


def test_too_little_history_is_not_compacted(place: Place, fake: FakeModel) -> None:
    fake.script({"text": "hi"})
    session = place.open(ScriptedPerson())
    assert session.compact("") is not None  # no session yet: nothing to compact
    session.run_task("hello")
    why_not = session.compact("")
    session.close()
    assert why_not is not None
    assert why_not.detail == "Not enough history to compact."


def test_a_rewind_puts_the_files_and_the_conversation_back(place: Place, fake: FakeModel) -> None:
    fake.script(
        write("c1", "a.txt", "one\n"),
        {"text": "one"},
        write("c2", "a.txt", "two\n"),
        {"text": "two"},
    )
    session = place.open(ScriptedPerson())
    session.run_task("write one")
    session.run_task("write two")
    assert (place.project / "a.txt").read_text() == "two\n"
    listed, gone = session.rewind_points()
    assert [turn.text for turn in listed] == ["write one", "write two"] and not gone
    done = session.rewind(2, "both")
    session.close()
    assert done is not None and done
    assert (place.project / "a.txt").read_text() == "one\n"
    assert [m.text for m in session.conversation.history if m.role == "user"] == ["write one"]


def test_a_file_changed_outside_is_overwritten_only_when_confirmed(
    place: Place, fake: FakeModel
) -> None:
    fake.script(write("c1", "a.txt", "one\n"), {"text": "one"})
    session = place.open(ScriptedPerson())
    session.run_task("write one")
    (place.project / "a.txt").write_text("edited by hand\n")
    asked: list[tuple[str, ...]] = []

    def decline(changed: tuple[str, ...]) -> bool:
        asked.append(changed)
        return False

    assert session.rewind(1, "files", confirm=decline) is None
    assert asked == [("a.txt",)]
    assert (place.project / "a.txt").read_text() == "edited by hand\n"
    assert session.rewind(1, "files", yes=True)
    session.close()
    assert not (place.project / "a.txt").exists()


def test_a_cancel_ends_the_task_as_ctrl_c_does_and_keeps_what_was_done(
    place: Place, fake: FakeModel
) -> None:
    fake.script(
        write("c1", "a.txt", "one\n"),
        {"text": "still think", "stall_seconds": 30, "stall_after_chunks": 1},
        {"text": "after the cancel"},
    )
    session = place.open(ScriptedPerson())
    assert session.cancel() is False  # nothing runs yet

    def cancel_once_the_model_stalls() -> None:
        while len(fake.requests) < 2:
            time.sleep(0.02)
        time.sleep(0.2)
        session.cancel()

    canceller = threading.Thread(target=cancel_once_the_model_stalls)
    canceller.start()
    end = session.run_task("write a.txt, then think")
    canceller.join()
    assert (end.status, end.by_user) == ("interrupted", True)
    assert (place.project / "a.txt").read_text() == "one\n"
    # The session goes on from what was stored, the cancelled answer's part not lost.
    assert session.run_task("go on").answer == "after the cancel"
    session.close()
    roles = [role for role, _ in stored_texts(place, session.session_id)]
    assert roles[:3] == ["user", "assistant", "tool"]


class NoRemoving:
    """Hooks that refuse any command that removes files, and keep what ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, bool]] = []

    def before(self, call: ToolCall, arguments: Mapping[str, Any]) -> str | None:
        if call.name == "bash" and "rm " in str(arguments.get("command", "")):
            return "a hook refuses commands that remove files"
        return None

    def after(self, call: ToolCall, arguments: Mapping[str, Any], run: ToolRun) -> None:
        self.ran.append((call.name, run.is_error))


def test_tool_hooks_run_around_each_call_and_may_refuse_one(place: Place, fake: FakeModel) -> None:
    (place.project / "keep.txt").write_text("kept\n")
    remove = {"id": "c1", "name": "bash", "arguments": {"command": "rm keep.txt"}}
    fake.script({"tool_calls": [remove]}, write("c2", "a.txt", "one\n"), {"text": "done"})
    hooks = NoRemoving()
    person = ScriptedPerson()
    session = place.open(person, hooks=hooks)
    end = session.run_task("tidy up")
    session.close()
    assert end.answer == "done"
    assert (place.project / "keep.txt").read_text() == "kept\n"
    assert [asked.call.name for asked in person.asked] == ["bash", "write_file"]
    assert hooks.ran == [("write_file", False)]
    refused = fake.requests[1]["messages"][-1]
    assert refused["content"] == "not run: a hook refuses commands that remove files"


def test_the_session_and_its_terminal_seat_are_small_modules() -> None:
    """The controller and the chat's seat stay readable: each module under 400 lines."""
    root = Path(__file__).resolve().parents[3] / "seri" / "runtime"
    modules = [*sorted((root / "session").glob("*.py")), root / "terminal" / "chat_session.py"]
    sizes = {path.name: len(path.read_text().splitlines()) for path in modules}
    assert len(sizes) > 5
    assert {name: n for name, n in sizes.items() if n > 400} == {}
