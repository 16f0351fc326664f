"""The tool-call pairing rule, as the tests check it on every history seri stores or sends.

Each assistant tool call must be answered exactly once by the tool messages that follow it;
providers reject a request that breaks this with a 400 that no retry can fix. seri keeps the
rule by construction (a call is answered before the next message, a lost one gets a synthetic
result), so this check is the tests' oracle, not a step of the request path.
"""

from __future__ import annotations

from collections.abc import Sequence

from seri.pure.session.records import Message, ToolCall


def _describe(call: ToolCall) -> str:
    return f"{call.id!r} ({call.name})" if call.name else repr(call.id)


def _answers(messages: Sequence[Message], start: int) -> tuple[list[Message], int]:
    """The run of tool messages beginning at ``start``, and the index after it."""
    end = start
    while end < len(messages) and messages[end].role == "tool":
        end += 1
    return list(messages[start:end]), end


def _check_turn(position: int, calls: tuple[ToolCall, ...], results: list[Message]) -> list[str]:
    problems: list[str] = []
    seen_ids: set[str] = set()
    for call in calls:
        if not call.id:
            problems.append(f"message {position}: a tool call to {call.name!r} has no id")
        elif call.id in seen_ids:
            problems.append(f"message {position}: tool call id {call.id!r} is used twice")
        seen_ids.add(call.id)
    answered: dict[str, int] = {}
    for offset, result in enumerate(results, start=position + 1):
        if result.tool_call_id not in seen_ids:
            problems.append(
                f"message {offset}: tool result for {result.tool_call_id!r} answers no call "
                f"of message {position}"
            )
        answered[result.tool_call_id] = answered.get(result.tool_call_id, 0) + 1
    for call in calls:
        count = answered.get(call.id, 0)
        if count == 0:
            problems.append(f"message {position}: tool call {_describe(call)} has no result")
        elif count > 1:
            problems.append(
                f"message {position}: tool call {_describe(call)} is answered {count} times"
            )
    return problems


def pairing_problems(messages: Sequence[Message]) -> tuple[str, ...]:
    """Every breach of the tool-call pairing rule in a history; empty when it is valid.

    Each assistant tool call must be answered exactly once by the tool messages that
    immediately follow that assistant message, and every tool message must answer a call of
    the assistant message just before its run. Providers reject a request that breaks this with
    a 400 that no retry can fix: the tests check every history seri builds or imports here.
    """
    problems: list[str] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role == "tool":
            problems.append(
                f"message {index}: tool result for {message.tool_call_id!r} does not follow "
                "an assistant message that called it"
            )
            index += 1
            continue
        if message.role == "assistant" and message.tool_calls:
            results, after = _answers(messages, index + 1)
            problems.extend(_check_turn(index, message.tool_calls, results))
            index = after
            continue
        index += 1
    return tuple(problems)
