"""A session's Agent Skills: found once at start, listed in the frozen prompt, activated.

A project's skill loads only once the person approved it for that project, as it is now (the
digest of its SKILL.md; ``seri skills approve``), under the same trust model as a project's
MCP servers (``seri.pure.trust``): a cloned repository's instructions do not reach the model
unasked. The person's own skills (``$SERI_HOME/skills``, ``~/.agents/skills``,
``~/.claude/skills``) always load.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from seri.io.mcp_approvals import approved_digests
from seri.io.skill_scan import read_skill_file, scan_root, skill_roots
from seri.io.store import Store
from seri.pure.effects import ToolRun
from seri.pure.prompt import PromptSource
from seri.pure.skills import (
    Skill,
    activation_text,
    catalogue_cap,
    catalogue_text,
    find,
    merged,
    skill_tool,
)
from seri.pure.tool_specs import ToolSpec
from seri.pure.trust import APPROVED, SKILL, entry_digest, standing, why_waiting
from seri.pure.value_record import ValueRecord

# A skill's file read through activate_skill: as much as read_file shows in one call.
SKILL_FILE_CHARS = 100_000
PROMPT_LABEL = "skills"


@attrs.frozen(repr=False, eq=False)
class Waiting(ValueRecord):
    """A project skill not loaded because it is not approved (or changed since)."""

    skill: Skill
    digest: str
    state: str


@attrs.frozen(repr=False, eq=False)
class SkillSet(ValueRecord):
    """The skills this session offers, what was wrong on the way and what waits approval."""

    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()
    waiting: tuple[Waiting, ...] = ()
    cap: int = 0

    def prompt_source(self) -> PromptSource:
        """The catalogue, as one more source of the frozen prompt ('' without skills)."""
        return PromptSource(PROMPT_LABEL, catalogue_text(self.skills, self.cap))

    def tool(self) -> tuple[ToolSpec, ...]:
        """The activation tool, when there is a skill to activate."""
        return (skill_tool(self.skills),) if self.skills else ()

    def find(self, name: str) -> Skill | None:
        return find(self.skills, name)

    def notes(self) -> tuple[str, ...]:
        """The lines for stderr at start: broken skills, and the project's waiting ones."""
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
            return ToolRun(activation_text(skill))
        try:
            return ToolRun(read_skill_file(skill.directory, str(file), SKILL_FILE_CHARS))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return ToolRun(f"skill {name}'s file {file} cannot be read: {reason}", is_error=True)


NO_SKILLS = SkillSet()


def skill_digest(skill: Skill) -> str:
    """What an approval of a project's skill covers: its name and its whole SKILL.md."""
    return entry_digest({"name": skill.name, "SKILL.md": skill.source})


def load_skills(
    store: Store, project: Path, profile_root: Path, window: int | None, home: Path | None = None
) -> SkillSet:
    """The skills of a session in ``project``: scanned, merged, the project's gated."""
    home = home if home is not None else Path(os.path.expanduser("~"))
    found: list[Skill] = []
    warnings: list[str] = []
    for root, origin in skill_roots(project, profile_root, home):
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
