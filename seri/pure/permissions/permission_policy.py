"""The permission policy: the rules of config.json ``permissions`` and ``--allow``, parsed,
and the order in which they settle a call (deny, then ask, then allow, then the default).

``permissions.decide`` applies it; ``file_permissions`` and ``command_permissions`` say which
rules match a file tool's path or a shell command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

import attrs

from seri.pure.mcp.mcp_names import PREFIX as MCP_PREFIX
from seri.pure.mcp.mcp_names import SEPARATOR as MCP_SEPARATOR
from seri.pure.mcp.mcp_names import server_prefix
from seri.pure.tools.glob_match import GlobError, compile_glob, glob_matches
from seri.pure.tools.tool_specs import RULE_TOOL_NAMES, SPECS, spec_of

Action = Literal["allow", "ask", "deny"]

PROTECTED_RULE = "(protected)"
ANY_TOOL = "*"

# What a rule's pattern is matched against, per tool (from the tools' records).
SUBJECT_ARGUMENT = {spec.name: spec.subject for spec in SPECS if spec.subject}
WRITE_TOOLS = frozenset(spec.name for spec in SPECS if spec.access == "write")

# A built-in tool, ``*``, or an MCP tool name, whole or as a glob (``mcp__git__*``); an MCP
# server's prefix alone (``mcp__git``) names all its tools, as in Claude Code.
_RULE = re.compile(
    r"\s*(mcp__[A-Za-z0-9_*?-]+|[A-Za-z_][A-Za-z0-9_]*|\*)\s*(?:\((.*)\))?\s*", re.DOTALL
)


class PolicyError(ValueError):
    """A permission rule or the permissions object is malformed."""


@attrs.frozen
class Rule:
    """One permission rule: a tool (or ``*``) and an optional glob pattern."""

    text: str
    tool: str
    pattern: str | None = None


@attrs.frozen
class Policy:
    """The parsed permission rules, and the absolute paths never written.

    ``protected`` holds absolute paths (the profile directory, the home rc
    files; see ``protected_paths``), which the caller computes from the
    environment. ``home`` expands ``~`` and ``$HOME`` in shell write targets,
    ``project`` anchors relative ones.
    """

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    protected: tuple[str, ...] = ()
    home: str = ""
    # The project directory (where tools run), when the caller knows it: relative shell
    # write targets are then checked against ``protected`` too.
    project: str = ""


@attrs.frozen
class Decision:
    """The verdict on one call, with the rule that settled it and why.

    ``rule`` is the rule's text as written, ``PROTECTED_RULE`` for a protected
    path, or "" for a default.
    """

    action: Action
    rule: str
    reason: str


# -- parsing --------------------------------------------------------------


def parse_rule(text: str) -> Rule:
    """Parse ``tool`` or ``tool(pattern)``; raise ValueError naming the rule."""
    if not isinstance(text, str):
        raise PolicyError(f"permission rule {text!r} is not a string")
    m = _RULE.fullmatch(text)
    if m is None:
        raise PolicyError(f"permission rule {text!r} is not `tool` or `tool(pattern)`")
    tool, pattern = m.group(1), m.group(2)
    if tool.startswith(MCP_PREFIX):
        if pattern is not None:
            raise PolicyError(
                f"permission rule {text!r}: MCP tools are matched by name only; drop the ()"
            )
        try:
            compile_glob(tool, paths=False)
        except GlobError as exc:
            raise PolicyError(f"permission rule {text!r}: {exc}") from None
        return Rule(text=text.strip(), tool=tool)
    tool = tool.lower()
    if tool != ANY_TOOL and tool not in RULE_TOOL_NAMES:
        raise PolicyError(
            f"permission rule {text!r} names unknown tool {tool!r}; "
            f"tools are {', '.join(RULE_TOOL_NAMES)} and MCP tools (mcp__<server>__<tool>)"
        )
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise PolicyError(f"permission rule {text!r} has an empty pattern; drop the ()")
        if tool not in SUBJECT_ARGUMENT:
            raise PolicyError(f"permission rule {text!r}: {tool} takes no pattern")
        try:
            compile_glob(pattern, paths=tool != "bash")
            compile_glob(pattern, paths=False)
        except GlobError as exc:
            raise PolicyError(f"permission rule {text!r}: {exc}") from None
    return Rule(text=text.strip(), tool=tool, pattern=pattern)


def parse_policy(
    mapping: Mapping[str, object] | None,
    *,
    protected: Iterable[str] = (),
    home: str = "",
    project: str = "",
) -> Policy:
    """Build a Policy from the ``permissions`` object of config.json.

    Raises ValueError naming the bad key or rule; a config error must stop seri
    rather than leave it running with rules the person did not mean.
    """
    mapping = {} if mapping is None else mapping
    if not isinstance(mapping, Mapping):
        raise PolicyError("permissions must be an object with allow, ask and deny lists")
    unknown = sorted(set(mapping) - {"allow", "ask", "deny"})
    if unknown:
        raise PolicyError(
            f"unknown key(s) in permissions: {', '.join(map(str, unknown))}; "
            "expected allow, ask, deny"
        )
    lists: dict[str, tuple[Rule, ...]] = {}
    for key in ("allow", "ask", "deny"):
        value = mapping.get(key, [])
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise PolicyError(f"permissions.{key} must be a list of rules, not {value!r}")
        lists[key] = tuple(_parse_listed_rule(key, item) for item in value)
    return Policy(
        allow=lists["allow"],
        ask=lists["ask"],
        deny=lists["deny"],
        protected=tuple(protected),
        home=home,
        project=project,
    )


def _parse_listed_rule(key: str, item: object) -> Rule:
    try:
        return parse_rule(item)  # type: ignore[arg-type]  # checked inside
    except PolicyError as exc:
        raise PolicyError(f"permissions.{key}: {exc}") from None


def with_allowed(policy: Policy, rules: Iterable[str]) -> Policy:
    """The policy plus allow rules for this run only (``--allow``)."""
    extra = tuple(parse_rule(text) for text in rules)
    return attrs.evolve(policy, allow=policy.allow + extra)


def names_tool(rule: Rule, tool_name: str, server: str = "") -> bool:
    """Whether ``rule`` is about ``tool_name``: the same name, ``*``, or for an MCP tool a glob
    over its name or its server's prefix (``mcp__git`` covers ``mcp__git__status``).

    ``server`` is the MCP tool's server when its record is known: a server's prefix then
    names exactly that server's tools. From the name alone it could not (a server or a tool
    may itself hold ``__``: ``mcp___`` would seem to cover server ``__``'s tools)."""
    if rule.tool in (tool_name, ANY_TOOL):
        return True
    if not (rule.tool.startswith(MCP_PREFIX) and tool_name.startswith(MCP_PREFIX)):
        return False
    if server:
        if rule.tool == server_prefix(server).removesuffix(MCP_SEPARATOR):
            return True
    elif tool_name.startswith(rule.tool + MCP_SEPARATOR):
        return True
    return glob_matches(rule.tool, tool_name, paths=False)


def by_rules(
    policy: Policy,
    tool_name: str,
    shown: str,
    matches: Callable[[Rule], bool],
    allow_matches: Callable[[Rule], bool],
    allowed_by_default: bool | None = None,
    server: str = "",
) -> Decision:
    """Deny, then ask, then allow, then the default, for one tool and subject.

    The default is the tool record's unless ``allowed_by_default`` says it (a tool that is not
    built in, such as an MCP tool, brings its own record; ``server`` is an MCP tool's server)."""
    tiers: tuple[tuple[Action, str, tuple[Rule, ...], Callable[[Rule], bool]], ...] = (
        ("deny", "denied", policy.deny, matches),
        ("ask", "needs approval", policy.ask, matches),
        ("allow", "allowed", policy.allow, allow_matches),
    )
    for action, verb, rules, check in tiers:
        for rule in rules:
            if names_tool(rule, tool_name, server) and check(rule):
                return Decision(action, rule.text, f"{shown} {verb} by rule {rule.text}")
    if allowed_by_default is None:
        spec = spec_of(tool_name)
        allowed_by_default = spec is not None and spec.default == "allow"
    if allowed_by_default:
        return Decision("allow", "", f"{tool_name} is allowed by default")
    return Decision("ask", "", f"{shown} needs approval (no rule allows it)")
