"""The one writer of one session in this process: its id, the revision it last saw, its writes.

Every write of a running session goes through here: new messages, the counters, the prompt
a run froze, and the two swaps (a compaction, a shrink). Each is one ``BEGIN IMMEDIATE``
transaction that compares the session's revision with the one this writer last saw, so no
two writers can ever interleave; the recordings buffered meanwhile ride in the same
transaction (no extra fsync). The revision lives here and nowhere else.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.session import conversations, session_table
from seri.io.session.store import Store
from seri.pure.compaction.tokens import message_chars
from seri.pure.inputs import json_text
from seri.pure.session.records import Message

if TYPE_CHECKING:
    import apsw

    from seri.io.compaction.eviction_purge import EvictionPurge
    from seri.pure.agent.effects import ApplyCompaction, ShrinkPayloads, UpdateCounters

# Writes the recordings buffered so far inside the caller's transaction (apsw rows are Any).
Pending = Callable[["apsw.Connection"], None]


class SessionLog:
    """Writes of one session, each a compare-and-swap on the revision this writer last saw."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        revision: int,
        *,
        pending: Pending | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.revision = revision
        # The recorder's buffered events: written with the next write of the session.
        self.pending = pending
        self.clock = clock
        self._counters: UpdateCounters | None = None
        self._purge: EvictionPurge | None = None
        self._looked_for_leftovers = False

    def stored_revision(self) -> int:
        """The revision in the store now (another process may have moved it on)."""
        return session_table.load_state(self.store, self.session_id).revision

    def changed_elsewhere(self) -> bool:
        """Whether someone else wrote to the session since this writer's view of it."""
        return _revision(self.store.connection, self.session_id) != self.revision

    def append(self, messages: Sequence[Message]) -> None:
        """Append ``messages`` (with the counters noted since, and the recordings)."""
        with self.store.write() as conn:
            conversations.insert_messages(
                conn, self.session_id, messages, self.clock(), revision=self.revision
            )
            self._write_counters(conn)
            self._flush_pending(conn)
            leftovers = not self._looked_for_leftovers and _purge_left(conn, self.session_id)
            self._looked_for_leftovers = True
        self.revision += 1
        if leftovers:
            # A process that stopped before its purge was done: carry on with it.
            self.purge_evicted()

    def note_counters(self, counters: UpdateCounters) -> None:
        """Keep the counters for the next write: one fsync, not two."""
        self._counters = counters

    def flush_counters(self) -> None:
        if self._counters is not None:
            with self.store.write() as conn:
                self._write_counters(conn)

    def store_prompt(self, text: str, hashes: dict[str, str], model: str) -> None:
        """This run's frozen prompt becomes the session's (see README)."""
        with self.store.write() as conn:
            conn.execute(
                "UPDATE sessions SET system_prompt = ?, prompt_hashes = ?, model = ?,"
                # A window learned for another model says nothing about this one.
                " learned_window = CASE WHEN model = ? THEN learned_window ELSE 0 END,"
                " revision = revision + 1 WHERE id = ?",
                (text, json.dumps(hashes, sort_keys=True), model, model, self.session_id),
            )
        self.revision += 1

    def swap_compaction(self, effect: ApplyCompaction, recap_message: Message) -> bool:
        """Replace the evicted prefix by the recap; False (nothing written) when the session
        changed meanwhile. What to swap is read before the write (the revision, checked
        again inside it, says it still holds), and the evicted rows are only walled off in
        it: the write holds the lock for a moment however long the history, and the rows go
        afterwards (``seri.io.compaction.eviction_purge``)."""
        now = self.clock()
        with self.store.snapshot() as conn:
            plan = plan_compaction(conn, self.session_id, self.revision, effect)
        if plan is None:
            return False
        applied = self._swap(
            lambda conn: apply_compaction(
                conn, self.session_id, self.revision, effect, recap_message, now, plan
            )
        )
        if applied:
            self.purge_evicted()
        return applied

    def purge_evicted(self) -> None:
        """Delete the messages compactions walled off, on a thread, a short step at a time."""
        from seri.io.compaction.eviction_purge import EvictionPurge

        if self._purge is None:
            self._purge = EvictionPurge(self.store.path, self.session_id)
        self._purge.start()

    def swap_shrink(
        self, effect: ShrinkPayloads, replacements: Sequence[tuple[int, Message]]
    ) -> bool:
        """Replace messages by position with their elided forms; False when the session
        changed meanwhile."""
        now = self.clock()
        return self._swap(
            lambda conn: apply_shrink(
                conn, self.session_id, self.revision, effect, replacements, now
            )
        )

    def _swap(self, apply: Callable[[Any], bool]) -> bool:
        with self.store.write() as conn:
            applied = apply(conn)
            if applied:
                self._flush_pending(conn)
        if applied:
            self.revision += 1
        return applied

    def _flush_pending(self, conn: apsw.Connection) -> None:
        if self.pending is not None:
            self.pending(conn)

    def _write_counters(self, conn: apsw.Connection) -> None:
        counters, self._counters = self._counters, None
        if counters is None:
            return
        conn.execute(
            "UPDATE sessions SET turns_used = COALESCE(?, turns_used), last_input_tokens = ?,"
            " token_scale = CASE WHEN ? > 0 THEN ? ELSE token_scale END,"
            " learned_window = CASE WHEN ? > 0 THEN ? ELSE learned_window END WHERE id = ?",
            (
                counters.turns_used,
                counters.last_input_tokens,
                counters.token_scale,
                counters.token_scale,
                counters.learned_window,
                counters.learned_window,
                self.session_id,
            ),
        )


def _purge_left(conn: Any, session_id: str) -> bool:
    """Whether a purge stopped before its end: rows below the wall, or an index to merge."""
    from seri.io.compaction.eviction_purge import evicted_left, merge_pending

    return evicted_left(conn, session_id) or merge_pending(conn)


def _revision(conn: Any, session_id: str) -> int | None:
    rows = conn.execute("SELECT revision FROM sessions WHERE id = ?", (session_id,)).fetchall()
    return int(rows[0][0]) if rows else None


@attrs.frozen
class CompactionSwap:
    """What a compaction swaps, read before its write: valid while the revision is."""

    revision: int
    first_kept: int  # the seq of the first message kept
    stored_recap: dict[str, Any]


def plan_compaction(
    conn: Any, session_id: str, expected_revision: int, effect: ApplyCompaction
) -> CompactionSwap | None:
    """Read what ``apply_compaction`` needs, in a read snapshot: the first kept message (past
    ``effect.evicted`` live ones: on a long history a walk that must not hold the write lock)
    and the recap to store. None when the session moved on or is shorter than that."""
    if _revision(conn, session_id) != expected_revision:
        return None
    kept = conn.execute(
        conversations.live_rows("seq", " ORDER BY seq LIMIT 1 OFFSET ?"),
        (session_id, effect.evicted),
    ).fetchall()
    if not kept:
        return None
    first_kept = int(kept[0][0])
    return CompactionSwap(
        expected_revision, first_kept, _stored_recap(conn, session_id, first_kept, effect)
    )


def apply_compaction(
    conn: Any,
    session_id: str,
    expected_revision: int,
    effect: ApplyCompaction,
    recap_message: Message,
    now: float,
    plan: CompactionSwap,
) -> bool:
    """Swap the evicted prefix for the recap inside the caller's IMMEDIATE transaction.

    Compare-and-swap on the session's revision: if anyone wrote to the session
    since the history was read (or planned), nothing is changed and False comes back.

    The evicted messages are not deleted here: the recap goes just below the first kept
    message, where the wall (``compacted_before``) moves, and every reader reads from the
    wall up. Only the one evicted row in the recap's place goes now; the others are deleted
    afterwards (``seri.io.compaction.eviction_purge``), so this write costs the same on any history.
    """
    from seri.io.session.codec import message_to_json  # cattrs loads only when messages move

    if _revision(conn, session_id) != expected_revision or plan.revision != expected_revision:
        return False
    first_kept = plan.first_kept
    kept_chars, kept_count = conn.execute(
        "SELECT coalesce(sum(chars), 0), count(*) FROM messages WHERE session_id = ? AND seq >= ?",
        (session_id, first_kept),
    ).fetchall()[0]
    (count_before,) = conn.execute(
        "SELECT message_count FROM sessions WHERE id = ?", (session_id,)
    ).fetchall()[0]
    recap_seq = first_kept - 1
    conn.execute("DELETE FROM messages WHERE session_id = ? AND seq = ?", (session_id, recap_seq))
    recap_chars = message_chars(recap_message)
    conn.execute(
        "INSERT INTO messages(session_id, seq, role, kind, body, chars, created)"
        " VALUES (?,?,?,?,?,?,?)",
        (session_id, recap_seq, "user", "recap", message_to_json(recap_message), recap_chars, now),
    )
    conn.execute(
        "UPDATE sessions SET total_chars = ?, message_count = ?,"
        " recap = ?, compacted_before = ?, last_input_tokens = 0, revision = revision + 1,"
        " updated = ?, token_scale = CASE WHEN ? > 0 THEN ? ELSE token_scale END WHERE id = ?",
        (
            kept_chars + recap_chars,
            kept_count + 1,
            json.dumps(plan.stored_recap, ensure_ascii=False),
            recap_seq,
            now,
            effect.token_scale,
            effect.token_scale,
            session_id,
        ),
    )
    conn.execute(
        "INSERT INTO compactions(session_id, at, trigger, focus, evicted, estimate_before,"
        " estimate_after, summary_calls, summary_input_tokens, summary_output_tokens,"
        " summary_cost, cache_rewrite_tokens, task_kept, goal_kept)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            session_id,
            now,
            effect.trigger,
            effect.focus,
            count_before - kept_count,
            effect.estimate_before,
            effect.estimate_after,
            effect.summary_calls,
            effect.summary_input_tokens,
            effect.summary_output_tokens,
            effect.summary_cost,
            effect.cache_rewrite_tokens,
            effect.task_kept,
            effect.goal_kept,
        ),
    )
    return True


def apply_shrink(
    conn: Any,
    session_id: str,
    expected_revision: int,
    effect: ShrinkPayloads,
    replacements: Sequence[tuple[int, Message]],
    now: float,
) -> bool:
    """Replace messages by position inside the caller's IMMEDIATE transaction, and note it in
    the ledger. Compare-and-swap on the revision, like ``apply_compaction``."""
    from seri.io.session.codec import message_to_json

    if _revision(conn, session_id) != expected_revision:
        return False
    stored = []
    for index, message in replacements:
        found = conn.execute(
            conversations.live_rows("seq, chars", " ORDER BY seq LIMIT 1 OFFSET ?"),
            (session_id, index),
        ).fetchall()
        if not found:
            return False  # not stored (yet): nothing is written
        stored.append((found[0][0], found[0][1], message))
    delta = 0
    for seq, chars, message in stored:
        size = message_chars(message)
        conn.execute(
            "UPDATE messages SET body = ?, chars = ? WHERE session_id = ? AND seq = ?",
            (message_to_json(message), size, session_id, seq),
        )
        delta += size - chars
    conn.execute(
        "UPDATE sessions SET total_chars = total_chars + ?, last_input_tokens = 0,"
        " revision = revision + 1 WHERE id = ?",
        (delta, session_id),
    )
    conn.execute(
        "INSERT INTO compactions(session_id, at, trigger, focus, evicted, estimate_before,"
        " estimate_after, summary_calls, elided) VALUES (?,?,?,'',0,?,?,0,?)",
        (
            session_id,
            now,
            effect.trigger,
            effect.estimate_before,
            effect.estimate_after,
            len(replacements),
        ),
    )
    return True


def _stored_recap(
    conn: Any, session_id: str, first_kept: int, effect: ApplyCompaction
) -> dict[str, Any]:
    """The recap object to store, with the names of the rules whose messages are evicted.

    A rule fires once a session. Its message may be evicted, so the names live on in the
    stored recap (``RULES_FIRED_KEY``, which ``fired_rule_names`` reads on resume), merged
    with the names the previous recap carried.
    """
    from seri.io.session.codec import message_from_json
    from seri.pure.agent.rules import RULES_FIRED_KEY, fired_rule_names

    rows = conn.execute("SELECT recap FROM sessions WHERE id = ?", (session_id,)).fetchall()
    previous: Any = None
    if rows and rows[0][0]:
        try:
            previous = json_text.loads_stored(rows[0][0])
        except ValueError:
            previous = None
    rule_rows = conn.execute(
        conversations.live_rows("body", " AND seq < ? AND kind = 'rule'"),
        (session_id, first_kept),
    ).fetchall()
    evicted_rules = [message_from_json(body) for (body,) in rule_rows]
    names = fired_rule_names(evicted_rules, previous if isinstance(previous, dict) else None)
    from seri.pure.compaction.recap import recap_to_dict  # loaded only when a compaction is stored

    stored = recap_to_dict(effect.recap)
    if names:
        stored[RULES_FIRED_KEY] = sorted(names)
    return stored
