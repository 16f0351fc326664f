"""Synthetic but realistic data: coding-agent histories, stores full of sessions, JSONL copies.

A history repeats one task shape of ten messages: a user prompt, four rounds of an
assistant message (a sentence and one tool call) and its tool result, then the
assistant's answer. Tool results vary from a short listing to a file body over the
default elision limit, and one in thirteen is an error, so the recap code meets
every branch. The average stored body is about 700 bytes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

from seri.io.session import conversations, session_table
from seri.io.session.store import Store, open_store
from seri.pure.session.records import Message, ToolCall
from seri.pure.trajectories.events import Header

SYSTEM_PROMPT = "You are seri, a coding agent. " * 40
MODEL = "bench/fake-model"
PROJECT_FILES = ("src/app.py", "src/store.py", "tests/test_app.py", "README.md", "pyproject.toml")
RESULT_SIZES = (180, 700, 1500, 4800)
_CODE = "".join(
    f"def handler_{i}(request, store):\n    rows = store.query('select * from t where id = ?', "
    f"(request.id_{i},))\n    return [row.name for row in rows if row.ok]  # {i}\n"
    for i in range(400)
)


def synthetic_header(session: str, run: str, model: str = MODEL, started: float = 0.0) -> Header:
    """The header of a run seri did not make (a benchmark's, a test's store)."""
    return Header(
        session=session,
        run=run,
        seri_version="0.0.0",
        model=model,
        base_url="http://127.0.0.1/v1",
        started=started,
        sampling={"temperature": 0.2},
        provider={},
        reasoning_effort=None,
        prompt_hashes={},
        context_window=None,
        keep_tokens=0,
        elide_bytes=0,
    )


def _text(offset: int, size: int) -> str:
    start = (offset * 97) % (len(_CODE) - size - 1)
    return _CODE[start : start + size]


def _call(task: int, step: int) -> ToolCall:
    path = PROJECT_FILES[(task + step) % len(PROJECT_FILES)]
    kind = (task + step) % 5
    call_id = f"call_{task}_{step}"
    if kind == 0:
        return ToolCall(call_id, "read_file", json.dumps({"path": path}))
    if kind == 1:
        return ToolCall(
            call_id, "grep", json.dumps({"pattern": f"handler_{task % 400}", "path": "src"})
        )
    if kind == 2:
        return ToolCall(
            call_id,
            "edit",
            json.dumps(
                {"path": path, "old_string": _text(task, 60), "new_string": _text(task + 1, 70)}
            ),
        )
    if kind == 3:
        return ToolCall(
            call_id, "bash", json.dumps({"command": "python -m pytest -q tests/test_app.py"})
        )
    return ToolCall(call_id, "write_file", json.dumps({"path": path, "content": _text(task, 400)}))


def task_messages(task: int) -> list[Message]:
    """The ten messages of task number ``task``."""
    out = [
        Message(
            role="user",
            text=f"Task {task}: make handler_{task % 400} skip rows that are not ok, "
            "keep the tests passing, and explain what you changed.",
        )
    ]
    for step in range(4):
        call = _call(task, step)
        out.append(
            Message(
                role="assistant",
                text=f"Step {step}: I will use {call.name} to look at the code involved.",
                tool_calls=(call,),
            )
        )
        size = RESULT_SIZES[(task + step) % len(RESULT_SIZES)]
        out.append(
            Message(
                role="tool",
                text=_text(task * 4 + step, size),
                tool_call_id=call.id,
                tool_name=call.name,
                is_error=(task * 4 + step) % 13 == 0,
            )
        )
    out.append(
        Message(
            role="assistant",
            text=f"Done with task {task}: handler_{task % 400} now filters on row.ok; "
            "the tests pass. " + _text(task, 200),
        )
    )
    return out


def iter_history(count: int) -> Iterator[Message]:
    task = 0
    produced = 0
    while produced < count:
        for message in task_messages(task):
            if produced == count:
                return
            yield message
            produced += 1
        task += 1


def history(count: int) -> tuple[Message, ...]:
    return tuple(iter_history(count))


def new_session(store: Store, project: str, now: float = 1_750_000_000.0) -> str:
    session_id = uuid.uuid4().hex
    session_table.create_session(
        store,
        session_id=session_id,
        project=project,
        now=now,
        model=MODEL,
        system_prompt=SYSTEM_PROMPT,
        prompt_hashes={"AGENTS.md": "0" * 64},
    )
    return session_id


def store_with_history(
    home: Path, count: int, project: str = "/bench/project"
) -> tuple[Store, str]:
    """A fresh store in ``home`` holding one session of ``count`` messages."""
    store = open_store(home)
    session_id = new_session(store, project)
    batch: list[Message] = []
    revision = 0  # this script is the session's only writer
    for message in iter_history(count):
        batch.append(message)
        if len(batch) == 5000:
            conversations.append_messages(
                store, session_id, batch, 1_750_000_000.0, revision=revision
            )
            revision += 1
            batch = []
    if batch:
        conversations.append_messages(store, session_id, batch, 1_750_000_000.0, revision=revision)
    return store, session_id


def store_with_sessions(home: Path, project: str, count: int) -> None:
    """``count`` sessions of ten messages each in ``project``, written in one transaction."""
    store = open_store(home)
    with store.write() as conn:
        for number in range(count):
            session_id = new_session(store, project, now=1_750_000_000.0 + number)
            conversations.insert_messages(
                conn, session_id, task_messages(number), 1_750_000_000.0 + number, revision=0
            )
    store.close()


def write_jsonl(store: Store, session_id: str, path: Path) -> int:
    """The session's stored bodies, one JSON object a line; returns the bytes written."""
    rows = store.connection.execute(
        "SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    with path.open("w", encoding="utf-8") as out:
        for (body,) in rows:
            out.write(f"{body}\n")
    return path.stat().st_size
