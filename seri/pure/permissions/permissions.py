"""Whether a tool call may run: allow, ask the person, or deny.

The policy comes from ``config.json`` ``permissions`` (plus ``--allow`` rules
for one run) and from nothing else: no text the model writes can change a
decision. Order of precedence, whatever the order rules were written in:

1. protected writes are denied, even under an allow rule or ``*``: ``.git/``
   (hooks run code), seri's profile directory (its config, rules and db), shell
   start-up files and ``~/.ssh``;
2. a matching deny rule denies, then an ask rule asks, then an allow rule allows;
3. with no matching rule, ``read_file``, ``glob`` and ``grep`` are allowed and
   everything else asks.

The policy and its order live in ``permission_policy``, the protected paths
in ``protected_paths``; which rules match a path is ``file_permissions``'s to
say, which match a shell command ``command_permissions``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from seri.pure.permissions.command_permissions import decide_command
from seri.pure.permissions.file_permissions import decide_file
from seri.pure.permissions.permission_policy import Decision, Policy, by_rules
from seri.pure.tools.tool_specs import ToolSpec, spec_of


def decide(
    policy: Policy,
    tool_name: str,
    args: Mapping[str, object],
    *,
    project_relative_path: str | None = None,
    resolved_path: str | None = None,
    project: str = "",
    protected: Iterable[str] = (),
    spec: ToolSpec | None = None,
) -> Decision:
    """Decide one call with already validated arguments.

    For file tools, pass the path as the io layer resolved it (symlinks
    followed): ``project_relative_path`` (POSIX, relative to the project root)
    for rule matching and the ``.git`` check, ``resolved_path`` (absolute) for
    the protected-path check. Without them the raw argument is used, joined to
    ``project`` when given, which is only right when it crosses no symlink;
    rules must see the real path, or a link could lead past a deny rule.
    ``protected`` adds absolute paths to ``policy.protected`` for this call. ``spec`` is the
    tool's record when it is not a built-in one (an MCP tool): such a tool is judged by its
    name only, and its record's default applies when no rule names it.
    """
    extra = tuple(protected)
    if extra:
        policy = attrs.evolve(policy, protected=policy.protected + extra)
    spec = spec_of(tool_name) if spec is None else spec
    if spec is None or spec.name != tool_name:
        return Decision("deny", "", f"{tool_name!r} is not a tool")
    if not spec.subject:
        return by_rules(
            policy,
            tool_name,
            tool_name,
            _any_rule,
            _any_rule,
            allowed_by_default=spec.default == "allow",
            server=spec.server,
        )
    if spec.runner == "shell":
        return decide_command(policy, str(args.get("command", "")), project or policy.project)
    return decide_file(
        policy,
        tool_name,
        args,
        project_relative_path=project_relative_path,
        resolved_path=resolved_path,
        project=project,
    )


def _any_rule(rule: object) -> bool:
    # A tool without a subject: a rule naming it matches every call.
    return True
