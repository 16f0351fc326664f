"""The recorded events of one ATIF document as steps, facts of steps, and final metrics.

A ``model_call`` opens an ``agent`` step with its metrics; tool calls, results and denials,
and the details of a running call (edits, checks, checkpoints, hooks, approvals) go to the
step that made the call; a compaction, a shrink, a fired rule, a retry and the like are
``system`` steps; summarizer calls, task ends and the run's usage are summed or kept for
``final_metrics`` and the document's ``notes``.
"""

from __future__ import annotations

from typing import Any

from seri.pure.trajectories import events as event_records
from seri.pure.trajectories import history_events, tool_events
from seri.pure.trajectories.atif_steps import (
    AtifStep,
    CallTotals,
    recorded_text,
    stamp,
    system_message,
    usage_metrics,
)
from seri.pure.trajectories.atif_timeline import Timeline

# Events whose facts belong to the tool call that was running when they were recorded.
_CALL_DETAILS = frozenset(
    {
        tool_events.Edit.type,
        tool_events.Check.type,
        tool_events.CheckpointEvent.type,
        tool_events.MemoryStaged.type,
    }
)
# Events that become no step: they are summed, or kept in the document's extra.
_FOLDED = frozenset(
    {
        event_records.SummaryCall.type,
        event_records.ContextWindow.type,
        event_records.TurnEnd.type,
        event_records.RunUsage.type,
    }
)


class EventSteps(Timeline):
    """The steps, facts and totals a document's recorded events make."""

    # -- events --------------------------------------------------------------------------

    def _event(self, kind: str, at: float, body: dict[str, Any]) -> None:
        when = stamp(at)
        if kind == event_records.ModelCall.type:
            self._model_call(body, when)
        elif kind == tool_events.ToolCallEvent.type:
            self._tool_call_event(body, when)
        elif kind in (tool_events.ToolResult.type, tool_events.Denial.type):
            self._tool_result_event(kind, body)
        elif kind == tool_events.SessionRuleEvent.type:
            step = self.call_steps.get(str(body.get("id")))
            if step is not None:
                step.result(str(body.get("id"))).setdefault("extra", {})["approved_always"] = (
                    body.get("rules")
                )
        elif kind in _CALL_DETAILS:
            step = self.call_steps.get(self.running_call)
            if step is not None:
                step.result(self.running_call).setdefault("extra", {})[kind] = body
        elif kind == event_records.HookRun.type and self.running_call in self.call_steps:
            # A PreToolUse or PostToolUse hook: a fact of the call it ran for.
            step = self.call_steps[self.running_call]
            facts = step.result(self.running_call).setdefault("extra", {})
            facts.setdefault(kind, []).append(body)
        elif kind == tool_events.McpServer.type and self.running_call in self.call_steps:
            # Noticed on a call to the server (it died on it, say): that call's facts.
            step = self.call_steps[self.running_call]
            facts = step.result(self.running_call).setdefault("extra", {})
            facts.setdefault(kind, []).append(body)
        elif kind == tool_events.SubagentStart.type:
            self._subagent_start(body)
        elif kind == tool_events.SubagentEnd.type:
            self._subagent_end(body)
        elif kind in _FOLDED:
            self._folded(kind, body)
        elif kind == history_events.CompactionStart.type:
            self.compaction_announced = {"timestamp": when, **body}
        else:
            self._close_agent_step()
            self.current = None
            extra: dict[str, Any] = {"event": kind, **body}
            if kind == history_events.Compaction.type and self.summary_calls:
                extra["summarizer"] = self._summarizer_so_far()
            if kind == history_events.Compaction.type and self.compaction_announced:
                extra["announced"], self.compaction_announced = self.compaction_announced, None
            self._new("system", when, message=system_message(kind, body), extra=extra)

    def _model_call(self, body: dict[str, Any], when: str | None) -> None:
        self._close_agent_step()
        usage = body.get("usage")
        self.totals.add(usage)
        metrics, extra = usage_metrics(usage)
        for key in ("finish_reason", "generation_id", "refusal"):
            if body.get(key) not in (None, ""):
                extra[key] = body[key]
        model = body.get("model")
        self.current = self._new(
            "agent",
            when,
            model_name=model if isinstance(model, str) and model else None,
            metrics=metrics,
            llm_calls=1,
            extra=extra,
            awaiting_message=True,
        )

    def _tool_call_event(self, body: dict[str, Any], when: str | None) -> None:
        call_id = str(body.get("id", ""))
        self.running_call = call_id
        step = self.current
        if step is None or step.source != "agent":
            step = self._new("agent", when, extra={"message_stored": False})
            self.current = step
        if step.awaiting_message:
            # The assistant message is gone: the recording is all that is left of it.
            self._close_agent_step()
        self._add_call(step, call_id, str(body.get("name", "")), body.get("arguments"))

    def _tool_result_event(self, kind: str, body: dict[str, Any]) -> None:
        call_id = str(body.get("id", ""))
        step = self.call_steps.get(call_id)
        if step is None:
            # Its call is not in this document (nor in the recording): kept as a loose result.
            self._close_agent_step()
            self.current = None
            result: dict[str, Any] = {"extra": {"tool_call_id": call_id}}
            step = self._new("system", None, message=f"result of tool call {call_id}")
            step.loose_results.append(result)
        else:
            result = step.result(call_id)
        extra = result.setdefault("extra", {})
        if kind == tool_events.Denial.type:
            extra["denial"] = {k: body[k] for k in ("rule", "reason", "by") if k in body}
            result.setdefault("content", f"denied: {body.get('reason', '')}")
            return
        for key in ("ok", "interrupted", "bytes", "error"):
            if key in body:
                extra[key] = body[key]
        text, notes = recorded_text(body.get("text", body.get("error")))
        extra.update(notes)
        if "content" not in result:
            result["content"] = text

    def _subagent_start(self, body: dict[str, Any]) -> None:
        child = body.get("child")
        if not isinstance(child, str):
            return
        step = self.call_steps.get(self.running_call)
        if step is not None:
            result = step.result(self.running_call)
        else:
            # The call that started it is not recorded: the subagent is named by a step alone.
            result = {"extra": {"subagent_session": child}}
            holder = AtifStep("system", None, message=f"subagent {child}", loose_results=[result])
            self._close_agent_step()
            self.current = None
            self._embed(result, child)
            if "subagent_trajectory_ref" in result:
                self.steps.append(holder)
            return
        self._embed(result, child)
        if body.get("description"):
            result.setdefault("extra", {})["subagent_description"] = body["description"]

    def _subagent_end(self, body: dict[str, Any]) -> None:
        step = self.call_steps.get(self.running_call)
        if step is not None:
            ended = {k: body[k] for k in ("child", "status", "turns") if k in body}
            step.result(self.running_call).setdefault("extra", {})["subagent"] = ended

    def _folded(self, kind: str, body: dict[str, Any]) -> None:
        if kind == event_records.SummaryCall.type:
            self.summary_calls += 1
            self.totals.add(body.get("usage"))
            self.summarizer.add(body.get("usage"))
        elif kind == event_records.TurnEnd.type:
            self.tasks.append(body)
        else:
            self.extra[kind] = body

    def _summarizer_so_far(self) -> dict[str, Any]:
        used = self.summarizer
        self.summarizer = CallTotals()
        summary: dict[str, Any] = {
            "calls": used.calls,
            "prompt_tokens": used.prompt,
            "completion_tokens": used.completion,
        }
        if used.costed:
            summary["cost_usd"] = used.cost
        return summary

    # -- the end -------------------------------------------------------------------------

    def final_metrics(self) -> dict[str, Any]:
        totals = self.totals
        if not totals.calls and not self.tasks:
            # Nothing was recorded: no count of tokens is known (which is not zero tokens).
            return {"total_steps": len(self.steps)}
        final: dict[str, Any] = {
            "total_prompt_tokens": totals.prompt,
            "total_completion_tokens": totals.completion,
            "total_cached_tokens": totals.cached,
        }
        if totals.costed:
            final["total_cost_usd"] = totals.cost
        final["total_steps"] = len(self.steps)
        extra: dict[str, Any] = {
            "calls": totals.calls,
            "calls_with_cost": totals.costed,
            "calls_without_usage": totals.unreported,
            "summary_calls": self.summary_calls,
        }
        if self.tasks:
            extra["status"] = self.tasks[-1].get("status")
            extra["tasks"] = self.tasks
        elif totals.calls:
            extra["status"] = "unfinished"  # the run ended before its task did (killed)
        if event_records.RunUsage.type in self.extra:
            extra["run_usage"] = self.extra["run_usage"]
        final["extra"] = extra
        return final

    def notes(self) -> str | None:
        said = []
        if self.unmatched_calls:
            said.append(
                f"{self.unmatched_calls} agent steps have no stored message (a compaction "
                "evicted it or a rewind removed it): they carry the recorded tool calls, results "
                "(cut to 2 KB) and metrics"
            )
        if self.summary_calls:
            said.append(
                f"final_metrics includes {self.summary_calls} compaction summarizer calls, "
                "which have no step of their own (see the compaction steps' extra.summarizer)"
            )
        if self.children:
            said.append("final_metrics includes the embedded subagents' calls")
        return "; ".join(said) + "." if said else None
