"""The one way a database of the state folder is opened (``state.db``, ``timeoff_ledger.db``).

- The folder is made private (0700) and the database file is created 0600 before SQLite opens it, so it
  is never readable by others, not even for a moment; SQLite gives its ``-wal`` and ``-shm`` files the
  database file's mode.
- WAL journal: a reader never blocks the writer, and a killed process leaves a consistent database.
- ``synchronous``: how far a commit goes before the call returns (``Synchronous``). Both settings survive a
  ``kill -9`` whole, since a commit is in the WAL file (the operating system's cache) either way; they differ
  on a power cut or a kernel crash. ``FULL`` (the default, the time-off ledger's: its endpoint is not
  idempotent) syncs the WAL at every commit, so nothing committed is ever lost. ``NORMAL`` syncs it only at
  checkpoints: a power cut may take back the last commits (never corrupt the database), and the caller must
  be able to live with that (the state store: see its module docstring). A sync makes the commit wait for
  the disk, however slow it is (a laptop's, a network share).
- Autocommit (``isolation_level=None``): each write is its own short transaction unless a store opens one.
- One busy timeout: a second process waits this long for a write lock before giving up.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from hrimport.errors import ConfigError, StateNotWritten
from hrimport.private_files import FILE_MODE, make_private_file, make_private_folder

__all__ = ["BUSY_TIMEOUT", "make_state_folder", "open_database", "writing"]

BUSY_TIMEOUT = 30.0  # seconds

#: SQLite's ``PRAGMA synchronous`` values a state database may use (see the module docstring).
Synchronous = Literal["FULL", "NORMAL"]


def make_state_folder(folder: Path) -> Path:
    """Create the state folder (0700), or make an existing one private; ``ConfigError`` if impossible."""
    try:
        return make_private_folder(folder)
    except OSError as exc:
        raise ConfigError(f"cannot create the state folder {folder}: {exc.strerror}") from None


def open_database(
    folder: Path, filename: str, schema: str, *, what: str, shared_between_threads: bool = False,
    synchronous: Synchronous = "FULL",
) -> sqlite3.Connection:
    """Open (creating it and its folder when new) ``folder/filename`` and apply ``schema`` (idempotent SQL).

    ``what`` names the database in error messages (``"the time-off ledger"``). A connection
    ``shared_between_threads`` may be used from any thread; its owner serialises the calls. ``synchronous``:
    whether a commit survives a power cut (``FULL``) or only a killed process (``NORMAL``).
    """
    path = make_state_folder(folder) / filename
    try:
        make_private_file(path)
        for leftover in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            if leftover.exists():  # written by a version that did not make them private
                os.chmod(leftover, FILE_MODE)
    except OSError as exc:
        raise ConfigError(f"cannot open {what} {path}: {exc.strerror}; check the state folder") from None
    db: sqlite3.Connection | None = None
    try:
        db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=not shared_between_threads
        )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")  # one of two literals, never the caller's text
        db.executescript(schema)
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        raise ConfigError(f"cannot open {what} {path}: {exc}; check the state folder") from None
    return db


@contextmanager
def writing(what: str, path: Path) -> Iterator[None]:
    """A write to the state database ``path`` (``what`` it is): SQLite's error (``database or disk is full``)
    becomes ``StateNotWritten``, one line naming the file, instead of a traceback with exit 1."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StateNotWritten(
            f"{what} {path} could not be written: {exc}; free space there (or fix the folder) and run again: the "
            "rows sent so far are in the run's outcomes.jsonl, and nothing is imported twice",
            path=path, reason=str(exc),
        ) from None
