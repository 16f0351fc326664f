"""A lone surrogate in a stored message never reaches the provider (review-1, N4).

A model can send half of a surrogate pair (``"\\ud83d"`` alone, in its text or inside a tool
call's arguments). seri stores it as it came; Anthropic answers a body that carries one, raw
or escaped, with a permanent 400 "no low surrogate in string" (anthropics/claude-code#3277),
so every later request of the session would fail. The installed `seri` against the loopback
fake: what the fake received must be valid Unicode throughout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import apsw

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env
from tests.property.provider.test_wire_surrogates import strings_in

LONE = re.compile("[\ud800-\udfff]")


def _sse(*chunks: dict[str, Any]) -> str:
    # json.dumps escapes the lone half as \ud83d, as a provider's stream does.
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_a_lone_surrogate_is_stored_as_it_came_and_sent_as_u_fffd(
    run_seri: RunSeri, seri_home: Path
) -> None:
    half = {"index": 0, "delta": {"content": "half \ud83d here"}, "finish_reason": "stop"}
    script: list[dict[str, Any]] = [
        {"raw_sse": _sse({"id": "g1", "choices": [half]})},
        {"tool_calls": [call("w1", "write_file", path="a.txt", content="x\udc00y")]},
        {"text": "done"},
        {"text": "and again"},
    ]
    with FakeModel(script) as fake:
        for argv in (("-p", "one"), ("--continue", "-p", "two"), ("--continue", "-p", "three")):
            result = run_seri("chat", "--allow", "write_file", *argv, env=chat_env(fake))
            assert result.returncode == 0, result.stderr
        requests = fake.requests
    assert len(requests) == 4
    for body in requests:
        strings = strings_in(body)
        for message in body["messages"]:
            for tool_call in message.get("tool_calls") or ():
                strings += strings_in(json.loads(tool_call["function"]["arguments"]))
        assert not [s for s in strings if LONE.search(s)]
    answer = requests[1]["messages"][2]
    assert answer["role"] == "assistant" and answer["content"] == "half \ufffd here"
    written = requests[3]["messages"][-4]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(written)["content"] == "x\ufffdy"
    # The store keeps what the model sent.
    conn = apsw.Connection(str(seri_home / "seri.db"), flags=apsw.SQLITE_OPEN_READONLY)
    bodies = [row[0] for row in conn.execute("SELECT body FROM messages ORDER BY seq")]
    conn.close()
    assert any("\\ud83d" in body for body in bodies)
    assert any("\\\\udc00" in body or "\\udc00" in body for body in bodies)
