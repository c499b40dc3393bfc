"""The one way a database of the state folder is opened (``state.db``, ``timeoff_ledger.db``).

- The folder is made private (0700) and the database file is created 0600 before SQLite opens it, so it
  is never readable by others, not even for a moment; SQLite gives its ``-wal`` and ``-shm`` files the
  database file's mode.
- WAL journal: a reader never blocks the writer, and a killed process leaves a consistent database.
- ``synchronous=FULL``: each commit is on disk before the call returns, so what a store was told survives
  a power cut as well as a ``kill -9``. The time-off ledger needs that (its endpoint is not idempotent); the
  state store commits once per batch, so the extra sync costs it nothing worth a second setting.
- Autocommit (``isolation_level=None``): each write is its own short transaction unless a store opens one.
- One busy timeout: a second process waits this long for a write lock before giving up.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from hrimport.errors import ConfigError
from hrimport.private_files import FILE_MODE, make_private_file, make_private_folder

__all__ = ["BUSY_TIMEOUT", "make_state_folder", "open_database"]

BUSY_TIMEOUT = 30.0  # seconds


def make_state_folder(folder: Path) -> Path:
    """Create the state folder (0700), or make an existing one private; ``ConfigError`` if impossible."""
    try:
        return make_private_folder(folder)
    except OSError as exc:
        raise ConfigError(f"cannot create the state folder {folder}: {exc.strerror}") from None


def open_database(
    folder: Path, filename: str, schema: str, *, what: str, shared_between_threads: bool = False
) -> sqlite3.Connection:
    """Open (creating it and its folder when new) ``folder/filename`` and apply ``schema`` (idempotent SQL).

    ``what`` names the database in error messages (``"the time-off ledger"``). A connection
    ``shared_between_threads`` may be used from any thread; its owner serialises the calls.
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
        db.execute("PRAGMA synchronous=FULL")
        db.executescript(schema)
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        raise ConfigError(f"cannot open {what} {path}: {exc}; check the state folder") from None
    return db
