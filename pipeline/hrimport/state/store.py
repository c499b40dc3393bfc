"""The state folder's ``state.db``: what the service last accepted, and which files were imported.

Four tables in ``STATE_FOLDER/state.db`` (opened by ``hrimport.state.db``: WAL journal, so a reader never
blocks the writer and a killed process leaves a consistent database; ``synchronous=NORMAL``, see below):

- ``staff_accepted``: per (service, customer id, external id) the SHA-256 fingerprint of the last staff
  payload the service accepted, and the person's name in it (the time-off report names people by it) (``Add Successfully`` / ``Update Successfully``). The service is part of
  the key (as in the time-off ledger) so that trying a file on a sandbox never makes production skip it.
  A row whose payload has the same fingerprint is not sent again (issue 6, "Cheap when nothing changed").
  Rows are written after each batch the service answers, once the run's journal names them (``submit_staff``'s
  ``on_accepted``), so a ``kill -9`` loses at most the batch answered and the batch in flight, and sending
  them again is harmless because the staff endpoint creates or updates.
- ``staff_sending``: people never accepted yet whose record was sent and whose answer has not been seen
  (written before each batch, removed when the service accepts them). A record created by a send whose
  answer was lost is answered "updated" next time; this table is how the import knows it was an addition.
- ``source_files``: per (job, step) the SHA-256 of the source file of the last successful run, so the same
  file next month is reported as already imported instead of being read again.
- ``imported_files``: every source file each job step imported, in whole or in part (SHA-256, path, when), in
  the order imported, so that an older export found again (touched by a sync, copied back) is known as one
  and never sent over a newer one (``StateStore.superseded``). A state folder written before this table
  existed gets it on open, holding each step's last import (``source_files``): the only one it knew.

Durability. A commit is in the WAL file when the call returns, so a killed process (``kill -9``, a crash)
loses nothing it was told. It is not synced to the disk (``synchronous=NORMAL``; the time-off ledger syncs
every commit), since a sync waits for the disk and a staff import commits twice per batch. A power cut or
a kernel crash may therefore take back the last commits before a checkpoint, never corrupt the database,
and what is taken back is harmless: the rows whose acceptance is forgotten are sent again by the next run
(the staff endpoint creates or updates by external id), a forgotten ``staff_sending`` entry only makes
a person created by a send whose answer was lost read ``updated`` instead of ``added``, and a forgotten
import of a file only makes the next run import that file again.

``StateStore.accepted(service)`` implements ``hrimport.imports.staff.AcceptedPayloads`` for one service.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Self

from hrimport.service.staff import FirstSends, StaffRecord, StoredPayload
from hrimport.state.db import open_database, writing

__all__ = [
    "STATE_FILE", "AcceptedRecord", "AcceptedStaff", "ImportedFile", "StateStore", "StoredPayload", "Superseded",
    "file_sha256", "fingerprint",
]

STATE_FILE = "state.db"
_CHUNK = 500  # ids per IN (...) query: well under SQLite's bound-parameter limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS staff_accepted (
    service      TEXT NOT NULL,
    customer_id  TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    accepted_at  TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',  -- the name the service accepted (the time-off report shows it)
    payload      TEXT,                      -- the payload accepted (JSON): the plan's "before"
    job          TEXT NOT NULL DEFAULT '',  -- the job whose file holds it: the plan's "missing" ('' once left out)
    PRIMARY KEY (service, customer_id, external_id)
);
CREATE TABLE IF NOT EXISTS staff_sending (
    service      TEXT NOT NULL,
    customer_id  TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    sent_at      TEXT NOT NULL,
    PRIMARY KEY (service, customer_id, external_id)
);
CREATE TABLE IF NOT EXISTS source_files (
    job          TEXT NOT NULL,
    step         TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    path         TEXT NOT NULL,
    imported_at  TEXT NOT NULL,
    PRIMARY KEY (job, step)
);
CREATE TABLE IF NOT EXISTS imported_files (
    id           INTEGER PRIMARY KEY,       -- the order of the imports (a clock may go back, an id never does)
    job          TEXT NOT NULL,
    step         TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    path         TEXT NOT NULL,
    imported_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS imported_files_by_step ON imported_files (job, step, sha256);
"""


#: Columns of ``staff_accepted`` added since the first state folders were written.
_ADDED_COLUMNS = {"name": "TEXT NOT NULL DEFAULT ''", "payload": "TEXT", "job": "TEXT NOT NULL DEFAULT ''"}


@dataclass(frozen=True)
class AcceptedRecord:
    """What the service last accepted for one person, as the state folder remembers it."""

    external_id: str
    fingerprint: str
    payload: Mapping[str, Any] | None  # None: accepted before payloads were kept
    name: str
    accepted_at: str
    job: str = ""  # the job whose import sent it ("" before jobs were kept)


def fingerprint(external_id: str, payload: Mapping[str, Any]) -> str:
    """SHA-256 of a staff payload as canonical JSON (sorted keys, no spaces).

    The external id is folded in as ``customer_system_id`` and ``customer_id`` is left out, so the payload
    a ``StaffRecord`` holds and the element the submitter actually sent give the same fingerprint.

    >>> fingerprint("E1", {"name": "Ann"}) == fingerprint("E1", {"customer_system_id": "E1", "name": "Ann"})
    True
    """
    if isinstance(payload, StoredPayload) and payload.element_of == external_id:
        return _digest(payload.text)  # that very text, not decoded and encoded again
    return _digest(_encode_canonical(_as_dict(_canonical(external_id, payload))))


#: The fingerprint's JSON (every state folder holds fingerprints of it: its form never changes).
_encode_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode
#: A payload as the ``payload`` column keeps it, when it is not already its canonical form.
_encode_payload = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def _as_dict(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` as the json module encodes it: a dict (a ``StoredPayload`` is decoded)."""
    return payload if isinstance(payload, dict) else dict(payload)


def _canonical(external_id: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """``payload`` as the fingerprint reads it; ``payload`` itself (no copy) when it already is (a
    ``StaffRecord``'s payload names its external id and never holds ``customer_id``)."""
    if isinstance(payload, StoredPayload) and payload.element_of == external_id:
        return payload  # the element of that id: it names it and holds no customer_id
    if "customer_id" not in payload and payload.get("customer_system_id") == external_id:
        return payload
    canonical = {k: v for k, v in payload.items() if k != "customer_id"}
    canonical["customer_system_id"] = external_id
    return canonical


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class ImportedFile:
    """A source file a job step imported: its bytes' SHA-256, its path then, and when (ISO 8601)."""

    sha256: str
    path: str
    imported_at: str

    @property
    def name(self) -> str:
        """The file's name (not its path: the job's folder may have moved since)."""
        return Path(self.path).name

    @property
    def when(self) -> datetime | None:
        """When it was imported, in local time (as is a stamp without an offset); None when unreadable."""
        try:
            return datetime.fromisoformat(self.imported_at).astimezone()
        except ValueError:
            return None

    @property
    def shown_at(self) -> str:
        """``2024-06-01 06:15``: when it was imported, to the minute (the stamp as stored if unreadable)."""
        when = self.when
        return when.strftime("%Y-%m-%d %H:%M") if when is not None else self.imported_at


@dataclass(frozen=True)
class Superseded:
    """A file a job step imported before its last import, which was of other bytes: sending it again would
    put its values back over the newer ones."""

    job: str
    step: str
    imported: ImportedFile  # the latest import of these bytes by this step
    last: ImportedFile  # the step's last import, after it


class StateStore:
    """The state folder's database. Use as a context manager; every write is committed at once.

    Example::

        with StateStore.open(Path(".hrimport")) as state:
            accepted = state.accepted("https://api.example.com/api:v1")
            same = accepted.unchanged("99", records)   # external ids not to send again
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        # autocommit: each write below is its own short transaction, or one _transaction()
        # NORMAL: survives a killed process, not always a power cut, which is harmless here (module docstring)
        self._db = open_database(folder, STATE_FILE, _SCHEMA, what="the state database", synchronous="NORMAL")
        have = {row[1] for row in self._db.execute("PRAGMA table_info(staff_accepted)")}
        for column, definition in _ADDED_COLUMNS.items():
            if column not in have:  # a state folder written by an older version
                self._db.execute(f"ALTER TABLE staff_accepted ADD COLUMN {column} {definition}")
        self._keep_last_imports()

    def _keep_last_imports(self) -> None:
        """Put in ``imported_files`` each step's last import that it lacks: all a state folder written before
        that table knew of a step's files, or an import made since by such a version (a downgrade and back).
        Asked first, so that opening a state folder that lacks nothing writes nothing."""
        missing = (" FROM source_files AS s WHERE NOT EXISTS (SELECT 1 FROM imported_files AS h WHERE h.job = s.job "
                   "AND h.step = s.step AND h.sha256 = s.sha256 AND h.imported_at = s.imported_at)")
        if self._db.execute(f"SELECT 1{missing} LIMIT 1").fetchone() is None:
            return
        with self._transaction():
            self._db.execute("INSERT INTO imported_files (job, step, sha256, path, imported_at) "
                             f"SELECT s.job, s.step, s.sha256, s.path, s.imported_at{missing} ORDER BY s.imported_at")

    @classmethod
    def open(cls, folder: Path) -> StateStore:
        """Open (creating it and its folder when new) the database of a state folder."""
        return cls(folder)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def accepted(self, service: str, job: str = "") -> AcceptedStaff:
        """The staff payloads accepted by one service (``AcceptedPayloads`` for ``import_staff``); ``job``
        names the import that sends (the plan's "missing" are the people its last runs sent)."""
        return AcceptedStaff(self, service, job)

    def remember_payloads(
        self, service: str, customer_id: str, items: Iterable[tuple[str, Mapping[str, Any], str | None]], *,
        job: str = "",
    ) -> int:
        """Store each (external id, payload, its element's JSON as sent or None) accepted: its fingerprint,
        the payload and the name; returns how many."""
        now, customer = _now(), str(customer_id)
        rows = []
        for ext, payload, sent in items:
            # One JSON text gives the fingerprint and the payload kept, when the payload is canonical: then the
            # element sent (``element_json``: sorted keys, no spaces) is that very text, encoded once for all.
            canonical = _canonical(ext, payload)
            if sent is None or canonical is not payload:
                text = _encode_canonical(_as_dict(canonical))
            else:
                text = sent
            kept = text if canonical is payload else _encode_payload(_as_dict(payload))
            rows.append((service, customer, ext, _digest(text), now, str(payload.get("name") or ""), kept, job))
        if rows:
            with self._transaction():
                self._db.executemany(
                    "INSERT INTO staff_accepted (service, customer_id, external_id, fingerprint, accepted_at, name, "
                    "payload, job) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (service, customer_id, external_id) DO UPDATE SET "
                    "fingerprint = excluded.fingerprint, accepted_at = excluded.accepted_at, name = excluded.name, "
                    "payload = excluded.payload, job = excluded.job",
                    rows,
                )
                self._db.executemany(
                    "DELETE FROM staff_sending WHERE service = ? AND customer_id = ? AND external_id = ?",
                    [row[:3] for row in rows],
                )
        return len(rows)

    def first_sends(self, service: str, customer_id: str, external_ids: Sequence[str]) -> FirstSends:
        """Which of these people the service never accepted from us, and which of those an earlier send
        went out for without an answer; records the send of the never-accepted ones."""
        never = set(external_ids) - set(self.fingerprints(service, customer_id, external_ids))
        ids = sorted(never)
        before: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            before.update(ext for (ext,) in self._db.execute(
                f"SELECT external_id FROM staff_sending WHERE service = ? AND customer_id = ? "
                f"AND external_id IN ({marks})", [service, str(customer_id), *chunk]))
        now = _now()
        new = [(service, str(customer_id), ext, now) for ext in ids if ext not in before]
        if new:
            with self._transaction():
                self._db.executemany("INSERT OR IGNORE INTO staff_sending VALUES (?, ?, ?, ?)", new)
        return FirstSends(frozenset(never), frozenset(before))

    def fingerprints(self, service: str, customer_id: str, external_ids: Sequence[str]) -> dict[str, str]:
        """Stored fingerprints for these external ids (absent ids are left out)."""
        return self._accepted("fingerprint", service, customer_id, external_ids)

    def accepted_records(self, service: str, customer_id: str) -> dict[str, AcceptedRecord]:
        """Everyone the service accepted for this company, by external id (in its order)."""
        cursor = self._db.execute(
            "SELECT external_id, fingerprint, payload, name, accepted_at, job FROM staff_accepted "
            "WHERE service = ? AND customer_id = ? ORDER BY external_id", (service, str(customer_id)))
        return {ext: AcceptedRecord(ext, fp, json.loads(payload) if payload else None, name, at, job)
                for ext, fp, payload, name, at, job in cursor}

    def accepted_of(self, service: str, customer_id: str, external_ids: Sequence[str]) -> dict[str, AcceptedRecord]:
        """What the service accepted for these people (absent ids are left out), by external id; each payload
        is decoded from its JSON only when read (``StoredPayload``). A plan asks a chunk of rows at a time,
        so that a state folder of a million people is never held whole."""
        rows = self._accepted_rows("external_id, fingerprint, payload, name, accepted_at, job", service, customer_id,
                                   external_ids)
        return {ext: AcceptedRecord(ext, fp, StoredPayload(payload) if payload else None, name, at, job)
                for ext, fp, payload, name, at, job in rows}

    def job_people(self, service: str, customer_id: str, job: str) -> Iterator[tuple[str, str, str]]:
        """(external id, name, accepted at) of each person ``job``'s imports sent and the service accepted,
        read as they are walked."""
        yield from self._db.execute(
            "SELECT external_id, name, accepted_at FROM staff_accepted "
            "WHERE service = ? AND customer_id = ? AND job = ?", (service, str(customer_id), job))

    def left_job(self, service: str, customer_id: str, job: str, external_ids: Sequence[str]) -> None:
        """These people, missing from a file of ``job`` that was imported, are no longer the job's: the next
        month is compared with that file, so a leaver dropped from the export is missing once, not every
        month until the guard holds (their payload stays, for when they come back)."""
        self._move_job(service, customer_id, external_ids, job, "")

    def back_in_job(self, service: str, customer_id: str, job: str, external_ids: Sequence[str]) -> None:
        """These people, in a file of ``job`` that was imported, are the job's again if they had left it (one
        who comes back unchanged is not sent, so nothing else would say so): missing next time, they count."""
        self._move_job(service, customer_id, external_ids, "", job)

    def _move_job(self, service: str, customer_id: str, external_ids: Sequence[str], was: str, now: str) -> None:
        for start in range(0, len(external_ids), _CHUNK):
            chunk = list(external_ids[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            with self._transaction():
                self._db.execute(
                    f"UPDATE staff_accepted SET job = ? WHERE service = ? AND customer_id = ? AND job = ? "
                    f"AND external_id IN ({marks})", [now, service, str(customer_id), was, *chunk])

    def filled_shares(self, service: str, customer_id: str, job: str) -> dict[str, float]:
        """Per field, the share of the payloads ``job``'s imports sent and the service accepted that hold a
        value (``hrimport.changes.guards.filled_shares`` of them, in the same order: the field first held by
        the first payload in external id order, the order ``accepted_records`` walks them in), counted by
        SQLite's JSON functions rather than by decoding every payload."""
        args = (service, str(customer_id), job)
        kept = "a.service = ? AND a.customer_id = ? AND a.job = ? AND a.payload IS NOT NULL AND a.payload != ''"
        (known,) = self._db.execute(f"SELECT count(*) FROM staff_accepted AS a WHERE {kept}", args).fetchone()
        if not known:
            return {}
        # A value held is neither "" nor null (false, 0 and lists count). min() finds each field's first
        # payload, and the bare column j.id is the field's place in that payload (SQLite takes a bare
        # column from the row min() chose).
        counted = self._db.execute(
            "SELECT j.key, count(*), min(a.external_id), j.id FROM staff_accepted AS a, json_each(a.payload) AS j "
            f"WHERE {kept} AND j.value IS NOT NULL AND j.value != '' GROUP BY j.key", args).fetchall()
        counted.sort(key=lambda found: (found[2], found[3]))
        return {name: n / known for name, n, _, _ in counted}

    def names(self, service: str, customer_id: str, external_ids: Sequence[str]) -> dict[str, str]:
        """The names the service accepted for these external ids (absent or nameless ids are left out)."""
        found = self._accepted("name", service, customer_id, external_ids)
        return {ext: name for ext, name in found.items() if name}

    def _accepted(self, column: str, service: str, customer_id: str, external_ids: Sequence[str]) -> dict[str, str]:
        return dict(self._accepted_rows(f"external_id, {column}", service, customer_id, external_ids))

    def _accepted_rows(self, columns: str, service: str, customer_id: str,
                       external_ids: Sequence[str]) -> Iterator[Any]:
        """``columns`` of the accepted rows of these external ids, asked ``_CHUNK`` ids at a time (SQLite
        limits the parameters of one statement)."""
        for start in range(0, len(external_ids), _CHUNK):
            chunk = list(external_ids[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            yield from self._db.execute(
                f"SELECT {columns} FROM staff_accepted "
                f"WHERE service = ? AND customer_id = ? AND external_id IN ({marks})",
                [service, str(customer_id), *chunk],
            )

    def last_import(self, job: str, step: str) -> ImportedFile | None:
        """The source file of this step's last successful run, if any."""
        row = self._db.execute(
            "SELECT sha256, path, imported_at FROM source_files WHERE job = ? AND step = ?", (job, step)
        ).fetchone()
        return ImportedFile(*row) if row else None

    def record_import(self, job: str, step: str, sha256: str, path: Path, *, whole: bool = True) -> None:
        """Remember the file a step has just imported: in the step's files (``superseded``) always, and as its
        last successful run (``last_import``) when ``whole`` (every row imported)."""
        row = (job, step, sha256, str(path), _now())
        with self._transaction():
            self._db.execute("INSERT INTO imported_files (job, step, sha256, path, imported_at) VALUES (?, ?, ?, ?, ?)",
                             row)
            if whole:
                self._db.execute(
                    "INSERT INTO source_files (job, step, sha256, path, imported_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (job, step) DO UPDATE SET sha256 = excluded.sha256, path = excluded.path, "
                    "imported_at = excluded.imported_at",
                    row,
                )

    def superseded(self, sha256: str, job: str | None = None, step: str | None = None) -> list[Superseded]:
        """Each job step (only ``job``'s ``step`` when given) that imported a file of these bytes before its
        last import, which was of other bytes; the step whose last import is the latest first."""
        which, args = "", [sha256]
        if job is not None and step is not None:
            which, args = " AND h.job = ? AND h.step = ?", [sha256, job, step]
        rows = self._db.execute(
            "SELECT h.job, h.step, h.sha256, h.path, h.imported_at, l.sha256, l.path, l.imported_at "
            "FROM imported_files AS h JOIN imported_files AS l ON l.job = h.job AND l.step = h.step "
            "AND l.id = (SELECT max(id) FROM imported_files WHERE job = h.job AND step = h.step) "
            f"WHERE h.sha256 = ?{which} AND l.sha256 != h.sha256 "
            "AND h.id = (SELECT max(id) FROM imported_files WHERE job = h.job AND step = h.step AND sha256 = h.sha256) "
            "ORDER BY l.id DESC", args).fetchall()
        return [Superseded(r[0], r[1], ImportedFile(*r[2:5]), ImportedFile(*r[5:8])) for r in rows]

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db, self.path)


class AcceptedStaff:
    """``AcceptedPayloads`` (see ``hrimport.imports.staff``) for one service of a ``StateStore``."""

    def __init__(self, store: StateStore, service: str, job: str = "") -> None:
        self.store = store
        self.service = service
        self.job = job

    def unchanged(self, customer_id: str, records: list[StaffRecord]) -> set[str]:
        """External ids of ``records`` whose payload is the one the service last accepted."""
        wanted = {r.external_id: fingerprint(r.external_id, r.payload) for r in records}
        stored = self.store.fingerprints(self.service, customer_id, list(wanted))
        return {ext for ext, fp in wanted.items() if stored.get(ext) == fp}

    def sending(self, customer_id: str, records: list[StaffRecord]) -> FirstSends:
        """Before a batch is sent: record the intent, and say which records are first sends."""
        return self.store.first_sends(self.service, customer_id, [r.external_id for r in records])

    def remember(self, customer_id: str, records: list[StaffRecord]) -> None:
        """Record that the service accepted these records' payloads."""
        self.store.remember_payloads(self.service, customer_id,
                                     ((r.external_id, r.payload, r.sent_json) for r in records), job=self.job)

    def records(self, customer_id: str) -> dict[str, AcceptedRecord]:
        """Everyone the service accepted for this company, by external id."""
        return self.store.accepted_records(self.service, customer_id)

    def before(self, customer_id: str, external_ids: Sequence[str]) -> dict[str, AcceptedRecord]:
        """What the service accepted for these people, by external id (the plan's "before", a chunk at a time)."""
        return self.store.accepted_of(self.service, customer_id, external_ids)

    def job_people(self, customer_id: str, job: str) -> Iterator[tuple[str, str, str]]:
        """(external id, name, accepted at) of the people ``job``'s imports sent (the plan's "missing")."""
        return self.store.job_people(self.service, customer_id, job)

    def left_job(self, customer_id: str, job: str, external_ids: Sequence[str]) -> None:
        """The people a file of ``job`` that was imported left out are no longer the job's (``StateStore.left_job``)."""
        self.store.left_job(self.service, customer_id, job, external_ids)

    def back_in_job(self, customer_id: str, job: str, external_ids: Sequence[str]) -> None:
        """The people of a file of ``job`` that was imported who had left it are its again (``StateStore.back_in_job``)."""
        self.store.back_in_job(self.service, customer_id, job, external_ids)

    def filled_shares(self, customer_id: str, job: str) -> dict[str, float]:
        """Per field, the share of ``job``'s accepted payloads holding a value (the drift guard's "before")."""
        return self.store.filled_shares(self.service, customer_id, job)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): one batch of fingerprints lands whole or not at all."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        with writing("the state database", self._path):
            self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, *rest: object) -> None:
        with writing("the state database", self._path):
            if exc_type is None:
                self._db.execute("COMMIT")
                return
            if self._db.in_transaction:  # SQLite may have rolled back already (a full disk)
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):  # a write in the transaction failed: said as the state's, too
                raise exc


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
