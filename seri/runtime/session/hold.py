"""The session a run writes: its id, its lease (one writer per session) and its writer.

A run may hold none yet (a new session starts lazily, with its first task or pin), let go
of one (/clear), or forget one it just made for a task that stored nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seri.io.session import leases, session_table
from seri.io.session.ids import random_id
from seri.io.session.leases import Lease
from seri.io.session.session_log import Pending, SessionLog
from seri.io.session.store import Store
from seri.io.tools.files import directory_identity
from seri.pure.agent.prompt import FrozenPrompt
from seri.pure.session.records import Message
from seri.runtime.session.opening import LEASE_COMMAND
from seri.runtime.session.ports import Tell

if TYPE_CHECKING:
    from seri.runtime.session.loading import LoadedSession


class SessionHold:
    def __init__(
        self, store: Store, session_id: str, lease: Lease | None, *, pending: Pending, tell: Tell
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.lease = lease
        # The session's writer, which alone knows the revision this run last saw.
        self.log: SessionLog | None = None
        self._pending = pending
        self._tell = tell
        # Results made up for calls a killed run left unanswered, not stored yet.
        self._repairs: tuple[Message, ...] = ()
        # Whether this run's frozen prompt is the session's (see README).
        self._prompt_stored = False

    def read_back(self, model: str) -> LoadedSession:
        # Only a resumed session is read back: a new one's first request goes out without it.
        from seri.runtime.session.loading import load_session

        loaded = load_session(self.store, self.session_id, model)
        self._repairs = loaded.repairs
        self.log = self._writer(loaded.revision)
        return loaded

    def create(
        self, project: str, model: str, prompt: FrozenPrompt, tags: tuple[tuple[str, str], ...]
    ) -> None:
        """A new session row, tagged, under this process's lease: one transaction."""
        self.session_id = random_id()
        me = leases.this_process(LEASE_COMMAND)
        with self.store.write() as conn:
            session_table.create_session(
                self.store,
                session_id=self.session_id,
                project=project,
                now=time.time(),
                model=model,
                system_prompt=prompt.text,
                prompt_hashes=dict(prompt.hashes),
                project_identity=directory_identity(Path(project)),
            )
            self.store_tags(conn, tags)
            leases.take_in(conn, self.session_id, me)
        self.lease = leases.Lease(self.store, self.session_id, me)
        self.log = self._writer(0)
        self._prompt_stored = True

    def store_tags(self, conn: Any, tags: tuple[tuple[str, str], ...]) -> None:
        """The run's tags onto the session (the tag store is loaded only when there are)."""
        if tags:
            from seri.io.session.session_tags import tag_session

            tag_session(conn, self.session_id, tags)

    def store_prompt(self, prompt: FrozenPrompt, model: str) -> None:
        """This run's frozen prompt is the session's from now on (once a run, or after a
        model switch)."""
        if not self._prompt_stored:
            assert self.log is not None
            self.log.store_prompt(prompt.text, dict(prompt.hashes), model)
            self._prompt_stored = True

    def prompt_again(self) -> None:
        """Store the prompt again with the next task (the model it names changed)."""
        self._prompt_stored = False

    def store_repairs(self) -> None:
        if self._repairs:
            assert self.log is not None
            self.log.append(self._repairs)
            self._repairs = ()

    def changed_elsewhere(self) -> bool:
        """Whether another process (``seri compact``) rewrote the session since it was read."""
        assert self.log is not None
        return self.log.stored_revision() != self.log.revision

    def mark_stale(self) -> None:
        """Read it back before the next task, whatever the store says."""
        if self.log is not None:
            self.log.revision = -1

    def discard(self) -> None:
        """Forget the session just created for a task that stored nothing."""
        discarded = self.session_id
        self.forget()
        session_table.discard_empty_session(self.store, discarded)

    def forget(self) -> None:
        """Let the session go (its lease too): none is held until the next one starts."""
        self.release()
        self.session_id = ""
        self.log = None
        self._repairs = ()
        self._prompt_stored = False

    def release_in(self, conn: Any) -> None:
        if self.lease is not None:
            self.lease.close_in(conn)
            self.lease = None

    def release(self) -> None:
        if self.lease is not None:
            lease, self.lease = self.lease, None
            try:
                lease.close()
            except Exception:  # noqa: BLE001 - the next run takes over a lease left behind
                self._tell(
                    f"seri: note: session {lease.session_id} is still marked in use by "
                    "this process; the next seri will take it over"
                )

    def _writer(self, revision: int) -> SessionLog:
        return SessionLog(self.store, self.session_id, revision, pending=self._pending)
