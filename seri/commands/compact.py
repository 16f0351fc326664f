"""Compact a stored session from the shell.

Usage:
  seri compact --session ID [--focus TEXT]
  seri compact --session ID --dry-run [--json] [--focus TEXT]
  seri compact (-h | --help)

Options:
  --session ID   The session (an id or a unique prefix of one).
  --focus TEXT   Focus instructions for the recap, like the words after /compact.
  --dry-run      Show what a compaction would do: the cut, tokens before and after, the
                 summarizer's chunks and its exact first request. Calls no model (the
                 window may still be asked of GET /models) and changes nothing.
  --json         With --dry-run: one JSON object on stdout.
  -h --help      Show this help.

Runs the same compaction as /compact: the newest ~20,000 tokens (compaction.keep_tokens,
in the provider's tokens as far as seri has learned its tokenizer) are kept, everything
older becomes one recap, written by the model the session last ran with. When the older
part does not fit one summarizer request, it is summarized chunk by chunk, oldest first,
each call updating the recap of the one before.

It never leaves a session that does not fit under half the window: when the recap and the
kept messages are still too large (or no safe cut exists), the oldest oversized tool
results are replaced by {"elided": true, "originalBytes": N, "fullText": FILE}, the whole
text kept in FILE. When even that is not enough it changes nothing more, says what is too
big, and exits 1. `Not enough history to compact.` (exit 0) means no safe cut exists and
the session fits as it is.

A session that a running seri holds (a chat, another compact, a rewind) is refused with
that process's pid (exit 1): one writer per session (--dry-run writes nothing and is never
refused). Should the session change anyway while the recap is being written, seri reads it
again and retries once, then gives up (exit 1) without changing anything.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any, cast

import attrs

from seri.commands.profile import Profile, open_profile
from seri.commands.running import parse_usage
from seri.pure.compaction import NOT_ENOUGH_HISTORY, SESSION_CHANGED
from seri.pure.cuts import keep_budget
from seri.pure.errors import EXIT_OK, TaskUnfinished

if TYPE_CHECKING:
    from seri.commands.driver import ModelCaller
    from seri.commands.tool_host import ToolHost
    from seri.io.conversations import SessionState
    from seri.io.leases import Lease
    from seri.io.recorder import Recorder
    from seri.pure.redaction import Redactor
    from seri.pure.settings import Settings
    from seri.pure.turn import Conversation, TaskSetup

ATTEMPTS = 2


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    dry_run = bool(options["--dry-run"])
    job = ShellCompaction.open(profile, options["--session"], quiet=dry_run, hold=not dry_run)
    if options["--dry-run"]:
        try:
            from seri.commands.compact_plan import show_plan

            return show_plan(job, options["--focus"] or "", as_json=options["--json"])
        finally:
            job.close()
    try:
        why_not = ""
        for _attempt in range(ATTEMPTS):
            why_not = job.attempt(options["--focus"] or "")
            if not why_not:
                print(f"Compacted session {job.session_id}.", file=sys.stderr)
                return EXIT_OK
            if why_not == NOT_ENOUGH_HISTORY:
                print(NOT_ENOUGH_HISTORY)
                return EXIT_OK
            if why_not != SESSION_CHANGED:
                break
        raise TaskUnfinished(f"compaction of {job.session_id} failed: {why_not}")
    finally:
        job.close()


class _NoTools:
    """Compaction runs no tools; a driver that asks for one has a bug."""

    def resolve(self, raw: str) -> Any:
        raise RuntimeError("compaction resolves no paths")

    def run(self, call: Any, arguments: Any) -> Any:
        raise RuntimeError("compaction runs no tools")


class ShellCompaction:
    """``seri compact``: read the session, compact it, write nothing else.

    Unlike ``seri chat`` it never repairs the session on opening. A tool call without a result
    may belong to a ``seri chat`` that is running that tool right now; answering it here
    ("result lost") would give the call two results once the real one arrives. The cut keeps
    the newest call with its results whole anyway, so compaction needs no repair.
    """

    def __init__(
        self,
        profile: Profile,
        session_id: str,
        settings: Settings,
        api_key: str,
        redactor: Redactor,
        lease: Lease | None = None,
    ) -> None:
        self.profile = profile
        self.store = profile.store
        self.session_id = session_id
        self.settings = settings
        self.api_key = api_key
        self.redactor = redactor
        self._recorder: Recorder | None = None
        self._caller: ModelCaller | None = None
        self.lease = lease

    @classmethod
    def open(
        cls, profile: Profile, raw_id: str, *, quiet: bool = False, hold: bool = True
    ) -> ShellCompaction:
        from seri.commands.chat_options import api_key_from
        from seri.commands.running import load_settings_warned
        from seri.io import conversations
        from seri.io.leases import Lease
        from seri.pure.redaction import Redactor, secrets_from_environment

        session_id = conversations.resolve_session_id(profile.store, raw_id)
        settings = load_settings_warned(profile.root)
        # The same model as the session's turns, not whatever this shell would start with.
        model = conversations.get_session(profile.store, session_id).model
        if model:
            settings = attrs.evolve(settings, model=model)
        api_key = api_key_from(os.environ)
        redactor = Redactor.of((api_key, *secrets_from_environment(os.environ)))
        if not hold:
            return cls(profile, session_id, settings, api_key, redactor)
        # One writer per session: a running chat (or another compact) keeps it; refused.
        lease = Lease.take(profile.store, session_id, "seri compact")
        if not quiet:
            print(f"seri: compacting session {session_id}", file=sys.stderr)
        return cls(profile, session_id, settings, api_key, redactor, lease)

    def attempt(self, focus: str) -> str:
        """One compaction from a fresh read; '' when done, else why not."""
        from seri.commands.driver import Driver
        from seri.io.spill import SPILL_DIR
        from seri.pure.turn import compact_on_demand

        state, conversation = self.read()
        recorder = self._recording(dict(state.prompt_hashes))
        caller = self.model(recorder)
        setup = self.setup(state, caller)
        driver = Driver(
            store=self.store,
            session_id=self.session_id,
            revision=state.revision,
            model=caller,
            tools=cast("ToolHost", _NoTools()),
            recorder=recorder,
            redactor=self.redactor,
            asker=lambda effect: False,
            spill_dir=self.profile.root / SPILL_DIR,
        )
        _conversation, why_not = driver.run(compact_on_demand(setup, conversation, focus, "shell"))
        return why_not

    def read(self) -> tuple[SessionState, Conversation]:
        """The session's state and conversation, from one point in time (the revision is what
        the swap checks)."""
        from seri.io import conversations
        from seri.io.pins import list_pins
        from seri.pure.recap import recap_from_dict
        from seri.pure.turn import conversation_of

        with self.store.snapshot():
            state = conversations.load_state(self.store, self.session_id)
            history = conversations.load_messages(self.store, self.session_id)
            pins = list_pins(self.store, self.session_id)
        recap = recap_from_dict(state.recap) if state.recap else None
        conversation = conversation_of(
            history,
            recap,
            state.last_input_tokens,
            token_scale=state.token_scale,
            pins=pins,
        )
        return state, conversation

    def setup(self, state: SessionState, caller: ModelCaller) -> TaskSetup:
        """The task setup of the session's chat, as far as compaction needs it: the same
        window, and the same system prompt and tool definitions filling it."""
        from seri.commands.chat_session import PARENT_TOOLS
        from seri.pure.permission_policy import Policy
        from seri.pure.settings import DEFAULT_CONTEXT_WINDOW, configured_max_tokens
        from seri.pure.tool_specs import tool_definition_chars
        from seri.pure.turn import TaskSetup

        window = self.settings.context_window
        if window is None:
            window = caller.client().context_window(self.settings.model)
        window = window or DEFAULT_CONTEXT_WINDOW
        return TaskSetup(
            system_prompt=state.system_prompt,
            max_turns=1,
            context_window=window,
            keep_tokens=keep_budget(self.settings.keep_tokens, window),
            elide_bytes=self.settings.elide_bytes,
            policy=Policy(),
            interactive=False,
            tool_names=(),
            tool_chars=tool_definition_chars(PARENT_TOOLS),
            project=state.session.project,
            max_tokens=configured_max_tokens(self.settings),
        )

    def _recording(self, prompt_hashes: dict[str, Any]) -> Recorder:
        from seri import __version__
        from seri.io.recorder import Recorder

        if self._recorder is None:
            settings = self.settings
            self._recorder = Recorder(
                self.store, self.session_id, self.redactor, enabled=settings.trajectory_enabled
            )
            header = {
                "seri_version": __version__,
                "command": "compact",
                "model": settings.model,
                "base_url": settings.base_url,
                "started": time.time(),
                "sampling": dict(settings.sampling),
                "provider": dict(settings.provider),
                "reasoning_effort": settings.reasoning_effort or None,
                "prompt_hashes": prompt_hashes,
                "context_window": settings.context_window,
                "keep_tokens": settings.keep_tokens,
                "elide_bytes": settings.elide_bytes,
            }
            self._recorder.start(header, time.time())
        return self._recorder

    def model(self, recorder: Recorder) -> ModelCaller:
        """The model caller, created once (the dry run uses it only to build request bodies)."""
        from seri.commands.driver import ModelCaller

        if self._caller is None:
            self._caller = ModelCaller(self.settings, self.api_key, recorder, ())
        return self._caller

    def close(self) -> None:
        try:
            if self._recorder is not None:
                self._recorder.flush()
            if self._caller is not None and self._caller._client is not None:
                self._caller._client.close()
        finally:
            if self.lease is not None:
                self.lease.close()
