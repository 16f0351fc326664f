"""Carrying out the agent loop's effects: the one place where its decisions meet the world.

The pure loop yields an effect; ``Driver.handle`` performs it with the store,
the provider client, the tools and the recorder, and returns the answer the
loop expects. Nothing here decides anything the loop could decide.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from seri.io import conversations
from seri.io.codec import message_to_json
from seri.io.recorder import Recorder
from seri.io.store import Store
from seri.pure.compaction import SESSION_CHANGED
from seri.pure.effects import (
    ApplyCompaction,
    AskPerson,
    CallModel,
    Effect,
    ModelFailed,
    ModelReply,
    Persist,
    Record,
    ResolvedPath,
    ResolvePath,
    RunTool,
    Say,
    ShrinkPayloads,
    SpillText,
    ToolRun,
    UpdateCounters,
)
from seri.pure.recap import recap_from_dict, recap_to_dict
from seri.pure.records import Message, ToolCall
from seri.pure.redaction import Redactor
from seri.pure.run_usage import RunUsage
from seri.pure.settings import Settings
from seri.pure.terminal_text import neutralise
from seri.pure.tokens import message_chars

if TYPE_CHECKING:
    from seri.commands.tool_host import ToolHost

T = TypeVar("T")

Asker = Callable[[AskPerson], Any]


class Activity(Protocol):
    """Who watches a task run (the chat's view); told, never asked, except through the asker."""

    # Whether tool calls are shown (then a write's before and after are read for +N −M).
    shows_tools: bool

    def model_call_started(self, purpose: str) -> None: ...
    def model_call_finished(self) -> None: ...
    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None: ...
    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None: ...
    def recorded(self, type_: str, data: Mapping[str, Any]) -> None: ...
    def notice(self, text: str) -> None: ...


class WireCache:
    """Each message's wire JSON, encoded once.

    Between compactions the history only grows, so re-encoding every message for every
    call would make each call cost more than the last; this keeps seri's own part of a
    call to encoding the new messages and joining the rest.
    """

    def __init__(self, *, reasoning_content: bool = False) -> None:
        # id() -> (message, json): the message is held so its id cannot be reused.
        self._entries: dict[int, tuple[Message, str]] = {}
        self._reasoning_content = reasoning_content

    def _encode(self, message: Message, *, marker: bool) -> str:
        from seri.pure.wire import to_wire_message

        wire = to_wire_message(
            message, cache_marker=marker, reasoning_content=self._reasoning_content
        )
        return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))

    def join(self, messages: Sequence[Message], marked: frozenset[int] = frozenset()) -> str:
        """The messages' JSON, comma-joined. Those at ``marked`` carry a prompt-cache
        breakpoint and are encoded afresh (at most two per call move); the rest come from the
        cache, so they are the same bytes in every request."""
        from seri.pure.wire import has_content

        entries = self._entries
        parts = []
        for index, message in enumerate(messages):
            if not has_content(message):
                continue
            if index in marked and index > 0:
                parts.append(self._encode(message, marker=True))
                continue
            hit = entries.get(id(message))
            if hit is None or hit[0] is not message:
                text = self._encode(message, marker=index in marked)
                hit = entries[id(message)] = (message, text)
            parts.append(hit[1])
        if len(entries) > 2 * len(messages) + 64:
            # After a compaction: forget the evicted messages.
            self._entries = {id(m): entries[id(m)] for m in messages}
        return ",".join(parts)


class ModelCaller:
    """Builds the request body and calls the provider; the client is created on first use."""

    def __init__(
        self,
        settings: Settings,
        api_key: str,
        recorder: Recorder,
        tool_names: tuple[str, ...],
        *,
        on_text: Callable[[str], None] | None = None,
        on_reasoning: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.api_key = api_key
        self.recorder = recorder
        self.tool_names = tool_names
        self.on_text = on_text
        self.on_reasoning = on_reasoning
        self._client: Any = None
        self.usage = RunUsage()
        self.cache_markers_sent = 0
        from seri.pure.wire import wants_reasoning_content

        self._wire = WireCache(reasoning_content=wants_reasoning_content(settings.model))
        self._system: Message | None = None

    def client(self) -> Any:
        if self._client is None:
            from seri.io.provider import ProviderClient

            self._client = ProviderClient(
                self.settings.base_url,
                self.api_key,
                on_retry=self._on_retry,
                title="seri",
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _on_retry(self, attempt: int, status: int | None, delay: float, reason: str) -> None:
        self.recorder.record(
            "retry",
            {"attempt": attempt, "status": status, "delay": round(delay, 3), "reason": reason},
        )
        if status is None:
            reason = self.naming_the_url(reason)
        print(
            neutralise(f"seri: {reason}; retrying in {delay:.1f} s (attempt {attempt + 1})"),
            file=sys.stderr,
        )

    def naming_the_url(self, message: str) -> str:
        """A connection failure with the URL called and the setting that chose it."""
        settings = self.settings
        where = f"{settings.base_url} ({settings.base_url_source})"
        lead = "could not reach the provider"
        if message.startswith(lead):
            return f"{lead} at {where}{message[len(lead) :]}"
        return f"{message} ({where})"

    def body(self, effect: CallModel) -> dict[str, Any]:
        from seri.pure.tool_specs import select_tools
        from seri.pure.wire import build_request

        messages = effect.messages
        tools: tuple[dict[str, Any], ...] = ()
        if effect.purpose == "turn":
            if effect.system_prompt:
                messages = (Message(role="system", text=effect.system_prompt), *messages)
            tools = select_tools(self.tool_names)
        return build_request(
            self.settings.model,
            messages,
            tools,
            sampling=self.settings.sampling,
            provider_pin=self.settings.provider,
            reasoning_effort=self.settings.reasoning_effort or None,
        )

    def encoded_body(self, effect: CallModel) -> bytes:
        """The same body as ``body``, with the messages spliced in from the wire cache."""
        if effect.purpose == "summary":
            # A one-off request: caching its two messages would only evict the turn's.
            return json.dumps(self.body(effect), separators=(",", ":")).encode("ascii")
        head = self.body(attrs.evolve(effect, messages=(), system_prompt=""))
        head.pop("messages", None)
        messages = effect.messages
        if effect.purpose == "turn" and effect.system_prompt:
            messages = (self._system_message(effect.system_prompt), *messages)
        from seri.pure.prompt_cache import breakpoints

        marked = breakpoints(self.settings.model, messages)
        self.cache_markers_sent += len(marked)
        rest = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
        text = '{"messages":[' + self._wire.join(messages, marked) + "]," + rest[1:]
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate from a tool or model: escaped JSON is still the same value.
            return json.dumps(json.loads(text), separators=(",", ":")).encode("ascii")

    def _system_message(self, prompt: str) -> Message:
        if self._system is None or self._system.text != prompt:
            self._system = Message(role="system", text=prompt)
        return self._system

    def call(self, effect: CallModel) -> ModelReply | ModelFailed:
        from seri.pure.provider_failure import ContextOverflow, InsufficientCredits, ProviderError

        on_text = self.on_text if effect.purpose == "turn" else None
        on_reasoning = self.on_reasoning
        try:
            try:
                result = self.client().stream_chat(
                    self.encoded_body(effect), on_text, on_reasoning=on_reasoning
                )
            except (ContextOverflow, InsufficientCredits) as exc:
                # One more try, only when a smaller output budget is what the provider asked
                # for: the input fits the window, or the credit left covers fewer tokens.
                before = self.settings
                if not self._lower_output_budget(exc.failure):
                    raise
                try:
                    result = self.client().stream_chat(
                        self.encoded_body(effect), on_text, on_reasoning=on_reasoning
                    )
                finally:
                    if isinstance(exc, ContextOverflow):
                        # The room left beside this input, not beside the next one (a new
                        # task, a summarizer call): those go out with the budget as it was.
                        self.settings = before
        except ContextOverflow as exc:
            return ModelFailed(str(exc), overflow=True, overflow_numbers=exc.failure.overflow)
        except ProviderError as exc:
            if exc.failure.kind == "connection":
                return ModelFailed(self.naming_the_url(str(exc)))
            return ModelFailed(str(exc))
        except KeyboardInterrupt:
            return ModelFailed(
                "interrupted by user while the model was answering", interrupted=True, by_user=True
            )
        self.usage = self.usage.add(result.usage)
        if not result.complete:
            failure = result.failure
            text = failure.message if failure is not None else "the answer stopped before its end"
            kind = getattr(failure, "kind", "")
            if kind == "context_overflow":
                return ModelFailed(
                    text, overflow=True, overflow_numbers=getattr(failure, "overflow", None)
                )
            return ModelFailed(
                text,
                # A cut or stalled stream interrupts the turn, but nobody pressed Ctrl-C:
                # by_user stays False (exit 1, and a subagent's parent goes on).
                interrupted=kind in ("interrupted", "stalled"),
                partial=_partial(result.message),
                usage=result.usage,
            )
        return ModelReply(
            result.message,
            result.usage,
            result.finish_reason,
            result.tool_calls_runnable,
            result.unrunnable_reason,
            model=result.model,
            generation_id=result.generation_id,
            refusal=result.refusal,
        )

    def _lower_output_budget(self, failure: Any) -> bool:
        """Lower max_tokens rather than compact or give up.

        An overflow whose numbers show the input fits: the output budget goes to what is left
        of the window, for the retry of that call. A 402 "can only afford N tokens": to N, for
        the rest of the run. Set whether or not config.json named a budget (without one the
        provider assumed its own, too large, default).
        """
        from seri.pure.output_budget import lowered_output_budget

        sampling = dict(self.settings.sampling)
        lowered = lowered_output_budget(failure, sampling)
        if lowered is None:
            return False
        key, room, why = lowered
        sampling[key] = room
        self.settings = attrs.evolve(self.settings, sampling=sampling)
        self.recorder.record("output_budget_lowered", {"key": key, "to": room, "why": why})
        print(f"seri: {key} lowered to {room} {why}", file=sys.stderr)
        return True


class Driver:
    """Runs a loop generator to its end against the real store, model and tools."""

    def __init__(
        self,
        *,
        store: Store,
        session_id: str,
        revision: int,
        model: ModelCaller,
        tools: ToolHost,
        recorder: Recorder,
        redactor: Redactor,
        asker: Asker,
        clock: Callable[[], float] = time.time,
        activity: Activity | None = None,
        spill_dir: Path | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.revision = revision
        self.model = model
        self.tools = tools
        self.recorder = recorder
        self.redactor = redactor
        self.asker = asker
        self.clock = clock
        self.activity = activity
        # Where whole texts too long for the window are kept (None: nowhere).
        self.spill_dir = spill_dir
        self._counters: UpdateCounters | None = None

    def run(self, loop: Generator[Effect, Any, T]) -> T:
        try:
            effect = next(loop)
            while True:
                effect = loop.send(self.handle(effect))
        except StopIteration as stop:
            self._flush_counters()
            self.recorder.flush()
            result: T = stop.value
            return result

    def handle(self, effect: Effect) -> Any:
        handler = getattr(self, "_" + type(effect).__name__)
        return handler(effect)

    # -- effects -------------------------------------------------------------------------------

    def _CallModel(self, effect: CallModel) -> ModelReply | ModelFailed:  # noqa: N802
        if effect.purpose == "summary" and self._session_changed():
            # The swap would be refused: do not pay for a recap that cannot be stored.
            return ModelFailed(SESSION_CHANGED)
        activity = self.activity
        if activity is not None:
            activity.model_call_started(effect.purpose)
        try:
            reply = self.model.call(effect)
        finally:
            if activity is not None:
                activity.model_call_finished()
        if isinstance(reply, ModelReply) and effect.purpose == "summary":
            self._Record(
                Record(
                    "summary_call",
                    {"usage": _usage(reply), "finish_reason": reply.finish_reason},
                )
            )
        return reply

    def _AskPerson(self, effect: AskPerson) -> Any:  # noqa: N802
        return self.asker(effect)

    def _ResolvePath(self, effect: ResolvePath) -> ResolvedPath:  # noqa: N802
        return self.tools.resolve(effect.raw)

    def _RunTool(self, effect: RunTool) -> ToolRun:  # noqa: N802
        activity = self.activity
        if activity is None or not activity.shows_tools:
            return self._run_tool(effect)
        call, arguments = effect.call, effect.arguments
        path = arguments.get("path") if call.name in ("write_file", "edit") else None
        before = self.tools.current_text(path) if isinstance(path, str) else None
        activity.tool_started(call, arguments)
        run = self._run_tool(effect)
        change = None
        if isinstance(path, str) and not run.is_error:
            change = (before, self.tools.current_text(path))
        activity.tool_finished(call, arguments, run, change)
        return run

    def _run_tool(self, effect: RunTool) -> ToolRun:
        run: ToolRun = self.tools.run(effect.call, effect.arguments, effect.max_chars)
        return ToolRun(
            self.redactor.text(run.text), run.is_error, run.interrupted, run.touched_paths
        )

    def _Persist(self, effect: Persist) -> None:  # noqa: N802
        messages = [self._redacted(m) for m in effect.messages]
        with self.store.write() as conn:
            conversations.insert_messages(
                conn, self.session_id, messages, self.clock(), revision=self.revision
            )
            self._write_counters(conn)
            self.recorder.flush_into(conn)
        self.revision += 1

    def _Record(self, effect: Record) -> None:  # noqa: N802
        self.recorder.record(effect.type, effect.data)
        if self.activity is not None:
            self.activity.recorded(effect.type, effect.data)

    def _Say(self, effect: Say) -> None:  # noqa: N802
        if self.activity is not None:
            self.activity.notice(f"seri: {effect.text}")
        else:
            print(neutralise(f"seri: {effect.text}"), file=sys.stderr)

    def _UpdateCounters(self, effect: UpdateCounters) -> None:  # noqa: N802
        # Written with the next message, in the same transaction: one fsync, not two.
        self._counters = effect

    def _SpillText(self, effect: SpillText) -> str:  # noqa: N802
        if self.spill_dir is None:
            return ""
        from seri.io.spill import keep_text

        # Redacted already (tool results on their way in, stored messages when stored); once
        # more costs little and a spill file is as much storage as the database.
        return keep_text(self.spill_dir, self.redactor.text(effect.text))

    def _ShrinkPayloads(self, effect: ShrinkPayloads) -> bool:  # noqa: N802
        replacements = [(index, self._redacted(m)) for index, m in effect.replacements]
        return self._swap(
            lambda conn: apply_shrink(
                conn, self.session_id, self.revision, effect, replacements, self.clock()
            )
        )

    def _ApplyCompaction(self, effect: ApplyCompaction) -> bool:  # noqa: N802
        recap_message = self._redacted(effect.recap_message)
        # The summarizer quotes literals: a secret in the history may be in the recap too.
        effect = attrs.evolve(
            effect, recap=recap_from_dict(self.redactor.value(recap_to_dict(effect.recap)))
        )
        return self._swap(
            lambda conn: apply_compaction(
                conn, self.session_id, self.revision, effect, recap_message, self.clock()
            )
        )

    def _swap(self, apply: Callable[[Any], bool]) -> bool:
        """One compare-and-swap write of the session, with the recordings made so far."""
        with self.store.write() as conn:
            applied = apply(conn)
            if applied:
                self.recorder.flush_into(conn)
        if applied:
            self.revision += 1
        return applied

    # -- helpers -------------------------------------------------------------------------------

    def _session_changed(self) -> bool:
        """Whether someone else wrote to the session since this driver's view of it."""
        rows = self.store.connection.execute(
            "SELECT revision FROM sessions WHERE id = ?", (self.session_id,)
        ).fetchall()
        return not rows or rows[0][0] != self.revision

    def _redacted(self, message: Message) -> Message:
        # reasoning_details go back to the provider byte for byte; a secret in them is
        # still replaced in the stored copy (a resumed session then sends the redacted form).
        return attrs.evolve(
            message,
            text=self.redactor.text(message.text),
            reasoning=self.redactor.text(message.reasoning),
            reasoning_details=self.redactor.text(message.reasoning_details),
            tool_calls=tuple(
                attrs.evolve(call, arguments=self.redactor.text(call.arguments))
                for call in message.tool_calls
            ),
        )

    def _write_counters(self, conn: Any) -> None:
        if self._counters is not None:
            counters = self._counters
            conn.execute(
                "UPDATE sessions SET turns_used = ?, last_input_tokens = ?,"
                " token_scale = CASE WHEN ? > 0 THEN ? ELSE token_scale END WHERE id = ?",
                (
                    counters.turns_used,
                    counters.last_input_tokens,
                    counters.token_scale,
                    counters.token_scale,
                    self.session_id,
                ),
            )
            self._counters = None

    def _flush_counters(self) -> None:
        if self._counters is not None:
            with self.store.write() as conn:
                self._write_counters(conn)


def _partial(message: Message) -> Message | None:
    """What a failed answer delivered (text, or only reasoning and its details), flagged; its
    tool calls are dropped, never run."""
    if not (message.text or message.reasoning or message.reasoning_details):
        return None
    return attrs.evolve(message, tool_calls=(), kind="partial")


def _usage(reply: ModelReply) -> dict[str, Any]:
    from seri.pure.turn import usage_record

    return usage_record(reply.usage)


def apply_compaction(
    conn: Any,
    session_id: str,
    expected_revision: int,
    effect: ApplyCompaction,
    recap_message: Message,
    now: float,
) -> bool:
    """Swap the evicted prefix for the recap inside the caller's IMMEDIATE transaction.

    Compare-and-swap on the session's revision: if anyone wrote to the session
    since the history was read, nothing is changed and False comes back.
    """
    rows = conn.execute("SELECT revision FROM sessions WHERE id = ?", (session_id,)).fetchall()
    if not rows or rows[0][0] != expected_revision:
        return False
    kept = conn.execute(
        "SELECT seq FROM messages WHERE session_id = ? ORDER BY seq LIMIT 1 OFFSET ?",
        (session_id, effect.evicted),
    ).fetchall()
    if not kept:
        return False
    first_kept = kept[0][0]
    stored_recap = _stored_recap(conn, session_id, first_kept, effect)
    evicted_chars, evicted_count = conn.execute(
        "SELECT coalesce(sum(chars), 0), count(*) FROM messages WHERE session_id = ? AND seq < ?",
        (session_id, first_kept),
    ).fetchall()[0]
    conn.execute("DELETE FROM messages WHERE session_id = ? AND seq < ?", (session_id, first_kept))
    recap_seq = first_kept - 1
    recap_chars = message_chars(recap_message)
    conn.execute(
        "INSERT INTO messages(session_id, seq, role, kind, body, chars, created)"
        " VALUES (?,?,?,?,?,?,?)",
        (session_id, recap_seq, "user", "recap", message_to_json(recap_message), recap_chars, now),
    )
    conn.execute(
        "UPDATE sessions SET total_chars = total_chars - ? + ?,"
        " message_count = message_count - ? + 1,"
        " recap = ?, compacted_before = ?, last_input_tokens = 0, revision = revision + 1,"
        " updated = ?, token_scale = CASE WHEN ? > 0 THEN ? ELSE token_scale END WHERE id = ?",
        (
            evicted_chars,
            recap_chars,
            evicted_count,
            json.dumps(stored_recap, ensure_ascii=False),
            recap_seq,
            now,
            effect.token_scale,
            effect.token_scale,
            session_id,
        ),
    )
    conn.execute(
        "INSERT INTO compactions(session_id, at, trigger, focus, evicted, estimate_before,"
        " estimate_after, summary_calls) VALUES (?,?,?,?,?,?,?,?)",
        (
            session_id,
            now,
            effect.trigger,
            effect.focus,
            evicted_count,
            effect.estimate_before,
            effect.estimate_after,
            effect.summary_calls,
        ),
    )
    return True


def apply_shrink(
    conn: Any,
    session_id: str,
    expected_revision: int,
    effect: ShrinkPayloads,
    replacements: Sequence[tuple[int, Message]],
    now: float,
) -> bool:
    """Replace messages by position inside the caller's IMMEDIATE transaction, and note it in
    the ledger. Compare-and-swap on the revision, like ``apply_compaction``."""
    rows = conn.execute("SELECT revision FROM sessions WHERE id = ?", (session_id,)).fetchall()
    if not rows or rows[0][0] != expected_revision:
        return False
    stored = []
    for index, message in replacements:
        found = conn.execute(
            "SELECT seq, chars FROM messages WHERE session_id = ? ORDER BY seq LIMIT 1 OFFSET ?",
            (session_id, index),
        ).fetchall()
        if not found:
            return False  # not stored (yet): nothing is written
        stored.append((found[0][0], found[0][1], message))
    delta = 0
    for seq, chars, message in stored:
        size = message_chars(message)
        conn.execute(
            "UPDATE messages SET body = ?, chars = ? WHERE session_id = ? AND seq = ?",
            (message_to_json(message), size, session_id, seq),
        )
        delta += size - chars
    conn.execute(
        "UPDATE sessions SET total_chars = total_chars + ?, last_input_tokens = 0,"
        " revision = revision + 1 WHERE id = ?",
        (delta, session_id),
    )
    conn.execute(
        "INSERT INTO compactions(session_id, at, trigger, focus, evicted, estimate_before,"
        " estimate_after, summary_calls, elided) VALUES (?,?,?,'',0,?,?,0,?)",
        (
            session_id,
            now,
            effect.trigger,
            effect.estimate_before,
            effect.estimate_after,
            len(replacements),
        ),
    )
    return True


def _stored_recap(
    conn: Any, session_id: str, first_kept: int, effect: ApplyCompaction
) -> dict[str, Any]:
    """The recap object to store, with the names of the rules whose messages are evicted.

    A rule fires once a session. Its message may be evicted, so the names live on in the
    stored recap (``RULES_FIRED_KEY``, which ``fired_rule_names`` reads on resume), merged
    with the names the previous recap carried.
    """
    from seri.io.codec import message_from_json
    from seri.pure.rules import RULES_FIRED_KEY, fired_rule_names

    rows = conn.execute("SELECT recap FROM sessions WHERE id = ?", (session_id,)).fetchall()
    previous: Any = None
    if rows and rows[0][0]:
        try:
            previous = json.loads(rows[0][0])
        except ValueError:
            previous = None
    rule_rows = conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq < ? AND kind = 'rule'",
        (session_id, first_kept),
    ).fetchall()
    evicted_rules = [message_from_json(body) for (body,) in rule_rows]
    names = fired_rule_names(evicted_rules, previous if isinstance(previous, dict) else None)
    stored = recap_to_dict(effect.recap)
    if names:
        stored[RULES_FIRED_KEY] = sorted(names)
    return stored
