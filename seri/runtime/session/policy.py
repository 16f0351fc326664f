"""The permission policy of a session's run: config.json's rules and --allow's, then the
"always" rules a person gave this session (stored with it, in this run or an earlier one)."""

from __future__ import annotations

import time
from collections.abc import Callable

from seri.io.permissions.session_rules import SessionRule, add_session_rules, list_session_rules
from seri.io.session.store import Store
from seri.pure.agent.effects import AskPerson
from seri.pure.permissions.permission_policy import Policy, with_allowed


class SessionPolicy:
    def __init__(self, base: Policy) -> None:
        self.base = base
        self.policy = base
        # The session's own rules in force (see /permissions).
        self.rules: tuple[SessionRule, ...] = ()

    def apply(self, stored: tuple[SessionRule, ...]) -> tuple[str, ...]:
        """Take the session's stored rules on top of the base; the notes on those left out.

        A stored rule this seri cannot read (written by another version) is left out, said
        once; config.json's deny and ask rules still come before any of them.
        """
        usable = []
        notes: tuple[str, ...] = ()
        for rule in stored:
            try:
                with_allowed(self.base, (rule.rule,))
            except ValueError as exc:
                notes += (f"seri: warning: session rule {rule.rule!r} left out: {exc}",)
                continue
            usable.append(rule)
        self.rules = tuple(usable)
        self.policy = with_allowed(self.base, (rule.rule for rule in usable))
        return notes

    def keep_always(
        self,
        store: Store,
        session_id: str,
        rules: tuple[str, ...],
        asked: AskPerson,
        redact: Callable[[str], str],
    ) -> tuple[str, ...]:
        """Keep the rules a person said "always" to with the session, with the call they
        were given for (its command or path, redacted); the policy widened by them."""
        arguments = asked.arguments
        subject = arguments.get("command") if asked.call.name == "bash" else asked.path
        subject = redact(subject if isinstance(subject, str) else "")
        add_session_rules(
            store, session_id, rules, tool=asked.call.name, subject=subject, now=time.time()
        )
        return self.apply(list_session_rules(store, session_id))
