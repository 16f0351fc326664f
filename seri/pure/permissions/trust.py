"""What seri trusts, what it holds back until the person says yes, and how a change is noticed.

seri runs in repositories people did not write. It trusts what the *person* wrote: their
``config.json`` and the rest of their profile (``$SERI_HOME``). It does not trust what a
*project* brings that can run code or receive data, until the person approves it for that
project: today the entries of a project's ``.mcp.json`` (a program to run, an endpoint to send
requests and headers to); project hooks and skills, when seri has them, are further kinds of
the same thing (``PROJECT_KINDS``) and are decided here the same way.

- **What an approval covers**: the whole entry as the project wrote it, every field (``type``,
  ``command``, ``args``, ``env``, ``cwd``, ``url``, ``headers`` and any field added later, known
  to seri or not), as one digest of its canonical JSON (keys sorted, so the same entry written
  in another key order is the same entry). Any change to any field is a new entry, which asks
  again. The digest is of the entry as written, before ``${VAR}`` expansion: that is what the
  project controls; what a variable expands to is the person's own environment.
- **What an approval row and a screen hold**: the digest and the masked form of the entry
  (``masked_entry``: literal secrets replaced, ``${VAR}`` references shown as written), never a
  secret.
- **What a project entry may read of the person's environment**: ``${VAR}`` may not expand
  seri's own key variables nor any secret-looking variable (by its name, or by its value:
  the key under an innocent name), unless the person's ``config.json`` names that variable for
  that server (``"mcp": {"project_secrets": {"<server>": ["VAR"]}}``). Such a reference makes
  the entry a problem named on stderr; it is never expanded into something the project's
  program or endpoint receives.
- **A name the person already uses**: a project entry named like one of the person's own
  servers never replaces, disables or hides it. The person's starts; the project's is
  refused with a warning naming both (``CONFLICT``), and cannot be approved under that name.

Everything here is a decision on values; the shell asks it (``seri.pure.mcp.mcp_config`` reads
entries with ``ExpansionPolicy``; ``seri.pure.mcp.mcp_startup`` plans with ``standing``;
``seri.io.mcp.mcp_approvals`` keeps digests and masked forms).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from seri.pure.mcp.mcp_environment import holds_credential, is_credential_name
from seri.pure.trajectories.redaction import REDACTED, Redactor

# What a project can bring that runs code or receives data, and the file it comes in.
# A new kind (hooks, skills) is one more entry here, its own approvals and its own reader.
MCP_SERVER = "mcp_server"
HOOK = "hook"
SKILL = "skill"
PROJECT_KINDS: Mapping[str, str] = {
    MCP_SERVER: ".mcp.json",
    HOOK: ".seri/settings.json or .claude/settings.json",
    SKILL: "SKILL.md",
}

# seri's own key variables: never a project's business unless the person says so.
SERI_KEY_VARIABLES = ("OPENROUTER_API_KEY", "SERI_API_KEY")

DIGEST_PREFIX = "sha256:"
# An approval stored before approvals covered the whole entry (it covered only the command
# and arguments, or the URL): migration 10 leaves this in its place, with no secret of it.
OLD_FORM = "old-form"

# Standing of a project item against what the person approved.
APPROVED = "approved"
NEW = "not approved"
CHANGED = "changed since approved"
APPROVED_OLD_FORM = "approved in the old form"
CONFLICT = "conflicts with yours"

_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")


def canonical(entry: Any) -> str:
    """One text per entry: keys sorted, no spaces, as JSON writes it (so ``1`` and ``1.0``,
    ``true`` and ``1`` stay different, as they are different entries)."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_digest(entry: Any) -> str:
    """What an approval holds of an entry: a digest of the whole of it."""
    data = canonical(entry).encode("utf-8", "surrogatepass")
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def short_digest(digest: str) -> str:
    """The digest as a screen shows it: enough to compare two by eye."""
    return digest[: len(DIGEST_PREFIX) + 12] if digest.startswith(DIGEST_PREFIX) else digest


def masked_entry(entry: Any, redactor: Redactor | None = None) -> Any:
    """``entry`` with every secret it spells out replaced by ``[REDACTED]``: what the redactor
    knows (key shapes, known values, ``Bearer …``), and the literal value of any field whose
    name says credential (``"API_TOKEN": "hunter2"``). ``${VAR}`` references stay as written:
    they say which of the person's variables the entry reads, which is what a reviewer needs."""
    return _masked(entry, redactor or Redactor(), secret_name=False)


def _masked(value: Any, redactor: Redactor, *, secret_name: bool) -> Any:
    if isinstance(value, str):
        if secret_name and _REFERENCE.sub("", value).strip():
            literal = _REFERENCE.sub("", value).strip()
            if literal.lower().rstrip(":") not in ("bearer", "basic", "token"):
                return REDACTED
        return redactor.text(value)
    if isinstance(value, Mapping):
        return {
            redactor.text(str(key)): _masked(
                item, redactor, secret_name=is_credential_name(str(key))
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_masked(item, redactor, secret_name=secret_name) for item in value]
    return value


def shown_entry(entry: Any, redactor: Redactor | None = None) -> str:
    """The masked entry as one line of JSON, for screens and approval rows."""
    return canonical(masked_entry(entry, redactor))


def standing(digest: str, approved: str | None) -> str:
    """A project item's standing: ``approved`` is the digest it was approved as (None: never)."""
    if approved is None:
        return NEW
    if approved == OLD_FORM:
        return APPROVED_OLD_FORM
    if digest.startswith(DIGEST_PREFIX) and approved == digest:
        return APPROVED
    return CHANGED


def why_waiting(name: str, state: str, file: str = PROJECT_KINDS[MCP_SERVER]) -> str:
    """One sentence for a project item that does not start, naming the fix."""
    if state == APPROVED_OLD_FORM:
        return (
            f"{file}'s {name!r} was approved by an older seri for its command only; approvals "
            "now cover the whole entry (env, cwd, headers too): review it and approve it again"
        )
    if state == CHANGED:
        return f"{file}'s {name!r} changed since you approved it: review it and approve it again"
    return f"{file}'s {name!r} is not approved here yet"


def conflict_warning(name: str, person_source: str, project_source: str) -> str:
    """The warning for a project entry named like one of the person's servers."""
    return (
        f"MCP server {name!r} is named both in {person_source} (yours) and in {project_source}: "
        f"yours starts; the project's entry is ignored (a project never replaces your servers; "
        f"rename it in {project_source} to use it too)"
    )


@attrs.frozen
class ExpansionPolicy:
    """Which of the person's variables a ``${VAR}`` in an entry may expand to.

    ``trusted``: an entry of the person's own config.json, which may name any variable.
    Otherwise (a project's), a secret-looking variable or seri's own key expands only when
    ``granted`` names it for the server."""

    trusted: bool = True
    granted: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    redactor: Redactor = attrs.field(factory=Redactor)

    def refuses(self, server: str, variable: str, value: str) -> bool:
        if self.trusted or variable in self.granted.get(server, frozenset()):
            return False
        return (
            variable in SERI_KEY_VARIABLES
            or is_credential_name(variable)
            or holds_credential(value, self.redactor)
        )

    def refusal(self, server: str, variables: Iterable[str]) -> str:
        names = list(dict.fromkeys(variables))
        listed = ", ".join(f"${{{name}}}" for name in names)
        grant = json.dumps({"mcp": {"project_secrets": {server: names}}})
        return (
            f"{listed} {'is a secret' if len(names) == 1 else 'are secrets'} of yours (seri's "
            "key or a secret-looking variable), which a project's entry may not read; to give "
            f"{'it' if len(names) == 1 else 'them'} to this server, add to config.json: {grant}"
        )


PERSON_POLICY = ExpansionPolicy()


def project_policy(
    granted: Mapping[str, Iterable[str]], known_secrets: Iterable[str] = ()
) -> ExpansionPolicy:
    """The policy for a project's entries: ``granted`` is config.json's ``mcp.project_secrets``;
    ``known_secrets`` are values that are secrets whatever their variable is called."""
    return ExpansionPolicy(
        trusted=False,
        granted={server: frozenset(names) for server, names in granted.items()},
        redactor=Redactor.of(known_secrets),
    )
