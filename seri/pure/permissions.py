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

from seri.pure.command_permissions import decide_command
from seri.pure.file_permissions import decide_file
from seri.pure.permission_policy import Decision, Policy
from seri.pure.tool_specs import SPEC_BY_NAME


def decide(
    policy: Policy,
    tool_name: str,
    args: Mapping[str, object],
    *,
    project_relative_path: str | None = None,
    resolved_path: str | None = None,
    project: str = "",
    protected: Iterable[str] = (),
) -> Decision:
    """Decide one call with already validated arguments.

    For file tools, pass the path as the io layer resolved it (symlinks
    followed): ``project_relative_path`` (POSIX, relative to the project root)
    for rule matching and the ``.git`` check, ``resolved_path`` (absolute) for
    the protected-path check. Without them the raw argument is used, joined to
    ``project`` when given, which is only right when it crosses no symlink;
    rules must see the real path, or a link could lead past a deny rule.
    ``protected`` adds absolute paths to ``policy.protected`` for this call.
    """
    extra = tuple(protected)
    if extra:
        policy = attrs.evolve(policy, protected=policy.protected + extra)
    if tool_name not in SPEC_BY_NAME:
        return Decision("deny", "", f"{tool_name!r} is not a tool")
    if tool_name == "bash":
        return decide_command(policy, str(args.get("command", "")), project or policy.project)
    return decide_file(
        policy,
        tool_name,
        args,
        project_relative_path=project_relative_path,
        resolved_path=resolved_path,
        project=project,
    )
