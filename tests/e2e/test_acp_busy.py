"""Requests that come while a task runs (issue 28): `session/list` is answered at once, in
the middle of the turn (a read of seri.db on its own connection); a request that would open
a second session waits for the turn to end (one task at a time; README: seri acp)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import acp

from scripts.fake_model import FakeModel
from tests.conftest import seri_env
from tests.e2e.test_acp import Editor, seri_acp
from tests.e2e.test_chat import call, chat_env


def test_a_listing_is_answered_during_a_turn_and_a_new_session_waits_for_it(
    seri_home: Path, project: Path
) -> None:
    # A command that takes two seconds: long enough to ask twice while it runs.
    script = [{"tool_calls": [call("b1", "bash", command="sleep 2")]}, {"text": "slept"}]
    editor = Editor(["allow_once"])

    async def go() -> tuple[list[str], str, bool, bool, str]:
        with FakeModel(script) as fake:
            async with seri_acp(editor, project, seri_env(seri_home, chat_env(fake))) as (conn, _):
                sid = (await conn.new_session(cwd=str(project))).session_id
                running = asyncio.Event()
                editor.on_update = lambda u: (
                    running.set() if u.get("status") == "in_progress" else None
                )
                turn = asyncio.create_task(
                    conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                )
                await asyncio.wait_for(running.wait(), 30)
                listed = await asyncio.wait_for(conn.list_sessions(cwd=str(project)), 10)
                during = not turn.done()
                opened = asyncio.create_task(conn.new_session(cwd=str(project)))
                await asyncio.sleep(0.3)
                waited = not opened.done() and not turn.done()
                ended = await asyncio.wait_for(turn, 120)
                second = await asyncio.wait_for(opened, 60)
                return (
                    [s.session_id for s in listed.sessions],
                    ended.stop_reason,
                    during,
                    waited,
                    second.session_id,
                )

    listed, stop, during, waited, second = asyncio.run(go())
    assert during, "the listing was answered only after the turn"
    assert len(listed) == 1 and stop == "end_turn"
    assert waited and second and second not in listed
    assert editor.text() == "slept"
