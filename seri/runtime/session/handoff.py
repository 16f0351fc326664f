"""``seri handoff``: a new session that starts where another left off, from its recap.

The source is copied (``fork_session``: its row, messages, checkpoints and pins, under a
new id that records where it came from) and the copy, not the source, is compacted down to
its recap, its pins and the newest turn a compaction must keep. The source is only read
(no lease, no write), so it stays byte for byte as it was, even while a chat runs it. A
copy that could not be compacted is deleted again: a handoff either happens whole or not.

Until its compaction is written the copy is marked incomplete (not listed, not searched,
never picked by ``--continue``) and leased to this process, so a handoff killed halfway
leaves nothing that passes for a session; the next handoff deletes such a leftover.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import attrs

from seri.io.session import conversations, leases, session_delete, session_table
from seri.io.session.ids import random_id
from seri.pure.compaction.compaction_outcome import Why
from seri.pure.inputs.errors import SeriError, TaskUnfinished
from seri.runtime.session.profile import Profile

if TYPE_CHECKING:
    from seri.runtime.compaction.shell_compaction import ShellCompaction

# The copy keeps as little of the source's tail as a compaction allows: the newest turn.
HANDOFF_KEEP_TOKENS = 1
ATTEMPTS = 2
HANDOFF_COMMAND = "seri handoff"


def hand_off(profile: Profile, raw_id: str, focus: str) -> str:
    """The new session's id, seeded from ``raw_id``'s recap and pins."""
    from seri.runtime.compaction.shell_compaction import ShellCompaction as Compaction

    store = profile.store
    source = session_table.resolve_session_id(store, raw_id)
    if not conversations.load_messages(store, source):
        raise SeriError(f"session {source} has no messages: there is nothing to hand off")
    _delete_abandoned_copies(profile)
    target = random_id()
    with store.write() as conn:
        session_table.fork_session(conn, source, target, time.time())
        conn.execute("UPDATE sessions SET incomplete = 1 WHERE id = ?", (target,))
        leases.take_in(conn, target, leases.this_process(HANDOFF_COMMAND))
    try:
        # Held (as `seri compact` holds it) until its compaction is written.
        job = Compaction.open(profile, target, quiet=True)
        job.settings = attrs.evolve(job.settings, keep_tokens=HANDOFF_KEEP_TOKENS)
        try:
            _compact(job, focus)
            with store.write() as conn:
                conn.execute("UPDATE sessions SET incomplete = 0 WHERE id = ?", (target,))
        finally:
            job.close()
    except BaseException:
        session_delete.delete_sessions(store, [target])
        raise
    print(f"seri: handed session {source} off to {target}", file=sys.stderr)
    return target


def _delete_abandoned_copies(profile: Profile) -> None:
    """Delete the copies of handoffs killed before their end (their lease is dead; a handoff
    under way holds its copy's lease, and is left alone)."""
    rows = profile.store.connection.execute(
        "SELECT id FROM sessions WHERE incomplete = 1"
    ).fetchall()
    for (copy,) in rows:
        try:
            session_delete.delete_sessions(profile.store, [str(copy)])
        except leases.SessionBusy:
            continue


def _compact(job: ShellCompaction, focus: str) -> None:
    why_not = job.attempts(focus, ATTEMPTS)
    # No safe cut: the source is too short to compact, and is carried whole.
    if why_not is not None and why_not.reason is not Why.NO_CUT:
        raise TaskUnfinished(
            f"the handoff's compaction failed, nothing was created: {why_not.detail}"
        )
