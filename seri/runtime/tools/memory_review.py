"""Reviewing staged memory writes: what ``seri memory`` and ``/memory`` share."""

from __future__ import annotations

import sys
from pathlib import Path

from seri.io.session.store import Store
from seri.io.tools import memory_store
from seri.pure.terminal.text_table import render_table
from seri.pure.terminal.timestamps import iso_utc
from seri.pure.trajectories.json_lines import json_line
from seri.runtime.agent.running import whole_number


def entry_number(text: str) -> int:
    return whole_number(text, "a memory entry number")


def decide(store: Store, root: Path, n: int, *, approve: bool) -> str:
    """Approve (write into its memory file) or reject entry ``n``; the line to show."""
    if approve:
        path = memory_store.approve(store, root, n)
        return f"Wrote memory entry {n} to {path}; it enters the prompt the next time seri starts."
    memory_store.reject(store, n)
    return f"Rejected memory entry {n}."


def show_pending(store: Store, *, as_json: bool) -> None:
    """The staged entries: a table (or JSON Lines) on stdout, a note on stderr when none."""
    entries = memory_store.pending(store)
    if as_json:
        for e in entries:
            line = {
                "n": e.n,
                "scope": e.scope,
                "project": e.project,
                "text": e.text,
                "session": e.session_id or None,
                "at": iso_utc(e.at),
            }
            sys.stdout.write(json_line(line, compact=False))
        return
    if not entries:
        print("No staged memory writes.", file=sys.stderr)
        return
    rows = [[str(e.n), e.scope, " ".join(e.text.split())[:80]] for e in entries]
    sys.stdout.write(render_table(["N", "SCOPE", "TEXT"], rows) + "\n")
