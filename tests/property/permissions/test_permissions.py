"""Invariants of the permission policy, over generated rules and commands."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.permissions.permission_policy import PROTECTED_RULE, parse_policy
from seri.pure.permissions.permissions import decide
from seri.pure.permissions.protected_paths import protected_paths
from seri.pure.tools.shell_split import split_command

HOME = "/home/u"
PROFILE = "/home/u/.seri"
PROTECTED = protected_paths(PROFILE, HOME)

# Rules that match a write of "src/app.py", and rules that do not.
MATCHING = ["write_file", "*", "write_file(src/**)", "write_file(*.py)", "write_file(src)"]
NOT_MATCHING = ["read_file", "bash", "write_file(docs/**)", "write_file(*.md)", "edit"]
CALL = ("write_file", {"path": "src/app.py", "content": "x"})

rule_lists = st.lists(st.sampled_from(MATCHING + NOT_MATCHING), max_size=6)


@settings(max_examples=200, deadline=None)
@given(allow=rule_lists, ask=rule_lists, deny=rule_lists, data=st.data())
def test_deny_then_ask_then_allow_in_any_order(
    allow: list[str], ask: list[str], deny: list[str], data: st.DataObject
) -> None:
    def shuffled(rules: list[str]) -> list[str]:
        return data.draw(st.permutations(rules)) if rules else []

    p = parse_policy({"allow": shuffled(allow), "ask": shuffled(ask), "deny": shuffled(deny)})
    decision = decide(p, *CALL)
    if any(r in MATCHING for r in deny):
        expected = "deny"
    elif any(r in MATCHING for r in ask):
        expected = "ask"
    elif any(r in MATCHING for r in allow):
        expected = "allow"
    else:
        expected = "ask"  # write_file's default
    assert decision.action == expected


SAFE = ["ls", "echo hi", "git status", "cat a.txt", "true", "grep -r x .", "wc -l f"]
OPERATORS = [" && ", " || ", "; ", " | ", "\n", " & "]
DENIED = ["rm x", "rm -rf build", "/bin/rm x", "FOO=1 rm x", "xargs rm", "sudo rm x"]


def _wrap(command: str, how: str) -> str:
    if how == "subst":
        return f"echo $({command})"
    if how == "backticks":
        return f"echo `{command}`"
    if how == "bash-c":
        return f"bash -c '{command}'"
    if how == "subshell":
        return f"({command})"
    if how == "group":
        return f"{{ {command}; }}"
    return command


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(st.sampled_from(SAFE), max_size=70),
    after=st.lists(st.sampled_from(SAFE), max_size=5),
    denied=st.sampled_from(DENIED),
    wrap=st.sampled_from(["plain", "subst", "backticks", "bash-c", "subshell", "group"]),
    ops=st.lists(st.sampled_from(OPERATORS), min_size=80, max_size=80),
)
def test_a_denied_segment_anywhere_denies(
    before: list[str], after: list[str], denied: str, wrap: str, ops: list[str]
) -> None:
    parts = [*before, _wrap(denied, wrap), *after]
    command = parts[0]
    for op, part in zip(ops, parts[1:], strict=False):
        command += op + part
    p = parse_policy({"allow": ["bash", "*"], "deny": ["bash(rm *)"]})
    decision = decide(p, "bash", {"command": command})
    assert decision.action == "deny", (command, decision)


def _spell(part: str, style: int) -> str:
    return [part, part.upper(), part.capitalize()][style % 3]


git_paths = st.builds(
    lambda lead, style, rest, prefix: prefix + "/".join([*lead, _spell(".git", style), *rest]),
    st.lists(st.sampled_from(["a", "sub", ".", "b/.."]), max_size=3),
    st.integers(0, 2),
    st.lists(st.sampled_from(["hooks", "pre-commit", "config", "x"]), min_size=1, max_size=3),
    st.sampled_from(["", "./"]),
)
protected_files = st.one_of(
    git_paths,
    st.sampled_from(PROTECTED).flatmap(
        lambda root: st.lists(st.sampled_from(["x", "config.json", "seri.db"]), max_size=2).map(
            lambda rest: "/".join([root, *rest])
        )
    ),
)


@settings(max_examples=300, deadline=None)
@given(path=protected_files, tool=st.sampled_from(["write_file", "edit"]))
def test_protected_files_are_never_allowed(path: str, tool: str) -> None:
    p = parse_policy(
        {"allow": ["*", "write_file", "edit", f"{tool}({path})"]}, protected=PROTECTED, home=HOME
    )
    args = {"path": path, "content": "x", "old_string": "a", "new_string": "b"}
    decision = decide(p, tool, args)
    assert decision.action == "deny", (path, decision)
    assert decision.rule == PROTECTED_RULE


@settings(max_examples=300, deadline=None)
@given(
    path=protected_files,
    redirect=st.sampled_from([">", ">>", "1>", "&>", ">|", "2>>"]),
    prefix=st.lists(st.sampled_from(SAFE), max_size=3),
)
def test_shell_writes_to_protected_files_are_never_allowed(
    path: str, redirect: str, prefix: list[str]
) -> None:
    command = " && ".join([*prefix, f"echo pwned {redirect} {path}"])
    p = parse_policy({"allow": ["bash", "*"]}, protected=PROTECTED, home=HOME)
    decision = decide(p, "bash", {"command": command})
    assert decision.action == "deny", (command, decision)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>{}\n#=*-c")), max_size=60))
def test_the_splitter_never_crashes(command: str) -> None:
    parsed = split_command(command)
    assert parsed.error or all(isinstance(s.text, str) for s in parsed.segments)
