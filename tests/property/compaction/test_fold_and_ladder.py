"""Properties of compaction's new mechanisms: the window's shares, the fold, the shrink ladder,
the cut tool result and the bounded recap.

The compaction generator is driven here the way the interpreter drives it: each effect gets the
answer its type asks for (a summarizer reply, True for the swap). Nothing of seri is replaced.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from seri.pure.agent.effects import (
    ApplyCompaction,
    CallModel,
    ModelFailed,
    ModelReply,
    Record,
    ShrinkPayloads,
    SpillText,
    UpdateCounters,
)
from seri.pure.agent.task_records import Conversation, TaskSetup
from seri.pure.agent.turn import compact_on_demand
from seri.pure.compaction.compaction import compact
from seri.pure.compaction.compaction_outcome import NOT_ENOUGH_HISTORY, Compacted, NotCompacted, Why
from seri.pure.compaction.fold import MIN_ENTRY_CHARS, next_chunk, request_tokens
from seri.pure.compaction.recap import Recap
from seri.pure.compaction.recap_paths import paths_touched
from seri.pure.compaction.recap_rendering import render_recap
from seri.pure.compaction.result_cap import cap_result, needs_cap
from seri.pure.compaction.shrink import is_elided, payloads, plan_shrink, saving, with_elided
from seri.pure.compaction.summarizer_request import summarizer_messages
from seri.pure.compaction.tokens import estimate_tokens, messages_chars
from seri.pure.compaction.window import (
    MAX_SCALE,
    MIN_RESULT_CHARS,
    RESULT_BYTE_CAP,
    Window,
    refused_density,
)
from seri.pure.permissions.permission_policy import Policy
from seri.pure.provider.provider_failure import OverflowNumbers
from seri.pure.session.records import Message, ToolCall, Usage
from tests.drive_effects import drive
from tests.property.strategies import histories_with_payloads, texts

# --- histories -------------------------------------------------------------------------------


def pairs_intact(history: list[Message]) -> bool:
    """Every tool result follows its call's assistant message (or another result of it)."""
    open_calls: set[str] = set()
    for message in history:
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                return False
            continue
        open_calls = {call.id for call in message.tool_calls}
    return True


windows = st.builds(
    Window.of,
    st.sampled_from([8_000, 16_000, 32_000, 64_000, 128_000]),
    st.sampled_from([2_000, 20_000]),
    overhead_chars=st.integers(0, 8_000),
    max_tokens=st.none() | st.integers(256, 8_192),
    scale=st.sampled_from([0.0, 1.0, 1.7, 3.0]),
)

# --- the window ------------------------------------------------------------------------------


@given(windows)
def test_the_windows_shares_are_sane(window: Window) -> None:
    assert 1.0 <= window.scale <= MAX_SCALE
    assert 1 <= window.keep_local <= window.local(window.tokens // 4) + 1
    assert MIN_RESULT_CHARS <= window.result_cap_chars <= RESULT_BYTE_CAP
    assert window.history_target_local <= max(1, window.request_room_local)
    assert window.summary_room(MAX_SCALE) >= 1


@given(windows, st.integers(1, 100_000), st.floats(1.0, 12.0), st.integers(1_000, 200_000))
def test_a_refusal_never_lets_the_next_request_grow(
    window: Window, local: int, true_scale: float, true_limit: int
) -> None:
    """Whatever the provider's real density and window: after it refused a request of
    ``local`` tokens, stating its numbers, the next one may hold less than the refused one."""
    prompt = math.ceil(local * true_scale)
    assume(prompt > true_limit)  # it really was too long
    numbers = OverflowNumbers(limit=true_limit, input_tokens=prompt)
    sized_for = window.scale if window.measured else max(window.scale, 4.0)
    after = window.refused(numbers, local, sized_for=sized_for)
    assert after.tokens <= window.tokens
    # The fold's next request: sized by the density the refusal shows (or twice the last).
    assert after.summary_room(refused_density(sized_for, prompt, local)) < local
    # A refusal that states nothing: never assumed less dense than the request was sized for,
    # and twice as dense when the request was within what that density allowed.
    silent = window.refused(None, local, sized_for=sized_for)
    assert silent.scale >= min(MAX_SCALE, sized_for)
    if math.ceil(local * sized_for) <= window.tokens - window.answer_tokens:
        assert silent.scale >= min(MAX_SCALE, 2 * sized_for)


# --- the fold --------------------------------------------------------------------------------


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(histories_with_payloads(), st.integers(1_500, 20_000), st.sampled_from([400, 4_096]))
def test_the_fold_sees_every_message_once_in_requests_that_fit(
    history: list[Message], room: int, elide_bytes: int
) -> None:
    recap = Recap(goal="g", progress=tuple(f"item {n}" for n in range(30)))
    bare = request_tokens(summarizer_messages(recap, (), "", elide_bytes))
    start, seen = 0, []
    while start < len(history):
        chunk = next_chunk(
            history, start, len(history), recap, room_tokens=room, focus="", elide_bytes=elide_bytes
        )
        assert chunk.start == start < chunk.end <= len(history)
        if room >= bare + MIN_ENTRY_CHARS // 4 + 400:
            assert chunk.local_tokens <= room, (chunk.end - chunk.start, chunk.local_tokens, room)
        transcript = chunk.request[1].text
        for message in history[chunk.start : chunk.end]:
            head = message.text[:40]
            if message.role != "tool" or len(message.text.encode()) <= elide_bytes:
                assert head in transcript
        seen.extend(range(chunk.start, chunk.end))
        start = chunk.end
    assert seen == list(range(len(history)))


class Provider:
    """Answers effects as the interpreter would, with a model that counts ``ratio`` times denser
    than seri and refuses summarizer requests over ``limit`` tokens by its count."""

    def __init__(self, ratio: float, limit: int) -> None:
        self.ratio = ratio
        self.limit = limit
        self.requests: list[tuple[Message, ...]] = []
        self.refused = 0

    def __call__(self, effect: Any) -> Any:
        if isinstance(effect, CallModel):
            self.requests.append(effect.messages)
            tokens = math.ceil(request_tokens(effect.messages) * self.ratio)
            if tokens > self.limit:
                self.refused += 1
                numbers = OverflowNumbers(limit=self.limit, input_tokens=tokens)
                return ModelFailed("too long", overflow=True, overflow_numbers=numbers)
            answer = {"goal": "the goal", "progress": [f"chunk {len(self.requests)}"]}
            message = Message(role="assistant", text=json.dumps(answer))
            return ModelReply(message, Usage(input_tokens=tokens))
        if isinstance(effect, ApplyCompaction | ShrinkPayloads):
            return True
        if isinstance(effect, SpillText):
            return f"/spill/{len(effect.text)}.txt"
        assert isinstance(effect, Record)
        return None


pin_lists = st.lists(
    st.text(alphabet="xyz ABC.", min_size=1, max_size=40).map(str.strip), max_size=3
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories_with_payloads(),
    st.sampled_from([8_000, 16_000, 32_000]),
    st.sampled_from([1.0, 2.0, 3.0]),
    pin_lists,
)
def test_a_compaction_never_splits_a_pair_never_loses_a_pin_and_sees_all_it_evicts(
    history: list[Message], tokens: int, ratio: float, pins: list[str]
) -> None:
    pins = [p for p in pins if p]
    window = Window.of(tokens, 20_000, overhead_chars=5_000)
    provider = Provider(ratio, tokens)
    outcome = drive(
        compact(history, None, window=window, elide_bytes=4_096, trigger="auto", pins=pins),
        provider,
    )
    if isinstance(outcome, NotCompacted):
        assert outcome.reason is Why.NO_CUT and outcome.detail == NOT_ENOUGH_HISTORY
        assert provider.requests == []
        return
    assert isinstance(outcome, Compacted)
    recap, *kept = outcome.history
    assert kept == history[outcome.evicted :]
    assert kept and kept[0].role in ("user", "assistant")
    assert pairs_intact(kept)
    for pin in pins:
        assert f"- {pin}" in recap.text
    # Each refusal is retried once, smaller; none of the evicted messages went unseen.
    assert provider.refused <= outcome.summary_calls // 2 + 1
    transcripts = "".join(request[1].text for request in provider.requests)
    for message in history[: outcome.evicted]:
        if message.role == "user":
            assert message.text[:30] in transcripts
    assert outcome.summary_calls == len(provider.requests)


# --- the shrink ladder -----------------------------------------------------------------------


@given(histories_with_payloads(), st.integers(1, 60_000), st.sampled_from([400, 4_096]))
def test_the_ladder_elides_oldest_first_and_keeps_every_pair(
    history: list[Message], need: int, elide_bytes: int
) -> None:
    plan = plan_shrink(history, need, elide_bytes)
    keys = [(p.index, p.call) for p in plan]
    assert len(keys) == len(set(keys))
    assert sum(saving(p) for p in plan) >= need or len(plan) == sum(
        1 for p in payloads(history) if len(p.text) > 256
    )
    shrunk = list(history)
    for payload in plan:
        shrunk[payload.index] = with_elided(shrunk[payload.index], payload, '{"elided": true}')
    assert [(m.role, m.tool_call_id, [c.id for c in m.tool_calls]) for m in shrunk] == [
        (m.role, m.tool_call_id, [c.id for c in m.tool_calls]) for m in history
    ]
    assert [m.text for m in shrunk if m.role != "tool"] == [
        m.text for m in history if m.role != "tool"
    ]
    assert messages_chars(shrunk) <= messages_chars(history)
    assert not any((p.index, p.call) in keys for p in payloads(shrunk))
    for payload in plan:
        message = shrunk[payload.index]
        text = message.text if payload.call is None else message.tool_calls[payload.call].arguments
        assert is_elided(text)


def on_demand_setup(tokens: int, project: str = "") -> TaskSetup:
    """What /compact and seri compact run with: seri's prompt and tools filling the window."""
    return TaskSetup(
        system_prompt="s" * 800,
        max_turns=1,
        context_window=tokens,
        keep_tokens=20_000,
        elide_bytes=4_096,
        policy=Policy(),
        interactive=False,
        tools=(),
        tool_chars=4_700,
        project=project,
    )


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories_with_payloads(),
    st.sampled_from([8_000, 16_000]),
    st.sampled_from([1.0, 3.0]),
    pin_lists,
)
def test_compact_on_demand_leaves_a_fitting_session_or_says_why(
    history: list[Message], tokens: int, ratio: float, pins: list[str]
) -> None:
    """/compact and seri compact: when they report success (or "not enough history"), the
    history fits under the target; the ladder never splits a pair and the pins survive."""
    pins = [p for p in pins if p]
    setup = on_demand_setup(tokens)
    conversation = Conversation(
        tuple(history), total_chars=messages_chars(history), token_scale=ratio, pins=tuple(pins)
    )
    provider = Provider(ratio, tokens)
    end = drive(compact_on_demand(setup, conversation, ""), provider)
    after, why_not = end.conversation, end.not_compacted
    window = setup.window(ratio)
    assert pairs_intact(list(after.history[1:] if after.recap else after.history))
    # The conversation is the stored one (review-1 N6); the next request carries stored
    # results over the window's cap cut, as this compaction measured them.
    assert after.total_chars == messages_chars(after.history)
    cap = window.result_cap_chars
    sent = [
        attrs.evolve(m, text=cap_result(m.text, cap, f"/spill/{len(m.text)}.txt"))
        if m.role == "tool" and needs_cap(m.text, cap)
        else m
        for m in after.history
    ]
    if why_not is None or why_not.reason is Why.NO_CUT:
        assert estimate_tokens(messages_chars(sent)) <= window.history_target_local
    else:
        assert why_not.reason in (Why.DOES_NOT_FIT, Why.SUMMARIZER_FAILED), why_not
        assert "does not fit" in why_not.detail or "summarizer" in why_not.detail, why_not
    if after.recap is not None:
        for pin in pins:
            assert f"- {pin}" in after.history[0].text


class SmallerSlot(Provider):
    """A provider whose window is below the configured one; keeps the counters written."""

    def __init__(self, ratio: float, limit: int) -> None:
        super().__init__(ratio, limit)
        self.counters: list[UpdateCounters] = []

    def __call__(self, effect: Any) -> Any:
        if isinstance(effect, UpdateCounters):
            self.counters.append(effect)
            return None
        return super().__call__(effect)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(histories_with_payloads(), st.sampled_from([1.0, 3.0]), st.sampled_from([4_000, 8_000]))
def test_a_window_a_refusal_stated_is_kept_and_the_turn_count_left(
    history: list[Message], ratio: float, slot: int
) -> None:
    """/compact and seri compact against a slot smaller than config.json's 16k: a refused
    summarizer request teaches the window, and the compaction writes it with the session's
    counters (without a turn count: a compaction runs no turns); nothing refused, nothing
    written."""
    setup = on_demand_setup(16_000)
    conversation = Conversation(
        tuple(history), total_chars=messages_chars(history), token_scale=ratio
    )
    provider = SmallerSlot(ratio, slot)
    end = drive(compact_on_demand(setup, conversation, ""), provider)
    event("refused" if provider.refused else "not refused")
    if provider.refused:
        [counters] = provider.counters
        assert counters.turns_used is None
        assert counters.learned_window == slot == end.conversation.learned_window
    else:
        assert provider.counters == []
        assert end.conversation.learned_window == 0


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories_with_payloads(content_most=30_000),
    st.sampled_from([8_000, 16_000]),
    st.sampled_from([1.0, 3.0]),
    st.integers(0, 2),
)
def test_the_ladder_never_forgets_which_files_were_touched(
    history: list[Message], tokens: int, ratio: float, last_writes: int
) -> None:
    """A write_file whose arguments the ladder elides still names its file: in the recap's
    Modified: list once it is evicted, and to the model while it is kept (the spec: paths come
    from the evicted tool calls themselves). The newest group may itself hold big writes, so
    that no cut can help and the ladder has to elide them."""
    for n in range(last_writes):
        arguments = json.dumps({"path": f"/p/new/w{n}.py", "content": "y" * 30_000})
        call = ToolCall(f"last_{n}", "write_file", arguments)
        history = [
            *history,
            Message(role="assistant", text="writing", tool_calls=(call,)),
            Message(role="tool", text="ok", tool_call_id=call.id, tool_name=call.name),
        ]
    setup = on_demand_setup(tokens, project="/p")
    conversation = Conversation(
        tuple(history), total_chars=messages_chars(history), token_scale=ratio
    )
    after = drive(compact_on_demand(setup, conversation, ""), Provider(ratio, tokens)).conversation
    before = paths_touched(history, "/p")
    kept = paths_touched(after.history, "/p")
    recap = after.recap or Recap()
    assert set(before.modified) <= set(kept.modified) | set(recap.modified_paths)
    assert set(before.read) <= (
        set(kept.read) | set(kept.modified) | set(recap.read_paths) | set(recap.modified_paths)
    )


# --- a tool result's share, and the recap's --------------------------------------------------


@given(texts(120_000), st.integers(MIN_RESULT_CHARS, RESULT_BYTE_CAP))
def test_a_cut_result_keeps_its_head_and_tail_within_the_cap(text: str, cap: int) -> None:
    cut = cap_result(text, cap, "/spill/x.txt")
    if not needs_cap(text, cap):
        assert cut == text
        return
    marker = cut.index("\n[… ")
    end = cut.index(" …]\n", marker) + 4
    head, tail = cut[:marker], cut[end:]
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + len(tail) <= cap
    assert len(cut.encode()) <= RESULT_BYTE_CAP + 400
    assert "/spill/x.txt" in cut[marker:end]


@given(
    st.builds(
        Recap,
        goal=texts(3_000),
        progress=st.lists(texts(200), max_size=80).map(tuple),
        read_paths=st.lists(st.text("abc/", min_size=1, max_size=30), max_size=200).map(tuple),
        modified_paths=st.lists(st.text("xyz/", min_size=1, max_size=30), max_size=200).map(tuple),
    ),
    pin_lists,
    st.integers(1_200, 40_000),
)
def test_a_bounded_recap_fits_and_keeps_its_pins(
    recap: Recap, pins: list[str], max_chars: int
) -> None:
    pins = [p for p in pins if p]
    text = render_recap(recap, pins, max_chars)
    for pin in pins:
        assert f"- {pin}" in text
    assert text.count("\n- ") <= 40 * 2 + 80 + len(pins) + 10
    bare = render_recap(recap, pins, 1)
    assert len(text) <= max(max_chars, len(bare))
