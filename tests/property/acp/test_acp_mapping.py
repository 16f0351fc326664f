"""Properties of seri's ACP mapping (seri/pure/acp/acp_wire.py, seri/pure/acp/acp_updates.py): any
line is a value (never an exception), what seri writes parses back, a permission reply is
yes only for an offered allow option, paging visits every session once."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.acp import acp_updates, acp_wire
from seri.pure.acp.acp_wire import ClientMessage, Malformed, Reply
from seri.pure.agent.effects import ToolRun
from seri.pure.session.records import Message, ToolCall
from tests.property.mcp_strategies import JSON, TEXT

IDS = st.integers(-(2**53), 2**53) | TEXT


@given(st.text(max_size=200) | JSON.map(json.dumps))
def test_any_line_is_a_message_or_why_not(line: str) -> None:
    parsed = acp_wire.parse_line(line)
    assert isinstance(parsed, ClientMessage | Reply | Malformed)
    if isinstance(parsed, Malformed):
        # The error seri answers with is itself one valid JSON-RPC line.
        body = json.loads(acp_wire.error(parsed.id, parsed.code, parsed.message))
        assert body["error"]["code"] in (-32700, -32600, -32602)


@given(IDS, TEXT.filter(bool), st.dictionaries(TEXT, JSON, max_size=4))
def test_requests_seri_writes_parse_back(id_: int | str, method: str, params: dict) -> None:  # type: ignore[type-arg]
    line = acp_wire.request(id_, method, params)
    assert "\n" not in line and line.isascii()
    assert acp_wire.parse_line(line) == ClientMessage(method, params, id_)
    assert acp_wire.parse_line(acp_wire.notification(method, params)) == ClientMessage(
        method, params
    )


@given(IDS, st.dictionaries(TEXT, JSON, max_size=4))
def test_results_parse_back_as_replies(id_: int | str, value: dict) -> None:  # type: ignore[type-arg]
    assert acp_wire.parse_line(acp_wire.result(id_, value)) == Reply(id_, value)


@given(JSON, st.lists(TEXT, max_size=3).map(tuple), TEXT)
def test_only_an_offered_allow_option_approves(
    outcome: object, offered: tuple[str, ...], reason: str
) -> None:
    answer = acp_updates.answer_of(outcome, offered, reason)
    if answer.approved:
        assert isinstance(outcome, dict) and outcome.get("outcome") == "selected"
        assert outcome["optionId"] in ("allow_once", "allow_always")
        assert answer.always in ((), offered)
    else:
        assert answer.reason  # the model is always told why not


@given(st.lists(TEXT, max_size=3).map(tuple))
def test_always_is_offered_only_with_rules(offered: tuple[str, ...]) -> None:
    kinds = [o["kind"] for o in acp_updates.permission_options(offered)]
    assert kinds[0] == "allow_once" and kinds[-1] == "reject_once"
    assert ("allow_always" in kinds) == bool(offered)


@given(st.integers(0, 300), st.integers(1, 60))
def test_paging_lists_every_session_once(count: int, size: int) -> None:
    seen: list[int] = []
    cursor: str | None = None
    for _ in range(count + 2):
        start, end, cursor = acp_updates.page(count, cursor, size)
        seen.extend(range(start, end))
        if cursor is None:
            break
    assert seen == list(range(count))


@given(TEXT)
def test_a_foreign_cursor_ends_the_listing(cursor: str) -> None:
    start, end, after = acp_updates.page(10, cursor, 5)
    assert 0 <= start <= end <= 10
    assert after is None or int(after) == end


@given(
    st.sampled_from(["done", "length", "max_turns", "budget", "refused", "error", "overflow"]),
    st.booleans(),
)
def test_every_status_is_a_stop_reason_or_an_error(status: str, by_user: bool) -> None:
    reason = acp_updates.stop_reason(status, by_user=by_user)
    if by_user:
        assert reason == "cancelled"
    elif status in ("error", "overflow"):
        assert reason is None
    else:
        assert reason in ("end_turn", "max_tokens", "max_turn_requests", "refusal")


CALLS = st.builds(
    ToolCall,
    id=TEXT.filter(bool),
    name=st.sampled_from(["read_file", "write_file", "edit", "bash", "grep", "mcp__x__y"]),
    arguments=st.dictionaries(st.sampled_from(["path", "command", "content"]), TEXT).map(
        json.dumps
    ),
)


@given(st.lists(CALLS, max_size=4, unique_by=lambda c: c.id), st.booleans())
def test_replay_announces_each_call_before_its_result(calls: list[ToolCall], error: bool) -> None:
    messages = [
        Message(role="user", text="task"),
        Message(role="assistant", tool_calls=tuple(calls)),
        *(Message(role="tool", text="out", tool_call_id=c.id, is_error=error) for c in calls),
    ]
    updates = acp_updates.replay(messages, "/project")
    started = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
    ended = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert started == [c.id for c in calls] == [u["toolCallId"] for u in ended]
    assert all(u["status"] == ("failed" if error else "completed") for u in ended)
    for update in updates:
        for location in update.get("locations", []):
            assert location["path"].startswith("/")


@given(CALLS, TEXT, st.none() | TEXT, TEXT)
def test_a_finished_write_carries_its_diff(
    call: ToolCall, path: str, before: str | None, after: str
) -> None:
    arguments = {"path": path or "f"}
    done = acp_updates.tool_call_done(call, arguments, ToolRun("ok"), (before, after), "/p")
    assert done["content"][0] == {
        "type": "diff",
        "path": acp_updates.absolute("/p", path or "f"),
        "oldText": before,
        "newText": after,
    }


@given(JSON)
def test_any_client_server_list_is_a_document_or_named_as_skipped(servers: object) -> None:
    document, skipped = acp_updates.mcp_document(servers)
    entries = document["mcpServers"]
    given_count = len(servers) if isinstance(servers, list) else 0
    assert len(entries) + len(skipped) <= given_count
    for entry in entries.values():
        assert isinstance(entry["command"], str)
        assert all(isinstance(a, str) for a in entry["args"])
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry["env"].items())


@given(JSON)
def test_only_a_file_capability_set_to_true_is_offered(capabilities: object) -> None:
    reads, writes = acp_wire.client_file_system(capabilities)
    fs = capabilities.get("fs") if isinstance(capabilities, dict) else None
    assert reads == (isinstance(fs, dict) and fs.get("readTextFile") is True)
    assert writes == (isinstance(fs, dict) and fs.get("writeTextFile") is True)


@given(st.booleans(), st.booleans(), st.dictionaries(TEXT, JSON, max_size=3))
def test_the_file_capabilities_are_read_as_offered(read: bool, write: bool, more: dict) -> None:  # type: ignore[type-arg]
    capabilities = {"fs": {**more, "readTextFile": read, "writeTextFile": write}}
    assert acp_wire.client_file_system(capabilities) == (read, write)


@given(TEXT, st.integers(0, 10**7), st.integers(0, 10**4), st.integers(1, 10**7), TEXT)
def test_a_compaction_start_is_in_progress_with_the_ledgers_numbers(
    trigger: str, before: int, evicting: int, window: int, number: str
) -> None:
    from seri.pure.trajectories.events import CompactionStart

    event = CompactionStart(
        trigger=trigger, evicting=evicting, estimate_before=before, context_window=window
    )
    update = acp_updates.compaction_started(event, number)
    assert update["sessionUpdate"] == "compaction_update"
    assert (update["compactionId"], update["status"]) == (number, "in_progress")
    assert update["_meta"]["seri"]["tokensBefore"] == before
    assert update["_meta"]["seri"]["contextWindow"] == window
    json.dumps(update)


@given(TEXT, st.booleans())
def test_an_unfinished_compaction_ends_failed_or_cancelled(number: str, cancelled: bool) -> None:
    update = acp_updates.compaction_unfinished(number, cancelled)
    assert update["compactionId"] == number
    assert update["status"] == ("cancelled" if cancelled else "failed")
