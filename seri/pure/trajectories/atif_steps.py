"""The pieces of an ATIF document: a step as it is built and written, and its metrics.

``AtifStep`` is one step (``user``, ``agent`` or ``system``) while its events and messages
arrive, and ``as_dict`` writes it in the schema's order; a tool call, a recorded text, a
system step's one line, and a call's usage as ATIF metrics (``CallTotals`` sums them for
``final_metrics``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.terminal.timestamps import iso_utc
from seri.pure.trajectories import events as event_records
from seri.pure.trajectories import history_events, tool_events


def stamp(seconds: float) -> str | None:
    try:
        return iso_utc(seconds) if math.isfinite(seconds) else None
    except (OverflowError, OSError, ValueError):
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _count(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None else 0


def usage_metrics(usage: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """ATIF metrics of one call's recorded usage, and what ATIF has no field for."""
    if not isinstance(usage, dict) or usage.get("reported") is False:
        return None, {"usage_reported": False}
    metrics: dict[str, Any] = {
        "prompt_tokens": _count(usage.get("input_tokens")),
        "completion_tokens": _count(usage.get("output_tokens")),
        "cached_tokens": _count(usage.get("cached_tokens")),
    }
    cost = _number(usage.get("cost"))
    if cost is not None:
        metrics["cost_usd"] = cost
    extra = {
        key: usage[key]
        for key in ("reasoning_tokens", "cache_write_tokens", "upstream_cost", "provider")
        if usage.get(key) not in (None, "", 0)
    }
    if extra:
        metrics["extra"] = extra
    return metrics, {}


@attrs.define
class CallTotals:
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cost: float = 0.0
    costed: int = 0
    calls: int = 0
    unreported: int = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        metrics, _ = usage_metrics(usage)
        if metrics is None:
            self.unreported += 1
            return
        self.prompt += metrics["prompt_tokens"]
        self.completion += metrics["completion_tokens"]
        self.cached += metrics["cached_tokens"]
        if "cost_usd" in metrics:
            self.cost += metrics["cost_usd"]
            self.costed += 1

    def absorb(self, final: Mapping[str, Any]) -> None:
        """A subagent's final metrics, which count for the parent too."""
        self.prompt += final.get("total_prompt_tokens") or 0
        self.completion += final.get("total_completion_tokens") or 0
        self.cached += final.get("total_cached_tokens") or 0
        extra = final.get("extra") or {}
        self.calls += extra.get("calls", 0)
        self.unreported += extra.get("calls_without_usage", 0)
        if final.get("total_cost_usd") is not None:
            self.cost += final["total_cost_usd"]
            self.costed += extra.get("calls_with_cost", 0)


@attrs.define
class AtifStep:
    source: str
    timestamp: str | None
    message: str = ""
    reasoning: str = ""
    model_name: str | None = None
    calls: list[dict[str, Any]] = attrs.Factory(list)
    results: dict[str, dict[str, Any]] = attrs.Factory(dict)
    loose_results: list[dict[str, Any]] = attrs.Factory(list)
    metrics: dict[str, Any] | None = None
    llm_calls: int | None = None
    extra: dict[str, Any] = attrs.Factory(dict)
    # An agent step made from a model_call whose message has not been seen yet.
    awaiting_message: bool = False

    def result(self, call_id: str) -> dict[str, Any]:
        return self.results.setdefault(call_id, {"source_call_id": call_id})

    def as_dict(self, step_id: int, reasoning_effort: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": step_id}
        if self.timestamp:
            step["timestamp"] = self.timestamp
        step["source"] = self.source
        if self.source == "agent":
            if self.model_name:
                step["model_name"] = self.model_name
            if reasoning_effort not in (None, ""):
                step["reasoning_effort"] = reasoning_effort
        step["message"] = self.message
        if self.source == "agent":
            if self.reasoning:
                step["reasoning_content"] = self.reasoning
            if self.calls:
                step["tool_calls"] = self.calls
        answered = [c["tool_call_id"] for c in self.calls if c["tool_call_id"] in self.results]
        results = [_in_order(self.results[call_id]) for call_id in answered]
        results += self.loose_results
        if results:
            step["observation"] = {"results": results}
        if self.source == "agent":
            if self.metrics is not None:
                step["metrics"] = self.metrics
            if self.llm_calls is not None:
                step["llm_call_count"] = self.llm_calls
        if self.extra:
            step["extra"] = self.extra
        return step


def _in_order(result: dict[str, Any]) -> dict[str, Any]:
    """An observation result with its keys in the schema's order (content before extra)."""
    keys = ("source_call_id", "content", "subagent_trajectory_ref", "extra")
    return {key: result[key] for key in keys if key in result}


def tool_call_of(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """ATIF wants an object; seri keeps the text the model sent, JSON or not."""
    call: dict[str, Any] = {"tool_call_id": call_id, "function_name": name, "arguments": {}}
    if isinstance(arguments, str):
        try:
            parsed = json_text.loads(arguments)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            call["arguments"] = parsed
        else:
            call["extra"] = {"raw_arguments": arguments}
    elif arguments is not None:
        # The recording keeps at most 2 KB of a value: {"elided": true, "originalBytes": N}.
        call["extra"] = {"arguments_not_kept": arguments}
    return call


def recorded_text(value: Any) -> tuple[str, dict[str, Any]]:
    """A recorded text, or a note that the recording kept only its size."""
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and value.get("elided"):
        return f"[{value.get('originalBytes', '?')} bytes, not kept in the recording]", {
            "elided": value
        }
    return "", {}


def system_message(kind: str, body: Mapping[str, Any]) -> str:
    """A short line for a system step (its details are in the step's extra)."""
    if kind == history_events.Compaction.type:
        return (
            f"compaction ({body.get('trigger', '?')}): {body.get('evicted', '?')} messages "
            f"replaced by a recap, estimate {body.get('estimate_before', '?')} -> "
            f"{body.get('estimate_after', '?')} tokens"
        )
    if kind == history_events.Shrink.type:
        return f"shrink ({body.get('trigger', '?')}): {body.get('elided', '?')} payloads elided"
    if kind == event_records.Overflow.type:
        return f"the provider refused the request as too long: {body.get('error', '')}"
    if kind == event_records.RetryEvent.type:
        status = body.get("status") or "connection failure"
        return (
            f"retry {body.get('attempt', '?')} after {status}, in {body.get('delay', '?')} s: "
            f"{body.get('reason', '')}"
        )
    if kind == event_records.OutputBudgetLowered.type:
        key = body.get("key", "max_tokens")
        return f"{key} lowered to {body.get('to', '?')}: {body.get('why', '')}"
    if kind == event_records.ModelSwitch.type:
        return f"model switched to {body.get('model', '?')}"
    if kind == history_events.RuleEvent.type:
        return f"rule {body.get('name', '?')} fired"
    if kind == event_records.HookRun.type:
        return (
            f"hook {body.get('event', '?')} ({body.get('source', '?')}): "
            f"{body.get('decision', '?')}, exit {body.get('exit_code')}"
        )
    if kind == tool_events.McpServer.type:
        ready = (
            f"MCP server {body.get('server', '?')!r} is ready, with {body.get('tools', 0)} tool(s)"
        )
        return str(body.get("detail") or ready)
    return kind.replace("_", " ")
