"""`seri acp` reading and writing through the client's file system (issue 28): a client
(the official SDK's) that offers fs/read_text_file and fs/write_text_file holds buffers
that differ from the disk; the model must see the buffer, its writes must land in the
client, and seri's own rules must refuse what they refuse before the client is asked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
from acp.exceptions import RequestError
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

from scripts.fake_model import FakeModel
from tests.conftest import SERI, seri_env
from tests.e2e.test_acp import Editor
from tests.e2e.test_chat import call, chat_env


class BufferedEditor(Editor):
    """An editor with open buffers: reads answer from them, writes go into them."""

    def __init__(self, buffers: dict[str, str], answers: list[str], *, broken: bool = False):
        super().__init__(answers)
        self.buffers = buffers
        self.broken = broken
        self.fs_calls: list[tuple[str, str]] = []

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        self.fs_calls.append(("read", path))
        if self.broken or path not in self.buffers:
            raise RequestError(-32603, f"no buffer for {path}")
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> None:
        self.fs_calls.append(("write", path))
        if self.broken:
            raise RequestError(-32603, "the buffer is read-only")
        self.buffers[path] = content


@asynccontextmanager
async def editor_acp(
    editor: BufferedEditor, project: Path, env: dict[str, str]
) -> AsyncIterator[Any]:
    async with acp.spawn_agent_process(editor, SERI, "acp", env=env, cwd=project) as (conn, _):
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities(fs=fs))
        yield conn


def _tool_results(fake: FakeModel) -> list[str]:
    return [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]


def test_the_model_reads_the_buffer_and_writes_land_in_the_editor(
    seri_home: Path, project: Path
) -> None:
    notes = project / "notes.md"
    notes.write_text("disk text\n")
    (project.parent / "outside.txt").write_text("secret\n")
    buffers = {str(notes): "buffer text, not saved\n"}
    script = [
        {"tool_calls": [call("r1", "read_file", path="notes.md")]},
        {"tool_calls": [call("e1", "edit", path="notes.md", old_string="buffer", new_string="ed")]},
        {"tool_calls": [call("w1", "write_file", path="new.md", content="fresh\n")]},
        {"tool_calls": [call("r2", "read_file", path="../outside.txt")]},
        {"tool_calls": [call("w2", "write_file", path="../outside.txt", content="x\n")]},
        {"text": "done"},
    ]  # fmt: skip
    editor = BufferedEditor(buffers, ["allow_once", "allow_once", "allow_once"])

    async def go() -> list[str]:
        with FakeModel(script) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                ended = await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                assert ended.stop_reason == "end_turn"
            return _tool_results(fake)

    read, edited, written, outside_read, outside_write = asyncio.run(go())
    assert "buffer text, not saved" in read and "disk text" not in read
    assert "Edited notes.md" in edited and "Created new.md" in written
    # The writes reached the editor's buffers; the disk is as it was.
    assert buffers[str(notes)] == "ed text, not saved\n"
    assert buffers[str(project / "new.md")] == "fresh\n"
    assert notes.read_text() == "disk text\n" and not (project / "new.md").exists()
    # Outside the project: refused by seri, the client never asked about it.
    assert "outside" in outside_read and "outside" in outside_write
    assert (project.parent / "outside.txt").read_text() == "secret\n"
    assert all("outside.txt" not in path for _, path in editor.fs_calls)
    # The edit's diff was shown from the buffer, before and after.
    done = [
        u for u in editor.updates
        if u.get("toolCallId") == "e1" and u.get("status") == "completed"
    ][-1]  # fmt: skip
    assert done["content"][0]["oldText"] == "buffer text, not saved\n"
    assert done["content"][0]["newText"] == "ed text, not saved\n"


def test_a_client_that_fails_a_read_or_write_fails_the_tool_and_the_disk_is_untouched(
    seri_home: Path, project: Path
) -> None:
    notes = project / "notes.md"
    notes.write_text("disk text\n")
    script = [
        {"tool_calls": [call("r1", "read_file", path="notes.md")]},
        {"tool_calls": [call("w1", "write_file", path="notes.md", content="over\n")]},
        {"text": "done"},
    ]
    editor = BufferedEditor({}, ["allow_once"], broken=True)

    async def go() -> list[str]:
        with FakeModel(script) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
            return _tool_results(fake)

    read, written = asyncio.run(go())
    assert "the editor did not read notes.md" in read and "disk text" not in read
    assert "fs/read_text_file with an error: no buffer for" in read
    # The checkpoint for /rewind could not be taken from the buffer: nothing was written.
    assert "not run" in written and "the editor did not read it" in written
    assert notes.read_text() == "disk text\n"
    assert json.dumps(editor.fs_calls).count("write") == 0


class TypingEditor(BufferedEditor):
    """A person who types into buffers while seri's permission questions are open: at the
    first question the first of ``typed`` (path, new text), and so on."""

    def __init__(
        self, buffers: dict[str, str], answers: list[str], typed: list[tuple[str, str]]
    ) -> None:
        super().__init__(buffers, answers)
        self.typed = typed

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> Any:
        if self.typed:
            path, text = self.typed.pop(0)
            self.buffers[path] = text
        return await super().request_permission(session_id, tool_call, options, **kwargs)


def _asked_of(editor: BufferedEditor, path: Path) -> tuple[int, int]:
    """How many fs/read_text_file and fs/write_text_file requests named ``path``."""
    calls = [kind for kind, asked in editor.fs_calls if asked == str(path)]
    return calls.count("read"), calls.count("write")


def test_a_write_or_edit_reads_the_editor_once_when_it_runs(seri_home: Path, project: Path) -> None:
    (project / "auto").mkdir()
    names = ("asked_edit.md", "asked_write.md", "auto/edit.md", "auto/write.md")
    files = [project / name for name in names]
    for path in files:
        path.write_text("disk text\n")
    buffers = {str(path): "buffer text\n" for path in files}
    seri_home.mkdir(parents=True, exist_ok=True)
    rules = {"allow": ["edit(auto/*)", "write_file(auto/*)"]}
    (seri_home / "config.json").write_text(json.dumps({"permissions": rules}))
    edit = {"old_string": "buffer", "new_string": "edited"}
    script = [
        {"tool_calls": [call("e1", "edit", path=names[0], **edit)]},
        {"tool_calls": [call("w1", "write_file", path=names[1], content="written\n")]},
        {"tool_calls": [call("e2", "edit", path=names[2], **edit)]},
        {"tool_calls": [call("w2", "write_file", path=names[3], content="written\n")]},
        {"text": "done"},
    ]
    # While asked about the first edit, the person types into its file.
    typed = [(str(files[0]), "buffer text, typed\n")]
    editor = TypingEditor(buffers, ["allow_once", "allow_once"], typed)

    async def go() -> None:
        with FakeModel(script) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                ended = await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                assert ended.stop_reason == "end_turn"

    asyncio.run(go())
    assert len(editor.asked) == 2  # the two outside auto/ were asked about, the others not
    # Asked: one read for the question (the edit's check, the write's diff), one when it
    # runs (its diff, checkpoint, edit and read-back share it). Not asked: the one.
    assert [_asked_of(editor, path) for path in files] == [(2, 1), (2, 1), (1, 1), (1, 1)]
    # The edit ran on the buffer as the person left it: their typing is kept, and the diff
    # starts from it (the read before the question is not reused after it).
    assert [buffers[str(path)] for path in files] == [
        "edited text, typed\n", "written\n", "edited text\n", "written\n"
    ]  # fmt: skip
    shown = [
        u["content"][0]
        for u in editor.updates
        if u.get("status") == "completed" and u.get("toolCallId") in ("e1", "w1", "e2", "w2")
    ]  # fmt: skip
    assert [(d["oldText"], d["newText"]) for d in shown] == [
        ("buffer text, typed\n", "edited text, typed\n"),
        ("buffer text\n", "written\n"),
        ("buffer text\n", "edited text\n"),
        ("buffer text\n", "written\n"),
    ]
    assert all(path.read_text() == "disk text\n" for path in files)  # the disk as it was
