"""The trust model's decisions (seri.pure.permissions.trust): what an approval covers, what a screen
and an approval row may hold, and what a project's ``${VAR}`` may expand to."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.mcp.mcp_config import parse_servers
from seri.pure.permissions.trust import (
    APPROVED,
    APPROVED_OLD_FORM,
    CHANGED,
    NEW,
    OLD_FORM,
    entry_digest,
    masked_entry,
    project_policy,
    shown_entry,
    standing,
)

KEY = "sk-or-v1-" + "9f3c" * 16
FIELDS = ("type", "command", "args", "env", "cwd", "url", "headers", "timeout", "protocol")
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
# An entry: the fields seri knows and any other a later version (or another tool) may add.
ENTRIES = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), VALUES, max_size=6)


def same(a: Any, b: Any) -> bool:
    """JSON equality: 1, 1.0 and true are three different values in a file."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return repr(a) == repr(b)  # -0.0 and 0.0 are written differently


def reordered(value: Any) -> Any:
    """The same value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


@given(entry=ENTRIES, data=st.data())
def test_any_change_to_any_field_changes_the_digest_and_asks_again(
    entry: dict[str, Any], data: st.DataObject
) -> None:
    field = data.draw(st.sampled_from([*entry, *FIELDS, "added_later"]), label="field")
    changed = dict(entry)
    if field in entry and data.draw(st.booleans(), label="remove"):
        del changed[field]
    else:
        new = data.draw(VALUES.filter(lambda v: not same(v, entry.get(field, object()))))
        changed[field] = new
    approved = entry_digest(entry)
    assert entry_digest(changed) != approved
    assert standing(entry_digest(changed), approved) == CHANGED
    assert standing(approved, approved) == APPROVED


@given(entry=ENTRIES)
def test_the_same_entry_in_another_key_order_is_the_same_entry(entry: dict[str, Any]) -> None:
    assert entry_digest(reordered(entry)) == entry_digest(entry)
    assert shown_entry(reordered(entry)) == shown_entry(entry)


@given(a=ENTRIES, b=ENTRIES)
def test_two_entries_share_a_digest_only_when_they_are_the_same(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    assert (entry_digest(a) == entry_digest(b)) == same(a, b)


def test_the_standing_of_an_approval_row() -> None:
    digest = entry_digest({"command": "x"})
    assert standing(digest, None) == NEW
    assert standing(digest, OLD_FORM) == APPROVED_OLD_FORM
    # An old row's identity (the command and arguments) never matches a digest.
    assert standing(digest, json.dumps(["stdio", "x"])) == CHANGED
    # A server without an entry (no digest) is never approved, whatever the row holds.
    assert standing("", "") == CHANGED


PLACES = st.sampled_from(
    [
        lambda s: {"command": "x", "args": [f"--token={s}"]},
        lambda s: {"command": "x", "env": {"API_TOKEN": s}},
        lambda s: {"command": "x", "env": {"DB_PASSWORD": "hunter2-" + s[-6:]}},
        lambda s: {"url": "https://h/mcp", "headers": {"Authorization": f"Bearer {s}"}},
        lambda s: {"url": "https://h/mcp", "headers": {"X-Api-Key": s}},
        lambda s: {"url": f"https://user:{s}@h/mcp"},
        lambda s: {"command": "x", "later": {"nested": [s]}},
    ]
)


@given(place=PLACES, tail=st.text("abcdefghijkmnopqrstuvwxyz0123456789", min_size=20, max_size=30))
def test_a_shown_entry_never_holds_a_secret_it_spells_out(place: Any, tail: str) -> None:
    secret = "sk-or-v1-" + tail
    entry = place(secret)
    shown = shown_entry(entry)
    assert secret not in shown and secret[-6:] not in shown.replace("[REDACTED]", "")
    assert "[REDACTED]" in shown
    # The shape of the entry stays: a reviewer sees which fields there are.
    assert set(json.loads(shown)) == set(entry)


def test_references_stay_as_written_for_the_reviewer() -> None:
    entry = {
        "url": "https://h/mcp",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Key": "${KEY:-none}"},
        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
    }
    assert masked_entry(entry) == entry


SECRET_NAMES = st.sampled_from(
    [
        "OPENROUTER_API_KEY",
        "SERI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "MY_APIKEY",
        "SESSION_COOKIE",
        "DOCS_AUTH",
        "X_CREDENTIALS",
    ]
)
FIELDS_WITH_VARIABLES = st.sampled_from(
    [
        lambda v: {"command": "srv", "args": [f"--token=${{{v}}}"]},
        lambda v: {"command": f"${{{v}}}"},
        lambda v: {"command": "srv", "env": {"EXFIL": f"${{{v}}}"}},
        lambda v: {"command": "srv", "cwd": f"/tmp/${{{v}}}"},
        lambda v: {"url": "https://h/mcp", "headers": {"X-Debug": f"${{{v}}}"}},
        lambda v: {"url": f"https://h/mcp?k=${{{v}:-none}}"},
    ]
)


@given(name=SECRET_NAMES, place=FIELDS_WITH_VARIABLES)
def test_a_projects_entry_never_expands_a_secret_unless_the_person_grants_it(
    name: str, place: Any
) -> None:
    env = {name: KEY}
    entry = place(name)
    refused = parse_servers({"s": entry}, env, ".mcp.json", project_policy({}, (KEY,)))
    assert not refused.servers
    (problem,) = refused.problems
    assert f"${{{name}}}" in problem.message and "project_secrets" in problem.message
    assert KEY not in repr(refused)
    # Granted for another server: still refused; for this one: expanded.
    other = parse_servers({"s": entry}, env, ".mcp.json", project_policy({"t": [name]}, (KEY,)))
    assert not other.servers
    granted = parse_servers({"s": entry}, env, ".mcp.json", project_policy({"s": [name]}, (KEY,)))
    (server,) = granted.servers
    assert KEY in repr(
        (server.command, server.args, server.env, server.cwd, server.url, server.headers)
    )
    # The person's own config.json may name any variable.
    assert parse_servers({"s": entry}, env, "config.json").servers


def test_the_key_under_an_innocent_name_is_a_secret_by_its_value() -> None:
    entry = {"command": "srv", "args": ["${INNOCENT}"]}
    policy = project_policy({}, (KEY,))
    refused = parse_servers({"s": entry}, {"INNOCENT": KEY}, ".mcp.json", policy)
    assert not refused.servers and "${INNOCENT}" in refused.problems[0].message
    fine = parse_servers({"s": entry}, {"INNOCENT": "hello"}, ".mcp.json", policy)
    assert fine.servers[0].args == ("hello",)


def test_ordinary_variables_expand_in_a_projects_entry() -> None:
    policy = project_policy({}, (KEY,))
    entry = {"command": "npx", "args": ["${CLAUDE_PROJECT_DIR:-.}", "${HOME}/x"]}
    env = {"CLAUDE_PROJECT_DIR": "/p", "HOME": "/home/u", "OPENROUTER_API_KEY": KEY}
    (server,) = parse_servers({"s": entry}, env, ".mcp.json", policy).servers
    assert server.args == ("/p", "/home/u/x")


def test_a_granted_secret_in_env_or_headers_is_never_in_a_servers_repr() -> None:
    policy = project_policy({"s": ["DOCS_TOKEN"]}, (KEY,))
    env = {"DOCS_TOKEN": KEY}
    for entry in (
        {"command": "srv", "env": {"DOCS_TOKEN": "${DOCS_TOKEN}"}},
        {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
    ):
        (server,) = parse_servers({"s": entry}, env, ".mcp.json", policy).servers
        assert KEY in repr((server.env, server.headers)) and KEY not in repr(server)
        assert KEY not in server.shown


def test_the_grant_is_read_from_config_json_and_a_wrong_shape_is_named() -> None:
    from seri.pure.inputs.settings import ConfigError, parse_settings

    read = parse_settings({"mcp": {"project_secrets": {"docs": ["DOCS_TOKEN"]}}}, {})
    assert dict(read.mcp_project_secrets) == {"docs": ("DOCS_TOKEN",)}
    assert not read.warnings  # a known key
    for wrong in ({"docs": "DOCS_TOKEN"}, ["DOCS_TOKEN"], {"docs": [1]}):
        with pytest.raises(
            ConfigError, match=r"'mcp\.project_secrets' must be an object of server"
        ):
            parse_settings({"mcp": {"project_secrets": wrong}}, {})
