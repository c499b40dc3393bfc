"""The sandbox's state: one SQLite file (stdlib ``sqlite3``, WAL) holding tokens, customers and records.

Every call opens its own connection, so uvicorn's threadpool and the admin commands (another process,
same file, server running or not) never share one. Writes that check before they insert (the time-off
overlap rule, the staff upsert) run inside ``BEGIN IMMEDIATE`` so two requests cannot both pass the check.

A new file gets the demo dataset (README, sandbox section): vendor 1 with customers 99, 100 and 101
(101 inactive), the tokens ``demo-vendor``, ``demo-vendor-noportal``, ``demo-customer-99`` and
``demo-customer-100``, company data types for 99 and 100, and the leave types of ``hrimport.fields``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrimport.fields import Basis, LeaveType, leave_types
from hrimport.private_files import make_private_file, make_private_folder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vendors (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, logo TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS customers (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, logo TEXT NOT NULL DEFAULT '',
    is_active INTEGER NOT NULL DEFAULT 1, vendor_id INTEGER REFERENCES vendors(id));
CREATE TABLE IF NOT EXISTS tokens (
    token TEXT PRIMARY KEY, user_id INTEGER NOT NULL UNIQUE,
    customer_id INTEGER, vendor_id INTEGER, portal INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS data_types (
    customer_id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (customer_id, name));
CREATE TABLE IF NOT EXISTS leave_types (
    id INTEGER PRIMARY KEY, en TEXT NOT NULL UNIQUE, zh TEXT NOT NULL, zh_hant TEXT NOT NULL,
    zh_aliases TEXT NOT NULL DEFAULT '[]', basis TEXT NOT NULL CHECK (basis IN ('Working', 'Calendar')));
CREATE TABLE IF NOT EXISTS staff (
    id INTEGER PRIMARY KEY AUTOINCREMENT, customer_id INTEGER NOT NULL,
    customer_system_id_type TEXT NOT NULL, customer_system_id TEXT NOT NULL,
    record TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (customer_id, customer_system_id_type, customer_system_id));
CREATE TABLE IF NOT EXISTS time_off (
    id INTEGER PRIMARY KEY AUTOINCREMENT, user INTEGER NOT NULL REFERENCES staff(id),
    customer_id INTEGER NOT NULL, customer_system_id TEXT NOT NULL, leave_type INTEGER NOT NULL,
    country TEXT NOT NULL, approver INTEGER NOT NULL, total_days REAL NOT NULL,
    start_date TEXT NOT NULL, end_date TEXT NOT NULL, notes TEXT NOT NULL, reject_notes TEXT NOT NULL,
    decision TEXT NOT NULL, doc_list TEXT NOT NULL, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, deleted_at INTEGER NOT NULL, last_modified_by INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS time_off_user ON time_off (user, start_date, end_date);
"""

#: The sandbox's own tables: a database holding other tables but not all of these is another program's.
SANDBOX_TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", _SCHEMA))

DEMO_VENDOR_ID = 1

# (id, name, logo, active); the logo of 100 imitates the platform's temporary signed link.
_DEMO_CUSTOMERS = (
    (99, "Acme Sdn Bhd", "", True),
    (100, "Lotus Trading Co", "https://sandbox.invalid/logos/100.png?X-Expires=3600&X-Signature=demo", True),
    (101, "Dormant Holdings", "", False),
)
# (token, user id, customer id, vendor id, portal access)
_DEMO_TOKENS: tuple[tuple[str, int, int | None, int | None, bool], ...] = (
    ("demo-vendor", 1001, None, DEMO_VENDOR_ID, True),
    ("demo-vendor-noportal", 1002, None, DEMO_VENDOR_ID, False),
    ("demo-customer-99", 1099, 99, None, False),
    ("demo-customer-100", 1100, 100, None, False),
)
_DEMO_DATA_TYPES = {
    99: ("Cost Center", "Division", "Grade", "Employee Number"),
    100: ("Cost Center", "Department"),
}


class NotASandboxDatabase(Exception):
    """The file is a SQLite database of another program: the sandbox leaves it as it is."""


class AdminRefused(ValueError):
    """An admin change that would make the dataset inconsistent (an unknown customer, a leave-type name
    another type has); the message is one line saying what to do instead."""


@dataclass(frozen=True)
class Principal:
    """Who a token speaks for: a company (``customer_id``) or a vendor user (``vendor_id``)."""

    token: str
    user_id: int
    customer_id: int | None
    vendor_id: int | None
    portal: bool


class Store:
    """The sandbox's SQLite file; creates the tables and the demo dataset on first use."""

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = Path(db_path)
        # The file holds the rows a trial sent (names, e-mails, birth dates): a new one, and a folder made for
        # it, readable by the owner only whatever the umask; SQLite gives its -wal and -shm the file's mode.
        # An existing file or folder keeps the mode its owner gave it.
        if not self.db_path.parent.exists():
            make_private_folder(self.db_path.parent)
        make_private_file(self.db_path, keep_existing_mode=True)
        conn = self._connect()
        try:
            _refuse_another_programs_database(conn)  # before WAL mode, which rewrites the file's header
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
        finally:
            conn.close()
        with self.write() as conn:
            if conn.execute("SELECT COUNT(*) FROM vendors").fetchone()[0] == 0:
                self._seed(conn)

    # -- plumbing -------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=10, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: safe against corruption, no fsync per commit
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def held_open(self) -> Iterator[None]:
        """One connection held open meanwhile (a server's life): SQLite checkpoints the WAL into the database
        and deletes it, with a disk sync, whenever the last connection to a database closes, so without it
        every request (a connection each) would pay that; with it, WAL checkpoints come as the WAL grows."""
        conn = self._connect()
        try:
            yield
        finally:
            conn.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads, closed afterwards."""
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on any exception."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def _seed(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO vendors (id, name, logo) VALUES (?, ?, '')", (DEMO_VENDOR_ID, "Demo Vendor")
        )
        for cid, name, logo, active in _DEMO_CUSTOMERS:
            conn.execute(
                "INSERT INTO customers (id, name, logo, is_active, vendor_id) VALUES (?, ?, ?, ?, ?)",
                (cid, name, logo, int(active), DEMO_VENDOR_ID),
            )
        for token, user_id, token_customer, token_vendor, portal in _DEMO_TOKENS:
            conn.execute(
                "INSERT INTO tokens (token, user_id, customer_id, vendor_id, portal) VALUES (?, ?, ?, ?, ?)",
                (token, user_id, token_customer, token_vendor, int(portal)),
            )
        for cid, names in _DEMO_DATA_TYPES.items():
            conn.executemany("INSERT INTO data_types VALUES (?, ?)", [(cid, n) for n in names])
        for lt in leave_types():
            _insert_leave_type(conn, lt)

    # -- tokens, vendors, customers ---------------------------------------------------------------------
    def principal(self, token: str) -> Principal | None:
        """The principal a token stands for, or None for an unknown token."""
        with self.read() as conn:
            row = conn.execute("SELECT * FROM tokens WHERE token = ?", (token,)).fetchone()
        if row is None:
            return None
        return Principal(
            row["token"], row["user_id"], row["customer_id"], row["vendor_id"], bool(row["portal"])
        )

    def vendor(self, vendor_id: int) -> dict[str, Any] | None:
        """A vendor record with its ``customer_list`` (spec: "Vendor record")."""
        with self.read() as conn:
            row = conn.execute("SELECT * FROM vendors WHERE id = ?", (vendor_id,)).fetchone()
            if row is None:
                return None
            customers = conn.execute(
                "SELECT id, name, logo, is_active FROM customers WHERE vendor_id = ? ORDER BY id",
                (vendor_id,),
            ).fetchall()
        return {
            "id": row["id"],
            "name": row["name"],
            "logo": row["logo"],
            "customer_list": [
                {"id": c["id"], "name": c["name"], "logo": c["logo"], "is_active": bool(c["is_active"])}
                for c in customers
            ],
        }

    def customer(self, customer_id: int) -> sqlite3.Row | None:
        with self.read() as conn:
            row: sqlite3.Row | None = conn.execute("SELECT * FROM customers WHERE id = ?", (customer_id,)).fetchone()
            return row

    def may_act_for(self, principal: Principal, customer_id: int) -> bool:
        """Whether a token may write for a company: its own active company, or an active customer of its
        vendor when the vendor user has portal access. Everything else is "permission denied"."""
        customer = self.customer(customer_id)
        if customer is None or not customer["is_active"]:
            return False
        if principal.customer_id is not None:
            return principal.customer_id == customer_id
        return principal.portal and customer["vendor_id"] == principal.vendor_id

    def add_customer(
        self,
        customer_id: int,
        name: str,
        *,
        active: bool = True,
        vendor_id: int | None = None,
        logo: str = "",
    ) -> None:
        """Create or rename a customer (of the demo vendor unless ``vendor_id`` says otherwise)."""
        vid = DEMO_VENDOR_ID if vendor_id is None else vendor_id
        with self.write() as conn:
            _ensure_vendor(conn, vid)
            conn.execute(
                "INSERT INTO customers (id, name, logo, is_active, vendor_id) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET name = excluded.name, logo = excluded.logo, "
                "is_active = excluded.is_active, vendor_id = excluded.vendor_id",
                (customer_id, name, logo, int(active), vid),
            )

    def add_token(
        self, token: str, *, customer_id: int | None = None, vendor_id: int | None = None, portal: bool = True
    ) -> int:
        """Create or replace a token for a company or a vendor user; returns its user id."""
        if (customer_id is None) == (vendor_id is None):
            raise ValueError("a token is for exactly one of a customer or a vendor")
        with self.write() as conn:
            if vendor_id is not None:
                _ensure_vendor(conn, vendor_id)
            else:
                _require_customer(conn, customer_id)
            row = conn.execute("SELECT user_id FROM tokens WHERE token = ?", (token,)).fetchone()
            user_id = (
                row[0]
                if row
                else conn.execute(
                    "SELECT COALESCE(MAX(user_id), 2000) + 1 FROM tokens WHERE user_id >= 2000"
                ).fetchone()[0]
            )
            conn.execute(
                "INSERT OR REPLACE INTO tokens (token, user_id, customer_id, vendor_id, portal) "
                "VALUES (?, ?, ?, ?, ?)",
                (token, user_id, customer_id, vendor_id, int(portal and vendor_id is not None)),
            )
        return int(user_id)

    def add_data_types(self, customer_id: int, names: list[str]) -> None:
        """Configure company data types for a customer (``AdminRefused`` when there is no such customer)."""
        with self.write() as conn:
            _require_customer(conn, customer_id)
            conn.executemany(
                "INSERT OR IGNORE INTO data_types VALUES (?, ?)", [(customer_id, n) for n in names]
            )

    def data_types(self, customer_id: int, conn: sqlite3.Connection | None = None) -> set[str]:
        """Names of the company data types configured for a customer."""
        sql, args = "SELECT name FROM data_types WHERE customer_id = ?", (customer_id,)
        if conn is not None:
            return {r[0] for r in conn.execute(sql, args)}
        with self.read() as c:
            return {r[0] for r in c.execute(sql, args)}

    # -- leave types ------------------------------------------------------------------------------------
    def leave_types(self) -> list[LeaveType]:
        with self.read() as conn:
            return _leave_types(conn)

    def add_leave_type(
        self,
        en: str,
        zh: str,
        *,
        zh_hant: str | None = None,
        basis: Basis = "Working",
        leave_type_id: int | None = None,
    ) -> int:
        """Add a leave type, or change the one with that exact English name or that id; returns its id.

        A type changed keeps its id: time-off records point at their type by id, and a record whose type is
        gone is seen by no overlap check. So a ``leave_type_id`` other than the id of the type already
        called ``en`` is ``AdminRefused`` (it would make one type of two, or move a type's records), as is
        a name another leave type has: a time-off request names its leave type, and the look-up would take
        the first of two types called alike (English compared as the look-up does, case and spacing aside;
        Chinese names among each other type's Simplified, Traditional and aliases).
        """
        with self.write() as conn:
            types = _leave_types(conn)
            named = next((t for t in types if t.en == en), None)
            if named is not None and leave_type_id is not None and leave_type_id != named.id:
                raise AdminRefused(
                    f"{en!r} is leave type {named.id}, and time-off records point at a type by its id; give "
                    f"--id {named.id} (or no --id) to change it, or another name for type {leave_type_id}"
                )
            if leave_type_id is None:
                leave_type_id = named.id if named is not None else max((t.id for t in types), default=0) + 1
            lt = LeaveType(int(leave_type_id), en, zh, zh_hant or zh, basis)
            _refuse_a_name_taken(lt, [t for t in types if t.id != lt.id])
            conn.execute("DELETE FROM leave_types WHERE id = ?", (lt.id,))
            _insert_leave_type(conn, lt)
        return lt.id

    # -- staff and time off ---------------------------------------------------------------------------
    def staff(self, customer_id: int | None = None) -> list[dict[str, Any]]:
        """Stored staff records (what the admin route shows), oldest first."""
        with self.read() as conn:
            sql = "SELECT * FROM staff" + (" WHERE customer_id = ?" if customer_id is not None else "")
            rows = conn.execute(
                sql + " ORDER BY id", () if customer_id is None else (customer_id,)
            ).fetchall()
        return [staff_row(r) for r in rows]

    def time_off(self, customer_id: int | None = None) -> list[dict[str, Any]]:
        """Stored time-off records, oldest first."""
        with self.read() as conn:
            sql = "SELECT * FROM time_off" + (" WHERE customer_id = ?" if customer_id is not None else "")
            rows = conn.execute(
                sql + " ORDER BY id", () if customer_id is None else (customer_id,)
            ).fetchall()
        return [time_off_row(r) for r in rows]

    def cancel_time_off(self, record_id: int) -> dict[str, Any] | None:
        """Cancel a time-off record as HR does in the platform's own pages (the API has no such call): it is kept,
        with ``deleted_at`` set, and no longer overlaps anything. The record, or None when there is none."""
        with self.write() as conn:
            conn.execute("UPDATE time_off SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at = 0",
                         (now(), now(), record_id))
            row = conn.execute("SELECT * FROM time_off WHERE id = ?", (record_id,)).fetchone()
        return time_off_row(row) if row is not None else None


def staff_row(row: sqlite3.Row) -> dict[str, Any]:
    """A stored staff row as a dict: the record's input fields plus ``id`` and timestamps."""
    return {
        "id": row["id"],
        **json.loads(row["record"]),
        "customer_id": row["customer_id"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def time_off_row(row: sqlite3.Row) -> dict[str, Any]:
    """A stored time-off row in the spec's ``time_off_data`` shape (+ customer_system_id, country)."""
    total = row["total_days"]
    return {
        "id": row["id"],
        "user": row["user"],
        "customer_id": row["customer_id"],
        "customer_system_id": row["customer_system_id"],
        "leave_type": row["leave_type"],
        "country": row["country"],
        "approver": row["approver"],
        "total_days": int(total) if float(total).is_integer() else total,
        "start_date": row["start_date"],
        "end_date": row["end_date"],
        "notes": row["notes"],
        "reject_notes": row["reject_notes"],
        "decision": row["decision"],
        "doc_list": json.loads(row["doc_list"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "deleted_at": row["deleted_at"],
        "last_modified_by": row["last_modified_by"],
    }


def now() -> int:
    """Unix time in whole seconds (spec: time-off timestamps are integers; api-notes: use seconds)."""
    return int(time.time())


def _refuse_another_programs_database(conn: sqlite3.Connection) -> None:
    """``NotASandboxDatabase`` for a file with tables but not the sandbox's (another program's database given
    as --db), read before anything is written; an empty database (a new file) becomes the sandbox's."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}  # SQLite's own (sqlite_sequence)
    if tables and not SANDBOX_TABLES <= tables:
        shown = ", ".join(sorted(tables)[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise NotASandboxDatabase(f"a SQLite database of another program (tables {shown}), not the sandbox's")


def _require_customer(conn: sqlite3.Connection, customer_id: int | None) -> None:
    """``AdminRefused`` naming the known customers when ``customer_id`` is not one of them."""
    if conn.execute("SELECT 1 FROM customers WHERE id = ?", (customer_id,)).fetchone():
        return
    known = ", ".join(f"{r['id']} {r['name']}" for r in conn.execute("SELECT id, name FROM customers ORDER BY id"))
    raise AdminRefused(
        f"customer {customer_id} is not known (known: {known or 'none'}); add it first with add-customer"
    )


def _leave_types(conn: sqlite3.Connection) -> list[LeaveType]:
    rows = conn.execute("SELECT * FROM leave_types ORDER BY id").fetchall()
    return [
        LeaveType(r["id"], r["en"], r["zh"], r["zh_hant"], r["basis"], tuple(json.loads(r["zh_aliases"])))
        for r in rows
    ]


def _refuse_a_name_taken(new: LeaveType, others: list[LeaveType]) -> None:
    """``AdminRefused`` when another leave type is called as ``new`` is, in English or in Chinese."""

    def folded(english: str) -> str:  # as the time-off look-up compares English names
        return " ".join(english.split()).casefold()

    for other in others:
        if folded(other.en) == folded(new.en):
            raise AdminRefused(
                f"leave type {other.id} is already called {other.en!r}; give its exact name to replace it, "
                "or another name"
            )
        taken = [name for name in dict.fromkeys((new.zh.strip(), new.zh_hant.strip())) if name in other.chinese_names]
        if taken:
            raise AdminRefused(
                f"{taken[0]!r} is already a Chinese name of leave type {other.id} {other.en!r}; give another "
                f"Chinese name, or --id {other.id} to replace that type"
            )


def _ensure_vendor(conn: sqlite3.Connection, vendor_id: int) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO vendors (id, name, logo) VALUES (?, ?, '')", (vendor_id, f"Vendor {vendor_id}")
    )


def _insert_leave_type(conn: sqlite3.Connection, lt: LeaveType) -> None:
    conn.execute(
        "INSERT INTO leave_types (id, en, zh, zh_hant, zh_aliases, basis) VALUES (?, ?, ?, ?, ?, ?)",
        (lt.id, lt.en, lt.zh, lt.zh_hant, json.dumps(list(lt.zh_aliases), ensure_ascii=False), lt.basis),
    )
