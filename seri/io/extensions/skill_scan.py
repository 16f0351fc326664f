"""Finding Agent Skills on disk: the directories the client integration guide names.

A project's skills (``<project>/.seri/skills``, ``.agents/skills``, ``.claude/skills``) come
before the person's (``$SERI_HOME/skills``, ``~/.agents/skills``, ``~/.claude/skills``), so a
project's skill overrides a person's of the same name. A SKILL.md is read the way prompt
files are (``seri.io.inputs.prompt_files.read_prompt_file``): it must stay inside the directory it
was found in once every link is followed, be a regular file, and be at most 256 KiB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from seri.io.inputs.prompt_files import read_prompt_file

if TYPE_CHECKING:
    from seri.pure.extensions.skills import SkillRead

Origin = Literal["project", "user"]

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS = (".seri/skills", ".agents/skills", ".claude/skills")
USER_SKILL_DIRS = (".agents/skills", ".claude/skills")
# A skill's file tree is walked this deep for its listing, no deeper.
MAX_LISTING_DEPTH = 3


def skill_roots(project: Path, profile_root: Path, home: Path) -> tuple[tuple[Path, Origin], ...]:
    """Where skills are looked for, first wins: the project's, then the person's."""
    in_project: tuple[tuple[Path, Origin], ...] = tuple(
        (project / d, "project") for d in PROJECT_SKILL_DIRS
    )
    user: tuple[tuple[Path, Origin], ...] = (
        (profile_root / "skills", "user"),
        *((home / d, "user") for d in USER_SKILL_DIRS),
    )
    return (*in_project, *user)


def scan_root(root: Path, origin: Origin) -> list[SkillRead]:
    """Every skill directory directly under ``root`` (none when it is not a directory)."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    from seri.pure.extensions.skills import read_skill  # only where there are skills

    found = []
    for name in names:
        directory = root / name
        if name.startswith(".") or not directory.is_dir():
            continue
        file = directory / SKILL_FILE
        if not file.exists() and (directory / "skill.md").exists():
            file = directory / "skill.md"
        if not file.exists():
            continue
        read = read_prompt_file(directory, file)
        if read.skipped:
            found.append(SkillRead(None, (f"skill {directory} was not loaded: {read.skipped}",)))
            continue
        found.append(read_skill(name, str(directory), read.text, origin, _files(directory)))
    return found


def _files(directory: Path) -> list[str]:
    """The skill's files other than SKILL.md, relative, sorted, at most MAX_LISTED_FILES."""
    from seri.pure.extensions.skills import MAX_LISTED_FILES

    found: list[str] = []
    base = len(str(directory)) + 1
    for top, dirs, files in os.walk(directory):
        depth = top[base:].count(os.sep) + 1 if len(top) > len(str(directory)) else 0
        dirs[:] = (
            sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_LISTING_DEPTH else []
        )
        for name in sorted(files):
            relative = os.path.join(top, name)[base:]
            if relative.lower() != "skill.md" and not name.startswith("."):
                found.append(relative)
            if len(found) >= MAX_LISTED_FILES:
                return found
    return found


def read_skill_file(directory: str, relative: str, cap: int) -> str:
    """One file of a skill, as text (at most ``cap`` bytes); raises OSError with the reason
    when it is not a regular file inside the skill's directory."""
    result = read_prompt_file(Path(directory), Path(directory) / relative)
    if result.skipped:
        raise OSError(result.skipped)
    if not result.text and not os.path.isfile(Path(directory) / relative):
        raise FileNotFoundError(f"the skill has no file {relative}")
    return result.text[:cap]
