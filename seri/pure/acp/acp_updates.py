"""What seri's values look like in the Agent Client Protocol (v1): tool calls as ``tool_call``
and ``tool_call_update`` (kind, locations, the diff of an edit, the command of bash), a task's
end as a stop reason, a permission question's options and the answer a chosen option is,
usage as ``usage_update``, a stored message as the updates that replay it.

Plain dicts, shaped as the ACP schema names them (camelCase); the runtime only sends them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from seri.pure.agent.effects import Answer, ToolRun
from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import TOOL_ARGUMENTS
from seri.pure.session.records import Message, Session, ToolCall
from seri.pure.trajectories.history_events import Compaction, CompactionStart

# seri's tools as ACP's kinds (an MCP server's tool is "other").
TOOL_KINDS: Mapping[str, str] = {
    "read_file": "read",
    "write_file": "edit",
    "edit": "edit",
    "glob": "search",
    "grep": "search",
    "bash": "execute",
    "task": "think",
    "remember": "other",
}

# How each of seri's statuses ends an ACP turn. "budget" (the cost budget spent) has no
# stop reason of its own: like the turn budget, it is a limit on requests.
STOP_REASONS: Mapping[str, str] = {
    "done": "end_turn",
    "length": "max_tokens",
    "max_turns": "max_turn_requests",
    "budget": "max_turn_requests",
    "refused": "refusal",
}

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE = "allow_once", "allow_always", "reject_once"
# What the model is told when the editor's person said no without saying why.
REJECTED = "the person declined this call in the editor"


def stop_reason(status: str, *, by_user: bool) -> str | None:
    """The stop reason of a task that ended with ``status``; None when it ended by failing
    (a provider error, an overflow), which the prompt's answer says as an error."""
    if by_user:
        return "cancelled"
    return STOP_REASONS.get(status)


def _arguments(call: ToolCall) -> dict[str, Any]:
    try:
        value = json_text.loads_bounded(call.arguments or "{}", TOOL_ARGUMENTS)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def absolute(project: str, path: str) -> str:
    """``path`` as the client names files: absolute, under ``project`` when relative."""
    return posixpath.normpath(posixpath.join(project, path))


def title(name: str, arguments: Mapping[str, Any]) -> str:
    """One line naming the call: bash's command itself, a file tool's path, else the tool."""
    if name == "bash":
        return str(arguments.get("command", "bash"))
    for key in ("path", "pattern", "description"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return f"{name} {value}"
    return name


def _locations(project: str, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return []
    location: dict[str, Any] = {"path": absolute(project, path)}
    line = arguments.get("offset") or arguments.get("line")
    if isinstance(line, int) and not isinstance(line, bool) and line > 0:
        location["line"] = line
    return [location]


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def tool_call(
    call: ToolCall, arguments: Mapping[str, Any], project: str, status: str = "pending"
) -> dict[str, Any]:
    """The ``tool_call`` update that announces ``call`` (bash's command as its content)."""
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call",
        "toolCallId": call.id,
        "title": title(call.name, arguments),
        "kind": TOOL_KINDS.get(call.name, "other"),
        "status": status,
        "rawInput": dict(arguments),
        "locations": _locations(project, arguments),
    }
    if call.name == "bash" and "command" in arguments:
        update["content"] = [_text(f"$ {arguments['command']}")]
    return update


def diff(project: str, path: str, before: str | None, after: str) -> dict[str, Any]:
    """An edit's content: the file's text before (None: a new file) and after."""
    return {
        "type": "diff",
        "path": absolute(project, path),
        "oldText": before,
        "newText": after,
    }


def tool_call_done(
    call: ToolCall,
    arguments: Mapping[str, Any],
    run: ToolRun,
    change: tuple[str | None, str | None] | None,
    project: str,
) -> dict[str, Any]:
    """The ``tool_call_update`` that ends ``call``: failed or completed, with the diff of
    what it wrote (when seri read the file before and after) and the text the model got."""
    content: list[dict[str, Any]] = []
    path = arguments.get("path")
    if change is not None and change[1] is not None and isinstance(path, str):
        content.append(diff(project, path, change[0], change[1]))
    if run.text:
        content.append(_text(run.text))
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call.id,
        "status": "failed" if run.is_error else "completed",
        "content": content,
        "rawOutput": {"text": run.text, "isError": run.is_error},
    }


def permission_options(offered: Sequence[str]) -> list[dict[str, str]]:
    """The choices a permission question gives: always only where seri has rules to offer."""
    options = [{"optionId": ALLOW_ONCE, "name": "Allow once", "kind": "allow_once"}]
    if offered:
        rules = ", ".join(offered)
        name = f"Allow always in this session ({rules})"
        options.append({"optionId": ALLOW_ALWAYS, "name": name, "kind": "allow_always"})
    options.append({"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"})
    return options


def answer_of(outcome: object, offered: tuple[str, ...], reason: str = "") -> Answer:
    """The answer a ``session/request_permission`` outcome gives; anything else (cancelled,
    an unknown option, a malformed reply) is no. ``reason`` (from the reply's ``_meta``)
    reaches the model as the person's words."""
    if isinstance(outcome, Mapping) and outcome.get("outcome") == "selected":
        chosen = outcome.get("optionId")
        if chosen == ALLOW_ONCE:
            return Answer(True)
        if chosen == ALLOW_ALWAYS and offered:
            return Answer(True, offered)
    return Answer(False, reason=reason.strip() or REJECTED)


def usage_update(used: int, size: int, cost: float | None) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "usage_update",
        "used": max(0, used),
        "size": max(0, size),
    }
    if cost is not None:
        update["cost"] = {"amount": cost, "currency": "USD"}
    return update


def chunk(kind: str, text: str) -> dict[str, Any]:
    """An ``agent_message_chunk``, ``agent_thought_chunk`` or ``user_message_chunk``."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def replay(messages: Sequence[Message], project: str) -> list[dict[str, Any]]:
    """The updates that show stored ``messages`` again (``session/load``): the user's words,
    the model's thoughts and answers, and each call with the result it got."""
    calls: dict[str, ToolCall] = {}
    updates: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "user" and message.text:
            updates.append(chunk("user_message_chunk", message.text))
        elif message.role == "assistant":
            if message.reasoning:
                updates.append(chunk("agent_thought_chunk", message.reasoning))
            if message.text:
                updates.append(chunk("agent_message_chunk", message.text))
            for call in message.tool_calls:
                calls[call.id] = call
                updates.append(tool_call(call, _arguments(call), project, "in_progress"))
        elif message.role == "tool" and message.tool_call_id in calls:
            call = calls[message.tool_call_id]
            run = ToolRun(message.text, is_error=message.is_error)
            updates.append(tool_call_done(call, _arguments(call), run, None, project))
    return updates


def session_info(session: Session, updated_at: str) -> dict[str, Any]:
    info: dict[str, Any] = {"sessionId": session.id, "cwd": session.project}
    if session.title:
        info["title"] = session.title
    if updated_at:
        info["updatedAt"] = updated_at
    return info


def page(count: int, cursor: str | None, size: int) -> tuple[int, int, str | None]:
    """The slice ``[start, end)`` of ``count`` listed sessions that ``cursor`` asks for, and
    the cursor of the page after it (None at the end). A cursor is the offset as text; one
    that is not (or is past the end) starts at the end, so a client stops paging."""
    start = 0
    if cursor:
        start = int(cursor) if cursor.isascii() and cursor.isdigit() else count
    start = min(start, count)
    end = min(start + size, count)
    return start, end, (str(end) if end < count else None)


def compaction_started(event: CompactionStart, compaction_id: str) -> dict[str, Any]:
    """The draft RFD's ``compaction_update`` ``in_progress``: sent before the summarizer is
    called, so a client can show that the turn is compacting rather than stuck."""
    return {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": "in_progress",
        "summary": (
            f"compacting ({event.trigger}): about {event.estimate_before} tokens of the "
            f"{event.context_window}-token window; {event.evicting} older messages go into "
            "a recap"
        ),
        "_meta": {
            "seri": {
                "trigger": event.trigger,
                "evicting": event.evicting,
                "tokensBefore": event.estimate_before,
                "contextWindow": event.context_window,
            }
        },
    }


def compaction_unfinished(compaction_id: str, cancelled: bool) -> dict[str, Any]:
    """The end of a compaction that left no recap: the turn was cancelled during it, or the
    summarizer failed (the session is as it was; seri says why on stderr)."""
    return {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": "cancelled" if cancelled else "failed",
        "summary": "compaction cancelled" if cancelled else "compaction failed; nothing changed",
    }


def compaction_done(event: Compaction, compaction_id: str) -> dict[str, Any]:
    """A compaction as the draft Session Compaction RFD's ``compaction_update`` (experimental:
    the RFD is a draft, and a client that does not know the update ignores it): completed,
    with what seri's ledger records of it under ``_meta``."""
    summary = (
        f"compacted ({event.trigger}): {event.evicted} messages replaced by a recap, "
        f"{event.kept} kept; about {event.estimate_before} tokens before, "
        f"{event.estimate_after} after"
    )
    return {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": "completed",
        "summary": summary,
        "_meta": {
            "seri": {
                "trigger": event.trigger,
                "evicted": event.evicted,
                "kept": event.kept,
                "tokensBefore": event.estimate_before,
                "tokensAfter": event.estimate_after,
            }
        },
    }


def mcp_document(servers: object) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A client's ``mcpServers`` as an ``.mcp.json`` document seri reads as it reads a
    project's, and the entries it cannot start (not stdio: seri offers neither http nor sse
    to the client; or malformed), by name."""
    entries: dict[str, Any] = {}
    skipped: list[str] = []
    for server in servers if isinstance(servers, list) else ():
        if not isinstance(server, Mapping):
            skipped.append("?")
            continue
        name = server.get("name")
        command = server.get("command")
        if server.get("type", "stdio") != "stdio" or not isinstance(command, str):
            skipped.append(str(name))
            continue
        env_list = server.get("env")
        env = env_list if isinstance(env_list, list) else []
        entries[str(name)] = {
            "command": command,
            "args": [str(a) for a in server.get("args") or [] if isinstance(a, str | int)],
            "env": {
                str(e.get("name")): str(e.get("value", ""))
                for e in env
                if isinstance(e, Mapping) and e.get("name")
            },
        }
    return {"mcpServers": entries}, tuple(skipped)
