"""The person's approvals of a project's entries, one kind at a time: MCP servers, hooks, skills.

Every kind a project brings that can run code or reach the model is trusted the same way
(``seri.pure.permissions.trust``): approved for this project as it is now (the digest of the whole
entry, and what the person was shown), withdrawn by revoking. This is where ``seri mcp``,
``seri hooks`` and ``seri skills`` approve and revoke, so the three say it alike; what an
entry of each kind is, and which of them wait, stays with that kind.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from seri.io.mcp import mcp_approvals
from seri.io.session.store import Store
from seri.pure.inputs.errors import EXIT_OK, SeriError
from seri.pure.permissions.trust import HOOK, MCP_SERVER, SKILL, short_digest
from seri.pure.terminal.terminal_text import one_line

if TYPE_CHECKING:
    from seri.runtime.session.profile import Profile


@attrs.frozen
class EntryKind:
    """One kind of project entry: its key in the approvals (``seri.pure.permissions.trust``), how a
    screen names one, and the command that reviews them."""

    key: str
    noun: str
    command: str


MCP_SERVERS = EntryKind(MCP_SERVER, "MCP server", "seri mcp")
HOOKS = EntryKind(HOOK, "project hook", "seri hooks")
SKILLS = EntryKind(SKILL, "project skill", "seri skills")


@attrs.frozen
class Candidate:
    """A project entry as it would be approved: its name, the digest of the whole entry, what
    the approval row keeps of it (``shown``: never a secret), what it runs or is (``what``)
    and, for a kind whose entry says more than that, the entry shown on a line of its own."""

    name: str
    digest: str
    shown: str
    what: str
    entry: str = ""


def record(store: Store, project: Path, kind: EntryKind, chosen: Iterable[Candidate]) -> None:
    """Approve these entries for ``project``, as they are now."""
    rows = ((c.name, c.digest, c.shown) for c in chosen)
    mcp_approvals.approve(store, str(project), rows, time.time(), kind.key)


def approved_lines(project: Path, kind: EntryKind, chosen: Iterable[Candidate]) -> list[str]:
    """What approving ``chosen`` says, one line each (and its entry's, when it has one)."""
    return [
        f"Approved {kind.noun} {one_line(repr(c.name))} for {one_line(str(project))} "
        f"({short_digest(c.digest)}): {one_line(c.what)}"
        + (f"\n  entry: {one_line(c.entry)}" if c.entry else "")
        for c in chosen
    ]


def approve_waiting(
    store: Store,
    project: Path,
    kind: EntryKind,
    waiting: Sequence[Candidate],
    names: Sequence[str],
) -> list[str]:
    """Approve the waiting entries named (every one when none is), as they are now."""
    by_name = {c.name: c for c in waiting}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        listed = ", ".join(map(repr, by_name)) or "none"
        raise SeriError(
            f"no {kind.noun} waiting for approval named {', '.join(map(repr, unknown))}; "
            f"waiting: {listed} ({kind.command} list shows them)"
        )
    chosen = [by_name[name] for name in dict.fromkeys(names or by_name)]
    if not chosen:
        return [f"No {kind.noun} waits for approval here."]
    record(store, project, kind, chosen)
    return approved_lines(project, kind, chosen)


def revoke(store: Store, project: Path, kind: EntryKind, names: Sequence[str]) -> list[str]:
    """Withdraw approvals of entries of ``kind`` (all of this project's when none is named)."""
    approved = mcp_approvals.approved_digests(store, str(project), kind.key)
    chosen = list(names) or sorted(approved)
    unknown = [name for name in chosen if name not in approved]
    if unknown:
        raise SeriError(
            f"no approved {kind.noun} {', '.join(map(repr, unknown))} in "
            f"{one_line(str(project))}; {kind.command} list shows them"
        )
    mcp_approvals.revoke(store, str(project), chosen, kind.key)
    return [
        f"Revoked the approval of {kind.noun} {one_line(repr(name))} for {one_line(str(project))}."
        for name in chosen
    ]


class ProjectEntryReview(Protocol):
    """What ``seri hooks`` and ``seri skills`` run: a kind's list, approve and revoke."""

    def list_lines(self, profile: Profile, project: Path, *, as_json: bool) -> list[str]: ...

    def approve(self, profile: Profile, project: Path, names: list[str]) -> list[str]: ...

    def revoke(self, profile: Profile, project: Path, names: list[str]) -> list[str]: ...


def run_review(review: ProjectEntryReview, options: dict[str, Any]) -> int:
    """``list`` on stdout (what a script reads), ``approve`` and ``revoke`` said on stderr."""
    from seri.runtime.session.profile import current_project, open_profile

    profile = open_profile()
    project = Path(current_project())
    if options["list"]:
        for line in review.list_lines(profile, project, as_json=options["--json"]):
            print(line)
        return EXIT_OK
    if options["approve"]:
        lines = review.approve(profile, project, options["<name>"])
    else:
        lines = review.revoke(profile, project, options["<name>"])
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_OK
