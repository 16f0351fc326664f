"""What goes wrong with the store, as errors that say what to do.

``StoreError``: the database cannot be used as it is (not ours, damaged, too new): an input
error. ``StorageFailed``: the disk or the lock failed this time (full, an I/O error, locked too
long): the command did not finish. ``store_error`` tells the two apart from the exception
chain.
"""

from __future__ import annotations

import errno

import apsw

from seri.pure.inputs.errors import EXIT_UNFINISHED, SeriError


class StoreError(SeriError):
    """The database cannot be used as it is; the message says what to do."""


class StorageFailed(StoreError):
    """The disk or the lock failed this time (full, an I/O error, locked too long).

    Nothing is wrong with the profile or with what was asked, so this is not an input error
    (exit 2): the command did not finish (exit 1), as when the same fault strikes mid-turn.
    """

    exit_code = EXIT_UNFINISHED


# OS errors that say the disk failed this time, not that the path or the profile is wrong.
_TRANSIENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def store_error(message: str, exc: BaseException) -> StoreError:
    """The StoreError for ``exc``: StorageFailed when the disk or the lock failed."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, apsw.NotADBError | apsw.CorruptError):
            return StoreError(message)
        if isinstance(current, apsw.FullError | apsw.IOError | apsw.BusyError):
            return StorageFailed(message)
        if isinstance(current, OSError) and current.errno in _TRANSIENT_ERRNOS:
            return StorageFailed(message)
        current = current.__cause__ or current.__context__
    return StoreError(message)
