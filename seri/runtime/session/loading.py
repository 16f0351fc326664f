"""Reading a session back from the store, in one snapshot, as the controller goes on with it."""

from __future__ import annotations

import attrs

from seri.io.agent.goals import carried_pins
from seri.io.permissions.session_rules import SessionRule, list_session_rules
from seri.io.session import conversations, session_table
from seri.io.session.store import Store
from seri.pure.agent.rules import fired_rule_names
from seri.pure.agent.task_records import Conversation, conversation_of
from seri.pure.compaction.tokens import messages_chars
from seri.pure.session.records import Message


@attrs.frozen
class LoadedSession:
    """A stored session as a run goes on with it."""

    conversation: Conversation
    # Synthetic results for tool calls a killed run left unanswered: in ``conversation``
    # already, stored only once this run goes on with the session.
    repairs: tuple[Message, ...]
    revision: int
    # The project the session belongs to (an imported session's own cwd).
    project: str
    prompt_hashes: dict[str, str]
    rules: tuple[SessionRule, ...]
    max_turns: int | None


def load_session(store: Store, session_id: str, model: str) -> LoadedSession:
    """Read the session back, in one snapshot.

    A kill -9 mid-turn may have left tool calls without results: they get synthetic
    results in memory now, stored only when this process goes on with the session
    (another live process may still be about to store the real ones). ``model`` is the one
    this run talks to: a window learned for another model is that model's own.
    """
    with store.snapshot():
        state = session_table.load_state(store, session_id)
        history = conversations.load_messages(store, session_id)
    repairs = tuple(missing_results(history))
    history = (*history, *repairs)
    recap = None
    if state.recap:
        from seri.pure.compaction.recap import recap_from_dict  # a new session has none to load

        recap = recap_from_dict(state.recap)
    conversation = conversation_of(
        history,
        recap,
        state.last_input_tokens,
        # The store keeps the running count: no recount of the whole history on resume.
        total_chars=state.total_chars + messages_chars(repairs),
        fired_rules=fired_rule_names(history, state.recap),
        token_scale=state.token_scale,
        pins=carried_pins(store, session_id),
        learned_window=state.learned_window if state.session.model == model else 0,
    )
    return LoadedSession(
        conversation=conversation,
        repairs=repairs,
        revision=state.revision,
        project=state.session.project,
        prompt_hashes=state.prompt_hashes,
        rules=list_session_rules(store, session_id),
        max_turns=state.max_turns,
    )


def missing_results(history: tuple[Message, ...]) -> list[Message]:
    """Synthetic results for the tool calls of the last assistant message left unanswered."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "assistant":
            answered = {m.tool_call_id for m in history[index + 1 :] if m.role == "tool"}
            return [
                Message(
                    role="tool",
                    text="result lost: seri stopped before this tool call finished",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=True,
                    kind="synthetic",
                )
                for call in message.tool_calls
                if call.id not in answered
            ]
        if message.role != "tool":
            return []
    return []
