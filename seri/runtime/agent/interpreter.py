"""Carrying out the agent loop's effects: the one place where its decisions meet the world.

The pure loop (``seri.pure.agent.turn``) yields an effect; ``Interpreter.handle`` matches it and
performs it through the ports (``seri.runtime.agent.ports``): the model, the tools, the session
log, the recorder and the person. It returns the answer the loop expects and decides
nothing the loop could decide. What it adds is what only the shell can know or must do:
redaction before anything is stored or spilled, a summarizer call that is not paid for when
the session changed meanwhile, and a file's text before and after a write for the person.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, assert_never

import attrs

from seri.pure.agent.effects import (
    NOTHING,
    ApplyCompaction,
    AskPerson,
    CallModel,
    CheckEdit,
    CountSpending,
    Effect,
    Flow,
    HookDecision,
    ModelFailed,
    ModelReply,
    Persist,
    Record,
    Reply,
    Request,
    ResolvePath,
    RunHooks,
    RunTool,
    Say,
    ShrinkPayloads,
    SpillText,
    ToolRun,
    UpdateCounters,
)
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.compaction.compaction_outcome import SESSION_CHANGED
from seri.pure.session.records import Message
from seri.pure.tools.tool_specs import spec_of
from seri.pure.trajectories import events, history_events
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.ports import (
    ModelPort,
    Person,
    RecorderPort,
    SessionPort,
    SpendingPort,
    ToolPort,
)

if TYPE_CHECKING:
    from seri.runtime.extensions.hook_host import HookHost

A = TypeVar("A")
T = TypeVar("T")


class Interpreter:
    """Runs a loop generator to its end against the ports it was built with."""

    def __init__(
        self,
        *,
        model: ModelPort,
        tools: ToolPort,
        session: SessionPort,
        recorder: RecorderPort,
        person: Person,
        redactor: Redactor,
        spill_dir: Path | None = None,
        spending: SpendingPort | None = None,
        hooks: HookHost | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.session = session
        self.recorder = recorder
        self.person = person
        self.redactor = redactor
        # Where whole texts too long for the window are kept (None: nowhere).
        self.spill_dir = spill_dir
        # The run's usage so far, for a cost budget (None: this agent has no budget).
        self.spending = spending
        # The summarizer's calls since the current compaction was announced: what it cost,
        # for its ledger entry.
        self.summarizing = UsageTotals()
        # The session's hooks (None: it has none, and the loop never asks).
        self.hooks = hooks

    def run(self, loop: Flow[T]) -> T:
        try:
            effect = next(loop)
            while True:
                effect = loop.send(self.handle(effect))
        except StopIteration as stop:
            self.session.flush_counters()
            self.recorder.flush()
            result: T = stop.value
            return result

    def handle(self, effect: Effect) -> Reply:
        """Perform one effect; the answer is of the type the effect declares (mypy checks
        each branch against that declaration through ``_answer``)."""
        match effect:
            case CallModel():
                return _answer(effect, self._call_model(effect))
            case AskPerson():
                return _answer(effect, self.person.ask(effect))
            case ResolvePath():
                return _answer(effect, self.tools.resolve(effect.raw))
            case RunTool():
                return _answer(effect, self._run_tool(effect))
            case CheckEdit():
                return _answer(effect, self._check_edit(effect))
            case Persist():
                self._persist(effect)
                return _answer(effect, None)
            case Record():
                self._record(effect)
                return _answer(effect, None)
            case CountSpending():
                spent = UsageTotals() if self.spending is None else self.spending.totals()
                return _answer(effect, spent)
            case Say():
                self.person.notice(f"seri: {effect.text}")
                return _answer(effect, None)
            case UpdateCounters():
                # Written with the next message, in the same transaction: one fsync, not two.
                self.session.note_counters(effect)
                return _answer(effect, None)
            case SpillText():
                return _answer(effect, self._spill(effect))
            case ShrinkPayloads():
                return _answer(effect, self._shrink(effect))
            case ApplyCompaction():
                return _answer(effect, self._compact(effect))
            case RunHooks():
                return _answer(effect, self._hooks(effect))
            case _:
                assert_never(effect)

    # -- effects -------------------------------------------------------------------------------

    def _call_model(self, effect: CallModel) -> ModelReply | ModelFailed:
        if effect.purpose == "summary" and self.session.changed_elsewhere():
            # The swap would be refused: do not pay for a recap that cannot be stored.
            return ModelFailed(SESSION_CHANGED, session_changed=True)
        person = self.person
        person.model_call_started(effect.purpose)
        try:
            reply = self.model.call(effect)
        finally:
            person.model_call_finished()
        if isinstance(reply, ModelReply) and effect.purpose == "summary":
            summary = events.SummaryCall(usage=reply.usage, finish_reason=reply.finish_reason)
            self._record(Record(summary))
            self.summarizing = self.summarizing.add(reply.usage)
        return reply

    def _run_tool(self, effect: RunTool) -> ToolRun:
        # The call's looks at its file (before, checkpoint, edit, after) read an editor's
        # buffer once between them (seri acp), as one state of the file.
        with self.tools.one_call():
            return self._shown_run(effect)

    def _shown_run(self, effect: RunTool) -> ToolRun:
        person = self.person
        if not person.shows_tools:
            return self._tool_result(effect)
        call, arguments = effect.call, effect.arguments
        # A checkpointed tool's file: a person is shown its change (+N −M).
        spec = spec_of(call.name)
        path = arguments.get(spec.path_args[0]) if spec and spec.checkpointed else None
        before = self.tools.current_text(path) if isinstance(path, str) else None
        person.tool_started(call, arguments)
        run = self._tool_result(effect)
        change = None
        if isinstance(path, str) and not run.is_error:
            change = (before, self.tools.current_text(path))
        person.tool_finished(call, arguments, run, change)
        return run

    def _check_edit(self, effect: CheckEdit) -> ToolRun | None:
        from seri.pure.tools.edit_match import edit_failure, plan_edit

        arguments = effect.arguments
        before = self.tools.current_text(effect.path)
        if before is None or "\ufffd" in before:
            # No file seri would show, or bytes that are not UTF-8 (the tool refuses those
            # in its own words): the call goes on, and the tool says what is wrong.
            return None
        plan = plan_edit(
            before,
            str(arguments.get("old_string", "")),
            str(arguments.get("new_string", "")),
            replace_all=bool(arguments.get("replace_all", False)),
        )
        refused = edit_failure(plan, effect.path)
        if refused is None:
            return None
        run = ToolRun(self.redactor.text(refused), is_error=True)
        if self.person.shows_tools:
            self.person.tool_started(effect.call, arguments)
            self.person.tool_finished(effect.call, arguments, run, None)
        return run

    def _tool_result(self, effect: RunTool) -> ToolRun:
        run = self.tools.run(effect.call, effect.arguments, effect.max_chars)
        return attrs.evolve(run, text=self.redactor.text(run.text))

    def _hooks(self, effect: RunHooks) -> HookDecision:
        if self.hooks is None:
            return NOTHING
        said, runs = self.hooks.answer(effect)
        for run in runs:
            self._record(Record(run))
        return said

    def _persist(self, effect: Persist) -> None:
        self.session.append([self._redacted(m) for m in effect.messages])

    def _record(self, effect: Record) -> None:
        if isinstance(effect.event, history_events.CompactionStart):
            self.summarizing = UsageTotals()
        self.recorder.record(effect.event)
        self.person.recorded(effect.event)

    def _spill(self, effect: SpillText) -> str:
        if self.spill_dir is None:
            return ""
        from seri.io.compaction.spill import keep_text

        # Redacted already (tool results on their way in, stored messages when stored); once
        # more costs little and a spill file is as much storage as the database.
        return keep_text(self.spill_dir, self.redactor.text(effect.text))

    def _shrink(self, effect: ShrinkPayloads) -> bool:
        replacements = [(index, self._redacted(m)) for index, m in effect.replacements]
        return self.session.swap_shrink(effect, replacements)

    def _compact(self, effect: ApplyCompaction) -> bool:
        # Here, not at the top: a run that never compacts never loads the recap's modules.
        from seri.pure.compaction.recap import recap_from_dict, recap_to_dict

        recap_message = self._redacted(effect.recap_message)
        # The summarizer quotes literals: a secret in the history may be in the recap too.
        spent = self.summarizing
        effect = attrs.evolve(
            effect,
            recap=recap_from_dict(self.redactor.value(recap_to_dict(effect.recap))),
            summary_input_tokens=spent.input_tokens,
            summary_output_tokens=spent.output_tokens,
            summary_cost=spent.total_cost,
        )
        return self.session.swap_compaction(effect, recap_message)

    # -- helpers -------------------------------------------------------------------------------

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


def _answer(effect: Request[A], answer: A) -> A:
    """``answer``, typed as ``effect`` declares its answer: a branch of ``handle`` that answered
    with anything else would not type-check."""
    return answer
