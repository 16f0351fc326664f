"""Invariants of the pure confinement parts: the sandbox plan, the child environment and
right-sized redaction."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.permissions.protected_paths import PROJECT_TOP_NAMES, guarded_in_project, is_within
from seri.pure.permissions.sandbox_plan import (
    BUBBLEWRAP_ISOLATION,
    SANDBOX_TMP,
    bubblewrap_arguments,
    hidden_path_holders,
    hidden_tops,
    named_paths,
    plan_sandbox,
)
from seri.pure.trajectories.redaction import REDACTED, Redactor, child_environment, is_secret_name

segments = st.text(string.ascii_lowercase + "._-", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)
paths = st.lists(segments, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


@given(paths, st.lists(paths, max_size=8))
def test_only_paths_inside_the_project_are_bound_read_only_after_it(
    project: str, protected: list[str]
) -> None:
    plan = plan_sandbox(project, "/tmp/seri-tmp-x", protected)
    for path in plan.read_only:
        assert path.startswith(project.rstrip("/") + "/")
    argv = bubblewrap_arguments(plan, project, "true", "bwrap")
    binds = [argv[i + 1] for i, word in enumerate(argv) if word in ("--bind", "--ro-bind")]
    assert binds[0] == "/"
    # The private /tmp, then the project over it, then the protected paths over that.
    assert binds.index("/tmp/seri-tmp-x") < binds.index(project)
    for path in plan.read_only:
        assert binds.index(path, binds.index(project) + 1) > binds.index(project)
    assert argv[-3:] == ["bash", "-c", "true"]
    # The isolation comes before any mount, whatever the plan.
    assert argv[1 : 1 + len(BUBBLEWRAP_ISOLATION)] == list(BUBBLEWRAP_ISOLATION)
    assert argv[argv.index("--proc") + 1] == "/proc"


under_tmp = st.lists(segments, min_size=1, max_size=3).map(lambda parts: "/tmp/" + "/".join(parts))


@given(st.one_of(paths, under_tmp), st.lists(paths, max_size=4), st.lists(under_tmp, max_size=6))
def test_shown_tmp_paths_are_read_only_and_never_cover_the_project_or_private_tmp(
    project: str, protected: list[str], named: list[str]
) -> None:
    """What the private /tmp would hide is shown read-only after it and before the project,
    so the project stays writable and the protected paths read-only whatever is shown."""
    private = "/tmp/seri-tmp-x"
    plan = plan_sandbox(project, private, protected, hidden_tops(named))
    argv = bubblewrap_arguments(plan, project, "true", "bwrap")
    binds = [
        (argv[i], argv[i + 1]) for i, word in enumerate(argv) if word in ("--bind", "--ro-bind")
    ]
    order = [path for _, path in binds]
    for path in plan.visible:
        assert ("--ro-bind", path) in binds
        assert order.index(private) < order.index(path) < order.index(project)
        assert path.startswith("/tmp/") and path.count("/") == 2
        assert not is_within(path, project) and not is_within(path, private)
    assert ("--bind", project) in binds and order[-len(plan.read_only) - 1] == project


@given(st.lists(under_tmp, max_size=6), st.lists(paths, max_size=6))
def test_every_named_path_under_tmp_is_held_by_one_top_entry(
    tmp_paths: list[str], others: list[str]
) -> None:
    tops = hidden_tops([*tmp_paths, *others, SANDBOX_TMP])
    assert len(set(tops)) == len(tops)
    for path in tmp_paths:
        assert sum(is_within(path, top) for top in tops) == 1
    for top in tops:
        assert top.startswith("/tmp/") and "/" not in top[len("/tmp/") :]


@given(st.lists(under_tmp, min_size=1, max_size=4), st.sampled_from([" ", " ; ", " && "]))
def test_the_paths_a_command_names_are_found_as_words_and_assignments(
    named: list[str], joiner: str
) -> None:
    command = joiner.join(
        [f"PYTHONPATH={named[0]}:/opt/x", *(f"'{path}'" for path in named[1:]), "--flag=/srv/y"]
    )
    found = named_paths(command)
    assert set(named) | {"/opt/x", "/srv/y"} <= set(found)


@given(paths, st.lists(paths, max_size=8), st.lists(paths, max_size=8))
def test_what_is_guarded_covers_every_protected_path_inside_the_project_once(
    project: str, protected: list[str], found: list[str]
) -> None:
    """Every protected path inside the project, and the project's own .git, .seri and
    .mcp.json, is covered by exactly one guarded path; nothing outside the project or the
    project itself is guarded; no guarded path lies inside another."""
    guarded = guarded_in_project(project, tuple(protected), tuple(found))
    chosen = [path for path, _ in guarded]
    assert len(set(chosen)) == len(chosen)
    for path in chosen:
        assert is_within(path, project) and path != project
        assert not [other for other in chosen if other != path and is_within(path, other)]
    top = [f"{project.rstrip('/')}/{name}" for name, _ in PROJECT_TOP_NAMES]
    for wanted in (*top, *protected, *found):
        if is_within(wanted, project) and wanted != project:
            assert sum(is_within(wanted, path) for path in chosen) == 1, (wanted, chosen)


names = st.text(string.ascii_uppercase + "_", min_size=1, max_size=24)
values = st.text(string.ascii_letters + string.digits + "/:._-@", max_size=30)


@given(st.dictionaries(names, values, max_size=12))
def test_the_child_environment_keeps_no_secret_and_changes_nothing_it_keeps(
    env: dict[str, str],
) -> None:
    child = child_environment(env, ("OPENROUTER_API_KEY", "SERI_API_KEY"))
    for name, value in child.items():
        assert env[name] == value
        assert name not in ("OPENROUTER_API_KEY", "SERI_API_KEY")
        if is_secret_name(name):
            assert value.startswith(("/", "~/", "./", "unix:", "tcp:"))
    for name in ("PATH", "HOME", "LANG", "TERM"):
        if name in env and "@" not in env[name]:
            assert name in child


@given(st.text(max_size=200))
def test_redaction_is_idempotent(text: str) -> None:
    redactor = Redactor.of(["sk-or-v1-" + "a" * 40])
    once = redactor.text(text)
    assert redactor.text(once) == once


@given(
    st.sampled_from(
        [
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
            "PWD",
            "OLDPWD",
            "XDG_SESSION_PATH",
            "GPG_AGENT_SOCKET",
        ]
    ),
    st.lists(segments, min_size=1, max_size=4),
)
def test_a_path_is_never_redacted(name: str, parts: list[str]) -> None:
    line = f"{name}=/" + "/".join(parts)
    assert Redactor().text(line) == line
    assert REDACTED not in Redactor().text(f"{name}=unix:path=/" + "/".join(parts))


@given(st.lists(under_tmp, max_size=6), st.lists(paths, max_size=4))
def test_a_path_directory_under_tmp_is_shown_through_its_holder_and_never_tmp_itself(
    directories: list[str], others: list[str]
) -> None:
    holders = hidden_path_holders([*directories, *others, SANDBOX_TMP])
    assert SANDBOX_TMP not in holders and len(set(holders)) == len(holders)
    for directory in directories:
        assert any(is_within(directory, holder) for holder in holders)
    for holder in holders:
        assert holder.startswith("/tmp/")
        # No wider than the directory's parent: a PATH entry shows its neighbours, not /tmp.
        assert any(holder in (d, d.rsplit("/", 1)[0]) for d in directories)
