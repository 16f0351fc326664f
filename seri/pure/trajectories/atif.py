"""seri's recordings as ATIF, the Agent Trajectory Interchange Format (Harbor RFC 0001, v1.8).

One document per run (one invocation of seri on a session): ``session_id`` is seri's
session, ``trajectory_id`` the run, and the runs of a session chain through
``continued_trajectory_ref``. The run's recorded events are the skeleton and the session's
stored messages give the words:

- every ``model_call`` is an ``agent`` step with its metrics (tokens, cached tokens, cost);
  the assistant message stored right after it gives the step its text, reasoning and tool
  calls; a message that is no longer stored (a compaction evicted it, a rewind removed it)
  leaves the step with what the recording kept (the calls, results cut to 2 KB);
- tool results and denials are the ``observation`` of the step that made the call, with
  the details seri recorded (edits, checks, checkpoints, approvals) in the result's
  ``extra``; the stored tool message, when there is one, is the result's content;
- a person's message is a ``user`` step; a recap, a fired rule, a compaction, a shrink,
  an overflow, a retry, a lowered output budget and a model switch are ``system`` steps;
- a subagent is embedded in ``subagent_trajectories`` (``trajectory_id`` = its session)
  and named by the ``task`` call's result (``subagent_trajectory_ref``);
- ``final_metrics`` counts every billed call: the run's own, its summarizer calls and its
  subagents' (ATIF's ``total_*`` are meant as sums over steps; summarizer calls have no
  step of their own, which ``notes`` says when there were any).

Here: the document of a run or of unrecorded messages, and the embedding of subagents.
What is handed in is in ``atif_recordings``; the steps are built from stored messages by
``atif_timeline`` and from recorded events by ``atif_events``, of the pieces in
``atif_steps``.

Messages a session holds from before its first recorded run (an imported session, or one
recorded with recording off) form one more document, ``trajectory_id`` = the session id,
without metrics. Nothing here reads anything: the caller hands in what was stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seri.pure.trajectories import events as event_records
from seri.pure.trajectories.atif_events import EventSteps
from seri.pure.trajectories.atif_recordings import (
    RecordedEvent,
    RunRecording,
    SessionMessages,
    StoredMessage,
    UnrecordedMessages,
    json_object,
    split_spans,
)
from seri.pure.trajectories.atif_steps import stamp
from seri.pure.trajectories.atif_timeline import DocumentContext

SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "seri"


class _Builder(EventSteps):
    """Builds one document's steps, embedding the documents of the subagents it started."""

    def _embed(self, result: dict[str, Any], child_id: str) -> None:
        # A result inside a subagent that names that subagent or a run enclosing it (a tool's
        # text can say "[subagent child0]") is words, not a run to embed: embedding it again
        # would never end.
        if self.context.encloses(child_id):
            return
        if child_id not in self.embedded:
            messages = self.subagents.get(child_id)
            document = _document(
                self.context.for_child(child_id),
                tuple(self.spans.get(child_id, ())),
                messages.messages if messages else (),
                self.subagents,
            )
            if document is None:
                self._count_unshown(child_id)
                return
            self.embedded.add(child_id)
            self.children.append(document)
            final = document.get("final_metrics")
            if final:
                self.totals.absorb(final)
        result["subagent_trajectory_ref"] = [
            {"trajectory_id": child_id, "session_id": self.context.session_id}
        ]

    def _count_unshown(self, child_id: str) -> None:
        """A subagent with no step to show is not embedded; the calls billed inside its span
        (a summarizer's, say) still count in this run's totals, once."""
        if child_id in self.unshown:
            return
        self.unshown.add(child_id)
        for event in self.spans.get(child_id, ()):
            if event.type in (event_records.ModelCall.type, event_records.SummaryCall.type):
                self.totals.add(json_object(event.body).get("usage"))


def _document(
    context: DocumentContext,
    events: Sequence[RecordedEvent],
    messages: Sequence[StoredMessage],
    subagents: Mapping[str, SessionMessages],
) -> dict[str, Any] | None:
    own, spans = split_spans(events)
    builder = _Builder(subagents, spans, context)
    builder.feed(own, messages)
    if not builder.steps:
        return None
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": context.session_id,
        "trajectory_id": context.trajectory_id,
        "agent": context.agent,
        "steps": [
            step.as_dict(index, context.reasoning_effort)
            for index, step in enumerate(builder.steps, start=1)
        ],
    }
    notes = builder.notes()
    if notes:
        document["notes"] = notes
    document["final_metrics"] = builder.final_metrics()
    if context.continued_by:
        document["continued_trajectory_ref"] = context.continued_by
    extra = dict(context.extra)
    if event_records.ContextWindow.type in builder.extra:
        extra["context_window"] = builder.extra["context_window"]
    document["extra"] = extra
    if builder.children:
        document["subagent_trajectories"] = builder.children
    return document


def run_trajectory(run: RunRecording) -> dict[str, Any] | None:
    """The ATIF document of one recorded run (None when it holds nothing to show)."""
    header = json_object(run.header)
    version = header.get("seri_version")
    model = header.get("model")
    agent: dict[str, Any] = {
        "name": AGENT_NAME,
        "version": version if isinstance(version, str) and version else "unknown",
    }
    if isinstance(model, str) and model:
        agent["model_name"] = model
    agent["extra"] = header
    effort = header.get("reasoning_effort")
    context = DocumentContext(
        session_id=run.session_id,
        trajectory_id=run.run_id,
        agent=agent,
        reasoning_effort=effort if isinstance(effort, str | int | float) else None,
        extra={
            "seri_session": run.session_id,
            "seri_run": run.run_id,
            "recorded": True,
            "started": stamp(run.started),
        },
        continued_by=run.continued_by,
    )
    subagents = {s.session_id: s for s in run.subagents}
    return _document(context, run.events, run.messages, subagents)


def unrecorded_trajectory(part: UnrecordedMessages, exporter_version: str) -> dict[str, Any] | None:
    """The ATIF document of a session's messages that no recorded run covers."""
    agent: dict[str, Any] = {
        "name": AGENT_NAME,
        # Imported sessions were written by the older release: which version is not known.
        "version": "unknown" if part.imported else exporter_version,
    }
    if part.model:
        agent["model_name"] = part.model
    agent["extra"] = {"project": part.project, "imported": part.imported}
    context = DocumentContext(
        session_id=part.session_id,
        trajectory_id=part.session_id,
        agent=agent,
        reasoning_effort=None,
        extra={"seri_session": part.session_id, "recorded": False},
        continued_by=part.continued_by,
    )
    subagents = {s.session_id: s for s in part.subagents}
    return _document(context, (), part.messages, subagents)
