"""What changed in the prompt files since a session last ran (said when it is resumed).

A session's prompt is frozen when a run of seri starts on it: AGENTS.md, the always-on
rules and the memory files are read once, and their hashes are stored with the session
(``FrozenPrompt.hashes``: label -> sha256). A resumed session is run with the files as they
are now; so that this is never a surprise, the hashes stored are compared with the files
read now and each difference is named. seri's own base prompt (label ``seri``) changes with
the project path and seri's version, not with a file anyone edited, so it is not named.
"""

from __future__ import annotations

from collections.abc import Mapping

BASE_LABEL = "seri"


def prompt_changes(frozen: Mapping[str, str], now: Mapping[str, str]) -> tuple[str, ...]:
    """Each prompt source that differs: ``"AGENTS.md (project) changed"``, ``"rule x
    added"``, ``"memory (global) removed"``; in the order the prompt has them."""
    changes: list[str] = []
    for label, digest in now.items():
        if label == BASE_LABEL:
            continue
        if label not in frozen:
            changes.append(f"{label} added")
        elif frozen[label] != digest:
            changes.append(f"{label} changed")
    changes.extend(
        f"{label} removed" for label in frozen if label not in now and label != BASE_LABEL
    )
    return tuple(changes)


def drift_note(session_id: str, changes: tuple[str, ...]) -> str:
    """One line for stderr (empty when nothing changed)."""
    if not changes:
        return ""
    return (
        f"seri: note: since session {session_id} last ran, its prompt files changed: "
        f"{', '.join(changes)}; this run reads them as they are now"
    )
