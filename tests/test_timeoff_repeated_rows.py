"""A leave the export lists twice: a time-off row repeating an earlier row exactly (the same person, leave type,
dates, half days, figure and every other value sent) is one leave, posted once; the later row shares the
outcome of the row it repeats, as a repeated staff row does (``tests/test_repeated_rows.py``). Rows of one
person whose periods overlap and that differ in anything are all held back (``overlaps-in-file``), as before.

Real imports into the sandbox over HTTP (its SQLite file read back too), from workbooks written by openpyxl and
CSV files written by the csv module.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import RunResult
from hrimport.state.ledger import open_ledger
from tests.test_chunks import workbook_cells
from tests.test_run_job import LEAVE_HEADER, TIME_OFF, JobFolder, run_cli
from tests.test_timeoff_chunks import records, run_steps, unclocked
from tests.test_timeoff_import import HEADER, TOKEN, add_staff, hrimport, run_import, write_config, write_xlsx

pytestmark = pytest.mark.usefixtures("instant_retries")

D = dt.date
APPLY = "/api/apply-ee-time-off"

REPEAT_OF_ROW_2 = ("Row 4 repeats row 2: the same external id '000101' ('Employee ID'), leave type, dates and half "
                   "days, and the same value in every field sent, so the leave is sent once, with row 2, and this "
                   "row shares its outcome.")

ANNUAL: list[object] = ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "trip", "Approved"]
SICK: list[object] = ["000104", "病假", D(2024, 3, 4), D(2024, 3, 4), "", 1, "CN", "", "Approved"]
# ANNUAL again, as a second export pasted below the first writes it: the company's word for the leave type,
# dates and days as text, the country by name. What is sent is the same, so it is the same leave.
ANNUAL_AGAIN: list[object] = ["000101", "AL", "04/03/2024", "08/03/2024", "", "5", "Malaysia", "trip", "Approved"]


@pytest.fixture
def staffed(sandbox: Any) -> Any:
    """The sandbox with staff 000101 (MY) and 000104 (CN) of customer 99."""
    add_staff(sandbox, [("000101", "MY"), ("000104", "CN")])
    sandbox.clear_requests()
    return sandbox


def posted(sandbox: Any) -> list[dict[str, Any]]:
    """The time-off bodies the sandbox received, by external id and start date: the import posts with four
    workers at once, so the order they arrive in is not the file's."""
    bodies = [json.loads(body) for body in sandbox.bodies if b'"start_date"' in body and b'"leave_type"' in body]
    return sorted(bodies, key=lambda b: (b["customer_system_id"], b["start_date"]))


def stored_in_sqlite(sandbox: Any) -> list[tuple[str, str, str, float, str]]:
    """The time-off records in the sandbox's SQLite file: external id, dates, total days, notes."""
    with closing(sqlite3.connect(sandbox.db_path)) as db:
        return db.execute("SELECT customer_system_id, start_date, end_date, total_days, notes FROM time_off "
                          "WHERE customer_id = 99 ORDER BY customer_system_id, start_date, id").fetchall()


def report_folder(result: Any) -> Path:
    return Path(result.stdout.split("Report folder: ")[1].splitlines()[0])


def outcomes(run: RunResult) -> list[tuple[int, str, list[str]]]:
    return [(o.row, o.outcome.value, o.problem_codes) for o in run.rows]


def ledger_rows(tmp_path: Path) -> list[tuple[str, str, str, int]]:
    with open_ledger(tmp_path / ".hrimport") as ledger:
        return sorted((e.key.external_id, e.key.start_date, e.status, e.source_row) for e in ledger.entries())


def write_csv(path: Path, rows: Sequence[Sequence[object]], header: list[str] = HEADER) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def test_a_leave_the_export_lists_twice_is_added_once_and_both_rows_are_imported(tmp_path: Path,
                                                                                 staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [ANNUAL, SICK, ANNUAL_AGAIN])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output  # a warning, not a row needing attention
    assert "3 of 3 rows imported (1 with warnings)." in result.output
    assert f"Warning: {REPEAT_OF_ROW_2}" in result.output
    assert [(b["customer_system_id"], b["start_date"]) for b in posted(staffed)] == [
        ("000101", "2024-03-04"), ("000104", "2024-03-04")]
    assert stored_in_sqlite(staffed) == [("000101", "2024-03-04", "2024-03-08", 5.0, "trip"),
                                         ("000104", "2024-03-04", "2024-03-04", 1.0, "")]
    assert len(staffed.time_off(99)) == 2  # and over HTTP

    assert outcomes(run) == [(2, "added", []), (3, "added", []), (4, "added", ["duplicate-row"])]
    first, _, repeat = run.rows
    (warning,) = repeat.problems
    assert (warning.severity, warning.message, warning.column, warning.value) == (
        "warning", REPEAT_OF_ROW_2, "Employee ID", "000101")
    assert repeat.message == f"Shares row 2's outcome: {first.message}"
    assert repeat.details == first.details  # the report's leave type, dates, half days and days
    folder = report_folder(result)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert (summary["counts"]["added"], summary["imported"], summary["exit_code"]) == (3, 3, 0)
    assert summary["warnings"] == {"duplicate-row": 1}
    assert any(note.startswith("1 row repeats an earlier row exactly") and "each leave is sent once" in note
               for note in summary["notes"])
    assert "Row repeated" in (folder / "report.html").read_text(encoding="utf-8")
    problems = workbook_cells(folder / "report.xlsx")["Problems"]
    assert [(r[0], r[4], r[5], r[6]) for r in problems[1:]] == [(4, "duplicate-row", REPEAT_OF_ROW_2, "warning")]
    assert not (folder / "to_fix.xlsx").exists()
    # the ledger holds the leave once, from the row that was sent
    assert ledger_rows(tmp_path) == [("000101", "2024-03-04", "stored", 2), ("000104", "2024-03-04", "stored", 3)]


def test_the_same_file_again_sends_nothing_and_both_rows_are_already_imported(tmp_path: Path,
                                                                             staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [ANNUAL, SICK, ANNUAL_AGAIN])
    run_import(tmp_path, staffed, source)
    records_before = stored_in_sqlite(staffed)
    staffed.clear_requests()

    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert posted(staffed) == [] and not [r for r in staffed.requests() if r["path"].endswith(APPLY)]
    assert stored_in_sqlite(staffed) == records_before  # nothing doubled
    assert outcomes(run) == [(2, "already_imported", []), (3, "already_imported", []),
                             (4, "already_imported", ["duplicate-row"])]
    first, _, repeat = run.rows
    assert first.message.startswith("Already imported on") and "leave.xlsx row 2" in first.message
    assert repeat.message == f"Shares row 2's outcome: {first.message}"
    assert ledger_rows(tmp_path) == [("000101", "2024-03-04", "stored", 2), ("000104", "2024-03-04", "stored", 3)]


@pytest.mark.parametrize(("column", "value"), [
    (7, "flight"),  # Reason: the notes sent
    (4, "PM"),  # Half Day: on a five-day record, it starts at noon
    (5, "4.5"),  # Days
    (8, "Pending"),  # Status: no decision sent
    (2, D(2024, 3, 5)),  # From: a day later, still overlapping
])
def test_overlapping_rows_of_one_person_that_differ_in_anything_are_all_held_back(
        tmp_path: Path, staffed: Any, column: int, value: object) -> None:
    different = list(ANNUAL)
    different[column] = value
    source = write_xlsx(tmp_path / "leave.xlsx", [ANNUAL, SICK, different])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1
    assert outcomes(run) == [(2, "invalid", ["overlaps-in-file"]), (3, "added", []),
                             (4, "invalid", ["overlaps-in-file"])]
    assert "duplicate-row" not in result.output
    assert [b["customer_system_id"] for b in posted(staffed)] == ["000104"]


def test_a_leave_listed_twice_that_overlaps_a_third_row_is_held_back_with_it(tmp_path: Path, staffed: Any) -> None:
    # which of the two leaves is right is not known: none of the three rows is sent, as for staff rows of one
    # id when one of them differs (duplicate-id)
    overlapping = ["000101", "Sick Leave", D(2024, 3, 8), D(2024, 3, 8), "", 1, "MY", "", "Approved"]
    source = write_xlsx(tmp_path / "leave.xlsx", [ANNUAL, overlapping, ANNUAL_AGAIN, SICK])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1
    assert outcomes(run) == [(2, "invalid", ["overlaps-in-file"]), (3, "invalid", ["overlaps-in-file"]),
                             (4, "invalid", ["overlaps-in-file"]), (5, "added", [])]
    assert "overlaps row 3 (2024-03-08..2024-03-08), row 4 (2024-03-04..2024-03-08)" in run.rows[0].message
    assert [b["customer_system_id"] for b in posted(staffed)] == ["000104"]


def test_a_repeat_of_an_invalid_row_is_invalid_on_its_own(tmp_path: Path, staffed: Any) -> None:
    # as a staff row whose repeat has a problem of its own: no row is taken as the other's repeat, none is sent,
    # and each is listed to fix with its own problem (fixed, the two are one leave again, sent once)
    misspelt = [*ANNUAL[:1], "Anual Leave", *ANNUAL[2:]]
    source = write_xlsx(tmp_path / "leave.xlsx", [misspelt, SICK, misspelt])
    strict = write_config(tmp_path, extra='strict_checks = ["unknown-leave-type"]')
    result, run = run_import(tmp_path, staffed, source, strict)

    assert result.exit_code == 1
    assert outcomes(run) == [(2, "invalid", ["unknown-leave-type"]), (3, "added", []),
                             (4, "invalid", ["unknown-leave-type"])]
    assert run.rows[2].message.startswith("Row 4, column 'Leave Type': 'Anual Leave' is not among the leave types")
    assert "duplicate-row" not in result.output
    assert [b["customer_system_id"] for b in posted(staffed)] == ["000104"]


@pytest.mark.parametrize(("extra", "row", "outcome", "code"), [
    ("", ["000999", *ANNUAL[1:]], "rejected", "unknown-staff"),  # the service does not know the person
    ('total_days = "strict"', [*ANNUAL[:5], 9, *ANNUAL[6:]], "invalid", "total-days-mismatch"),  # it counts 5
])
def test_a_repeat_of_a_row_held_back_once_checked_with_the_service_is_held_back_with_it(
        tmp_path: Path, staffed: Any, extra: str, row: list[object], outcome: str, code: str) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [row, SICK, list(row)])
    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra=extra))

    assert result.exit_code == 1
    assert outcomes(run) == [(2, outcome, [code]), (3, "added", []), (4, outcome, [code, "duplicate-row"])]
    first, _, repeat = run.rows
    said = first.problems[0].message
    assert repeat.problems[0].message == f"Row 4 (as row 2){said.removeprefix('Row 2')}"
    assert repeat.message == f"Shares row 2's outcome: {first.message}"
    # asked of the service once, and both rows are in the file to fix
    assert [b["customer_system_id"] for b in posted(staffed)] == (
        ["000104", "000999"] if outcome == "rejected" else ["000104"])
    (fix,) = workbook_cells(report_folder(result) / "to_fix.xlsx").values()
    assert [r[0] for r in fix[1:]] == [row[0], row[0]]


def test_a_repeat_is_told_the_warnings_its_row_was_told_by_the_service(tmp_path: Path, staffed: Any) -> None:
    # HR's 4.5 days for a five-working-day leave (the service counts 5), on a platform holding whole days only:
    # row 2 is sent and warned twice; row 4, the same leave again, is not sent, and says what row 2 was told
    half_less = [*ANNUAL[:5], "4.5", *ANNUAL[6:]]
    staffed.set_alterations(whole_days=True)
    source = write_xlsx(tmp_path / "leave.xlsx", [half_less, SICK, list(half_less)])
    differs = ("total_days is 4.5 in the file but the service counts 5 for 2024-03-04..2024-03-08 in MY; the file's "
               "4.5 is kept.")
    altered = "the platform altered total_days: sent '4.5', stored 4"

    # the dry run tells the repeat the service's count as it tells row 2
    dry, planned = run_import(tmp_path, staffed, source, None, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert outcomes(planned) == [(2, "valid", ["total-days-differs"]), (3, "valid", []),
                                 (4, "valid", ["total-days-differs", "duplicate-row"])]
    assert planned.rows[2].problems[0].message == f"Row 4 (as row 2): {differs}"

    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 0, result.output
    assert "3 of 3 rows imported (2 with warnings)." in result.output
    assert [b["customer_system_id"] for b in posted(staffed)] == ["000101", "000104"]
    assert outcomes(run) == [(2, "added", ["total-days-differs", "platform-altered"]), (3, "added", []),
                             (4, "added", ["total-days-differs", "platform-altered", "duplicate-row"])]
    first, _, repeat = run.rows
    assert [(p.severity, p.message) for p in first.problems] == [
        ("warning", f"Row 2: {differs}"), ("warning", f"Row 2: {altered}")]
    assert [(p.severity, p.row, p.message) for p in repeat.problems] == [
        ("warning", 4, f"Row 4 (as row 2): {differs}"), ("warning", 4, f"Row 4 (as row 2): {altered}"),
        ("warning", 4, REPEAT_OF_ROW_2)]
    assert f"Warning: Row 4 (as row 2): {altered}" in result.output
    summary = json.loads((report_folder(result) / "summary.json").read_text(encoding="utf-8"))
    assert summary["warnings"] == {"total-days-differs": 2, "platform-altered": 2, "duplicate-row": 1}
    problems = workbook_cells(report_folder(result) / "report.xlsx")["Problems"]
    assert [(r[0], r[4]) for r in problems[1:]] == [
        (2, "total-days-differs"), (2, "platform-altered"),
        (4, "total-days-differs"), (4, "platform-altered"), (4, "duplicate-row")]


def test_validate_and_a_dry_run_show_the_repeat_and_send_nothing(tmp_path: Path, staffed: Any) -> None:
    source = write_csv(tmp_path / "leave.csv", [
        ["000101", "Annual Leave", "04/03/2024", "08/03/2024", "", "5", "MY", "trip", "Approved"],
        ["000104", "病假", "04/03/2024", "04/03/2024", "", "1", "CN", "", "Approved"],
        ["000101", "AL", "2024-03-04", "2024-03-08", "", "5", "Malaysia", "trip", "Approved"],
    ])
    config = write_config(tmp_path)
    checked = hrimport(["timeoff", "validate", str(config), str(source)], staffed)

    assert checked.exit_code == 0, checked.output
    assert f"Warning: {REPEAT_OF_ROW_2}" in checked.output
    assert "3 of 3 rows checked (1 with warnings)." in checked.output
    assert staffed.requests() == []

    result, run = run_import(tmp_path, staffed, source, config, "--dry-run")
    assert result.exit_code == 0, result.output
    assert outcomes(run) == [(2, "valid", []), (3, "valid", []), (4, "valid", ["duplicate-row"])]
    assert run.rows[2].message == f"Shares row 2's outcome: {run.rows[0].message}"
    assert run.rows[0].message == "Valid; would be sent with total_days 5 (dry run)."
    assert posted(staffed) == [] and staffed.time_off(99) == []


def test_a_column_never_sent_does_not_make_two_rows_differ(tmp_path: Path, staffed: Any) -> None:
    # the name column is for the report only: the platform would receive the same leave twice
    annual = ["000101", "Annual Leave", "04/03/2024", "08/03/2024", "", "5", "MY", "trip", "Approved"]
    source = write_csv(tmp_path / "leave.csv", [
        [*annual, "Lee Ann"], ["000104", "病假", "04/03/2024", "04/03/2024", "", "1", "CN", "", "", "Chen Bo"],
        [*annual, "LEE, Ann"]], [*HEADER, "Employee Name"])
    result = hrimport(["timeoff", "validate", str(write_config(tmp_path)), str(source)], staffed)

    assert result.exit_code == 0, result.output
    assert f"Warning: {REPEAT_OF_ROW_2}" in result.output


@pytest.mark.parametrize("chunk_rows", [1, 7])
def test_a_repeat_far_down_a_leave_history_read_in_chunks_is_sent_once_as_in_a_whole_read(
        tmp_path: Path, start_sandbox: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, chunk_rows: int) -> None:
    """Rows 4 and 29 are one leave, rows 6 and 30 are one leave the service refuses: each pair, 25 rows apart
    and in other chunks, is found and told as in a whole read, on the dry run, the import and the run again."""
    monkeypatch.setenv("HRIMPORT_TOKEN", TOKEN)
    weekdays = [day for day in (D(2024, 1, 1) + dt.timedelta(days=n) for n in range(45)) if day.weekday() < 5]
    rows: list[list[object]] = []
    for n, day in enumerate(weekdays[:30]):
        when = day.strftime("%d/%m/%Y")
        rows.append([["000101", "000106", "000110"][n % 3], "Annual Leave", when, when, "", "1", "SG", "", ""])
    rows[27] = list(rows[2])
    rows[4][0] = "999999"
    rows[28] = list(rows[4])
    source = write_csv(tmp_path / "leave.csv", rows)

    def imported(name: str, chunk: int | None) -> tuple[Any, dict[str, Path]]:
        return run_steps(tmp_path, start_sandbox, chunk, name, source)

    whole_sandbox, whole = imported("whole", None)
    chunked_sandbox, chunked = imported("chunked", chunk_rows)

    assert chunked_sandbox.bodies == whole_sandbox.bodies
    assert Counter(json.loads(b)["start_date"] for b in chunked_sandbox.bodies if b'"leave_type"' in b)[
        "2024-01-03"] == 1
    assert len(chunked_sandbox.time_off(99)) == 27 and len(stored_in_sqlite(chunked_sandbox)) == 27
    for step in ("dry", "first", "again"):
        assert records(chunked[step]) == records(whole[step]), step
        assert unclocked(workbook_cells(chunked[step] / "report.xlsx")["Rows"]) == unclocked(
            workbook_cells(whole[step] / "report.xlsx")["Rows"]), step
    by_row = {r["row"]: r for r in records(chunked["first"]) if r["record"] == "row"}
    assert [(by_row[r]["outcome"], [p["code"] for p in by_row[r]["problems"]]) for r in (4, 29, 6, 30)] == [
        ("added", []), ("added", ["duplicate-row"]), ("rejected", ["unknown-staff"]),
        ("rejected", ["unknown-staff", "duplicate-row"])]
    again = {r["row"]: r for r in records(chunked["again"]) if r["record"] == "row"}
    assert (again[4]["outcome"], again[29]["outcome"]) == ("already_imported", "already_imported")
    assert again[29]["message"] == f"Shares row 4's outcome: {again[4]['message']}"


def test_hrimport_run_sends_a_leave_listed_twice_once_and_next_month_s_copy_of_it_nothing(
        tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    job.export("2024-05", job.people(2))

    def leave_export(month: str, rows: list[list[str]]) -> None:
        path = write_csv(job.root / "exports" / f"leave_{month}.csv", rows, LEAVE_HEADER)
        later = time.time() + len(list((job.root / "exports").iterdir()))  # the newest, however fast
        os.utime(path, (later, later))

    march = [[job.ext(1), "Annual Leave", "04/03/2024", "05/03/2024", "", "", "MY", "", "Approved"],
             [job.ext(2), "Annual Leave", "04/03/2024", "05/03/2024", "", "", "MY", "", "Approved"]]
    leave_export("2024-05", [*march, list(march[0])])  # person 1's leave listed twice
    assert run_cli("run", str(job.job)).exit_code == 0
    assert job.time_off() == Counter({(job.ext(1), "2024-03-04"): 1, (job.ext(2), "2024-03-04"): 1})
    assert job.last_run()["steps"][1]["counts"]["added"] == 3

    # June's export lists the year so far again, twice over, and one new leave
    april = [job.ext(2), "Annual Leave", "01/04/2024", "01/04/2024", "", "", "MY", "", "Approved"]
    leave_export("2024-06", [*march, *march, april])
    sandbox.clear_requests()
    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    assert len([r for r in sandbox.requests() if r["path"].endswith(TIME_OFF)]) == 1  # April's only
    assert job.time_off() == Counter({(job.ext(1), "2024-03-04"): 1, (job.ext(2), "2024-03-04"): 1,
                                      (job.ext(2), "2024-04-01"): 1})
    counts = job.last_run()["steps"][1]["counts"]
    assert (counts["already_imported"], counts["added"]) == (4, 1)
