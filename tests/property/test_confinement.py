"""Invariants of the pure confinement parts: the sandbox plan, the child environment and
right-sized redaction."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.redaction import REDACTED, Redactor, child_environment, is_secret_name
from seri.pure.sandbox_plan import bubblewrap_arguments, plan_sandbox

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
