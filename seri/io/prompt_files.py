"""Reading what goes into the frozen prompt: AGENTS.md, rules and memory files.

Read once, when seri starts on a session; nothing here is re-read mid-session.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import attrs

from seri.pure.prompt import FrozenPrompt, PromptSource, assemble_prompt
from seri.pure.rules import GlobRule, RuleFile, always_on, glob_rules, parse_rule

MEMORY_DIR = "memory"
# A memory file larger than this must be consolidated before more is added.
MEMORY_CAP_BYTES = 16 * 1024


@attrs.frozen
class StartupFiles:
    prompt: FrozenPrompt
    glob_rules: tuple[GlobRule, ...]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return ""


def project_memory_file(root: Path, project: str) -> Path:
    """Per-project memory lives in the profile, keyed by the project's path."""
    digest = hashlib.sha256(project.encode("utf-8")).hexdigest()[:16]
    return root / MEMORY_DIR / "projects" / f"{digest}.md"


def global_memory_file(root: Path) -> Path:
    return root / MEMORY_DIR / "global.md"


def read_rules(project: Path) -> list[RuleFile]:
    directory = project / ".seri" / "rules"
    try:
        paths = sorted(p for p in directory.iterdir() if p.suffix == ".md" and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [parse_rule(p.stem, _read(p)) for p in paths]


def load_startup_files(root: Path, project: Path) -> StartupFiles:
    rules = read_rules(project)
    sources = [
        PromptSource("AGENTS.md (global)", _read(root / "AGENTS.md")),
        PromptSource("AGENTS.md (project)", _read(project / "AGENTS.md")),
        *(PromptSource(f"rule {r.name}", r.text) for r in always_on(rules)),
        PromptSource("memory (global)", _read(global_memory_file(root))),
        PromptSource("memory (project)", _read(project_memory_file(root, str(project)))),
    ]
    return StartupFiles(assemble_prompt(str(project), sources), glob_rules(rules))
