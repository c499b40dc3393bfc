"""The state folder's SQLite: fingerprints of accepted payloads, remembered files, surviving a kill -9."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrimport.service.client import open_client
from hrimport.service.staff import StaffRecord, element_json, submit_staff
from hrimport.state.ledger import LEDGER_FILE, open_ledger
from hrimport.state.store import STATE_FILE, StateStore, file_sha256, fingerprint

SERVICE = "https://api.example.com/api:v1"


def record(n: int, **changes: Any) -> StaffRecord:
    payload = {"customer_system_id": f"E{n:04d}", "name": f"Person {n}", "country": "SG",
               "job_start_date": "2022-07-01", "staff_type": "EOR", **changes}
    return StaffRecord(n + 1, f"E{n:04d}", payload["name"], payload)


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateStore]:
    with StateStore.open(tmp_path / "state") as store:
        yield store


def test_the_fingerprint_is_canonical_json() -> None:
    a = fingerprint("E1", {"name": "Ann", "country": "SG"})
    assert a == fingerprint("E1", {"country": "SG", "name": "Ann"})  # key order does not matter
    assert a == fingerprint("E1", {"country": "SG", "name": "Ann", "customer_id": "99"})  # sent once, at the top
    assert a == fingerprint("E1", {"customer_system_id": "E1", "country": "SG", "name": "Ann"})
    assert a != fingerprint("E1", {"country": "SG", "name": "Anne"})
    assert a != fingerprint("E2", {"country": "SG", "name": "Ann"})
    assert len(a) == 64


def test_the_fingerprint_of_a_payload_never_changes() -> None:
    """Every state folder holds fingerprints: one computed another way would make every person "changed"."""
    payload = {"customer_system_id": "0042", "name": "Zoë Tan 陈", "is_manager": True, "country": "SG",
               "customer_data_type": [{"name": "Cost centre", "value": 'R&D "labs"\n'}]}
    known = "3709b9cf8160618e09a02ce4d822d65d8509fedc6fc9a7a2bfdc00961457d862"  # hrimport before issue 17
    assert fingerprint("0042", payload) == known
    assert fingerprint("0042", {**payload, "customer_id": "99"}) == known
    # the element sent is the same text, so the store takes its fingerprint from it
    assert hashlib.sha256(element_json(StaffRecord(2, "0042", "Zoë Tan", payload)).encode()).hexdigest() == known


def test_what_is_remembered_reads_back_as_it_was_sent(state: StateStore) -> None:
    """The plan's "before" is the payload the service accepted, whatever form the record held it in."""
    accepted = state.accepted(SERVICE)
    usual = record(1, customer_data_type=[{"name": "Cost centre", "value": "Zoë 陈"}])
    without_id = StaffRecord(3, "E0002", "Person 2", {"name": "Person 2", "country": "MY"})
    with_customer = record(3, customer_id="99")
    # as the submitter hands them over: with the JSON each element was sent as
    sent = [StaffRecord(r.row, r.external_id, r.name, r.payload, element_json(r))
            for r in (usual, without_id, with_customer)]
    accepted.remember("99", sent)
    before = accepted.records("99")
    assert {ext: r.payload for ext, r in before.items()} == {
        "E0001": usual.payload, "E0002": without_id.payload, "E0003": with_customer.payload}
    assert {ext: r.fingerprint for ext, r in before.items()} == {
        r.external_id: fingerprint(r.external_id, r.payload) for r in (usual, without_id, with_customer)}
    assert accepted.unchanged("99", [usual, without_id, with_customer]) == {"E0001", "E0002", "E0003"}


def test_remembered_rows_are_unchanged_until_their_payload_changes(state: StateStore) -> None:
    accepted = state.accepted(SERVICE)
    records = [record(n) for n in range(5)]
    assert accepted.unchanged("99", records) == set()
    accepted.remember("99", records[:3])
    assert accepted.unchanged("99", records) == {"E0000", "E0001", "E0002"}
    changed = [record(0, country="MY"), *records[1:]]
    assert accepted.unchanged("99", changed) == {"E0001", "E0002"}


def test_fingerprints_are_kept_per_service_and_customer(state: StateStore) -> None:
    records = [record(n) for n in range(3)]
    state.accepted("embedded-sandbox").remember("99", records)
    assert state.accepted(SERVICE).unchanged("99", records) == set()  # a sandbox trial never skips production
    assert state.accepted("embedded-sandbox").unchanged("100", records) == set()


def test_thousands_of_ids_are_looked_up(state: StateStore) -> None:
    records = [record(n) for n in range(5000)]
    accepted = state.accepted(SERVICE)
    accepted.remember("99", records)
    changed = [record(n, name="Changed") if n in (7, 1234, 4999) else r for n, r in enumerate(records)]
    assert len(accepted.unchanged("99", changed)) == 4997


def test_the_database_is_in_wal_mode_and_survives_a_reopen(tmp_path: Path) -> None:
    with StateStore.open(tmp_path / "state") as store:
        store.accepted(SERVICE).remember("99", [record(1)])
        store.record_import("monthly", "staff", "ab" * 32, tmp_path / "staff.csv")
    db = sqlite3.connect(tmp_path / "state" / STATE_FILE)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    with StateStore.open(tmp_path / "state") as store:
        assert store.accepted(SERVICE).unchanged("99", [record(1)]) == {"E0001"}
        last = store.last_import("monthly", "staff")
        assert last is not None and last.sha256 == "ab" * 32
        assert store.last_import("monthly", "timeoff") is None


def test_every_file_a_step_imported_is_remembered_and_an_older_one_known_as_superseded(tmp_path: Path) -> None:
    may, june = "a" * 64, "b" * 64
    with StateStore.open(tmp_path / "state") as store:
        store.record_import("monthly", "staff", may, tmp_path / "staff_2024-05.csv")
        assert store.superseded(may) == []  # the last import: "no new export", not an older one
        store.record_import("monthly", "staff", june, tmp_path / "staff_2024-06.csv", whole=False)
        last = store.last_import("monthly", "staff")
        assert last is not None and last.sha256 == may  # June's rows need attention: it is tried again
        [older] = store.superseded(may, "monthly", "staff")  # but it is an export sent after May's
        assert (older.imported.name, older.last.name) == ("staff_2024-05.csv", "staff_2024-06.csv")
        assert store.superseded(june) == []
        assert store.superseded(may, "monthly", "timeoff") == []  # another step's files are its own
        store.record_import("monthly", "staff", may, tmp_path / "staff_2024-05.csv")  # sent again, by hand
        assert store.superseded(may) == [] and len(store.superseded(june)) == 1


# state.db as the version before every import was remembered wrote it: each step's last import only
STATE_BEFORE_IMPORT_HISTORY = """
CREATE TABLE staff_accepted (service TEXT NOT NULL, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL, accepted_at TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', payload TEXT,
    job TEXT NOT NULL DEFAULT '', PRIMARY KEY (service, customer_id, external_id));
CREATE TABLE staff_sending (service TEXT NOT NULL, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
    sent_at TEXT NOT NULL, PRIMARY KEY (service, customer_id, external_id));
CREATE TABLE source_files (job TEXT NOT NULL, step TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL,
    imported_at TEXT NOT NULL, PRIMARY KEY (job, step));
"""


def test_a_state_folder_from_before_keeps_each_steps_last_import_among_its_files(tmp_path: Path) -> None:
    june, july = "b" * 64, "c" * 64
    (tmp_path / "state").mkdir()
    with sqlite3.connect(tmp_path / "state" / STATE_FILE) as old:
        old.executescript(STATE_BEFORE_IMPORT_HISTORY)
        old.execute("INSERT INTO source_files VALUES ('monthly', 'staff', ?, '/srv/exports/staff_2024-06.csv', "
                    "'2024-06-01T06:15:00+08:00')", (june,))
    old.close()

    with StateStore.open(tmp_path / "state") as store:
        last = store.last_import("monthly", "staff")
        assert last is not None and (last.sha256, last.name) == (june, "staff_2024-06.csv")
        store.record_import("monthly", "staff", july, tmp_path / "staff_2024-07.csv")
        [older] = store.superseded(june)
        assert (older.job, older.step, older.imported.imported_at) == ("monthly", "staff", "2024-06-01T06:15:00+08:00")
    with StateStore.open(tmp_path / "state") as store:  # opened again: nothing copied twice
        assert len(store.superseded(june)) == 1 and store.superseded(july) == []

    # the version before runs once more (a rollback) and imports August: its source_files only
    with sqlite3.connect(tmp_path / "state" / STATE_FILE) as old:
        old.execute("UPDATE source_files SET sha256 = ?, path = 'staff_2024-08.csv', imported_at = "
                    "'2024-08-01T06:15:00+08:00'", ("d" * 64,))
    old.close()
    with StateStore.open(tmp_path / "state") as store:
        assert len(store.superseded(july)) == 1  # August's import, which that version made, is the last one
        assert store.superseded("d" * 64) == []


def test_a_process_killed_after_a_batch_keeps_that_batch(tmp_path: Path) -> None:
    """Each remember() is committed before it returns: kill -9 right after loses nothing of it."""
    script = """
import sys, time
from pathlib import Path
from hrimport.state.store import StateStore
from hrimport.service.staff import StaffRecord
store = StateStore.open(Path(sys.argv[1]))
batch = [StaffRecord(n, f"E{n}", "x", {"name": f"P{n}"}) for n in range(100)]
store.accepted("svc").remember("99", batch)
print("batch 1 stored", flush=True)
time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "state")], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "batch 1 stored"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    with StateStore.open(tmp_path / "state") as store:
        batch = [StaffRecord(n, f"E{n}", "x", {"name": f"P{n}"}) for n in range(100)]
        assert len(store.accepted("svc").unchanged("99", batch)) == 100


def test_file_sha256(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"Employee #\n1\n")
    assert file_sha256(path) == hashlib.sha256(b"Employee #\n1\n").hexdigest()


def test_a_state_folder_that_cannot_be_created_is_a_config_error(tmp_path: Path) -> None:
    from hrimport.errors import ConfigError

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="cannot create the state folder"):
        StateStore.open(blocker / "state")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_the_state_folder_and_its_databases_are_private(tmp_path: Path) -> None:
    """Both stores open their database the one way: 0700 folder, 0600 files, whatever the umask."""
    folder = tmp_path / "state"
    old_umask = os.umask(0o002)
    try:
        with StateStore.open(folder) as store, open_ledger(folder):
            store.accepted(SERVICE).remember("99", [record(1)])
            files = sorted(p.name for p in folder.iterdir())
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {STATE_FILE, f"{STATE_FILE}-wal", LEDGER_FILE} <= set(files)
    assert modes == dict.fromkeys(files, 0o600)


def test_both_databases_are_opened_with_one_setup(tmp_path: Path) -> None:
    with StateStore.open(tmp_path) as store, open_ledger(tmp_path) as ledger:
        for db in (store._db, ledger._conn):
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
        # the ledger's endpoint is not idempotent: its commits are on disk before the next record is posted;
        # what state.db forgets in a power cut is only sent again
        assert ledger._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_each_accepted_batch_is_remembered_at_once(sandbox: Any, state: StateStore) -> None:
    """Over the real sandbox: after each bulk call, the accepted rows are in the state; a rejected one is not."""
    tag = uuid.uuid4().hex[:6]
    good = [StaffRecord(n, f"{tag}{n}", f"Person {n}", {
        "customer_system_id": f"{tag}{n}", "customer_system_id_type": "Workday", "name": f"Person {n}",
        "system_email": f"p{n}@example.com", "country": "SG", "job_title": "Clerk",
        "job_start_date": "2022-07-01", "staff_type": "EOR"}) for n in range(4)]
    bad = StaffRecord(9, f"{tag}9", "Bad", {**good[0].payload, "customer_system_id": f"{tag}9",
                                             "staff_type": "Contractor"})
    accepted = state.accepted(sandbox.base_url)
    seen_after_batch: list[int] = []
    with open_client(sandbox.base_url, "demo-customer-99") as client:
        def progress(n: int) -> None:  # called as each batch gets its outcomes: the state is already written
            seen_after_batch.append(len(accepted.unchanged("99", good)))

        result = submit_staff(client, "99", [*good[:2], bad, *good[2:]], batch_size=2, progress=progress,
                              on_accepted=lambda records: accepted.remember("99", records))
    assert [o.outcome.value for o in result.outcomes].count("added") == 4
    assert seen_after_batch[0] == 2  # the first batch was remembered before the second was sent
    assert accepted.unchanged("99", [*good, bad]) == {r.external_id for r in good}


def test_what_the_service_accepted_is_remembered_once_the_journal_names_it_before_the_batch_after_next(
    sandbox: Any, state: StateStore
) -> None:
    """The state folder never holds a row the run's journal does not name (the next run would read it unchanged,
    and a new hire it added would be added in no report): each batch's accepted rows are remembered once the
    journal has them, while the next request is on its way; a run killed at any moment leaves at most two batches
    unremembered (sent again by the next run, which the staff endpoint takes as updates)."""
    tag = uuid.uuid4().hex[:6]
    people = [StaffRecord(n, f"{tag}{n}", f"Person {n}", {
        "customer_system_id": f"{tag}{n}", "customer_system_id_type": "Workday", "name": f"Person {n}",
        "system_email": f"p{n}@example.com", "country": "SG", "job_title": "Clerk",
        "job_start_date": "2022-07-01", "staff_type": "EOR"}) for n in range(7)]
    accepted = state.accepted(sandbox.base_url)
    remembered_when_sending: list[int] = []
    journal: list[int] = []
    journaled_when_remembered: list[int] = []

    def sending(batch: list[StaffRecord]) -> Any:
        remembered_when_sending.append(len(accepted.unchanged("99", people)))
        return accepted.sending("99", batch)

    def remember(records: list[StaffRecord]) -> None:
        journaled_when_remembered.append(len(journal))
        accepted.remember("99", records)

    with open_client(sandbox.base_url, "demo-customer-99") as client:
        result = submit_staff(client, "99", people, batch_size=2, on_sending=sending, on_accepted=remember,
                              on_outcomes=lambda rows: journal.extend(o.row for o in rows))
    assert remembered_when_sending == [0, 0, 2, 4]
    assert journaled_when_remembered == [2, 4, 6, 7]
    assert journal == [r.row for r in people]  # every row once, in the order sent
    assert [o.outcome.value for o in result.outcomes] == ["added"] * 7


def test_a_plan_reads_the_state_a_chunk_of_people_at_a_time_as_the_whole_of_it_reads(state: StateStore) -> None:
    """What the plan and the drift guard read of the state folder chunk by chunk (``before``, ``job_people``,
    ``filled_shares``) is what the whole of it says, the fields in the order the whole of it gives them."""
    from hrimport.changes.guards import filled_shares

    ours, theirs = state.accepted(SERVICE, "monthly"), state.accepted(SERVICE, "other")
    ours.remember("99", [record(n, is_manager=n % 3 == 0, phone="" if n % 2 else "+65 1",
                                **({"customer_data_type": [{"name": "Cost centre", "value": "7"}]} if n == 7 else {}))
                         for n in (9, 2, 7, 4, 30, 11)])
    theirs.remember("99", [record(n, nationality="MY") for n in (1, 5)])
    # a person accepted before payloads were kept: unknown, left out of the shares
    state.remember_payloads(SERVICE, "99", [("E0020", {"name": "Old"}, None)], job="monthly")
    state._db.execute("UPDATE staff_accepted SET payload = NULL WHERE external_id = 'E0020'")
    whole = ours.records("99")
    assert ours.before("99", ["E0002", "E0005", "E0404"]) == {k: whole[k] for k in ("E0002", "E0005")}
    assert list(ours.job_people("99", "monthly")) == [
        (r.external_id, r.name, r.accepted_at) for r in whole.values() if r.job == "monthly"]
    expected = filled_shares([r.payload for r in whole.values() if r.job == "monthly"])  # type: ignore[misc]
    found = ours.filled_shares("99", "monthly")
    assert list(found.items()) == list(expected.items())
    assert "nationality" not in found and found["is_manager"] == 1 and found["customer_data_type"] == 1 / 6
    assert ours.filled_shares("99", "nobody") == {}
