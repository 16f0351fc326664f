"""/rewind in a `seri acp` session whose client holds the files (issue 28's leftover): a
file that exists only in the editor is checkpointed as the editor's text, and /rewind puts
it back into the editor, not onto the disk; `seri rewind` in a terminal, with no editor to
talk to, puts it on the disk, after asking, since the disk is not what seri left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import acp
import pytest
from acp.exceptions import RequestError

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri, seri_env
from tests.e2e.test_acp_files import BufferedEditor, _tool_results, editor_acp
from tests.e2e.test_chat import call, chat_env

DRAFT = "draft, only in the editor\n"
PLAN = "plan, only in the editor\n"


def _script() -> list[dict[str, object]]:
    edit = {"old_string": "only in", "new_string": "edited in"}
    return [
        {"tool_calls": [call("e1", "edit", path="draft.md", **edit)]},
        {"tool_calls": [call("w1", "write_file", path="plan.md", content="overwritten\n")]},
        {"tool_calls": [call("w2", "write_file", path="new.md", content="fresh\n")]},
        {"text": "done"},
    ]


def _said(editor: BufferedEditor) -> str:
    return editor.text()


def test_rewind_puts_an_editor_only_file_back_into_the_editor(
    seri_home: Path, project: Path
) -> None:
    draft, plan, new = project / "draft.md", project / "plan.md", project / "new.md"
    buffers = {str(draft): DRAFT, str(plan): PLAN}
    editor = BufferedEditor(buffers, ["allow_once"] * 3)

    async def go() -> list[str]:
        with FakeModel(_script()) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                assert buffers[str(draft)] == "draft, edited in the editor\n"
                results = _tool_results(fake)
                # The person types into a file seri wrote: a rewind asks before losing it.
                buffers[str(plan)] = "overwritten, then typed\n"
                with pytest.raises(RequestError, match=r"since its checkpoint: plan\.md;"):
                    await conn.prompt(session_id=sid, prompt=[acp.text_block("/rewind 1 files")])
                editor.fs_calls.clear()
                back = [acp.text_block("/rewind 1 files --yes")]
                ended = await conn.prompt(session_id=sid, prompt=back)
                assert ended.stop_reason == "end_turn"
            return results

    edited, overwrote, created = asyncio.run(go())
    # The model is told the truth about a file only the editor had: it was not created.
    assert "Edited draft.md" in edited and "Overwrote plan.md" in overwrote
    assert "Created new.md" in created
    assert "Restored 3 file(s)" in _said(editor)
    # The editor's own text is back in the editor; the disk never had these files.
    assert buffers[str(draft)] == DRAFT and buffers[str(plan)] == PLAN
    assert not draft.exists() and not plan.exists() and not new.exists()
    assert ("write", str(draft)) in editor.fs_calls and ("write", str(plan)) in editor.fs_calls
    # new.md did not exist anywhere: it is removed from the disk (ACP has no delete), and
    # the editor, never told to write it again, keeps the buffer it has.
    assert ("write", str(new)) not in editor.fs_calls and buffers[str(new)] == "fresh\n"


def test_an_editor_that_fails_the_rewind_stops_it_and_the_conversation_stays(
    seri_home: Path, project: Path
) -> None:
    draft = project / "draft.md"
    buffers = {str(draft): DRAFT, str(project / "plan.md"): PLAN}
    editor = BufferedEditor(buffers, ["allow_once"] * 3)

    async def go() -> None:
        with FakeModel(_script()) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                editor.broken = True
                # (Its errors make the files look gone, so only --yes goes on to write them.)
                rewind = [acp.text_block("/rewind 1 both --yes")]
                with pytest.raises(
                    RequestError, match=r"did not take draft\.md back.*before it: none"
                ):
                    await conn.prompt(session_id=sid, prompt=rewind)
                points = await conn.prompt(session_id=sid, prompt=[acp.text_block("/rewind")])
                assert points.stop_reason == "end_turn"

    asyncio.run(go())
    assert "1: go" in _said(editor)  # the conversation was not rewound
    assert buffers[str(draft)] == "draft, edited in the editor\n" and not draft.exists()


def test_seri_rewind_in_a_terminal_puts_the_editors_text_on_the_disk_after_asking(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    draft = project / "draft.md"
    buffers = {str(draft): DRAFT, str(project / "plan.md"): PLAN}
    editor = BufferedEditor(buffers, ["allow_once"] * 3)

    async def go() -> str:
        with FakeModel(_script()) as fake:
            async with editor_acp(editor, project, seri_env(seri_home, chat_env(fake))) as conn:
                sid = (await conn.new_session(cwd=str(project))).session_id
                await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
            return sid

    sid = asyncio.run(go())
    # No editor here: the disk lacks what seri left in the editor, so seri asks first.
    refused = run_seri("rewind", "--session", sid, "--to", "1", "--files")
    assert refused.returncode != 0 and "draft.md" in refused.stderr, refused.stderr
    assert not draft.exists()
    done = run_seri("rewind", "--session", sid, "--to", "1", "--files", "--yes")
    assert done.returncode == 0, done.stderr
    assert draft.read_text() == DRAFT and (project / "plan.md").read_text() == PLAN
    assert not (project / "new.md").exists()
