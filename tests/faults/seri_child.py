"""Run the installed seri's command line in this process, with a fault or a tracer put in first.

    python seri_child.py [OPTIONS] -- SERI_ARGS...

Some faults can only be injected from inside the process that suffers them: an apsw VFS has to
be registered where the database is opened, ``max_page_count`` is a setting of one connection,
and the provider client's watchdog times are constructor arguments. So this script installs
the fault, then hands its arguments to ``seri.commands.main.main``: everything else (docopt,
the store, the chat loop, the error messages and exit statuses) is the real program's.

Options:
  --fail-write N     the Nth write (xWrite) to any SQLite file raises FullError (ENOSPC)
  --fail-sync N      the Nth sync (xSync) raises IOError (EIO)
  --persist          keep failing every write or sync after the first failure (default: once)
  --fail-write-containing TEXT
                     the first write whose bytes contain TEXT raises FullError (once): a
                     disk that fills up exactly when one given message is being stored
  --extra-pages K    every connection gets PRAGMA max_page_count = page_count + K (disk full
                     for the db only, nothing else)
  --idle S           the provider client's content watchdog (default 90 s)
  --total S          the provider client's whole-response deadline (default 600 s)
  --trace FILE       append one JSON line per connection: its file, its settings as seen when
                     it closes (or at exit), and every write that ran inside a read
                     transaction (the deferred upgrade that fails with an immediate BusyError)

Only the standard library, apsw and seri: it runs as a script, outside the test package.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import weakref
from typing import Any

import apsw

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")


class _Faults:
    def __init__(self) -> None:
        self.fail_write = 0
        self.fail_sync = 0
        self.marker = b""
        self.persist = False
        self.writes = 0
        self.syncs = 0
        self.fired = False

    def on_write(self, data: bytes) -> None:
        self.writes += 1
        if self.marker and not self.fired and self.marker in data:
            self.fired = True
            raise apsw.FullError("injected: no space left on device")
        if self.fail_write and self._due(self.writes, self.fail_write):
            raise apsw.FullError("injected: no space left on device")

    def on_sync(self) -> None:
        self.syncs += 1
        if self.fail_sync and self._due(self.syncs, self.fail_sync):
            raise apsw.IOError("injected: input/output error")

    def _due(self, count: int, at: int) -> bool:
        if count == at or (self.persist and count > at):
            self.fired = True
            return True
        return False


FAULTS = _Faults()


class _FaultFile(apsw.VFSFile):
    def xWrite(self, data: bytes, offset: int) -> None:
        FAULTS.on_write(bytes(data))
        super().xWrite(data, offset)

    def xSync(self, flags: int) -> None:
        FAULTS.on_sync()
        super().xSync(flags)


class _FaultVFS(apsw.VFS):
    def __init__(self) -> None:
        super().__init__("seri-fault", "unix", makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:
        return _FaultFile("unix", name, flags)


def _install_pages(extra: int) -> None:
    def hook(conn: apsw.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchall()[0][0]
        conn.execute(f"PRAGMA max_page_count = {int(pages) + extra}")

    apsw.connection_hooks.append(hook)


def _install_timeouts(idle: float | None, total: float | None) -> None:
    from seri.io.provider import provider

    original = provider.ProviderClient.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        if idle is not None:
            kwargs.setdefault("idle_timeout", idle)
        if total is not None:
            kwargs.setdefault("total_timeout", total)
        # The fake stands for a provider in the cloud: no time for reading a local prompt.
        kwargs.setdefault("server_is_local", False)
        original(self, *args, **kwargs)

    provider.ProviderClient.__init__ = init  # type: ignore[method-assign]


def _install_trace(path: str) -> None:
    base = apsw.Connection
    opened: weakref.WeakSet[Any] = weakref.WeakSet()
    reports: list[dict[str, Any]] = []

    class TracedConnection(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.report: dict[str, Any] = {
                "file": self.filename,
                "pid": os.getpid(),
                "upgrades": [],
                "statements": 0,
                "begins": [],
            }
            self.exec_trace = self._trace
            opened.add(self)

        def _trace(self, cursor: Any, sql: str, bindings: Any) -> bool:
            self.report["statements"] += 1
            head = sql.lstrip().split(None, 2)
            word = head[0].upper() if head else ""
            if word == "BEGIN":
                self.report["begins"].append(" ".join(head[:2]).upper())
            elif word in WRITES and self.txn_state("main") == apsw.SQLITE_TXN_READ:
                # A write that must upgrade a read snapshot: BusyError at once, whatever the
                # busy timeout, whenever another process committed meanwhile.
                self.report["upgrades"].append(sql.strip()[:200])
            return True

        def settle(self) -> None:
            if self.report.get("settled"):
                return
            self.report["settled"] = True
            self.report["pragmas"] = {
                name: self.execute(f"PRAGMA {name}").fetchall()[0][0]
                for name in (
                    "journal_mode",
                    "synchronous",
                    "foreign_keys",
                    "busy_timeout",
                    "mmap_size",
                    "secure_delete",
                )
            }
            self.report["transaction_mode"] = getattr(self, "transaction_mode", None)
            reports.append(self.report)

        def close(self, force: bool = False) -> None:
            try:
                self.settle()
            except apsw.Error as exc:
                self.report["error"] = f"{type(exc).__name__}: {exc}"
                reports.append(self.report)
            super().close(force)

    def flush() -> None:
        for conn in list(opened):
            try:
                conn.settle()
            except apsw.Error as exc:
                conn.report["error"] = f"{type(exc).__name__}: {exc}"
                reports.append(conn.report)
        with open(path, "a", encoding="utf-8") as out:
            for report in reports:
                report["sqlite"] = apsw.sqlite_lib_version()
                out.write(json.dumps(report) + "\n")

    apsw.Connection = TracedConnection  # type: ignore[misc]
    atexit.register(flush)


def main() -> int:
    args = sys.argv[1:]
    split = args.index("--")
    options, seri_args = args[:split], args[split + 1 :]
    values: dict[str, str] = {}
    flags = set()
    i = 0
    while i < len(options):
        name = options[i]
        if name == "--persist":
            flags.add(name)
            i += 1
            continue
        values[name] = options[i + 1]
        i += 2
    if {"--fail-write", "--fail-sync", "--fail-write-containing"} & values.keys():
        FAULTS.marker = values.get("--fail-write-containing", "").encode()
        FAULTS.fail_write = int(values.get("--fail-write", 0))
        FAULTS.fail_sync = int(values.get("--fail-sync", 0))
        FAULTS.persist = "--persist" in flags
        globals()["_VFS"] = _FaultVFS()
    if "--extra-pages" in values:
        _install_pages(int(values["--extra-pages"]))
    if "--idle" in values or "--total" in values:
        idle = values.get("--idle")
        total = values.get("--total")
        _install_timeouts(float(idle) if idle else None, float(total) if total else None)
    if "--trace" in values:
        _install_trace(values["--trace"])
    from seri.commands.main import main as seri_main

    return seri_main(seri_args)


if __name__ == "__main__":
    sys.exit(main())
