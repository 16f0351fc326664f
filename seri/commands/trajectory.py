"""Export run recordings, switch recording on or off, age old recordings out.

Usage:
  seri trajectory export [--session ID] [--since DATE] [--format FMT]
  seri trajectory (on | off | status)
  seri trajectory prune [--dry-run]
  seri trajectory (-h | --help)

Options:
  --session ID   Only this session's runs (an id or a unique prefix of one).
  --since DATE   Only records at or after DATE (2026-01-31, or 2026-01-31T12:00;
                 UTC unless it names a zone). A run that started earlier keeps
                 its header when some of its events are recent enough.
  --format FMT   jsonl (the default); otlp: OpenTelemetry traces and metrics; or
                 atif: ATIF-v1.8 trajectories (see below).
  --dry-run      List what would be deleted, delete nothing.
  -h --help      Show this help.

`export` writes JSON Lines on stdout: for each run a `header` line (the
settings in force: model, sampling, provider pin, reasoning effort, prompt-file
hashes), then one line per event. Every line has `type`, `session`, `run` and
`at` (ISO 8601, UTC). Large values appear as {"elided": true, "originalBytes": N}.

`export --format otlp` turns each task into an OpenTelemetry trace (GenAI semantic
conventions: `invoke_agent seri`, `chat MODEL`, `execute_tool NAME`) with the records'
own times, plus the gen_ai.client.token.usage and operation.duration metrics. It sends
them where OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_/_METRICS_ENDPOINT, or config.json's
telemetry.otlp.endpoint) points, over http/protobuf or http/json
(OTEL_EXPORTER_OTLP_PROTOCOL), with OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME and
OTEL_RESOURCE_ATTRIBUTES; with no endpoint it writes OTLP JSON Lines on stdout. A DATE
keeps the tasks that ended at or after it, each one whole. Tool arguments and results
are left out unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (or
telemetry.otlp.capture_content) asks for them; they are redacted all the same. Sending
the same runs twice sends the same span ids.

`export --format atif` writes ATIF-v1.8 (the Agent Trajectory Interchange Format of
Harbor / Terminal-Bench) instead: one JSON document per line, one per run (the runs of a
session chain through continued_trajectory_ref; messages from before a session's first
recorded run, as in an imported session, are one more document), subagents embedded as
subagent_trajectories, seri's header under agent.extra.

`on`/`off` store the toggle in config.json; SERI_TRAJECTORY (on/off) in the
environment wins over it. `status` shows whether recording is on and why, the
retention window and what is recorded.

`prune` deletes the recordings of every session whose most recent record is
older than `trajectory.retention_days` (default 30), and the older release's
$SERI_HOME/trajectories/*.jsonl files older than that by modification time.
seri does this by itself at the start of each session.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

from seri.io.session.profile_files import profile_root
from seri.io.session.store import DB_NAME, Store, open_store
from seri.io.trajectories.trajectory_store import ExportFilter, export_chunks
from seri.pure.inputs.errors import EXIT_UNFINISHED, EXIT_USAGE, SeriError
from seri.pure.terminal.timestamps import parse_since
from seri.runtime.agent.running import parse_usage

if TYPE_CHECKING:
    from seri.pure.trajectories.retention import PrunePlan

# Chunks are gathered into writes of about this many bytes.
WRITE_BYTES = 1 << 18
FORMATS = ("jsonl", "otlp", "atif")


class ExportUnwritten(SeriError):
    """stdout refused the export (a full disk, say): what was written is incomplete."""

    exit_code = EXIT_UNFINISHED


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    if options["export"]:
        return _export(options["--session"], options["--since"], options["--format"] or "jsonl")
    # Export is the command that must start fast; the others import what they use here.
    if options["status"]:
        return _status()
    if options["prune"]:
        return _prune(dry_run=options["--dry-run"])
    from seri.runtime.trajectories.trajectory_toggle import toggle_trajectory

    value = "on" if options["on"] else "off"
    print(toggle_trajectory(profile_root(), value, os.environ), file=sys.stderr)
    return 0


def _reader() -> Store | None:
    """The store, read-only (export works on a read-only profile); None if there is none."""
    root = profile_root()
    if not (root / DB_NAME).exists():
        return None
    return open_store(root, readonly=True)


def _export(session: str | None, since_text: str | None, format_: str) -> int:
    if format_ not in FORMATS:
        raise SeriError(f"--format is jsonl, otlp or atif, not {format_!r}")
    since = None
    if since_text is not None:
        try:
            since = parse_since(since_text)
        except ValueError:
            raise SeriError(
                f"--since wants a date such as 2026-01-31 or 2026-01-31T12:00, not {since_text!r}"
            ) from None
    store = _reader()
    if store is None:
        if session:
            raise SeriError(f"no session {session}: nothing is recorded yet")
        print("seri: nothing is recorded yet", file=sys.stderr)
        return 0
    session_id = ""
    if session:
        # Imported here: the session table brings attrs and the records, which export never needs.
        from seri.io.session.session_table import resolve_session_id

        session_id = resolve_session_id(store, session)
    from seri.pure.trajectories.json_lines import line_safe_bytes

    try:
        if format_ == "otlp":
            from seri.runtime.trajectories.otlp_export import export_otlp

            return export_otlp(
                store,
                session_id,
                since,
                lambda c: _write_all(sys.stdout.buffer, (line_safe_bytes(b) for b in c)),
            )
        if format_ == "atif":
            from seri.runtime.trajectories.trajectory_atif import atif_lines

            _write_all(sys.stdout.buffer, atif_lines(store, session_id, since))
            return 0
        chunks = export_chunks(store, ExportFilter(session_id, since))
        _write_all(sys.stdout.buffer, (line_safe_bytes(chunk) for chunk in chunks))
    except BrokenPipeError:
        raise  # the reader is done with us: run_guarded ends quietly
    except OSError as exc:
        raise ExportUnwritten(
            f"cannot write the export: {exc.strerror or exc}; the output is incomplete"
        ) from None
    return 0


def _write_all(out: BinaryIO, chunks: Iterable[bytes]) -> None:
    """Gather chunks into large writes. The reader going away (`| head`) raises
    BrokenPipeError, which run_guarded turns into a quiet exit 0."""
    pending: list[bytes] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= WRITE_BYTES:
            _write_fully(out, b"".join(pending))
            pending, size = [], 0
    if pending:
        _write_fully(out, b"".join(pending))
    out.flush()


def _write_fully(out: BinaryIO, data: bytes) -> None:
    """Write all of ``data`` or raise. A buffered write larger than the buffer goes to the
    file in one system call and returns its count: a short one (a file-size limit, a nearly
    full disk) would otherwise drop the rest without a word. Writing the rest makes the
    system say why (EFBIG, ENOSPC), which becomes the error the person reads."""
    view = memoryview(data)
    while view:
        written = out.write(view)
        if not written:
            raise OSError(errno.EIO, "the output accepted nothing")
        view = view[written:]


def _status() -> int:
    from seri.io.trajectories.trajectory_store import recording_counts
    from seri.runtime.agent.running import load_settings_warned
    from seri.runtime.trajectories.trajectory_start import window_words
    from seri.runtime.trajectories.trajectory_toggle import effective

    root = profile_root()
    enabled, source = effective(root, os.environ)
    settings = load_settings_warned(root)
    lines = [("recording", f"{'on' if enabled else 'off'} ({source})")]
    if settings.retention_error:
        lines.append(("retention", f"invalid: {settings.retention_error}"))
    else:
        lines.append(
            ("retention", f"{window_words(settings.retention_days)} after a session's last record")
        )
    store = _reader()
    if store is None:
        lines.append(("recorded", "nothing yet"))
    else:
        counts = recording_counts(store)
        lines.append(
            (
                "recorded",
                f"{counts.runs} runs in {counts.sessions} sessions, {counts.events} events",
            )
        )
        lines.append(("store", str(store.path)))
    sys.stdout.write("".join(f"{name:<10} {value}\n" for name, value in lines))
    return 0


def _prune(*, dry_run: bool) -> int:
    from seri.io.trajectories.trajectory_prune import plan_prune, prune
    from seri.runtime.agent.running import load_settings_warned
    from seri.runtime.session.profile import open_profile
    from seri.runtime.trajectories.trajectory_start import prune_warnings

    root = profile_root()
    settings = load_settings_warned(root)
    if settings.retention_error:
        print(f"seri: {settings.retention_error}", file=sys.stderr)
        return EXIT_USAGE
    days = settings.retention_days
    profile = open_profile()
    now = time.time()
    # No session is being recorded by this command: every session is judged by its age.
    if dry_run:
        planned = plan_prune(profile.store, root, now, days, current_session="")
        _report(planned.plan, days, "would delete")
        for line in prune_warnings(planned):
            print(f"seri: {line}", file=sys.stderr)
        return 0
    result = prune(profile.store, root, now, days, current_session="")
    _report(result.plan, days, "deleted")
    for line in prune_warnings(result):
        print(f"seri: {line}", file=sys.stderr)
    return 1 if result.failed else 0


def _report(plan: PrunePlan, days: float, verb: str) -> None:
    """The list on stdout (one line per session or file), the sum on stderr."""
    from seri.pure.terminal.text_table import render_table
    from seri.pure.terminal.timestamps import iso_utc
    from seri.runtime.trajectories.trajectory_start import window_words

    window = window_words(days)
    if plan.empty:
        print(f"seri: nothing to prune: no recording is older than {window}", file=sys.stderr)
        return
    rows = [[f"session {s.session_id}", iso_utc(s.last_at), str(s.events)] for s in plan.sessions]
    rows += [[f"file {f.path}", iso_utc(f.mtime), str(f.events)] for f in plan.files]
    sys.stdout.write(render_table(["WHAT", "LAST RECORD", "EVENTS"], rows) + "\n")
    print(
        f"seri: {verb} the recordings of {len(plan.sessions)} sessions and "
        f"{len(plan.files)} files ({plan.events} events) older than {window}",
        file=sys.stderr,
    )
