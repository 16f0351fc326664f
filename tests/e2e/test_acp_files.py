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
