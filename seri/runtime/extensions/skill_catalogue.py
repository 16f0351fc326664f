"""A session's Agent Skills: found once at start, listed in the frozen prompt, activated.

A project's skill loads only once the person approved it for that project, as it is now (the
digest of its SKILL.md; ``seri skills approve``), under the same trust model as a project's
MCP servers (``seri.pure.permissions.trust``): a cloned repository's instructions do not reach the
model unasked. The person's own skills (``$SERI_HOME/skills``, ``~/.agents/skills``,
``~/.claude/skills``) always load.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seri.io.extensions.skill_scan import skill_roots
from seri.pure.agent.effects import ToolRun
from seri.pure.agent.prompt import PromptSource

if TYPE_CHECKING:
    from seri.io.session.store import Store
    from seri.pure.extensions.skills import Skill, Waiting
    from seri.pure.tools.tool_specs import ToolSpec

# The activation tool's name (seri.pure.extensions.skills.ACTIVATE_SKILL, which a test holds it to).
ACTIVATE_SKILL = "activate_skill"
# A skill's file read through activate_skill: as much as read_file shows in one call.
SKILL_FILE_CHARS = 100_000
PROMPT_LABEL = "skills"


class SkillSet:
    """The skills this session offers, what was wrong on the way and what waits approval.

    (A plain class: a chat without skills makes one, and an attrs class costs its making at
    every start.)"""

    __slots__ = ("cap", "skills", "waiting", "warnings")

    def __init__(
        self,
        skills: tuple[Skill, ...] = (),
        warnings: tuple[str, ...] = (),
        waiting: tuple[Waiting, ...] = (),
        cap: int = 0,
    ) -> None:
        self.skills = skills
        self.warnings = warnings
        self.waiting = waiting
        self.cap = cap

    def prompt_source(self) -> PromptSource:
        """The catalogue, as one more source of the frozen prompt ('' without skills)."""
        if not self.skills:
            return PromptSource(PROMPT_LABEL, "")
        from seri.pure.extensions.skills import catalogue_text

        return PromptSource(PROMPT_LABEL, catalogue_text(self.skills, self.cap))

    def tool(self) -> tuple[ToolSpec, ...]:
        """The activation tool, when there is a skill to activate."""
        if not self.skills:
            return ()
        from seri.pure.extensions.skills import skill_tool

        return (skill_tool(self.skills),)

    def runs(self, tool: str) -> bool:
        """Whether a call of ``tool`` is an activation this set answers."""
        return bool(self.skills) and tool == ACTIVATE_SKILL

    def find(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def notes(self) -> tuple[str, ...]:
        """The lines for stderr at start: broken skills, and the project's waiting ones."""
        if not self.waiting and not self.warnings:
            return ()
        from seri.pure.permissions.trust import why_waiting

        notes = [f"seri: warning: {w}" for w in self.warnings]
        notes.extend(
            f"seri: project skill not loaded: {why_waiting(w.skill.name, w.state, 'skill')}; "
            f"approve it with: seri skills approve {w.skill.name}"
            for w in self.waiting
        )
        return tuple(notes)

    def run(self, arguments: Mapping[str, Any]) -> ToolRun:
        """activate_skill: the skill's content, or one of its files."""
        name = str(arguments.get("name", ""))
        skill = self.find(name)
        if skill is None:
            return ToolRun(f"no skill {name!r} in this session", is_error=True)
        file = arguments.get("file")
        if not file:
            from seri.pure.extensions.skills import activation_text

            return ToolRun(activation_text(skill))
        from seri.io.extensions.skill_scan import read_skill_file

        try:
            return ToolRun(read_skill_file(skill.directory, str(file), SKILL_FILE_CHARS))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return ToolRun(f"skill {name}'s file {file} cannot be read: {reason}", is_error=True)


NO_SKILLS = SkillSet()


def skill_digest(skill: Skill) -> str:
    """What an approval of a project's skill covers: its name and its whole SKILL.md."""
    from seri.pure.permissions.trust import entry_digest

    return entry_digest({"name": skill.name, "SKILL.md": skill.source})


def load_skills(
    store: Store, project: Path, profile_root: Path, window: int | None, home: Path | None = None
) -> SkillSet:
    """The skills of a session in ``project``: scanned, merged, the project's gated."""
    home = home if home is not None else Path(os.path.expanduser("~"))
    roots = skill_roots(project, profile_root, home)
    if not any(os.path.isdir(root) for root, _ in roots):
        return NO_SKILLS  # the usual case: nothing of the skills' machinery is loaded
    from seri.io.extensions.skill_scan import scan_root
    from seri.io.mcp.mcp_approvals import approved_digests
    from seri.pure.extensions.skills import Waiting, catalogue_cap, merged
    from seri.pure.permissions.trust import APPROVED, SKILL, standing

    found: list[Skill] = []
    warnings: list[str] = []
    for root, origin in roots:
        for read in scan_root(root, origin):
            warnings.extend(read.warnings)
            if read.skill is not None:
                found.append(read.skill)
    if not found and not warnings:
        return NO_SKILLS
    approved = approved_digests(store, str(project), SKILL) if found else {}
    usable, waiting = [], []
    # Gated before merging: a project's skill not approved does not hide the person's own.
    for skill in found:
        if skill.origin == "project":
            digest = skill_digest(skill)
            state = standing(digest, approved.get(skill.name))
            if state != APPROVED:
                waiting.append(Waiting(skill, digest, state))
                continue
        usable.append(skill)
    return SkillSet(merged(usable), tuple(warnings), tuple(waiting), catalogue_cap(window))
