"""Compact a stored session from the shell.

Usage:
  seri compact --session ID [--focus TEXT]
  seri compact --session ID --dry-run [--json] [--focus TEXT]
  seri compact (-h | --help)

Options:
  --session ID   The session (an id or a unique prefix of one).
  --focus TEXT   Focus instructions for the recap, like the words after /compact.
  --dry-run      Show what a compaction would do: the cut, tokens before and after, the
                 summarizer's chunks and its exact first request, and "would fail: ..."
                 when nothing could make the session fit. Calls no model (the window
                 may still be asked of GET /models) and changes nothing.
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

The run is recorded in the session's trajectory (`seri trajectory export`) and, when an
OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT or telemetry.otlp in config.json),
exported live as OpenTelemetry spans, as a chat's runs are. A window the provider states
when it refuses a summarizer request as too long is kept with the session, so the next
`seri chat` or `seri compact` on that model sizes its requests by it.
"""

from __future__ import annotations

import sys

from seri.pure.compaction.compaction_outcome import Why
from seri.pure.inputs.errors import EXIT_OK, TaskUnfinished
from seri.runtime.agent.running import parse_usage
from seri.runtime.compaction.shell_compaction import ShellCompaction
from seri.runtime.session.profile import open_profile

ATTEMPTS = 2


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    profile = open_profile()
    dry_run = bool(options["--dry-run"])
    job = ShellCompaction.open(profile, options["--session"], quiet=dry_run, hold=not dry_run)
    if options["--dry-run"]:
        try:
            from seri.runtime.compaction.compact_plan import show_plan

            return show_plan(job, options["--focus"] or "", as_json=options["--json"])
        finally:
            job.close()
    try:
        why_not = job.attempts(options["--focus"] or "", ATTEMPTS)
        if why_not is None:
            print(f"Compacted session {job.session_id}.", file=sys.stderr)
            return EXIT_OK
        if why_not.reason is Why.NO_CUT:
            print(why_not.detail)
            return EXIT_OK
        raise TaskUnfinished(f"compaction of {job.session_id} failed: {why_not.detail}")
    finally:
        job.close()
