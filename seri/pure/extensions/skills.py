"""Agent Skills (agentskills.io): what a skill is to seri, its catalogue and its activation.

A skill is a directory with a ``SKILL.md`` (front matter, then instructions) and optional
files beside it. seri follows the client integration guide: at session start the names and
descriptions of the skills found go into the frozen system prompt (the catalogue, capped at a
small share of the window, as Codex caps its list at about 2%); a skill's body enters the
conversation only when it is activated, by the model calling ``activate_skill`` or by the
person typing ``/skill-name args``. Its files stay on disk, listed, read on demand.

An activated skill's message starts with ``[skill NAME]``: compaction carries such a message
verbatim, like a rule that fired (the guide asks clients to exempt skill content from
pruning), and a second activation of the same skill is one entry there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import attrs

from seri.pure.extensions.skill_frontmatter import FrontMatterError, parse_front_matter, problems
from seri.pure.tools.tool_specs import Param, ToolSpec

Origin = Literal["project", "user"]

ACTIVATE_SKILL = "activate_skill"
SKILL_MESSAGE_PREFIX = "[skill "
# Codex's cap on its skills list: about 2% of the window, 8,000 characters when the window
# is not known when the prompt is frozen.
CATALOGUE_SHARE = 0.02
CATALOGUE_CHARS_UNKNOWN_WINDOW = 8_000
CHARS_PER_TOKEN = 4
# A resource list is a map, not an inventory: a skill with a thousand files lists these many.
MAX_LISTED_FILES = 50


@attrs.frozen
class Skill:
    """One usable skill: where it is (``directory``, absolute) and what it says."""

    name: str
    description: str
    body: str
    directory: str
    origin: Origin
    # Its files other than SKILL.md, relative to ``directory`` (at most MAX_LISTED_FILES).
    files: tuple[str, ...] = ()
    # The SKILL.md as read, for the approval of a project's skill (its digest).
    source: str = ""


@attrs.frozen
class SkillRead:
    """What one SKILL.md gave: the skill (None when it cannot be used) and the warnings."""

    skill: Skill | None
    warnings: tuple[str, ...] = ()


@attrs.frozen
class Waiting:
    """A project skill not loaded because it is not approved (or changed since)."""

    skill: Skill
    digest: str
    state: str


def read_skill(
    directory_name: str,
    directory: str,
    text: str,
    origin: Origin,
    files: Sequence[str] = (),
) -> SkillRead:
    """A SKILL.md read leniently: a skill that breaks a rule of the specification still
    loads (with a warning) when it has a name and a description to list it by."""
    where = f"skill {directory}"
    try:
        fields, body = parse_front_matter(text)
    except FrontMatterError as exc:
        return SkillRead(None, (f"{where} was not loaded: {exc}",))
    found = problems(fields, directory_name)
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        return SkillRead(
            None, (f"{where} was not loaded: it has no description (add 'description:')",)
        )
    raw_name = fields.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else directory_name
    if not _slash_safe(name):
        name = directory_name
    warnings = (f"{where}: {'; '.join(found)} (loaded anyway)",) if found else ()
    skill = Skill(
        name=name,
        description=" ".join(description.split()),
        body=body,
        directory=directory,
        origin=origin,
        files=tuple(files[:MAX_LISTED_FILES]),
        source=text,
    )
    return SkillRead(skill, warnings)


def _slash_safe(name: str) -> bool:
    """A name a person can type after ``/`` and the model can pass: no space, no slash."""
    return bool(name) and not any(c.isspace() or c in "/\\" for c in name)


def merged(found: Iterable[Skill]) -> tuple[Skill, ...]:
    """The skills in the order given (project's first), one per name: the first one wins,
    so a project's skill overrides a person's of the same name."""
    by_name: dict[str, Skill] = {}
    for skill in found:
        by_name.setdefault(skill.name, skill)
    return tuple(by_name.values())


def catalogue_cap(window: int | None) -> int:
    """The most characters the catalogue may take in the system prompt."""
    if not window:
        return CATALOGUE_CHARS_UNKNOWN_WINDOW
    return max(400, int(window * CATALOGUE_SHARE) * CHARS_PER_TOKEN)


CATALOGUE_LEAD = (
    "Skills are instructions for particular tasks, kept as files. When a task matches a "
    f"skill's description, call {ACTIVATE_SKILL} with its name first and follow what it "
    "says; the person can also start one by typing /name."
)


def catalogue_text(skills: Sequence[Skill], cap: int) -> str:
    """The ``<available_skills>`` block, at most ``cap`` characters ('' with no skill).

    Whole entries while they fit; then names only; a skill even its name cannot be listed
    for is counted at the end (activate_skill still knows it by name)."""
    if not skills:
        return ""
    head, tail = f"{CATALOGUE_LEAD}\n<available_skills>\n", "</available_skills>"
    lines: list[str] = []
    used = len(head) + len(tail)
    left_out = 0
    for index, skill in enumerate(skills):
        whole = f"- {skill.name}: {skill.description}\n"
        bare = f"- {skill.name}\n"
        note = f"({len(skills) - index} more, not listed: the prompt has no room)\n"
        room = cap - used - (len(note) if index < len(skills) - 1 else 0)
        if len(whole) <= room:
            line = whole
        elif len(bare) <= room:
            line = bare
        else:
            left_out = len(skills) - index
            break
        lines.append(line)
        used += len(line)
    if left_out:
        lines.append(f"({left_out} more, not listed: the prompt has no room)\n")
    text = head + "".join(lines) + tail
    return text if len(text) <= cap else ""


def skill_tool(skills: Sequence[Skill]) -> ToolSpec:
    """The tool the model activates a skill with; its ``name`` is one of theirs."""
    return ToolSpec(
        ACTIVATE_SKILL,
        "Load a skill's instructions (the skills are listed in the system prompt). With "
        "`file`, read one of the skill's files instead (a path the activation listed).",
        (
            Param("name", "string", "The skill's name.", enum=tuple(s.name for s in skills)),
            Param(
                "file",
                "string",
                "A file of the skill, relative to its directory.",
                required=False,
            ),
        ),
        access="read",
        runner="skill",
        default="allow",
    )


def activation_text(skill: Skill, arguments: str = "") -> str:
    """The message that activates ``skill``: its body whole, where its files are (listed,
    not read) and, from ``/name args``, what the person asked for."""
    files = "".join(f"  {name}\n" for name in skill.files)
    listing = (
        f"Its files (read one with {ACTIVATE_SKILL}, file=PATH; run its scripts from "
        f"that directory):\n{files}"
        if files
        else ""
    )
    asked = f"\nThe person asked, with this skill: {arguments.strip()}\n" if arguments else ""
    return (
        f"{SKILL_MESSAGE_PREFIX}{skill.name}]\n"
        f'<skill_content name="{skill.name}">\n{skill.body.strip()}\n\n'
        f"Skill directory: {skill.directory}\n{listing}</skill_content>\n{asked}"
    )


def find(skills: Sequence[Skill], name: str) -> Skill | None:
    return next((skill for skill in skills if skill.name == name), None)
