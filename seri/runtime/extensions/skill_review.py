"""``seri skills``: what a chat in this project would load, and the person's approvals."""

from __future__ import annotations

import json
import os
from pathlib import Path

from seri.io.inputs.prompt_files import PROMPT_FILE_CAP
from seri.pure.extensions.skill_frontmatter import FrontMatterError, parse_front_matter, problems
from seri.pure.permissions.trust import APPROVED
from seri.pure.terminal.terminal_text import one_line
from seri.runtime.agent.running import load_settings_warned
from seri.runtime.extensions import approval_review
from seri.runtime.extensions.approval_review import SKILLS, Candidate
from seri.runtime.extensions.skill_catalogue import SkillSet, load_skills
from seri.runtime.session.profile import Profile


def _loaded(profile: Profile, project: Path) -> SkillSet:
    settings = load_settings_warned(profile.root)
    return load_skills(profile.store, project, profile.root, settings.context_window)


def list_lines(profile: Profile, project: Path, *, as_json: bool) -> list[str]:
    found = _loaded(profile, project)
    rows = [
        {
            "name": skill.name,
            "origin": skill.origin,
            "directory": skill.directory,
            "loaded": True,
            "state": APPROVED if skill.origin == "project" else "yours",
            "description": skill.description,
        }
        for skill in found.skills
    ]
    rows += [
        {
            "name": w.skill.name,
            "origin": "project",
            "directory": w.skill.directory,
            "loaded": False,
            "state": w.state,
            "description": w.skill.description,
            "message": f"approve with: seri skills approve {w.skill.name}",
        }
        for w in found.waiting
    ]
    if as_json:
        return [json.dumps(row, ensure_ascii=False) for row in rows]
    lines = [
        f"{one_line(str(row['name']))}  {row['origin']}  {row['state']}  "
        f"{one_line(str(row['directory']))}\n  {one_line(str(row['description']))}"
        + (f"\n  {one_line(str(row['message']))}" if "message" in row else "")
        for row in rows
    ]
    lines += [f"warning: {one_line(w)}" for w in found.warnings]
    return lines or ["No skills here (README: Hooks and skills)."]


def validate(directories: list[Path]) -> tuple[list[str], bool]:
    """Each directory judged by the specification's rules; whether all of them pass."""
    lines: list[str] = []
    ok = True
    for directory in directories:
        file = directory / "SKILL.md"
        found: tuple[str, ...]
        try:
            with file.open("rb") as handle:
                data = handle.read(PROMPT_FILE_CAP + 1)
            if len(data) > PROMPT_FILE_CAP:
                found = (f"SKILL.md is larger than {PROMPT_FILE_CAP // 1024} KiB",)
            else:
                fields, _ = parse_front_matter(data.decode("utf-8"))
                found = problems(fields, os.path.basename(os.path.realpath(directory)))
        except (OSError, FrontMatterError, UnicodeDecodeError) as exc:
            found = (str(exc),)
        if found:
            ok = False
            lines.extend(f"seri: {one_line(f'{directory}: {problem}')}" for problem in found)
        else:
            lines.append(f"{one_line(str(directory))}: valid")
    return lines, ok


def approve(profile: Profile, project: Path, names: list[str]) -> list[str]:
    """Approve the project's skills named (all of them when none is), as they are now."""
    waiting = [
        Candidate(w.skill.name, w.digest, w.skill.directory, w.skill.directory)
        for w in _loaded(profile, project).waiting
    ]
    return approval_review.approve_waiting(profile.store, project, SKILLS, waiting, names)


def revoke(profile: Profile, project: Path, names: list[str]) -> list[str]:
    return approval_review.revoke(profile.store, project, SKILLS, names)
