"""Invariants of the chat's pure parts: approvals, diffs, tool lines, usage errors, config keys."""

from __future__ import annotations

import difflib

from hypothesis import assume, example, given
from hypothesis import strategies as st

from seri.commands import chat, compact, main, rewind, sessions, trajectory
from seri.pure.agent.effects import Answer
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.config_keys import KNOWN_KEYS, closest, unknown_keys
from seri.pure.inputs.usage_errors import usage_problem
from seri.pure.permissions.approval import always_rules, command_rule, menu, read_answer
from seri.pure.permissions.permission_policy import Policy, parse_policy, with_allowed
from seri.pure.permissions.permissions import decide
from seri.pure.session.records import Message
from seri.pure.terminal.chat_status import last_exchange
from seri.pure.terminal.diff_view import MAX_DIFF_LINES, diff_spans, line_changes
from seri.pure.terminal.tool_lines import OUTPUT_TAIL_LINES, output_tail
from seri.pure.tools.edit_match import plan_edit

WORD = st.text(alphabet="abcdefgh-_./*?[]$\"' =&|;", min_size=1, max_size=8)
COMMAND = st.lists(WORD, min_size=1, max_size=6).map(" ".join)
LINES = st.lists(st.sampled_from(["a", "b", "c", "", "def f():", "  return 1"]), max_size=30)
RULES = st.lists(
    st.sampled_from(["bash(git *)", "bash(rm *)", "bash(ls *)", "edit", "write_file(src/**)"]),
    max_size=3,
)


@given(COMMAND, RULES, RULES)
def test_always_offers_only_rules_that_let_the_very_call_through(
    command: str, deny: list[str], ask: list[str]
) -> None:
    policy = parse_policy({"deny": deny, "ask": ask})
    offered = always_rules(policy, "bash", {"command": command})
    if offered:
        widened = with_allowed(policy, offered)
        assert decide(widened, "bash", {"command": command}).action == "allow"
        assert all(rule.startswith("bash(") for rule in offered)


@given(st.lists(st.text(alphabet="abcxyz019-", min_size=1, max_size=6), min_size=1, max_size=5))
def test_a_command_rule_matches_the_command_it_came_from(words: list[str]) -> None:
    rule = command_rule(tuple(words))
    assume(rule)
    policy = with_allowed(Policy(), (rule,))
    assert decide(policy, "bash", {"command": " ".join(words)}).action == "allow"


OFFERS = st.sampled_from([(), ("edit",)])


@given(st.text(max_size=30), OFFERS)
@example("DON'T ASK AGAIN", ("edit",))  # opens with "don't", yet is the always choice
def test_only_a_yes_or_always_approves_and_an_unclear_reply_is_asked_again(
    reply: str, offered: tuple[str, ...]
) -> None:
    answer = read_answer(reply, offered)
    if answer is None:
        return  # asked again, never guessed
    if answer.approved:
        said = reply.strip().lower().replace("\u2019", "'")
        if said.rstrip(".!") == "don't ask again":
            # the one approval that opens like a no: always, and only when a rule is offered
            assert offered and answer.always == offered
        else:
            assert not said.startswith(("no", "n ", "don't", "deny", "stop"))
        assert answer.always in ((), offered)
    else:
        assert answer.always == ()
        assert answer.reason == answer.reason.strip()


@given(
    st.sampled_from(["y", "Y", "yes", "ok", "OK!", "sure", "yep", "go ahead", "yes please", ""]),
    OFFERS,
)
def test_what_people_type_for_yes_is_yes(reply: str, offered: tuple[str, ...]) -> None:
    assert read_answer(reply, offered) == Answer(True)
    assert read_answer("1", offered) == Answer(True)


@given(st.sampled_from(["a", "always", "Always.", "don't ask again", "2"]))
def test_always_and_its_number_take_the_offered_rules(reply: str) -> None:
    assert read_answer(reply, ("edit",)) == Answer(True, ("edit",))


@given(st.sampled_from(["n", "no", "Nope", "nah", "deny"]), OFFERS)
def test_a_plain_no_is_no_without_a_reason(reply: str, offered: tuple[str, ...]) -> None:
    assert read_answer(reply, offered) == Answer(False)
    assert read_answer(str(len(menu(offered))), offered) == Answer(False)


@given(
    st.sampled_from(["no,", "no:", "n", "no", "3", "nope,"]),
    st.text(alphabet="abcdefgh .-", min_size=1, max_size=30).filter(lambda t: t.strip(" .-")),
)
def test_no_then_what_to_do_is_the_reason_the_model_reads(head: str, reason: str) -> None:
    answer = read_answer(f"{head} {reason}", ("edit",))
    assert answer is not None and not answer.approved
    assert answer.reason and answer.reason in reason.strip()


def test_an_instruction_is_a_reason_and_noise_is_asked_again() -> None:
    assert read_answer("not now, keep the notes in README", ()) == Answer(
        False, reason="not now, keep the notes in README"
    )
    assert read_answer("use pytest -x instead", ()) == Answer(False, reason="use pytest -x instead")
    for unclear in ("hmm", "what?", "yes but also run the tests", "4"):
        assert read_answer(unclear, ()) is None


@given(LINES, LINES)
def test_line_changes_agree_with_the_line_counts(before: list[str], after: list[str]) -> None:
    old, new = "\n".join(before), "\n".join(after)
    added, removed = line_changes(old, new)
    assert added - removed == len(new.splitlines()) - len(old.splitlines())
    diff = [
        line
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="")
        if not line.startswith(("+++", "---"))
    ]
    assert added == sum(line.startswith("+") for line in diff)
    assert removed == sum(line.startswith("-") for line in diff)


@given(LINES, LINES)
def test_a_diff_is_cut_but_never_longer_than_its_cap(before: list[str], after: list[str]) -> None:
    spans = diff_spans("f.py", "\n".join(before) + "\n", "\n".join(after) + "\n")
    assert all(text.endswith("\n") for _, text in spans)
    assert len(spans) <= MAX_DIFF_LINES + 2


@given(
    st.lists(st.sampled_from(["x", "y", "ab", "\n", "xy"]), max_size=20).map("".join),
    st.sampled_from(["x", "ab", "xy\n", "y"]),
    st.sampled_from(["", "z", "xx"]),
    st.booleans(),
)
def test_an_applied_edit_replaces_exactly_what_the_tool_says(
    original: str, old: str, new: str, replace_all: bool
) -> None:
    plan = plan_edit(original, old, new, replace_all=replace_all)
    count = original.count(old)
    if old == new:
        assert plan.outcome == "unchanged"
    elif count == 0:
        assert plan.outcome == "not_found"
    elif count > 1 and not replace_all:
        assert plan.outcome == "ambiguous" and plan.occurrences == count
    else:
        assert plan.outcome == "applied"
        expected = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        assert plan.updated == expected
        assert plan.replacements == (count if replace_all else 1)


@given(st.lists(st.text(alphabet="ab \r", max_size=10), max_size=20))
def test_the_output_tail_never_shows_more_than_its_lines(lines: list[str]) -> None:
    text = "\n".join([*lines, "[exit code 1]"])
    shown = output_tail(text)
    body = [span for span in shown if "/last" not in span[1]]
    assert len(body) <= OUTPUT_TAIL_LINES
    assert all("[exit code" not in text for _, text in shown)
    assert all("\r" not in text for _, text in shown)


DOCS = {
    "seri": main.__doc__,
    "seri chat": chat.__doc__,
    "seri sessions": sessions.__doc__,
    "seri compact": compact.__doc__,
    "seri rewind": rewind.__doc__,
    "seri trajectory": trajectory.__doc__,
}
ARGV = st.lists(
    st.sampled_from(
        [
            "-v",
            "--json",
            "--resume",
            "x",
            "show",
            "--",
            "-p",
            "--continue",
            "-",
            "--session",
            "--to",
            "2",
            "--files",
            "--conversation",
            "--cont",
            "-px",
            "--model=m",
            "list",
            "export",
            "on",
            "--all",
            "--help",
        ]
    ),
    max_size=6,
)


@given(st.sampled_from(sorted(DOCS)), ARGV)
def test_every_usage_problem_is_one_line_naming_the_help(command: str, argv: list[str]) -> None:
    text = usage_problem(DOCS[command] or "", argv, command)
    assert "\n" not in text
    assert text.endswith(f"see {command} --help")


@given(st.dictionaries(st.text(min_size=1, max_size=12), st.integers(), max_size=6))
def test_unknown_keys_are_exactly_the_ones_not_known(config: dict[str, int]) -> None:
    reported = {dotted for dotted, _, _ in unknown_keys(config)}
    assert reported == {key for key in config if key not in KNOWN_KEYS}
    for _, guess, _ in unknown_keys(config):
        assert guess == "" or guess in KNOWN_KEYS


@given(st.text(max_size=20))
def test_the_closest_key_is_a_known_one_or_none(key: str) -> None:
    guess = closest(key, sorted(KNOWN_KEYS))
    assert guess == "" or guess in KNOWN_KEYS


def test_a_misspelt_key_is_named_with_the_one_it_meant() -> None:
    assert unknown_keys({"permisions": {}, "compaction": {"keep_token": 1}, "zzz": 1}) == [
        ("permisions", "permissions", False),
        ("compaction.keep_token", "compaction.keep_tokens", False),
        ("zzz", "", False),
    ]
    assert unknown_keys({"permissions": {"alow": []}}) == [
        ("permissions.alow", "permissions.allow", True)
    ]


@given(st.lists(st.one_of(st.none(), st.floats(0, 1), st.integers(-5, 5)), max_size=10))
def test_cost_totals_add_what_was_reported(costs: list[float | int | None]) -> None:
    totals = UsageTotals()
    for cost in costs:
        totals = totals.plus(UsageTotals.of_record({"input_tokens": 1, "cost": cost}))
    reported = [c for c in costs if isinstance(c, int | float)]
    assert totals.calls == len(costs)
    assert totals.cost == (None if not reported else sum(float(c) for c in reported))


@given(
    st.lists(st.sampled_from(["user", "user:recap", "assistant", "tool", "user:rule"]), max_size=12)
)
def test_the_replayed_exchange_starts_at_what_a_person_typed(roles: list[str]) -> None:
    history = [
        Message(role=role.split(":")[0], text=role, kind=role.split(":")[1] if ":" in role else "")  # type: ignore[arg-type]
        for role in roles
    ]
    exchange = last_exchange(history)
    typed = [i for i, m in enumerate(history) if m.role == "user" and not m.kind]
    if not typed:
        assert exchange == ()
    else:
        assert exchange == tuple(history[typed[-1] :])


@given(st.binary(max_size=600), st.integers(min_value=1, max_value=5), st.integers(10, 120))
@example("␀␀␀␀␀␀\u0591␀␀␀␀".encode(), 1, 10)  # 11 characters, 10 columns: not cut
@example(("界" * 8 + "\u0591").encode(), 1, 10)  # 16 columns: four (8) and "…"
def test_live_output_is_a_few_safe_lines_that_never_wrap(
    raw: bytes, count: int, width: int
) -> None:
    from wcwidth import wcswidth

    from seri.pure.terminal.tool_lines import live_lines

    lines = live_lines(raw, count=count, width=width)
    assert len(lines) <= count
    # width in columns (wcwidth's, per grapheme): a combining mark takes none, CJK two
    assert all(0 <= wcswidth(line) <= width for line in lines)
    assert all("\n" not in line and "\x1b" not in line for line in lines)


@given(st.integers(min_value=0, max_value=60000))
def test_the_lines_not_shown_include_those_the_capture_left_out(total: int) -> None:
    from seri.pure.tools.output_capture import OutputCapture, capped_output

    capture = OutputCapture(4096, 4096)
    capture.feed("".join(f"{n}\n" for n in range(1, total + 1)).encode())
    text = capped_output(capture).text + "\n[exit code 0]"
    spans = output_tail(text, last="/last #3")
    shown = [t for _, t in spans if "more line" not in t]
    if total > OUTPUT_TAIL_LINES:
        more = f"… {total - OUTPUT_TAIL_LINES:,} more line"
        assert more in spans[0][1] and "/last #3 shows them" in spans[0][1]
    assert len(shown) == min(total, OUTPUT_TAIL_LINES)


@given(LINES, LINES, st.integers(min_value=1, max_value=20))
def test_a_collapsed_diff_keeps_its_head_and_counts_the_rest(
    before: list[str], after: list[str], keep: int
) -> None:
    from seri.pure.terminal.diff_view import collapsed

    spans = diff_spans("f.py", "\n".join(before) + "\n", "\n".join(after) + "\n")
    short = collapsed(spans, keep)
    assert short == spans or (short[:keep] == spans[:keep] and len(short) == keep + 1)
