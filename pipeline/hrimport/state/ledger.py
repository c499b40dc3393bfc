"""The time-off ledger: every record the service accepted, so a re-run never adds one twice.

The time-off endpoint is not idempotent (issue 5): posting the same row again would add a second record
(or, on the platform, at best answer "overlaps"). The ledger is a SQLite file in the config's state folder
(``STATE_DIR/timeoff_ledger.db``, default ``.hrimport/``), one row per accepted record keyed by

    (service, customer id, external id, leave type, start date, end date)

where the leave type is its canonical English name (``年假`` and ``Annual Leave`` are one key) and the
service is where the record went (``embedded-sandbox`` or the base URL's scheme, host and path), so that
trying a file on a sandbox never makes the production import skip it.

A record is written and committed right after the service accepts it (from the worker thread that posted
it), in WAL mode with ``synchronous=FULL`` (``hrimport.state.db``): a run killed at any point loses nothing
it was told, and the next run reports those rows ``already_imported``. The one window left is a record the
service accepted whose answer never arrived; the next run posts it again and the service answers
"overlaps", which is reported as such.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hrimport.state.db import open_database

__all__ = ["LEDGER_FILE", "LEDGER_LOCK", "Ledger", "LedgerEntry", "LedgerKey", "open_ledger"]

LEDGER_FILE = "timeoff_ledger.db"
#: Lock name: time-off imports sharing a state folder (and so a ledger) run one at a time.
LEDGER_LOCK = "timeoff-ledger"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accepted (
    service      TEXT NOT NULL,
    customer_id  TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    leave_type   TEXT NOT NULL,
    start_date   TEXT NOT NULL,
    end_date     TEXT NOT NULL,
    record_id    INTEGER,
    total_days   TEXT NOT NULL,
    source_file  TEXT NOT NULL,
    source_row   INTEGER NOT NULL,
    accepted_at  TEXT NOT NULL,
    PRIMARY KEY (service, customer_id, external_id, leave_type, start_date, end_date)
);
"""


@dataclass(frozen=True)
class LedgerKey:
    """What identifies one time-off record for the ledger."""

    service: str
    customer_id: str
    external_id: str
    leave_type: str  # canonical English name
    start_date: str  # YYYY-MM-DD
    end_date: str


@dataclass(frozen=True)
class LedgerEntry:
    """One accepted record as the ledger remembers it."""

    key: LedgerKey
    record_id: int | None
    total_days: str
    source_file: str
    source_row: int
    accepted_at: str


class Ledger:
    """The ledger file, safe to use from the import's worker threads (one connection behind a lock)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LEDGER_FILE
        # synchronous=FULL (the one setup): a record the service accepted is on disk before the next is posted
        self._conn = open_database(state_dir, LEDGER_FILE, _SCHEMA, what="the time-off ledger",
                                   shared_between_threads=True)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def find(self, keys: Iterable[LedgerKey]) -> dict[LedgerKey, LedgerEntry]:
        """The entries of those ``keys`` the ledger holds."""
        found: dict[LedgerKey, LedgerEntry] = {}
        with self._lock:
            for key in dict.fromkeys(keys):
                row = self._conn.execute(
                    "SELECT record_id, total_days, source_file, source_row, accepted_at FROM accepted "
                    "WHERE service = ? AND customer_id = ? AND external_id = ? AND leave_type = ? "
                    "AND start_date = ? AND end_date = ?",
                    _key_values(key),
                ).fetchone()
                if row is not None:
                    found[key] = LedgerEntry(key, row[0], row[1], row[2], row[3], row[4])
        return found

    def remember(self, key: LedgerKey, *, record_id: int | None, total_days: str, source_file: str,
                 source_row: int) -> None:
        """Record one accepted record, committed before returning."""
        accepted_at = datetime.now().astimezone().isoformat(timespec="seconds")
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO accepted VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*_key_values(key), record_id, total_days, source_file, source_row, accepted_at),
            )

    def entries(self) -> list[LedgerEntry]:
        """Every entry, oldest first (for tests and inspection)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT service, customer_id, external_id, leave_type, start_date, end_date, record_id, "
                "total_days, source_file, source_row, accepted_at FROM accepted ORDER BY accepted_at, rowid"
            ).fetchall()
        return [LedgerEntry(LedgerKey(*r[:6]), r[6], r[7], r[8], r[9], r[10]) for r in rows]


def _key_values(key: LedgerKey) -> tuple[str, ...]:
    return (key.service, key.customer_id, key.external_id, key.leave_type, key.start_date, key.end_date)


@contextmanager
def open_ledger(state_dir: Path) -> Iterator[Ledger]:
    """The ledger of ``state_dir``, closed afterwards."""
    ledger = Ledger(state_dir)
    try:
        yield ledger
    finally:
        ledger.close()
