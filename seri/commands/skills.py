"""Agent Skills: list what a chat here would load, validate a skill, approve a project's.

Usage:
  seri skills list [--json]
  seri skills validate <directory>...
  seri skills approve [<name>...]
  seri skills revoke [<name>...]
  seri skills (-h | --help)

Options:
  --json     One JSON object a line: name, origin, directory, loaded, state, description.
  -h --help  Show this help.

Skills are directories with a SKILL.md (agentskills.io): the project's in .seri/skills,
.agents/skills and .claude/skills; yours in $SERI_HOME/skills, ~/.agents/skills and
~/.claude/skills. A chat lists their names and descriptions in its system prompt; the model
activates one with the activate_skill tool, you with /NAME [words]. A project's skill loads
only once approved for that project (`approve` with no name approves all of them, as they
are now; any change to a SKILL.md asks again). `validate` applies the specification's rules
(as `skills-ref validate` does) and exits 2 when one is broken. README: Hooks and skills.
"""

from __future__ import annotations

import sys
from pathlib import Path

from seri.pure.inputs.errors import EXIT_OK, EXIT_USAGE
from seri.runtime.agent.running import parse_usage


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    from seri.runtime.extensions import skill_review
    from seri.runtime.extensions.approval_review import run_review

    if options["validate"]:
        lines, ok = skill_review.validate([Path(d) for d in options["<directory>"]])
        for line in lines:
            print(line, file=sys.stderr if line.startswith("seri:") else sys.stdout)
        return EXIT_OK if ok else EXIT_USAGE
    return run_review(skill_review, options)
