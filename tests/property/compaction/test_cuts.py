"""Properties of the cut search over generated histories with parallel tool calls."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.compaction.cuts import DEFAULT_KEEP_TOKENS, MIN_EVICTED, Cut, cut_messages, find_cut
from seri.pure.session.records import ToolCall, assistant, tool_result, user
from tests.property.strategies import Entry, token_histories


def cut_history(
    entries: Sequence[Entry],
    keep_tokens: int = DEFAULT_KEEP_TOKENS,
    *,
    starts_with_recap: bool = False,
) -> Cut | None:
    """``find_cut`` over a whole ``(role, tokens)`` list, oldest first."""
    return find_cut(
        len(entries), reversed(entries), keep_tokens, starts_with_recap=starts_with_recap
    )


budgets = st.integers(min_value=0, max_value=40_000)


def suffix_tokens(entries: Sequence[Entry], index: int) -> int:
    return sum(t for _, t in entries[index:])


def boundaries(entries: Sequence[Entry]) -> list[int]:
    return [i for i, (role, _) in enumerate(entries) if role in ("user", "assistant")]


def expected_cut(entries: Sequence[Entry], keep: int, starts_with_recap: bool) -> Cut | None:
    """The rule stated declaratively: the oldest safe boundary whose tail fits the budget, or
    the newest group alone when none fits; skipped when fewer than four would be evicted."""
    safe = boundaries(entries)
    if not safe:
        return None
    fitting = [i for i in safe if suffix_tokens(entries, i) <= keep]
    first_kept = min(fitting) if fitting else max(safe)
    if first_kept - int(starts_with_recap) < MIN_EVICTED:
        return None
    return Cut(first_kept, first_kept, suffix_tokens(entries, first_kept))


class CountingIterator:
    """Yields newest-first entries and counts how many the search pulled."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = entries
        self.pulled = 0

    def __iter__(self) -> Iterator[Entry]:
        for entry in reversed(self.entries):
            self.pulled += 1
            yield entry


@settings(max_examples=400)
@given(token_histories(), budgets)
def test_cut_matches_the_rule(history: tuple[list[Entry], bool], keep: int) -> None:
    """The cut is the oldest fitting safe boundary (or the newest group), if it evicts four."""
    entries, starts_with_recap = history
    cut = cut_history(entries, keep, starts_with_recap=starts_with_recap)
    assert cut == expected_cut(entries, keep, starts_with_recap)


@settings(max_examples=400)
@given(token_histories(), budgets)
def test_cut_invariants(history: tuple[list[Entry], bool], keep: int) -> None:
    """A cut never splits a pair, evicts at least four, and respects the budget."""
    entries, starts_with_recap = history
    cut = cut_history(entries, keep, starts_with_recap=starts_with_recap)
    if cut is None:
        return
    first = cut.index_of_first_kept
    assert entries[first][0] != "tool"
    assert cut.evicted_count == first
    assert cut.evicted_count - int(starts_with_recap) >= MIN_EVICTED
    assert cut.kept_tokens == suffix_tokens(entries, first)
    # Over budget only when the tail is the newest group alone.
    assert cut.kept_tokens <= keep or first == max(boundaries(entries))
    # No older safe boundary would also have fitted: the tail is as long as the budget allows.
    assert all(suffix_tokens(entries, j) > keep for j in boundaries(entries) if j < first)


@settings(max_examples=400)
@given(token_histories(), budgets)
def test_lazy_search_agrees_and_reads_only_the_tail(
    history: tuple[list[Entry], bool], keep: int
) -> None:
    """The lazy API gives the same cut and pulls only the kept tail plus the results before
    it and one message more."""
    entries, starts_with_recap = history
    source = CountingIterator(entries)
    cut = find_cut(len(entries), source, keep, starts_with_recap=starts_with_recap)
    assert cut == cut_history(entries, keep, starts_with_recap=starts_with_recap)
    safe = boundaries(entries)
    if not safe:
        return
    fitting = [i for i in safe if suffix_tokens(entries, i) <= keep]
    first_kept = min(fitting) if fitting else max(safe)
    tools_before = 0
    while (
        first_kept - tools_before - 1 >= 0 and entries[first_kept - tools_before - 1][0] == "tool"
    ):
        tools_before += 1
    assert source.pulled <= len(entries) - first_kept + tools_before + 1


@given(st.lists(st.integers(min_value=0, max_value=50), min_size=5, max_size=60))
def test_a_history_within_budget_is_not_cut(sizes: list[int]) -> None:
    """When everything fits the budget there is nothing to evict."""
    entries: list[Entry] = [("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(sizes)]
    assert cut_history(entries, keep_tokens=10_000) is None


def test_oversized_newest_group_is_kept_whole() -> None:
    """A newest group larger than the budget is kept, and everything older goes."""
    entries: list[Entry] = [
        ("user", 10),
        ("assistant", 10),
        ("user", 10),
        ("assistant", 10),
        ("assistant", 100),
        ("tool", 50_000),
        ("tool", 10),
    ]
    assert cut_history(entries, keep_tokens=20_000) == Cut(4, 4, 50_110)


def test_four_evictable_counts_the_recap_out() -> None:
    """An earlier recap is evicted with the rest but does not count towards the four."""
    one: Entry = ("user", 1)
    entries: list[Entry] = [one, one, one, one, ("user", 100)]
    assert cut_history(entries, keep_tokens=100) == Cut(4, 4, 100)
    assert cut_history(entries, keep_tokens=100, starts_with_recap=True) is None


def test_count_must_match_the_entries() -> None:
    """A source that yields fewer or more messages than it claims is an error."""
    one: Entry = ("user", 1)
    with pytest.raises(ValueError, match="expected"):
        find_cut(5, iter([one]), 10)
    with pytest.raises(ValueError, match="more than"):
        find_cut(1, iter([one, one]), 10)


def test_cut_messages_uses_estimates_and_notices_a_recap() -> None:
    """The message-level helper estimates tokens with ceil(chars/4) and its framing, and
    spots a recap."""
    call = ToolCall("c1", "read_file", '{"path": "a.py"}')
    messages = [
        user("recap", kind="recap"),
        user("x" * 40),
        assistant("", (call,)),
        tool_result(call, "y" * 4_000),
        assistant("done"),
        user("z" * 400),
        assistant("w" * 400),
    ]
    # Each message counts its JSON framing too (FRAMING_TOKENS): 2 x (100 + 8).
    cut = cut_messages(messages, keep_tokens=216)
    assert cut == Cut(index_of_first_kept=5, evicted_count=5, kept_tokens=216)
    assert cut_messages(messages[:5], keep_tokens=1) is None
