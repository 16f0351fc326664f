"""Row 7, prompt caching: how much of a 40-turn session's input the provider can read from its
cache, from the request bodies seri really builds.

The session is synthetic but shaped like a real one: 40 tasks, 52 tool rounds (so 92 model
calls), tool results of 1-6 KB, the real frozen system prompt and tool list. Each request body
is built by ``ModelCaller.encoded_body`` (the code path seri sends), once with the default
model (an Anthropic model via OpenRouter) and once as main built it (no markers).

For each request, the cacheable part is the prefix up to the previous request's last
breakpoint, provided its bytes are unchanged (with the tools, which Anthropic puts first); the
part between that and this request's last breakpoint is written to the cache. Input cost uses
Anthropic's multipliers: a cache read costs 0.1 of the input price, a write 1.25.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.table import Row, met

TASKS = 40
TOOL_ROUNDS = 52
READ_PRICE = 0.1
WRITE_PRICE = 1.25
TARGET_SHARE = 0.8


@dataclass(frozen=True)
class CacheFigures:
    requests: int
    with_markers: int
    max_markers: int
    cacheable_share: float
    cost_ratio: float  # input cost without caching / with caching


def _session() -> list[list[object]]:
    """Per task: the messages it adds, as (role, text, tool-call-id) steps."""
    from seri.pure.session.records import Message, ToolCall

    tasks: list[list[object]] = []
    rounds_left = TOOL_ROUNDS
    for task in range(TASKS):
        steps: list[object] = [Message(role="user", text=f"task {task}: " + "please " * 40)]
        rounds = 2 if rounds_left > TASKS - task else 1
        rounds_left -= rounds
        for r in range(rounds):
            call = ToolCall(f"c{task}_{r}", "read_file", json.dumps({"path": f"src/m{task}.py"}))
            steps.append(Message(role="assistant", text="", tool_calls=(call,)))
            size = 1024 * (1 + (task * 7 + r * 3) % 6)
            steps.append(
                Message(role="tool", text="x" * size, tool_call_id=call.id, tool_name="read_file")
            )
        steps.append(Message(role="assistant", text=f"done with task {task}. " * 10))
        tasks.append(steps)
    return tasks


def _bodies(model: str) -> list[dict[str, object]]:
    """Every request body of the session, as seri builds them for ``model``."""
    from seri.pure.agent.effects import CallModel
    from seri.pure.agent.prompt import BASE_PROMPT
    from seri.pure.inputs.settings import Settings
    from seri.pure.session.records import Message
    from seri.runtime.agent.agent import PARENT_TOOLS
    from seri.runtime.provider.model_caller import ModelCaller

    caller = ModelCaller(Settings(model=model), "k" * 12, events=None, tools=PARENT_TOOLS)  # type: ignore[arg-type]
    system = BASE_PROMPT.format(project="/home/ana/src/shop")
    history: list[Message] = []
    bodies = []
    for steps in _session():
        for step in steps:
            assert isinstance(step, Message)
            if step.role == "assistant":
                # The model's answer: the request before it is what seri sent.
                effect = CallModel(tuple(history), "turn", system)
                bodies.append(json.loads(caller.encoded_body(effect)))
            history.append(step)
    return bodies


def _marked(message: dict[str, object]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and "cache_control" in p for p in content
    )


def _size(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def figures(model: str) -> CacheFigures:
    bodies = _bodies(model)
    total = read = write = 0
    previous_end = -1
    previous: list[object] = []
    markers = [sum(map(_marked, b["messages"])) for b in bodies]  # type: ignore[arg-type]
    for body in bodies:
        messages: list[dict[str, object]] = body["messages"]  # type: ignore[assignment]
        tools = _size(body.get("tools", []))
        sizes = [_size(m) for m in messages]
        total += tools + sum(sizes)
        marks = [i for i, m in enumerate(messages) if _marked(m)]
        end = marks[-1] if marks else -1
        hit = -1
        if previous_end >= 0 and messages[:previous_end] == previous[:previous_end]:
            hit = previous_end
        cached = tools + sum(sizes[: hit + 1]) if hit >= 0 else 0
        written = (tools if hit < 0 and end >= 0 else 0) + sum(sizes[hit + 1 : end + 1])
        read += cached
        write += written
        previous_end, previous = end, list(messages)
    plain = total
    cached_cost = read * READ_PRICE + write * WRITE_PRICE + (total - read - write)
    return CacheFigures(
        requests=len(bodies),
        with_markers=sum(1 for n in markers if n),
        max_markers=max(markers),
        cacheable_share=read / total if total else 0.0,
        cost_ratio=plain / cached_cost if cached_cost else 1.0,
    )


def run() -> list[Row]:
    from seri.pure.inputs.settings import DEFAULT_MODEL

    now = figures(DEFAULT_MODEL)
    return [
        Row(
            "7",
            f"prompt cache, 40-turn session on {DEFAULT_MODEL} ({now.requests} calls)",
            f"{now.cacheable_share:.0%} of input cacheable; markers on {now.with_markers} of "
            f"{now.requests} requests (at most {now.max_markers})",
            f"without markers: 0% cacheable; input costs {now.cost_ratio:.1f}x as much",
            f">= {TARGET_SHARE:.0%}, <= 4 markers",
            met(now.cacheable_share >= TARGET_SHARE and now.max_markers <= 4),
        )
    ]


if __name__ == "__main__":
    from seri.pure.inputs.settings import DEFAULT_MODEL

    print(figures(DEFAULT_MODEL))
    print("unmarked model:", figures("openai/gpt-4o"))
