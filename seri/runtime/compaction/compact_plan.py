"""``seri compact --dry-run``: what a compaction would do, shown without doing it."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from seri.pure.compaction.tokens import messages_chars, sized_tokens
from seri.pure.inputs.errors import EXIT_OK
from seri.pure.provider.token_prior import prior_scale
from seri.pure.trajectories.json_lines import json_line

if TYPE_CHECKING:
    from seri.pure.compaction.compaction_plan import CompactionPlan
    from seri.pure.session.records import Message
    from seri.runtime.compaction.shell_compaction import ShellCompaction


def show_plan(job: ShellCompaction, focus: str, *, as_json: bool) -> int:
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.agent.effects import CallModel
    from seri.pure.compaction.compaction_plan import plan_compaction
    from seri.pure.compaction.summarizer_fold import summary_budget
    from seri.runtime.trajectories.run_events import RunEvents

    state, conversation = job.read()
    # A dry run records nothing and is watched by no one.
    events = RunEvents(Recorder(job.store, job.session_id, job.redactor, enabled=False))
    agent = job.agent(state, events)
    setup = agent.setup
    caller = job.model(events)
    window = setup.window(conversation.token_scale, conversation.learned_window)
    stored = conversation.history
    sent = sent_history(job, stored, window.result_cap_chars)
    # Priced as the real compaction prices it (an unmeasured session by its own text).
    if not window.measured:
        prior = prior_scale(sent, window.overhead_local)
        window = window.priced(sized_tokens(sent) + window.overhead_local, prior)
    chars = messages_chars(sent) + window.overhead_chars
    plan = plan_compaction(
        sent,
        conversation.recap,
        window=window,
        elide_bytes=setup.elide_bytes,
        focus=focus,
        project=setup.project,
        pins=conversation.pins,
        estimate_before=max(conversation.last_input_tokens, -(-chars // 4)),
        stored=stored,
    )
    first = None
    if plan.chunks:
        answer = summary_budget(setup.budget, window).lowered
        first = caller.body(CallModel(plan.chunks[0].request, "summary", max_tokens=answer))
    report = plan_report(job.session_id, plan, first)
    if as_json:
        sys.stdout.write(json_line(report, compact=False))
    else:
        sys.stdout.write(plan_text(report))
    return EXIT_OK


def sent_history(job: ShellCompaction, stored: Sequence[Message], cap: int) -> list[Message]:
    """The history as a compaction would see it: stored tool results over the window's cap
    shown cut, naming the spill file the compaction would keep them in (not written here)."""
    from seri.io.compaction.spill import SPILL_DIR, spill_path
    from seri.pure.compaction.result_cap import cap_result, needs_cap

    spill_dir = job.profile.root / SPILL_DIR
    sent = []
    for message in stored:
        shown = message
        if message.role == "tool" and needs_cap(message.text, cap):
            where = str(spill_path(spill_dir, job.redactor.text(message.text)))
            shown = attrs.evolve(message, text=cap_result(message.text, cap, where))
        sent.append(shown)
    return sent


def plan_report(
    session_id: str, plan: CompactionPlan, first_request: dict[str, Any] | None
) -> dict[str, Any]:
    window = plan.window
    cut = plan.cut
    return {
        "session": session_id,
        "context_window": window.tokens,
        "token_scale": round(window.scale, 3),
        "token_scale_measured": window.measured,
        "keep_tokens": window.keep_tokens,
        # Provider tokens per UTF-8 bytes / 4 that the summarizer requests are planned for.
        "token_density": plan.density,
        "estimate_before": plan.estimate_before,
        "estimate_after": plan.estimate_after,
        "cut": None
        if cut is None
        else {"evicted": cut.evicted_count, "kept_tokens": cut.kept_tokens},
        "chunks": [
            {
                "first": c.start,
                "last": c.end - 1,
                "messages": c.end - c.start,
                "tokens": c.local_tokens,
            }
            for c in plan.chunks
        ],
        # Never measured: the summarizer requests for each density its first reply may show.
        "requests_by_density": [
            {"density": density, "requests": requests, "would_fail": fails or None}
            for density, requests, fails in plan.by_density
        ],
        "shrink": [
            {
                "message": p.index,
                "payload": "result" if p.call is None else "arguments",
                "chars": len(p.text),
            }
            for p in plan.shrink
        ],
        "summarizer_request": first_request,
        "would_fail": plan.would_fail or None,
    }


def plan_text(report: dict[str, Any]) -> str:
    scale = report["token_scale"]
    measured = "measured" if report["token_scale_measured"] else "not measured yet"
    lines = [
        f"session {report['session']}: window {report['context_window']:,} tokens, "
        f"token scale {scale} ({measured}), keep about {report['keep_tokens']:,} tokens",
        f"estimate before: {report['estimate_before']:,}; after: about "
        f"{report['estimate_after']:,} (characters / 4, system prompt and tools included)",
    ]
    cut = report["cut"]
    if cut is None:
        lines.append("cut: none (no safe cut evicts four messages); nothing to summarize")
    else:
        lines.append(
            f"cut: {cut['evicted']} messages evicted, the rest kept ({cut['kept_tokens']:,} tokens)"
        )
        chunks = report["chunks"]
        density = report["token_density"]
        lines.append(
            f"summarizer: {len(chunks)} request(s) for a provider counting {density:g} token(s) "
            "per 4 bytes of UTF-8, oldest first:"
        )
        lines.extend(
            f"  {n}. messages {c['first']}–{c['last']} ({c['messages']}), {c['tokens']:,} tokens"
            for n, c in enumerate(chunks, 1)
        )
        by_density = report["requests_by_density"]
        if len(by_density) > 1:
            # The first request is sized for the densest; its reply says which line follows.
            lines.append(
                "  not measured yet: the first request is sized for the densest tokenizer; "
                "requests in all, by the density its reply shows: "
                + ", ".join(f"{row['density']:g}: {row['requests']}" for row in by_density)
            )
    if report["shrink"]:
        lines.append(f"then the shrink ladder would elide {len(report['shrink'])} payload(s)")
    if report["would_fail"]:
        failing = [row["density"] for row in report["requests_by_density"] if row["would_fail"]]
        if len(failing) < len(report["requests_by_density"]):
            # Not measured yet: the fold's last reply measures the scale the result is judged at.
            lines.append(
                f"would fail (exit 1) if the provider counts {min(failing):g} or more token(s) "
                f"per 4 bytes of UTF-8: {report['would_fail']}"
            )
        else:
            lines.append(f"would fail (exit 1): {report['would_fail']}")
    request = report["summarizer_request"]
    if request is not None:
        lines.append("\nthe first summarizer request, exactly:")
        lines.append(json.dumps(request, ensure_ascii=False, indent=2))
    return "\n".join(lines) + "\n"
