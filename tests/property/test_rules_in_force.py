"""A rule that fired stays in force through any number of compactions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.compaction import rules_in_force, rules_section
from seri.pure.records import Message
from seri.pure.rules import GlobRule

names = st.text(alphabet="abcdefghij-", min_size=1, max_size=8)
bodies = st.text(alphabet=st.characters(blacklist_characters="[]\r"), min_size=1, max_size=80)


@given(st.lists(st.tuples(names, bodies), min_size=1, max_size=6), st.integers(1, 4))
def test_fired_rules_survive_repeated_compactions(
    rules: list[tuple[str, str]], rounds: int
) -> None:
    fired = [GlobRule(name, ("*",), body.strip() or "x") for name, body in rules]
    history = [Message(role="user", text=rule.message_text(), kind="rule") for rule in fired]
    for _ in range(rounds):
        recap = Message(role="user", text="## Goal\ng" + rules_section(history), kind="recap")
        history = [recap, Message(role="assistant", text="ok")]
    kept = rules_in_force(history)
    expected = {rule.name for rule in fired}
    assert {text.split("]", 1)[0].removeprefix("[rule ") for text in kept} == expected


def test_no_rules_no_section() -> None:
    assert rules_section([Message(role="user", text="hi")]) == ""


