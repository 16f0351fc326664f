"""``seri skills``: what a chat in this project would load, and the person's approvals."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from seri.io import mcp_approvals
from seri.io.prompt_files import PROMPT_FILE_CAP
from seri.pure.errors import SeriError
from seri.pure.skill_frontmatter import FrontMatterError, parse_front_matter, problems
from seri.pure.terminal_text import one_line
from seri.pure.trust import APPROVED, SKILL, short_digest
from seri.runtime.profile import Profile
from seri.runtime.running import load_settings_warned
from seri.runtime.skill_catalogue import SkillSet, load_skills


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
    waiting = {w.skill.name: w for w in _loaded(profile, project).waiting}
    unknown = [name for name in names if name not in waiting]
    if unknown:
        listed = ", ".join(map(repr, waiting)) or "none"
        raise SeriError(
            f"no project skill waiting for approval named {', '.join(map(repr, unknown))}; "
            f"waiting: {listed} (seri skills list shows them all)"
        )
    chosen = [waiting[name] for name in (names or list(waiting))]
    rows = [(w.skill.name, w.digest, w.skill.directory) for w in chosen]
    mcp_approvals.approve(profile.store, str(project), rows, time.time(), SKILL)
    if not chosen:
        return ["No project skill waits for approval here."]
    return [
        f"Approved project skill {one_line(repr(w.skill.name))} for {one_line(str(project))} "
        f"({short_digest(w.digest)}): {one_line(w.skill.directory)}"
        for w in chosen
    ]


def revoke(profile: Profile, project: Path, names: list[str]) -> list[str]:
    approved = mcp_approvals.approved_digests(profile.store, str(project), SKILL)
    chosen = names or sorted(approved)
    unknown = [name for name in chosen if name not in approved]
    if unknown:
        raise SeriError(f"no approved project skill {', '.join(map(repr, unknown))} here")
    mcp_approvals.revoke(profile.store, str(project), chosen, SKILL)
    return [f"Revoked the approval of project skill {one_line(repr(n))}." for n in chosen]
