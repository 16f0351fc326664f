"""Row 6b, the fold: compacting a 300k-token history that no single summarizer request holds.

The history is real: the four transcripts in tests/fixtures/real-sessions, parsed as seri
imports them and laid end to end (the longest repeated) until it holds 300,000 tokens by
seri's count. ``compact()`` runs on it exactly as the loop runs it, answered by an
in-process model that counts ``ratio`` times denser than ceil(chars/4), refuses what is over
its window and bills what it accepts, so the scale is learned as it would be. Measured: the
summarizer calls, the bytes they send (each request's body as JSON), whether every one fit,
and the fold's own CPU time (``time.process_time``; the model's answers cost nothing here).

The per-call decision (the cap check, the estimate, the trigger and the anti-thrash rule,
everything ``send_turn`` does before sending) is timed at 100 and 100,000 messages: it must
not grow with the history.

    python -m scripts.bench.fold      # prints the table, writes bench-results/fold.md
"""

from __future__ import annotations

import gzip
import json
import math
import time
from collections.abc import Generator, Sequence
from typing import Any

from scripts.bench.common import REPO, RESULTS, log
from scripts.bench.table import Row, met

TARGET_TOKENS = 300_000
CASES = ((32_000, 1.0), (32_000, 3.0), (128_000, 1.0), (128_000, 3.0))
SESSIONS = REPO / "tests" / "fixtures" / "real-sessions"
INNER = 20_000


def real_history(target_tokens: int = TARGET_TOKENS) -> list[Any]:
    """The real sessions' messages end to end, until ``target_tokens`` by seri's count."""
    from seri.pure.compaction.tokens import estimate_tokens, message_chars
    from seri.pure.session.legacy import parse_legacy_file

    sessions = []
    for path in sorted(SESSIONS.glob("*.jsonl.gz")):
        parsed = parse_legacy_file(path.name, gzip.decompress(path.read_bytes()))
        sessions.append([m for m in parsed.messages if m.role != "system"])
    history: list[Any] = []
    chars = 0
    while True:
        for messages in sessions:
            for message in messages:
                # Stop at the first user message past the target: a whole turn ends there.
                if message.role == "user" and estimate_tokens(chars) >= target_tokens:
                    return history
                history.append(message)
                chars += message_chars(message)


class _Model:
    """Answers summarizer requests like a provider ``ratio`` times denser than seri."""

    def __init__(self, window: int, ratio: float) -> None:
        self.window = window
        self.ratio = ratio
        self.calls = 0
        self.refused = 0
        self.bytes = 0
        self.transcripts: list[str] = []

    def answer(self, effect: Any) -> Any:
        from seri.pure.agent.effects import ApplyCompaction, CallModel, ModelFailed, ModelReply
        from seri.pure.compaction.fold import request_tokens
        from seri.pure.provider.provider_failure import OverflowNumbers
        from seri.pure.session.records import Message, Usage

        if isinstance(effect, ApplyCompaction):
            return True
        if not isinstance(effect, CallModel):
            return None
        self.calls += 1
        body = [{"role": m.role, "content": m.text} for m in effect.messages]
        self.bytes += len(json.dumps(body, ensure_ascii=False).encode())
        tokens = math.ceil(request_tokens(effect.messages) * self.ratio) + 9
        if tokens > self.window:
            self.refused += 1
            numbers = OverflowNumbers(limit=self.window, input_tokens=tokens)
            return ModelFailed("too long", overflow=True, overflow_numbers=numbers)
        self.transcripts.append(effect.messages[-1].text)
        answer = {"goal": "the goal", "progress": [f"step {self.calls}"], "next_steps": ["go on"]}
        return ModelReply(Message(role="assistant", text=json.dumps(answer)), Usage(tokens))


def _drive(generator: Generator[Any, Any, Any], model: _Model) -> Any:
    try:
        effect = next(generator)
        while True:
            effect = generator.send(model.answer(effect))
    except StopIteration as stop:
        return stop.value


def fold_case(history: Sequence[Any], window: int, ratio: float) -> dict[str, Any]:
    from seri.pure.compaction.compaction import compact
    from seri.pure.compaction.compaction_outcome import Compacted
    from seri.pure.compaction.tokens import estimate_tokens, messages_chars
    from seri.pure.compaction.window import Window

    model = _Model(window, ratio)
    start = time.process_time()
    outcome = _drive(
        compact(
            history,
            None,
            window=Window.of(window, 20_000, overhead_chars=5_500),
            elide_bytes=4_096,
            trigger="auto",
        ),
        model,
    )
    seconds = time.process_time() - start
    assert isinstance(outcome, Compacted), outcome
    seen = "".join(model.transcripts)
    unseen = sum(
        1 for m in history[: outcome.evicted] if m.role == "user" and m.text[:60] not in seen
    )
    return {
        "unseen": unseen,
        "window": window,
        "ratio": ratio,
        "tokens": estimate_tokens(messages_chars(history)),
        "messages": len(history),
        "evicted": outcome.evicted,
        "calls": model.calls,
        "refused": model.refused,
        "bytes": model.bytes,
        "cpu": seconds,
        "after": estimate_tokens(messages_chars(outcome.history)),
    }


def decision_seconds(size: int) -> float:
    """CPU time of one call's compaction decision with ``size`` messages of history."""
    from seri.pure.agent.task_loop import TaskLoop
    from seri.pure.agent.task_records import TaskSetup, conversation_of
    from seri.pure.compaction.tokens import should_compact
    from seri.pure.permissions.permission_policy import Policy
    from seri.pure.session.records import Message
    from seri.pure.tools.tool_specs import select_specs

    history = [
        Message(role="user" if n % 2 == 0 else "assistant", text=f"message {n} " * 20)
        for n in range(size)
    ]
    setup = TaskSetup(
        system_prompt="You are seri.",
        max_turns=500,
        context_window=128_000,
        keep_tokens=20_000,
        elide_bytes=4_096,
        policy=Policy(),
        interactive=False,
        tools=select_specs(("read_file",)),
        tool_chars=4_700,
    )
    loop = TaskLoop(setup, conversation_of(history, None, 0))
    _drive_nothing(loop.cap_history())

    def decide() -> bool:
        _drive_nothing(loop.cap_history())
        grown_enough = loop.grown is None or loop.grown >= loop.window.keep_local
        return should_compact(loop.estimate(), loop.window.tokens) and grown_enough

    start = time.process_time()
    for _ in range(INNER):
        decide()
    return (time.process_time() - start) / INNER


def _drive_nothing(generator: Generator[Any, Any, Any]) -> None:
    for _effect in generator:
        raise AssertionError("a capped history asks for nothing more")


def run() -> list[Row]:
    log(f"fold: a {TARGET_TOKENS:,}-token history from the real sessions")
    history = real_history()
    rows = []
    for window, ratio in CASES:
        case = fold_case(history, window, ratio)
        rows.append(
            Row(
                "6b",
                f"fold of {case['tokens']:,} tokens ({case['messages']:,} messages) at a "
                f"{window // 1000}k window, tokenizer {ratio:g}x",
                f"{case['calls']} summarizer calls ({case['refused']} refused), "
                f"{case['bytes'] / 1e6:.2f} MB sent, {case['cpu'] * 1e3:.0f} ms CPU; "
                f"history after: {case['after']:,} tokens",
                f"{case['evicted']:,} messages evicted; user messages the summarizer never "
                f"saw: {case['unseen']}",
                "every request fits, every evicted user message seen",
                met(case["refused"] == 0 and case["unseen"] == 0),
            )
        )
    small, big = decision_seconds(100), decision_seconds(100_000)
    rows.append(
        Row(
            "6b",
            "per-call decision (cap check, estimate, trigger, anti-thrash), 100 vs 100,000",
            f"100: {small * 1e6:.2f} µs; 100k: {big * 1e6:.2f} µs (×{big / small:.2f})",
            "—",
            "flat (100k ≤ 1.5× 100)",
            met(big <= 1.5 * small),
        )
    )
    return rows


def main() -> None:
    from scripts.bench.table import render_markdown, render_text

    rows = run()
    print(render_text(rows))
    RESULTS.mkdir(exist_ok=True)
    title = "The fold on a 300k-token history, and the per-call decision"
    (RESULTS / "fold.md").write_text(render_markdown(rows, title), encoding="utf-8")


if __name__ == "__main__":
    main()
