"""The time-off ledger: every record the service accepted, so a re-run never adds one twice.

The time-off endpoint is not idempotent (issue 5): posting the same row again would add a second record
(or, on the platform, at best answer "overlaps"). The ledger is a SQLite file in the config's state folder
(``STATE_DIR/timeoff_ledger.db``, default ``.hrimport/``), one row per accepted record keyed by

    (service, customer id, external id, leave type, start date, end date)

where the leave type is its canonical English name (``年假`` and ``Annual Leave`` are one key) and the
service is where the record went (``embedded-sandbox`` or the base URL's scheme, host and path), so that
trying a file on a sandbox never makes the production import skip it.

Every record goes through two states, each committed before the next step (WAL, ``synchronous=FULL``,
``hrimport.state.db``), so a run killed at any point loses nothing it was told:

- ``sending``: written with the request body *before* the POST. It stays when the answer never arrives
  (a dropped connection, a timeout, a kill at the wrong moment): the service may hold the record or not.
- ``stored``: the service accepted the record (its id kept). The next run reports the row
  ``already_imported`` and sends nothing.

A row whose entry is ``sending`` is posted again on the next run. If the service then answers that the
period overlaps a record of the same person, leave type and dates, that record is the one whose answer was
lost: the entry becomes ``stored`` and the row ``added`` by that send (no report told it: its run failed it or
was killed), never a second record or a row for HR to fix. An overlap with anything else stays ``overlaps_existing``. A ``sending`` entry made by this run for
a request the service refused, or never received, is removed again.

A record HR cancelled on the platform (``hrimport timeoff mark-cancelled``: the platform's interface can
neither list nor remove time off) moves to the ``cancelled`` table, with when, so the ledger keeps it but no
longer holds it as on the platform: the same leave in a later export is sent again. ``ExportListing``
compares an export with the records held (``Ledger.listing``), to name those the export no longer lists.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Self

from hrimport.state.db import open_database, writing

__all__ = ["LEDGER_FILE", "LEDGER_LOCK", "Cancelled", "ExportListing", "Ledger", "LedgerEntry", "LedgerKey",
           "ListedEntry", "open_ledger"]

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
    accepted_at  TEXT NOT NULL,  -- when stored; while sending, when sent
    status       TEXT NOT NULL DEFAULT 'stored' CHECK (status IN ('sending', 'stored')),
    body         TEXT,           -- the request body sent (JSON)
    PRIMARY KEY (service, customer_id, external_id, leave_type, start_date, end_date)
);
-- records HR cancelled on the platform (hrimport timeoff mark-cancelled), moved out of ``accepted`` with when:
-- kept, no longer on the platform (the same leave in a later export is sent again); one leave may be sent and
-- cancelled more than once, so no key
CREATE TABLE IF NOT EXISTS cancelled (
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
    cancelled_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cancelled_records ON cancelled (service, customer_id, record_id);
-- a ledger a person chose to start anew for a service and customer (--new-ledger) though earlier imports had
-- sent time off there: asked once, not every month
CREATE TABLE IF NOT EXISTS started_anew (
    service      TEXT NOT NULL,
    customer_id  TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    PRIMARY KEY (service, customer_id)
);
"""
#: Columns added since the first ledger files were written (those files get them on open).
_ADDED_COLUMNS = {
    "status": "ALTER TABLE accepted ADD COLUMN status TEXT NOT NULL DEFAULT 'stored' "
              "CHECK (status IN ('sending', 'stored'))",
    "body": "ALTER TABLE accepted ADD COLUMN body TEXT",
}
_COLUMNS = ("service, customer_id, external_id, leave_type, start_date, end_date, record_id, total_days, "
            "source_file, source_row, accepted_at, status, body")
_KEY_MATCH = ("service = ? AND customer_id = ? AND external_id = ? AND leave_type = ? AND start_date = ? "
              "AND end_date = ?")


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
    """One record as the ledger remembers it: ``stored`` (accepted) or ``sending`` (answer not yet seen)."""

    key: LedgerKey
    record_id: int | None
    total_days: str
    source_file: str
    source_row: int
    accepted_at: str  # when stored; while sending, when sent
    status: str = "stored"
    body: dict[str, Any] | None = None  # the request body sent (None in a ledger written before bodies were kept)

    @property
    def stored(self) -> bool:
        return self.status == "stored"


class Ledger:
    """The ledger file, safe to use from the import's worker threads (one connection behind a lock)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LEDGER_FILE
        # synchronous=FULL (the one setup): a record the service accepted is on disk before the next is posted
        self._conn = open_database(state_dir, LEDGER_FILE, _SCHEMA, what="the time-off ledger",
                                   shared_between_threads=True)
        self._lock = threading.Lock()
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(accepted)")}
        for column, statement in _ADDED_COLUMNS.items():
            if column not in have:
                self._conn.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def find(self, keys: Iterable[LedgerKey]) -> dict[LedgerKey, LedgerEntry]:
        """The entries of those ``keys`` the ledger holds (``stored`` and ``sending``)."""
        found: dict[LedgerKey, LedgerEntry] = {}
        with self._lock:
            for key in dict.fromkeys(keys):
                row = self._conn.execute(f"SELECT {_COLUMNS} FROM accepted WHERE {_KEY_MATCH}",
                                         _key_values(key)).fetchone()
                if row is not None:
                    found[key] = _entry(row)
        return found

    def knows(self, service: str, customer_id: str) -> bool:
        """Whether the ledger holds a record sent to ``service`` for ``customer_id``, or was started anew for
        them (``start_anew``)."""
        with self._lock:
            return any(self._conn.execute(f"SELECT 1 FROM {table} WHERE service = ? AND customer_id = ? LIMIT 1",
                                          (service, customer_id)).fetchone() is not None
                       for table in ("accepted", "cancelled", "started_anew"))

    def start_anew(self, service: str, customer_id: str) -> None:
        """Record that a person chose to send to ``service`` for ``customer_id`` with this ledger, which knows
        nothing of what earlier imports sent there (``--new-ledger``)."""
        with self._lock, writing("the time-off ledger", self.path):
            self._conn.execute("INSERT OR IGNORE INTO started_anew VALUES (?, ?, ?)", (service, customer_id, _now()))

    def overlapping(self, keys: Iterable[LedgerKey]) -> dict[LedgerKey, list[LedgerEntry]]:
        """For each of ``keys``, the records stored for the same person (service, customer, external id) whose
        period overlaps its own, other than its own record, earliest first; keys with none are left out. The
        platform takes no leave overlapping another of the person (api-notes: "no existing record overlaps the
        period"), of any leave type."""
        found: dict[LedgerKey, list[LedgerEntry]] = {}
        with self._lock:
            for key in dict.fromkeys(keys):
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM accepted WHERE service = ? AND customer_id = ? AND external_id = ? "
                    "AND status = 'stored' AND start_date <= ? AND end_date >= ? "
                    "AND NOT (leave_type = ? AND start_date = ? AND end_date = ?) ORDER BY start_date, end_date",
                    (key.service, key.customer_id, key.external_id, key.end_date, key.start_date, key.leave_type,
                     key.start_date, key.end_date)).fetchall()
                if rows:
                    found[key] = [_entry(row) for row in rows]
        return found

    def sending(self, key: LedgerKey, *, body: dict[str, Any], total_days: str, source_file: str,
                source_row: int) -> None:
        """Record, before the POST, that this record is being sent; an entry already held is kept as is."""
        with self._lock, writing("the time-off ledger", self.path):
            self._conn.execute(
                "INSERT OR IGNORE INTO accepted VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, 'sending', ?)",
                (*_key_values(key), total_days, source_file, source_row, _now(),
                 json.dumps(body, ensure_ascii=False)),
            )

    def remember(self, key: LedgerKey, *, record_id: int | None, total_days: str, source_file: str,
                 source_row: int) -> None:
        """Record that the service stored this record, committed before returning."""
        with self._lock, writing("the time-off ledger", self.path):
            self._conn.execute(
                "INSERT INTO accepted VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'stored', NULL) "
                "ON CONFLICT (service, customer_id, external_id, leave_type, start_date, end_date) DO UPDATE SET "
                "record_id = excluded.record_id, total_days = excluded.total_days, status = 'stored', "
                "source_file = CASE WHEN status = 'sending' THEN source_file ELSE excluded.source_file END, "
                "source_row = CASE WHEN status = 'sending' THEN source_row ELSE excluded.source_row END, "
                "accepted_at = excluded.accepted_at",
                (*_key_values(key), record_id, total_days, source_file, source_row, _now()),
            )

    def add_stored(self, entries: Iterable[LedgerEntry]) -> int:
        """Add ``entries`` as stored records (``hrimport timeoff rebuild-ledger``: read back from the reports of
        the imports that sent them), keeping any entry the ledger holds already; how many were added."""
        with self._lock, writing("the time-off ledger", self.path):
            before = self._conn.total_changes
            self._conn.execute("BEGIN IMMEDIATE")  # one transaction: autocommit would sync each record
            try:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO accepted VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'stored', NULL)",
                    ((*_key_values(e.key), e.record_id, e.total_days, e.source_file, e.source_row, e.accepted_at)
                     for e in entries))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return self._conn.total_changes - before

    def forget_sending(self, key: LedgerKey) -> None:
        """Remove a ``sending`` entry: the service refused the record or never received it."""
        with self._lock, writing("the time-off ledger", self.path):
            self._conn.execute(f"DELETE FROM accepted WHERE {_KEY_MATCH} AND status = 'sending'", _key_values(key))

    def cancel(self, service: str, customer_id: str, record_ids: Iterable[int], *, dry_run: bool = False) -> Cancelled:
        """Mark the records ``record_ids`` sent to ``service`` for ``customer_id`` as cancelled on the platform
        (``hrimport timeoff mark-cancelled``): each moves to the ``cancelled`` table with when, in one
        transaction, unless one of them is unknown, when none is marked. ``dry_run``: only say which are known."""
        done = Cancelled()
        with self._lock, writing("the time-off ledger", self.path):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for record_id in dict.fromkeys(record_ids):
                    values = (service, customer_id, record_id)
                    row = self._conn.execute(f"SELECT {_COLUMNS} FROM accepted WHERE service = ? AND customer_id = ? "
                                             "AND record_id = ? AND status = 'stored'", values).fetchone()
                    if row is not None:
                        done.marked.append(_entry(row))
                        continue
                    before = self._conn.execute("SELECT cancelled_at FROM cancelled WHERE service = ? AND "
                                                "customer_id = ? AND record_id = ? ORDER BY cancelled_at DESC LIMIT 1",
                                                values).fetchone()
                    if before is not None:
                        done.before[record_id] = before[0]
                    else:
                        done.unknown.append(record_id)
                if done.unknown or dry_run:
                    self._conn.execute("ROLLBACK")
                    if not dry_run:
                        done.marked = []
                    return done
                done.at = _now()
                for entry in done.marked:
                    self._conn.execute(
                        "INSERT INTO cancelled SELECT service, customer_id, external_id, leave_type, start_date, "
                        "end_date, record_id, total_days, source_file, source_row, accepted_at, ? FROM accepted "
                        f"WHERE {_KEY_MATCH}", (done.at, *_key_values(entry.key)))
                    self._conn.execute(f"DELETE FROM accepted WHERE {_KEY_MATCH}", _key_values(entry.key))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return done

    def listing(self, service: str, customer_id: str) -> ExportListing:
        """An empty ``ExportListing`` of an export sent to ``service`` for ``customer_id``, to fill and compare."""
        return ExportListing(self, service, customer_id)

    def entries(self) -> list[LedgerEntry]:
        """Every entry, oldest first (for tests and inspection)."""
        with self._lock:
            rows = self._conn.execute(f"SELECT {_COLUMNS} FROM accepted ORDER BY accepted_at, rowid").fetchall()
        return [_entry(r) for r in rows]


@dataclass
class Cancelled:
    """What ``Ledger.cancel`` did: the records it marked (none when one was ``unknown``), when, and those marked
    before (record id -> when)."""

    marked: list[LedgerEntry] = field(default_factory=list)
    at: str = ""
    before: dict[int, str] = field(default_factory=dict)
    unknown: list[int] = field(default_factory=list)

    @property
    def known(self) -> list[int]:
        """The record ids held, marked now or before."""
        return [*(e.record_id for e in self.marked if e.record_id is not None), *self.before]


@dataclass(frozen=True)
class ListedEntry:
    """A record held as on the platform that an export no longer lists (``ExportListing.missing``), with the
    person's name as the export gives it ("" when it gives none but the id)."""

    entry: LedgerEntry
    name: str


class ExportListing:
    """The leave an export lists, to compare with the records the ledger holds as on the platform for one
    service and customer: which of them it no longer lists (``missing``).

    The export's leave (``add``), its people and those of them whose rows could not all be read (``unread``)
    are kept in temporary tables of the ledger's connection, which SQLite spills to a temporary file past its
    cache, and compared in one query: the time and memory stay bounded whatever the number of rows and records
    (no query per record, no set of every key in memory). ``close`` drops them; use it as a context manager."""

    def __init__(self, ledger: Ledger, service: str, customer_id: str) -> None:
        self._ledger, self.service, self.customer_id = ledger, service, customer_id
        self.first: str | None = None  # the earliest start of the export's leave
        self.last: str | None = None  # its latest end
        # its latest start and earliest end: a month's export lists a long leave begun months before (or ending
        # after), whose start alone does not make those months covered
        self.last_start: str | None = None
        self.first_end: str | None = None
        with ledger._lock:
            ledger._conn.executescript(_LISTING_SCHEMA)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def add(self, keys: Sequence[LedgerKey], names: Sequence[str]) -> None:
        """Add the export's leave ``keys`` (each with its person's name, "" when not known) to the listing."""
        if not keys:
            return
        first = min(k.start_date for k in keys)
        last = max(k.end_date for k in keys)
        last_start = max(k.start_date for k in keys)
        first_end = min(k.end_date for k in keys)
        self.first = first if self.first is None else min(self.first, first)
        self.last = last if self.last is None else max(self.last, last)
        self.last_start = last_start if self.last_start is None else max(self.last_start, last_start)
        self.first_end = first_end if self.first_end is None else min(self.first_end, first_end)
        self._insert("INSERT OR IGNORE INTO temp.listed_leave VALUES (?, ?, ?, ?)",
                     [(k.external_id, k.leave_type, k.start_date, k.end_date) for k in keys])
        self._insert("INSERT OR IGNORE INTO temp.listed_people VALUES (?, ?)",
                     [(k.external_id, name) for k, name in zip(keys, names, strict=True)])

    def told(self, keys: Iterable[LedgerKey]) -> None:
        """Records named otherwise (a row's ``overlaps-imported`` warning): not listed as missing."""
        self._insert("INSERT OR IGNORE INTO temp.listed_leave VALUES (?, ?, ?, ?)",
                     [(k.external_id, k.leave_type, k.start_date, k.end_date) for k in keys])

    def unread(self, external_ids: Iterable[str]) -> None:
        """People with a row of the export that could not be read (held back before its leave was known): their
        records are not compared (the row may be any of them)."""
        self._insert("INSERT OR IGNORE INTO temp.unread_people VALUES (?)", [(e,) for e in external_ids])

    def _insert(self, sql: str, values: list[tuple[str, ...]]) -> None:
        if not values:
            return
        ledger = self._ledger
        with ledger._lock:
            ledger._conn.execute("BEGIN")  # one transaction: autocommit would make one of each row
            try:
                ledger._conn.executemany(sql, values)
            except BaseException:
                ledger._conn.execute("ROLLBACK")
                raise
            ledger._conn.execute("COMMIT")

    def missing(self) -> Iterator[ListedEntry]:
        """The records held as on the platform for the service and customer that the export no longer lists,
        although it covers them: of a person with a row in the export (none unread), starting between the
        earliest and the latest start of its leave and ending between its earliest and latest end: a record the
        export would list whether it lists the leave that starts, ends or is taken in the period it covers (a
        month's export lists a long leave begun months before, whose start does not make those months covered).
        By person, then date; read as they are iterated."""
        if self.first is None or self.last is None or self.last_start is None or self.first_end is None:
            return
        ledger = self._ledger
        with ledger._lock:
            rows = ledger._conn.execute(
                f"SELECT {', '.join('a.' + c for c in _COLUMNS.split(', '))}, p.name FROM accepted a "
                "JOIN temp.listed_people p ON p.external_id = a.external_id "
                "WHERE a.service = ? AND a.customer_id = ? AND a.status = 'stored' "
                "AND a.start_date BETWEEN ? AND ? AND a.end_date BETWEEN ? AND ? "
                "AND a.external_id NOT IN (SELECT external_id FROM temp.unread_people) "
                "AND NOT EXISTS (SELECT 1 FROM temp.listed_leave l WHERE l.external_id = a.external_id "
                "AND l.leave_type = a.leave_type AND l.start_date = a.start_date AND l.end_date = a.end_date) "
                "ORDER BY a.external_id, a.start_date, a.end_date, a.leave_type",
                (self.service, self.customer_id, self.first, self.last_start, self.first_end, self.last))
        while True:
            with ledger._lock:  # a batch at a time: never held while the caller works on what it was given
                batch = rows.fetchmany(1_000)
            if not batch:
                return
            yield from (ListedEntry(_entry(row[:-1]), row[-1]) for row in batch)

    def close(self) -> None:
        with self._ledger._lock:
            self._ledger._conn.executescript(_LISTING_DROP)


# The listing's temporary tables: each connection has its own, gone when it closes (dropped before).
_LISTING_SCHEMA = """
CREATE TEMP TABLE IF NOT EXISTS listed_leave (
    external_id TEXT NOT NULL, leave_type TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL,
    PRIMARY KEY (external_id, leave_type, start_date, end_date)) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS listed_people (external_id TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS unread_people (external_id TEXT PRIMARY KEY) WITHOUT ROWID;
DELETE FROM temp.listed_leave; DELETE FROM temp.listed_people; DELETE FROM temp.unread_people;
"""
_LISTING_DROP = """
DROP TABLE IF EXISTS temp.listed_leave; DROP TABLE IF EXISTS temp.listed_people;
DROP TABLE IF EXISTS temp.unread_people;
"""


def _entry(row: tuple[Any, ...]) -> LedgerEntry:
    body = json.loads(row[12]) if row[12] else None
    return LedgerEntry(LedgerKey(*row[:6]), row[6], row[7], row[8], row[9], row[10], row[11],
                       body if isinstance(body, dict) else None)


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


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
