"""The README a newcomer reads in ten minutes: its map of the code comes early, and no link
of it or of the reference under docs/ leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MAP_HEADING = "## Map: where things live"
# The map's heading within the README's first lines (issue 30: "within its first 120").
MAP_WITHIN = 120
# [text](target), not inside a code block or a code span (stripped before matching).
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(text: str) -> list[str]:
    """The targets of a markdown text's links that point into the repository."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = (match.group(1) for match in LINK.finditer(prose))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]


def documents() -> list[Path]:
    return [README, *sorted((REPO / "docs").glob("*.md"))]


def test_the_map_comes_within_the_first_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert MAP_HEADING in lines, f"the README has no {MAP_HEADING!r} heading"
    assert lines.index(MAP_HEADING) < MAP_WITHIN


def test_every_relative_link_leads_to_a_file() -> None:
    broken = [
        f"{document.relative_to(REPO)}: {target}"
        for document in documents()
        for target in relative_links(document.read_text(encoding="utf-8"))
        if not (document.parent / target.split("#", 1)[0]).exists()
    ]
    assert broken == []


def test_the_reference_links_every_doc() -> None:
    """Each topic moved to docs/ is reachable from the README."""
    linked = {Path(target).name for target in relative_links(README.read_text(encoding="utf-8"))}
    unlinked = [p.name for p in documents()[1:] if p.name not in linked]
    assert unlinked == []


def test_links_are_found_outside_code_only() -> None:
    text = "see [a](docs/a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](https://x.org) [e](#f)"
    assert relative_links(text) == ["docs/a.md"]
