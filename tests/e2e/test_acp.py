"""`seri acp` driven by the official ACP SDK's client (agent-client-protocol, from PyPI):
the installed `seri acp` as a subprocess, the loopback scripted model behind it, the
profile's real seri.db (issue 28)."""

from __future__ import annotations

import asyncio
import json
import resource
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_chat import call, chat_env
from tests.mcp.conftest import HOSTILE


class Editor:
    """The client side: records every update, answers permission questions as scripted."""

    def __init__(self, answers: list[str] | None = None, reason: str = "") -> None:
        self.answers = list(answers or [])
        self.reason = reason
        self.updates: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.on_update: Any = None
        # Every message from seri as it came, draft-RFD updates the SDK does not parse too.
        self.raw: list[dict[str, Any]] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(
            {
                "toolCall": tool_call.model_dump(by_alias=True),
                "options": [o.option_id for o in options],
            }
        )
        choice = self.answers.pop(0) if self.answers else "reject_once"
        meta = {"reason": self.reason} if self.reason else None
        if choice == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        outcome = AllowedOutcome(outcome="selected", option_id=choice)
        return RequestPermissionResponse(outcome=outcome, field_meta=meta)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))
        if self.on_update is not None:
            self.on_update(self.updates[-1])

    def kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.updates if u["sessionUpdate"] == kind)


@asynccontextmanager
async def seri_acp(
    editor: Editor, project: Path, env: dict[str, str]
) -> AsyncIterator[tuple[Any, Any]]:
    async with acp.spawn_agent_process(editor, SERI, "acp", env=env, cwd=project) as (conn, proc):
        conn._conn.add_observer(
            lambda event: (
                editor.raw.append(event.message) if event.direction == "incoming" else None
            )
        )
        await conn.initialize(protocol_version=1)
        yield conn, proc


def _env(home: Path, fake: FakeModel) -> dict[str, str]:
    return seri_env(home, chat_env(fake))


def test_initialize_is_answered_quickly_and_says_what_seri_does(
    seri_home: Path, project: Path
) -> None:
    env = seri_env(seri_home)
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    walls, cpus = [], []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        proc = subprocess.Popen(
            [SERI, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=project,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        walls.append(time.monotonic() - started)
        proc.stdin.close()
        assert proc.wait(10) == 0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    caps = answer["result"]["agentCapabilities"]
    assert caps["loadSession"] is True
    assert set(caps["sessionCapabilities"]) == {"list", "resume", "close", "delete"}
    assert answer["result"]["authMethods"][0]["vars"] == [{"name": "OPENROUTER_API_KEY"}]
    # The CPU the whole process used, spawn to exit (the answer's wall time on an idle
    # machine; a loaded one stretches the wall time, not this): under 150 ms.
    assert min(cpus) < 0.15, (cpus, walls)
    print(f"initialize: {min(cpus) * 1000:.0f} ms CPU, {min(walls) * 1000:.0f} ms wall (best of 3)")


def test_no_key_is_an_auth_error_naming_the_variable(seri_home: Path, project: Path) -> None:
    async def go() -> str:
        async with seri_acp(Editor(), project, seri_env(seri_home)) as (conn, _):
            with pytest.raises(acp.RequestError) as refused:
                await conn.new_session(cwd=str(project))
            return str(refused.value.data or refused.value)

    assert "OPENROUTER_API_KEY" in asyncio.run(go())


def test_a_prompt_streams_asks_and_maps_each_answer(seri_home: Path, project: Path) -> None:
    script = [
        {
            "reasoning": "thinking it over",
            "tool_calls": [call("b1", "bash", command="touch once.txt")],
        },
        {"tool_calls": [call("b2", "bash", command="touch never.txt")]},
        {"tool_calls": [call("b3", "bash", command="touch always1.txt")]},
        {"tool_calls": [call("b4", "bash", command="touch always2.txt")]},
        {"tool_calls": [call("w1", "write_file", path="notes.md", content="hello\n")]},
        {"text": "All done."},
    ]
    editor = Editor(
        ["allow_once", "reject_once", "allow_always", "allow_once"],
        reason="use a notes file instead",
    )

    async def go() -> tuple[str, str]:
        with FakeModel(script) as fake:
            async with seri_acp(editor, project, _env(seri_home, fake)) as (conn, _):
                new = await conn.new_session(cwd=str(project))
                ended = await conn.prompt(
                    session_id=new.session_id, prompt=[acp.text_block("make the files")]
                )
                requests = fake.requests
        tool_results = [m["content"] for m in requests[2]["messages"] if m["role"] == "tool"]
        return ended.stop_reason, json.dumps(tool_results)

    stop, results = asyncio.run(go())
    assert stop == "end_turn"
    assert (project / "once.txt").exists()
    assert not (project / "never.txt").exists()
    assert (project / "always1.txt").exists() and (project / "always2.txt").exists()
    assert "use a notes file instead" in results  # the rejection's reason reached the model
    # Not asked about b4: the "always" rule (bash(touch *)) covered it. The write was asked
    # with its diff.
    assert [a["toolCall"]["toolCallId"] for a in editor.asked] == ["b1", "b2", "b3", "w1"]
    proposed = editor.asked[3]["toolCall"]["content"][0]
    assert proposed["type"] == "diff" and proposed["newText"] == "hello\n"
    assert "allow_always" in editor.asked[0]["options"]
    kinds = editor.kinds()
    assert "agent_thought_chunk" in kinds and editor.text() == "All done."
    starts = [u for u in editor.updates if u["sessionUpdate"] == "tool_call"]
    assert starts[0]["kind"] == "execute" and starts[0]["title"] == "touch once.txt"
    writes = [u for u in editor.updates if u.get("toolCallId") == "w1"]
    assert writes[0]["kind"] == "edit"
    assert writes[0]["locations"] == [{"path": str(project / "notes.md")}]
    done = [u for u in writes if u.get("status") == "completed"][-1]
    assert done["content"][0] == {
        "type": "diff",
        "path": str(project / "notes.md"),
        "newText": "hello\n",
    }
    usage = [u for u in editor.updates if u["sessionUpdate"] == "usage_update"]
    assert len(usage) == 6 and usage[-1]["used"] > 0 and usage[-1]["size"] > 0


def test_cancel_mid_stream_keeps_what_was_done(seri_home: Path, project: Path) -> None:
    script = [
        {"tool_calls": [call("b1", "bash", command="echo kept > kept.txt")]},
        # ~43 KB in 40-byte writes 10 ms apart: the first words arrive at once, the rest takes
        # ~10 s, so the cancel lands mid-stream (a byte at a time, the first words alone took
        # seconds on a loaded machine).
        {"text": "a long answer " * 40, "drip_interval": 0.01, "split_bytes": 40},
        {"text": "after the cancel"},
    ]
    editor = Editor(["allow_once"])

    async def go() -> tuple[str, str]:
        with FakeModel(script) as fake:
            async with seri_acp(editor, project, _env(seri_home, fake)) as (conn, _):
                new = await conn.new_session(cwd=str(project))
                sid = new.session_id
                streaming = asyncio.Event()
                editor.on_update = lambda u: (
                    streaming.set() if u["sessionUpdate"] == "agent_message_chunk" else None
                )
                turn = asyncio.create_task(
                    conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                )
                await asyncio.wait_for(streaming.wait(), 30)
                await conn.cancel(session_id=sid)
                first = (await asyncio.wait_for(turn, 30)).stop_reason
                second = await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
                return first, second.stop_reason

    first, second = asyncio.run(go())
    assert (first, second) == ("cancelled", "end_turn")
    assert (project / "kept.txt").read_text() == "kept\n"
    assert editor.text().endswith("after the cancel")


def test_a_terminal_session_loads_lists_and_deletes(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    with FakeModel(
        [{"text": "hello from the terminal"}, {"text": "hello from the editor"}]
    ) as fake:
        made = run_seri("chat", "-p", "say hello", env=chat_env(fake))
        assert made.returncode == 0, made.stderr
        sid = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]
        editor = Editor()

        async def go() -> tuple[list[str], list[str], Any]:
            async with seri_acp(editor, project, _env(seri_home, fake)) as (conn, _):
                listed = await conn.list_sessions(cwd=str(project))
                elsewhere = await conn.list_sessions(cwd="/")
                await conn.load_session(cwd=str(project), session_id=sid)
                ended = await conn.prompt(session_id=sid, prompt=[acp.text_block("and now?")])
                await conn.close_session(session_id=sid)
                await conn._conn.send_request("session/delete", {"sessionId": sid})
                after = await conn.list_sessions()
                return (
                    [s.session_id for s in listed.sessions],
                    [s.session_id for s in elsewhere.sessions],
                    (ended.stop_reason, after.sessions),
                )

        listed, elsewhere, (stop, after) = asyncio.run(go())
    assert listed == [sid] and sid not in elsewhere
    assert editor.text("user_message_chunk").startswith("say hello")
    assert editor.text().startswith("hello from the terminal")
    assert editor.text().endswith("hello from the editor")
    assert stop == "end_turn" and after == []


def test_a_second_client_on_a_leased_session_is_refused(seri_home: Path, project: Path) -> None:
    async def go() -> str:
        with FakeModel([]) as fake:
            env = _env(seri_home, fake)
            async with seri_acp(Editor(), project, env) as (first, _):
                sid = (await first.new_session(cwd=str(project))).session_id
                async with seri_acp(Editor(), project, env) as (second, _):
                    with pytest.raises(acp.RequestError) as refused:
                        await second.load_session(cwd=str(project), session_id=sid)
                    # The refused client still serves: listing works.
                    assert sid in [s.session_id for s in (await second.list_sessions()).sessions]
                    return str(refused.value)

    assert "is in use by" in asyncio.run(go())


def _raw(project: Path, env: dict[str, str], lines: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [SERI, "acp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_malformed_and_out_of_order_requests_get_errors_and_it_serves_on(
    seri_home: Path, project: Path
) -> None:
    def req(id_: int, method: str, **params: Any) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    answers = _raw(
        project,
        seri_env(seri_home),
        [
            req(1, "session/list"),  # before initialize
            req(2, "initialize", protocolVersion=1),
            "{not json",
            "[1, 2]",
            json.dumps({"jsonrpc": "1.0", "id": 3, "method": "session/list"}),
            req(4, "no/such/method"),
            req(5, "session/prompt", sessionId="nope", prompt=[{"type": "text", "text": "hi"}]),
            json.dumps({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": [1]}),
            req(7, "session/new", cwd="relative/dir"),
            req(8, "session/list"),
        ],
    )
    by_id = {a.get("id"): a for a in answers if a.get("id") is not None}
    assert by_id[1]["error"]["code"] == -32600
    assert "result" in by_id[2]
    codes = sorted(a["error"]["code"] for a in answers if a.get("id") is None)
    assert codes == [-32700, -32600]
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[4]["error"]["code"] == -32601
    assert by_id[5]["error"]["code"] == -32002
    assert by_id[6]["error"]["code"] == -32602
    assert by_id[7]["error"]["code"] == -32602
    assert by_id[8]["result"] == {"sessions": [], "nextCursor": None}


def test_a_client_that_disappears_mid_turn_leaves_a_consistent_session(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    script = [
        {"tool_calls": [call("b1", "bash", command="echo one > one.txt")]},
        # ~38 KB in 40-byte writes 10 ms apart (~10 s): the editor leaves mid-stream.
        {"text": "slow " * 100, "drip_interval": 0.01, "split_bytes": 40},
        {"text": "resumed fine"},
    ]
    with FakeModel(script) as fake:
        env = _env(seri_home, fake)
        proc = subprocess.Popen(
            [SERI, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=project,
        )
        assert proc.stdin is not None and proc.stdout is not None

        def send(body: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **body}).encode() + b"\n")
            proc.stdin.flush()

        def until(test: Any) -> dict[str, Any]:
            assert proc.stdout is not None
            while True:
                message = json.loads(proc.stdout.readline())
                if test(message):
                    return message

        send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        send({"id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
        sid = until(lambda m: m.get("id") == 2)["result"]["sessionId"]
        text = [{"type": "text", "text": "go"}]
        send({"id": 3, "method": "session/prompt", "params": {"sessionId": sid, "prompt": text}})
        asked = until(lambda m: m.get("method") == "session/request_permission")
        send(
            {
                "id": asked["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
            }
        )
        until(
            lambda m: (
                m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
            )
        )
        proc.stdin.close()  # the editor is gone: stdin ends, nobody reads stdout
        proc.stdout.close()
        assert proc.wait(30) == 0, proc.stderr.read() if proc.stderr else ""
        again = run_seri("chat", "--resume", sid, "-p", "still there?", env=chat_env(fake))
    assert again.returncode == 0, again.stderr
    assert "resumed fine" in again.stdout
    assert (project / "one.txt").read_text() == "one\n"


def test_compact_pin_and_rewind_as_commands_and_a_compacted_session_loads(
    seri_home: Path, project: Path
) -> None:
    steps = [{"text": f"answer {n} " + "words " * 300} for n in range(6)]
    first, second = Editor(), Editor()
    seri_home.mkdir(parents=True, exist_ok=True)
    config = {"model": "fake/model", "compaction": {"keep_tokens": 1000}}
    (seri_home / "config.json").write_text(json.dumps(config))

    async def go() -> tuple[str, list[str]]:
        with FakeModel(steps, auto_recap=True) as fake:
            env = _env(seri_home, fake)
            async with seri_acp(first, project, env) as (conn, _):
                sid = (await conn.new_session(cwd=str(project))).session_id
                for n in range(6):
                    text = f"task {n} " + "detail " * 300
                    await conn.prompt(session_id=sid, prompt=[acp.text_block(text)])
                pinned = await conn.prompt(session_id=sid, prompt=[acp.text_block("/pin keep X")])
                assert pinned.stop_reason == "end_turn"
                await conn.prompt(session_id=sid, prompt=[acp.text_block("/compact")])
                await conn.prompt(session_id=sid, prompt=[acp.text_block("/rewind")])
            async with seri_acp(second, project, env) as (conn, _):
                await conn.load_session(cwd=str(project), session_id=sid)
        return sid, [u["sessionUpdate"] for u in second.updates]

    _sid, kinds = asyncio.run(go())
    commands = [u for u in first.updates if u["sessionUpdate"] == "available_commands_update"]
    assert {c["name"] for c in commands[0]["availableCommands"]} == {"compact", "pin", "rewind"}
    said = first.text()
    assert "pinned note 1" in said and "compacted" in said and "not compacted" not in said
    # The first client was told of the compaction (a draft-RFD update the SDK does not know:
    # it reaches the client's stream, not its handler) ... and the second sees the recap first.
    told = [
        m["params"]["update"]
        for m in first.raw
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "compaction_update"
    ]
    assert [t["status"] for t in told] == ["in_progress", "completed"]
    assert told[0]["compactionId"] == told[1]["compactionId"]
    assert told[1]["_meta"]["seri"]["tokensAfter"] < told[1]["_meta"]["seri"]["tokensBefore"]
    replayed = second.text()
    assert kinds[0] == "agent_message_chunk" and "keep X" in replayed.split("task 5")[0]
    assert "user_message_chunk" in kinds


def test_the_clients_mcp_servers_start_under_a_projects_trust_rules(
    seri_home: Path, project: Path
) -> None:
    server = {"name": "hostile", "command": sys.executable, "args": [str(HOSTILE)], "env": []}
    script = [
        {"tool_calls": [call("m1", "mcp__hostile__echo", text="from the server")]},
        {"text": "first"},
        {"tool_calls": [call("m2", "mcp__hostile__echo", text="again")]},
        {"text": "second"},
    ]
    first, second = Editor(["allow_always"]), Editor()

    async def go() -> list[dict[str, Any]]:
        with FakeModel(script) as fake:
            env = _env(seri_home, fake)
            for editor in (first, second):
                async with seri_acp(editor, project, env) as (conn, _):
                    new = await conn.new_session(cwd=str(project), mcp_servers=[server])
                    await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
            return fake.requests

    requests = asyncio.run(go())
    results = [m["content"] for r in requests for m in r["messages"] if m["role"] == "tool"]
    assert "from the server" in json.dumps(results) and "again" in json.dumps(results)
    # Asked to start it once: "always" approved it for the project, as `seri mcp approve` does.
    assert [a["toolCall"]["toolCallId"] for a in first.asked] == ["mcp-server-hostile"]
    assert second.asked == []


def test_a_rejected_client_server_does_not_start(seri_home: Path, project: Path) -> None:
    server = {"name": "hostile", "command": sys.executable, "args": [str(HOSTILE)], "env": []}
    script = [{"tool_calls": [call("m1", "mcp__hostile__echo", text="x")]}, {"text": "no tool"}]
    editor = Editor(["reject_once"])

    async def go() -> list[dict[str, Any]]:
        with FakeModel(script) as fake:
            async with seri_acp(editor, project, _env(seri_home, fake)) as (conn, _):
                new = await conn.new_session(cwd=str(project), mcp_servers=[server])
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
            return fake.requests

    requests = asyncio.run(go())
    assert "mcp__hostile__echo" not in json.dumps(requests[0].get("tools", []))


def test_a_cancel_while_the_editor_is_asked_ends_the_turn_and_the_session_goes_on(
    seri_home: Path, project: Path
) -> None:
    script = [
        {"tool_calls": [call("b1", "bash", command="touch asked.txt")]},
        {"text": "after the cancel"},
    ]

    class Hesitant(Editor):
        async def request_permission(
            self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
        ) -> RequestPermissionResponse:
            self.asked.append({"toolCall": tool_call.model_dump(by_alias=True)})
            await self.cancelling(session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    editor = Hesitant()

    async def go() -> tuple[str, str, list[dict[str, Any]]]:
        with FakeModel(script) as fake:
            async with seri_acp(editor, project, _env(seri_home, fake)) as (conn, _):
                editor.cancelling = lambda sid: conn.cancel(session_id=sid)  # type: ignore[attr-defined]
                sid = (await conn.new_session(cwd=str(project))).session_id
                first = await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
                second = await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
            return first.stop_reason, second.stop_reason, fake.requests

    first, second, requests = asyncio.run(go())
    assert (first, second) == ("cancelled", "end_turn")
    assert not (project / "asked.txt").exists()
    # The call that was never answered is paired with a result in the next request.
    messages = requests[-1]["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["b1"]


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def test_a_line_over_the_limit_is_refused_without_being_held_and_it_serves_on(
    seri_home: Path, project: Path
) -> None:
    """100 MB without a newline: a JSON-RPC error as soon as the 64 MiB limit is passed,
    seri's peak memory grows by less than the line, and the next line is served."""
    proc = subprocess.Popen(
        [SERI, "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=seri_env(seri_home),
        cwd=project,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:

        def send(data: bytes) -> None:
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.flush()

        def answer() -> dict[str, Any]:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, "seri acp did not answer within 30 s"
            body: dict[str, Any] = json.loads(proc.stdout.readline())
            return body

        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        send(json.dumps(initialize).encode() + b"\n")
        assert "result" in answer()
        before = _peak_rss_kib(proc.pid)
        piece = b"x" * (1 << 20)
        send(b'{"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"cwd": "')
        for _ in range(100):
            send(piece)
        refused = answer()  # before the line has ended
        grown_mib = (_peak_rss_kib(proc.pid) - before) / 1024
        send(b'"}}\n' + json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/list"}).encode())
        send(b"\n")
        served = answer()
    finally:
        proc.stdin.close()
        proc.wait(30)
    assert refused["id"] is None
    assert refused["error"]["code"] == -32700
    assert "longer than seri's limit of 64 MiB" in refused["error"]["message"]
    assert grown_mib < 80, f"seri's peak memory grew by {grown_mib:.0f} MiB"
    assert served["id"] == 3 and "result" in served


def test_a_config_warning_is_said_once_a_session(seri_home: Path, project: Path) -> None:
    """config.json is read once per session/new (the key is looked for in that reading),
    so its warnings reach stderr once."""
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"modle": "x"}))
    with FakeModel([]) as fake:
        lines = [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/new",
                    "params": {"cwd": str(project), "mcpServers": []},
                }
            ),
        ]
        done = subprocess.run(
            [SERI, "acp"],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            env=_env(seri_home, fake),
            cwd=project,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    answers = {a.get("id"): a for a in map(json.loads, done.stdout.splitlines())}
    assert "sessionId" in answers[2]["result"]
    assert done.stderr.count("unknown key 'modle'") == 1, done.stderr
