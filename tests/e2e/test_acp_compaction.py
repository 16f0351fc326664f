"""An automatic compaction in the middle of an ACP prompt (issue 28): the client sees the
draft RFD's ``compaction_update`` start (``in_progress``) and end (``completed``, or
``failed`` when the summarizer fails), each with one id, and the turn goes on to its end.
The small window and the routed scripted model are those of tests/e2e/test_compaction.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.conftest import seri_env
from tests.e2e.test_acp import Editor, seri_acp
from tests.e2e.test_chat import chat_env
from tests.e2e.test_compaction import BILL, RoutedModel, configure, filler, fixed_summary, globs


def _compaction_updates(editor: Editor) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in editor.raw
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "compaction_update"
    ]


def _prompt(seri_home: Path, project: Path, summaries: Any) -> tuple[Editor, str, list[str]]:
    configure(seri_home)
    filler(project)
    turns = [*globs("g", 4, prompt_tokens=BILL), {"text": "went on"}]
    editor = Editor()

    async def go() -> tuple[str, list[str]]:
        with RoutedModel(turns, summaries) as fake:
            env = seri_env(seri_home, chat_env(fake))
            async with seri_acp(editor, project, env) as (conn, _):
                sid = (await conn.new_session(cwd=str(project))).session_id
                ended = await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
            order = [
                "S" if not body.get("tools") else "T" for body in fake.requests
            ]  # fmt: skip
        return ended.stop_reason, order

    stop, order = asyncio.run(go())
    return editor, stop, order


def test_an_automatic_compaction_mid_prompt_is_told_from_start_to_end(
    seri_home: Path, project: Path
) -> None:
    editor, stop, order = _prompt(seri_home, project, fixed_summary)
    assert stop == "end_turn" and editor.text() == "went on"
    assert "".join(order) == "TTTT" + "S" + "T"
    started, done = _compaction_updates(editor)
    assert started["status"] == "in_progress" and done["status"] == "completed"
    assert started["compactionId"] == done["compactionId"]
    assert started["_meta"]["seri"]["trigger"] == "auto"
    assert done["_meta"]["seri"]["tokensAfter"] < started["_meta"]["seri"]["tokensBefore"]
    # In the stream's order: after the fourth tool call's result, before the final answer.
    kinds = [
        m["params"]["update"]["sessionUpdate"]
        for m in editor.raw
        if m.get("method") == "session/update"
    ]
    first, last = (
        kinds.index("compaction_update"),
        len(kinds) - 1 - kinds[::-1].index("compaction_update"),
    )
    assert "tool_call_update" in kinds[:first] and "agent_message_chunk" in kinds[last:]


@pytest.mark.parametrize(
    "failure", [{"status": 400, "body": {"error": {"code": 400, "message": "refused"}}}]
)
def test_a_failed_automatic_compaction_is_told_failed_and_the_turn_goes_on(
    seri_home: Path, project: Path, failure: dict[str, Any]
) -> None:
    editor, stop, order = _prompt(seri_home, project, lambda body, n: dict(failure))
    assert stop == "end_turn" and editor.text() == "went on"
    assert "".join(order) == "TTTT" + "S" + "T"
    started, ended = _compaction_updates(editor)
    assert (started["status"], ended["status"]) == ("in_progress", "failed")
    assert started["compactionId"] == ended["compactionId"]
