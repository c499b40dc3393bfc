"""Time-off import end to end: a real spreadsheet, the real CLI in-process, the real sandbox over HTTP.

Each test writes an .xlsx or .csv with openpyxl/csv under ``tmp_path``, a config beside it, and runs
``hrimport timeoff import`` with ``HRIMPORT_BASE_URL`` pointing at the ``sandbox`` fixture; assertions are
on the command's output and exit code, the report's outcomes and the sandbox's stored records.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from markupsafe import escape
from openpyxl import Workbook

from hrimport.cli import main
from hrimport.outcomes import RunResult, read_outcomes
from hrimport.state.ledger import open_ledger
from tests import staff_files

D = dt.date
HEADER = ["Employee ID", "Leave Type", "From", "To", "Half Day", "Days", "Country", "Reason", "Status"]
TOKEN = "demo-customer-99"
LEAVE_IDS = {"Annual Leave": 1, "Sick Leave": 2, "Personal Leave": 3, "Paternity Leave": 5,
             "Bereavement Leave": 8, "Compensatory Leave": 9}

CONFIG = """
[service]
customer_id = 99

[source]
date_order = "day-first"

[report]
job = "leave"

[timeoff]
default_country = "SG"
half_day = "Half Day"
{extra}

[timeoff.columns]
"Employee ID" = "customer_system_id"
"Leave Type" = "leave_type"
"From" = "start_date"
"To" = "end_date"
"Days" = "total_days"
"Country" = "country"
"Reason" = "notes"
"Status" = "decision"
{columns}

[timeoff.values.leave_type]
"AL" = "Annual Leave"
"年休" = "年假"

[timeoff.values.decision]
"Approved" = "Approve"
"Pending" = ""
"""


pytestmark = pytest.mark.usefixtures("instant_retries")


@pytest.fixture
def staffed(sandbox: Any) -> Any:
    """The sandbox with staff 000101 (MY), 000104 and 000105 (CN), 000106 and 000110 (SG) of customer 99."""
    people = [("000101", "MY"), ("000104", "CN"), ("000105", "CN"), ("000106", "SG"), ("000110", "SG")]
    add_staff(sandbox, people)
    return sandbox


def add_staff(sandbox: Any, people: list[tuple[str, str]]) -> None:
    body = {"customer_id": "99", "bulk_staff_data": [
        {"customer_system_id": sid, "customer_system_id_type": "BambooHR", "name": f"Person {sid}",
         "system_email": f"p{sid}@acme.example", "country": country, "job_title": "Analyst",
         "job_start_date": "2020-01-06", "staff_type": "Payroll"} for sid, country in people]}
    response = sandbox.http.post("/api/bulk_add_edit_staff", json=body, headers=sandbox.auth(TOKEN))
    assert response.status_code == 200, response.text


def write_xlsx(path: Path, rows: list[list[object]], header: list[str] = HEADER) -> Path:
    wb = Workbook()
    ws = wb.active
    ws.append(header)
    for row in rows:
        ws.append(row)
    for cell in ws["A"][1:]:
        cell.number_format = "@"
    wb.save(path)
    return path


def write_config(folder: Path, extra: str = "", columns: str = "") -> Path:
    path = folder / "leave.toml"
    path.write_text(CONFIG.format(extra=extra, columns=columns), encoding="utf-8")
    return path


def hrimport(args: list[str], sandbox: Any | None = None, token: str = TOKEN, **env: str) -> Result:
    environ = {"HRIMPORT_TOKEN": token, "HRIMPORT_BASE_URL": sandbox.base_url if sandbox else "", **env}
    return CliRunner().invoke(main, args, env=environ, catch_exceptions=False)


def run_import(tmp_path: Path, sandbox: Any, source: Path, config: Path | None = None,
               *extra: str) -> tuple[Result, RunResult]:
    config = config or write_config(tmp_path)
    result = hrimport(["timeoff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                       *extra], sandbox)
    assert "Traceback" not in result.output
    folder = Path(next(line for line in result.stdout.splitlines() if line.startswith("Report folder: "))
                  .removeprefix("Report folder: "))
    return result, read_outcomes(folder / "outcomes.jsonl")


def by_row(run: RunResult) -> dict[int, Any]:
    return {o.row: o for o in run.rows}


def stored(sandbox: Any) -> list[tuple[str, int, str, str, Any]]:
    return sorted((r["customer_system_id"], r["leave_type"], r["start_date"], r["end_date"], r["total_days"])
                  for r in sandbox.time_off(99))


# ------------------------------------------------------------------------------------------------ stories


def test_english_and_chinese_leave_types_with_half_days_and_totals_are_imported(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "trip", "Approved"],  # row 2
        ["000101", "病假", D(2024, 4, 13), D(2024, 4, 14), "", 2, "MY", "", "Approved"],  # a weekend: HR's 2
        ["000104", "年假", D(2024, 5, 6), D(2024, 5, 8), "", "", "CN", "", "Pending"],  # filled: 3
        ["000104", "事假", D(2024, 6, 3), D(2024, 6, 3), "上午", 0.5, "CN", "", "Approved"],  # half day
        ["000105", "喪假", D(2024, 7, 1), D(2024, 7, 3), "", 3, "CN", "", "Approved"],  # Traditional
        ["000105", "補休", D(2024, 9, 2), D(2024, 9, 4), "First Half", "", "CN", "", ""],  # ends at noon: 2.5
        ["000106", "AL", D(2024, 8, 5), D(2024, 8, 8), "", "", "", "", "Approved"],  # company name, SG default
        ["000106", "annual leave", "14/10/2024", "15/10/2024", "PM", 1.5, "SG", "", "Approved"],  # from noon
        ["000110", "年休", D(2024, 2, 19), D(2024, 2, 19), "", 1, "SG", "", "Approved"],  # value map to 年假
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert "9 of 9 rows imported (1 with warnings)." in result.stdout
    assert run.info.kind == "timeoff"
    assert {o.outcome.value for o in run.rows} == {"added"}
    rows = by_row(run)
    # the service counts no working day in a weekend; HR's figure stands, and the report says so
    assert [p.code for p in rows[3].problems] == ["total-days-differs"] and rows[3].problems[0].is_warning
    assert rows[3].details == {"leave_type": "病假", "start_date": "2024-04-13", "end_date": "2024-04-14",
                               "half_days": "", "total_days": "2"}
    assert rows[5].details["half_days"] == "half day" and rows[7].details["half_days"] == "end"
    assert rows[8].details["leave_type"] == "Annual Leave" and rows[10].details["leave_type"] == "年假"
    assert stored(staffed) == sorted([
        ("000101", 1, "2024-03-04", "2024-03-08", 5),
        ("000101", 2, "2024-04-13", "2024-04-14", 2),
        ("000104", 1, "2024-05-06", "2024-05-08", 3),
        ("000104", 3, "2024-06-03", "2024-06-03", 0.5),
        ("000105", 8, "2024-07-01", "2024-07-03", 3),
        ("000105", 9, "2024-09-02", "2024-09-04", 2.5),
        ("000106", 1, "2024-08-05", "2024-08-08", 4),
        ("000106", 1, "2024-10-14", "2024-10-15", 1.5),
        ("000110", 1, "2024-02-19", "2024-02-19", 1),
    ])
    records = {(r["customer_system_id"], r["start_date"]): r for r in staffed.time_off(99)}
    assert records[("000101", "2024-03-04")]["decision"] == "Approve"
    assert records[("000101", "2024-03-04")]["notes"] == "trip"
    assert records[("000104", "2024-05-06")]["decision"] == ""  # Pending -> undecided
    assert records[("000106", "2024-08-05")]["country"] == "SG"


def test_leave_the_value_map_leaves_undecided_is_not_approved_by_the_config_s_default(tmp_path: Path,
                                                                                       staffed: Any) -> None:
    """HR approves leave whose Status cell is empty ([timeoff.defaults] decision = "Approve"), and keeps Pending
    leave undecided ("Pending" = "" in the value map): a Pending request sent as approved would be paid as
    leave nobody approved. The default fills the empty cell only."""
    config = write_config(tmp_path)
    config.write_text(config.read_text(encoding="utf-8") + '\n[timeoff.defaults]\ndecision = "Approve"\n',
                      encoding="utf-8")
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", 1, "MY", "", "Pending"],  # row 2
        ["000104", "Annual Leave", D(2024, 5, 6), D(2024, 5, 6), "", 1, "CN", "", ""],
        ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 5), "", 1, "SG", "", "Approved"],
    ])

    result, run = run_import(tmp_path, staffed, source, config)

    assert result.exit_code == 0, result.output
    assert {o.row: o.outcome.value for o in run.rows} == {2: "added", 3: "added", 4: "added"}
    decisions = {r["customer_system_id"]: r["decision"] for r in staffed.time_off(99)}
    assert decisions == {"000101": "", "000104": "Approve", "000106": "Approve"}
    summary = json.loads((run_folder(result) / "summary.json").read_text(encoding="utf-8"))
    told = {(v["kind"], e["row"], e["read"], e["sent"]) for v in summary["values_read"] if v["field"] == "decision"
            for e in v["examples"]}
    assert told == {("value-map", 2, "Pending", ""), ("value-map", 4, "Approved", "Approve"),
                    ("default", 3, "", "Approve")}


def run_folder(result: Result) -> Path:
    return Path(next(line for line in result.stdout.splitlines() if line.startswith("Report folder: "))
                .removeprefix("Report folder: "))


def test_a_zero_day_record_the_service_also_counts_as_zero_is_sent_without_a_warning(tmp_path: Path,
                                                                                   staffed: Any) -> None:
    """HR books a weekend of annual leave as 0 days (the record kept for the calendar): the service counts no
    working day either, so the two agree and the record is stored with 0, with nothing to look at."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 4, 13), D(2024, 4, 14), "", 0, "MY", "", "Approved"],  # a weekend
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert "1 of 1 rows imported." in result.stdout
    assert not by_row(run)[2].problems
    assert stored(staffed) == [("000101", 1, "2024-04-13", "2024-04-14", 0)]


def test_running_the_same_file_again_adds_nothing(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""],
        ["000104", "年假", D(2024, 5, 6), D(2024, 5, 8), "", "", "CN", "", ""],
        ["000999", "Annual Leave", D(2024, 5, 6), D(2024, 5, 8), "", "", "SG", "", ""],
    ])
    _, run1 = run_import(tmp_path, staffed, source)
    assert [o.outcome.value for o in run1.rows] == ["added", "added", "rejected"]
    records = staffed.time_off(99)
    staffed.clear_requests()

    second, run2 = run_import(tmp_path, staffed, source)
    assert staffed.time_off(99) == records  # nothing added, nothing changed
    assert [o.outcome.value for o in run2.rows] == ["already_imported", "already_imported", "rejected"]
    assert "Already imported on" in run2.rows[0].message and "row 2" in run2.rows[0].message
    posted = [r for r in staffed.requests() if r["path"].endswith("/api/apply-ee-time-off")]
    assert len(posted) == 1  # only the row the service refused is tried again
    assert second.exit_code == 1


DISAGREEING = [
    # 9 Aug 2024 is Singapore's National Day: the service counts 4 working days; the company works that day
    ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 9), "", 5, "SG", "", ""],
    # a weekend of sick leave, counted every day by the company: the service counts no working day
    ["000110", "Sick Leave", D(2024, 6, 8), D(2024, 6, 9), "", 2, "SG", "", ""],
    # the two agree
    ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "", ""],
]


def test_by_default_hr_s_figure_is_sent_and_a_differing_count_is_a_warning(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", DISAGREEING)
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["added", "added", "added"]
    first, second, third = run.rows
    assert [(p.code, p.severity, p.column, p.value) for p in first.problems] == [
        ("total-days-differs", "warning", "Days", "5")]
    assert first.problems[0].message == (
        "Row 2: total_days is 5 in the file but the service counts 4 for 2024-08-05..2024-08-09 in SG; "
        "the file's 5 is kept.")
    assert second.problems[0].message == (
        "Row 3: total_days is 2 in the file but the service counts no working day in 2024-06-08..2024-06-09 in "
        "SG (weekends and public holidays of SG) (Sick Leave is often counted every day, which makes 2, the "
        "file's figure); the file's 2 is kept.")
    assert third.problems == ()
    assert stored(staffed) == sorted([("000106", 1, "2024-08-05", "2024-08-09", 5),
                                      ("000110", 2, "2024-06-08", "2024-06-09", 2),
                                      ("000101", 1, "2024-03-04", "2024-03-08", 5)])
    folder = Path(result.stdout.split("Report folder: ")[1].splitlines()[0])
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["warnings"] == {"total-days-differs": 2} and summary["exit_code"] == 0
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert str(escape("Total days differ from the platform's count")) in html  # the warnings' own group
    assert "2 row(s) keep the file's figure where the two differ (total-days-differs)." in result.stdout


def test_a_dry_run_tells_the_figure_kept_in_words_true_of_a_row_not_sent(tmp_path: Path, staffed: Any) -> None:
    """A dry run sends nothing: its warning about the days says which figure is kept, not that one was sent."""
    source = write_xlsx(tmp_path / "leave.xlsx", DISAGREEING)
    result, run = run_import(tmp_path, staffed, source, None, "--dry-run")

    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["valid", "valid", "valid"]
    assert run.rows[0].problems[0].message == (
        "Row 2: total_days is 5 in the file but the service counts 4 for 2024-08-05..2024-08-09 in SG; "
        "the file's 5 is kept.")
    assert " sent with " not in result.stdout  # no row's line, nor the run's note, says a figure was sent
    assert "2 row(s) keep the file's figure where the two differ (total-days-differs)." in result.stdout
    assert stored(staffed) == []


def test_a_row_held_back_shows_the_half_days_its_cells_say(tmp_path: Path, staffed: Any) -> None:
    """A row held back for its leave type still shows in the report the half days its half-day cell says."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 6), "PM", 2.5, "MY", "", ""],
        ["000104", "Holiday Leave", D(2024, 3, 4), D(2024, 3, 4), "AM", 0.5, "CN", "", ""]])
    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='strict_checks = ["unknown-leave-type"]'))

    assert result.exit_code == 1, result.output
    assert [(o.outcome.value, o.details["half_days"]) for o in run.rows] == [("added", "start"), ("invalid", "half day")]


def test_the_service_policy_sends_the_service_s_count_with_the_warning(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", DISAGREEING)
    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='total_days = "service"'))

    assert result.exit_code == 0, result.output
    first, second, _ = run.rows
    assert first.problems[0].message.endswith('the service\'s 4 is used (total_days = "service").')
    assert first.details["total_days"] == "4"
    # a period without working days cannot be booked on the service's count: the file's figure is sent
    assert second.problems[0].message.endswith("the file's 2 is kept.")
    assert stored(staffed) == sorted([("000106", 1, "2024-08-05", "2024-08-09", 4),
                                      ("000110", 2, "2024-06-08", "2024-06-09", 2),
                                      ("000101", 1, "2024-03-04", "2024-03-08", 5)])


def test_the_strict_policy_flags_a_differing_figure_and_sends_only_agreeing_rows(tmp_path: Path,
                                                                                 staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", DISAGREEING)
    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='total_days = "strict"'))

    assert result.exit_code == 1
    first, second, third = run.rows
    assert (first.outcome.value, first.problem_codes) == ("invalid", ["total-days-mismatch"])
    assert first.message == (
        "Row 2: total_days is 5 in the file but the service counts 4 for 2024-08-05..2024-08-09 in SG; not sent "
        '(total_days = "strict": correct the figure, or mark the half days).')
    assert (second.outcome.value, second.problem_codes) == ("invalid", ["no-leave-days"])
    assert third.outcome.value == "added"
    assert first.message in result.stdout
    assert stored(staffed) == [("000101", 1, "2024-03-04", "2024-03-08", 5)]


def test_when_the_calculation_fails_hr_s_figure_is_sent_unchecked(tmp_path: Path, staffed: Any) -> None:
    staffed.set_faults(rules=[{"path": "/api/calculate-total-days", "status": 500, "count": 100}])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 9), "", 5, "SG", "", ""],
        ["000110", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "SG", "", ""],  # nothing to send
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1
    first, second = run.rows
    assert (first.outcome.value, first.problem_codes) == ("added", ["total-days-unchecked"])
    assert first.problems[0].message.startswith(
        "Row 2: total_days 5 could not be checked: the service could not calculate the days of "
        "2024-08-05..2024-08-09 in SG (the service answered POST /api/calculate-total-days with HTTP 500")
    assert (second.outcome.value, second.problem_codes) == ("failed", ["http-500"])
    assert stored(staffed) == [("000106", 1, "2024-08-05", "2024-08-09", 5)]


def test_a_policy_the_import_does_not_know_is_one_line_and_exit_2(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", DISAGREEING)
    result = hrimport(["timeoff", "import", str(write_config(tmp_path, extra='total_days = "calendar"')),
                       str(source)], staffed)
    assert result.exit_code == 2
    assert result.stderr == ('Error: leave.toml [timeoff] total_days must be "file", "service" or "strict", not '
                             "'calendar' (the column holding the days is mapped under [timeoff.columns])\n")


def test_a_reason_that_starts_like_a_formula_is_sent_as_written_unless_the_config_rejects_it(
    tmp_path: Path, staffed: Any
) -> None:
    # "@home" is a plain string to the platform; a spreadsheet would run it, so the row carries a warning
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "@home", ""],
        ["000104", "Annual Leave", D(2024, 5, 6), D(2024, 5, 8), "", 3, "CN", "trip", ""],
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["added", "added"]
    assert [(p.code, p.severity, p.column, p.value) for p in run.rows[0].problems] == [
        ("formula-like-text", "warning", "Reason", "@home")]
    assert sorted(r["notes"] for r in staffed.time_off(99)) == ["@home", "trip"]

    strict = tmp_path / "strict"  # another config, with its own state folder
    strict.mkdir()
    config = write_config(strict)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[source]\n", '[source]\nformula_text = "reject"\n'), encoding="utf-8")
    staffed.clear_requests()
    result, run = run_import(strict, staffed, source, config)
    assert result.exit_code == 1, result.output
    assert run.rows[0].outcome.value == "invalid"
    assert [(p.code, p.severity) for p in run.rows[0].problems] == [("formula-like-text", "error")]
    assert not any(b"@home" in body for body in staffed.bodies)  # the row was not sent again


def test_each_distinct_period_is_asked_of_the_calculation_once(tmp_path: Path, staffed: Any) -> None:
    people = ["000101", "000104", "000105", "000106", "000110"]
    source = write_xlsx(tmp_path / "leave.xlsx", [
        [p, "Annual Leave", D(2024, 3, 4), D(2024, 3, 6), "", "", "SG", "", ""] for p in people
    ] + [[p, "Annual Leave", D(2024, 4, 1), D(2024, 4, 2), "PM", "", "SG", "", ""] for p in people[:3]])
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 0, result.output
    asked = [r for r in staffed.requests() if r["path"].endswith("/api/calculate-total-days")]
    assert len(asked) == 2
    assert [o.details["total_days"] for o in run.rows] == ["3"] * 5 + ["1.5"] * 3
    assert "2 distinct period(s) asked" in result.stdout


def test_rows_overlapping_within_the_file_are_flagged_and_not_sent(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000110", "Annual Leave", D(2024, 2, 20), D(2024, 2, 23), "", "", "SG", "", ""],
        ["000110", "Personal Leave", D(2024, 2, 22), D(2024, 2, 22), "", 1, "SG", "", ""],
        ["000106", "Annual Leave", D(2024, 2, 20), D(2024, 2, 23), "", "", "SG", "", ""],  # another person
    ])
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    assert [(o.outcome.value, o.problem_codes) for o in run.rows] == [
        ("invalid", ["overlaps-in-file"]), ("invalid", ["overlaps-in-file"]), ("added", [])]
    assert "overlaps row 3 (2024-02-22..2024-02-22)" in run.rows[0].message
    assert [r["customer_system_id"] for r in staffed.time_off(99)] == ["000106"]


def test_a_period_overlapping_a_stored_record_is_reported_as_such(tmp_path: Path, staffed: Any) -> None:
    body = {"customer_id": 99, "customer_system_id": "000101", "leave_type": "Annual Leave", "lang": "EN",
            "country": "MY", "start_date": "2024-03-05", "end_date": "2024-03-05", "total_days": "1"}
    assert staffed.http.post("/api/apply-ee-time-off", json=body, headers=staffed.auth(TOKEN)).status_code == 200
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    (row,) = run.rows
    assert row.outcome.value == "overlaps_existing" and row.problem_codes == ["overlaps-existing"]
    assert "already holds time off for '000101' overlapping 2024-03-04..2024-03-08" in row.message
    assert len(staffed.time_off(99)) == 1


def test_an_external_id_the_service_does_not_know_is_reported_with_its_reason(tmp_path: Path,
                                                                            staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000999", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "SG", "", ""]])
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    (row,) = run.rows
    assert row.outcome.value == "rejected" and row.problem_codes == ["unknown-staff"]
    assert "the service does not know staff '000999'" in row.message
    assert "no staff with customer_system_id '000999'" in row.message  # the service's own reason


def test_unknown_types_bad_markers_and_bad_cells_are_invalid_with_one_outcome_each(tmp_path: Path,
                                                                                  staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Anual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""],
        ["000101", "Annual Leave", D(2024, 4, 1), D(2024, 4, 2), "maybe", "", "MY", "", ""],
        ["000101", "Annual Leave", D(2024, 5, 1), D(2024, 5, 3), "yes", "", "MY", "", ""],
        ["000101", "Annual Leave", "31/02/2024", D(2024, 6, 3), "", "", "MY", "", ""],
        ["000101", "Annual Leave", D(2024, 7, 3), D(2024, 7, 1), "", "", "MY", "", ""],
        ["", "Annual Leave", D(2024, 8, 1), D(2024, 8, 1), "", "", "MY", "", ""],
        ["000101", "Annual Leave", D(2024, 9, 2), D(2024, 9, 2), "", "one", "Atlantis", "", "Maybe"],
    ])
    # an unknown type is held back only when the config says so (else sent as written, with a warning)
    strict = write_config(tmp_path, extra='strict_checks = ["unknown-leave-type"]')
    result, run = run_import(tmp_path, staffed, source, strict)
    assert result.exit_code == 1
    codes = {o.row: o.problem_codes for o in run.rows}
    assert codes == {
        2: ["unknown-leave-type"], 3: ["not-a-half-day-marker"], 4: ["ambiguous-half-day"], 5: ["not-a-date"],
        6: ["end-before-start"], 7: ["missing-value"],
        8: ["unknown-country", "not-a-number", "not-an-allowed-value"],
    }
    assert "closest known: Annual Leave" in run.rows[0].message
    assert run.rows[4].message == ("Row 6, columns 'From' and 'To': the leave ends on 2024-07-01 (To), before it "
                                   "starts on 2024-07-03 (From); correct whichever date is wrong.")
    assert run.rows[1].problems[0].column == "Half Day"
    assert staffed.time_off(99) == []


def test_lang_from_a_column_or_the_config_decides_the_language_sent(tmp_path: Path, staffed: Any) -> None:
    header = [*HEADER, "Language"]
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "年假", D(2024, 3, 4), D(2024, 3, 4), "", "", "MY", "", "", "EN"],  # sent as Annual Leave
        ["000104", "Sick Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "CN", "", "", "zh"],  # sent as 病假
        ["000105", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "CN", "", "", ""],  # config: ZH
    ], header)
    config = write_config(tmp_path, extra='lang = "ZH"', columns='"Language" = "lang"')
    result, run = run_import(tmp_path, staffed, source, config)
    assert result.exit_code == 0, result.output
    assert [o.details["leave_type"] for o in run.rows] == ["Annual Leave", "病假", "年假"]
    assert sorted(r["leave_type"] for r in staffed.time_off(99)) == [1, 1, 2]


def test_many_rows_posted_concurrently_keep_their_own_outcomes(tmp_path: Path, staffed: Any) -> None:
    people = ["000101", "000104", "000105", "000106", "000110", "000998", "000999"]  # the last two unknown
    rows: list[list[object]] = []
    for week in range(12):
        monday = D(2024, 1, 8) + dt.timedelta(weeks=week)
        for n, person in enumerate(people):
            day = monday + dt.timedelta(days=n % 5)
            # HR's figure: a public holiday (12 Feb) is still sent, with a warning
            rows.append([person, "Sick Leave", day, day, "", 1, "SG", f"{person} week {week}", ""])
    # a few requests fail with 503 (nothing stored) and are tried again by the client
    staffed.set_faults(rules=[{"path": "/api/apply-ee-time-off", "status": 503, "count": 5, "skip": 3}],
                       latency=0.01)
    source = write_xlsx(tmp_path / "leave.xlsx", rows)
    result, run = run_import(tmp_path, staffed, source, None, "--concurrency", "8")
    assert result.exit_code == 1
    assert len(run.rows) == len(rows)
    for o in run.rows:
        person, _, day = rows[o.row - 2][:3]
        assert o.external_id == person
        assert o.details["start_date"] == day.isoformat()  # type: ignore[union-attr]
        assert o.outcome.value == ("rejected" if person in ("000998", "000999") else "added"), o
    stored_notes = Counter(r["notes"] for r in staffed.time_off(99))
    expected = Counter(r[7] for r in rows if r[0] not in ("000998", "000999"))
    assert stored_notes == expected  # every record once, with its own row's data
    for record in staffed.time_off(99):
        assert record["notes"].startswith(record["customer_system_id"])


def ledger_entries(tmp_path: Path) -> list[tuple[str, str, int | None]]:
    with open_ledger(tmp_path / ".hrimport") as ledger:
        return [(e.key.start_date, e.status, e.record_id) for e in ledger.entries()]


def test_an_answer_lost_in_transit_heals_on_the_next_run(tmp_path: Path, staffed: Any) -> None:
    # the service stores the record, then the connection drops before its answer arrives
    staffed.set_faults(rules=[{"path": "/api/apply-ee-time-off", "drop": True, "count": 1}])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    assert (run.rows[0].outcome.value, run.rows[0].problem_codes) == ("failed", ["transport-failed"])
    [record] = staffed.time_off(99)
    assert ledger_entries(tmp_path) == [("2024-03-04", "sending", None)]  # sent, fate unknown

    again_result, again = run_import(tmp_path, staffed, source)
    assert again_result.exit_code == 0, again_result.output
    (row,) = again.rows
    # the first run's report said failed: this one tells the leave added, once
    assert row.outcome.value == "added"
    assert row.message.startswith(f"Added as time-off record {record['id']}: sent on ")
    assert row.message.endswith("(from leave.xlsx row 2) by a run that never received the service's answer; the "
                                "service holds it, so no second record was added.")
    assert again.counts()["added"] == 1
    assert staffed.time_off(99) == [record]  # no second record
    assert ledger_entries(tmp_path) == [("2024-03-04", "stored", record["id"])]

    third_result, third = run_import(tmp_path, staffed, source)  # from now on the ledger alone answers
    assert third_result.exit_code == 0 and third.rows[0].outcome.value == "already_imported"
    assert third.rows[0].message.startswith("Already imported on ")
    assert [r["status"] for r in staffed.requests() if r["path"].endswith("/apply-ee-time-off")] == [200, 409]


def test_a_lost_send_that_never_stored_is_added_on_the_next_run(tmp_path: Path, staffed: Any) -> None:
    # a 502 from a gateway: the service may or may not have stored it, so the client does not repeat it
    staffed.set_faults(rules=[{"path": "/api/apply-ee-time-off", "status": 502, "count": 1}])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    _, run = run_import(tmp_path, staffed, source)
    assert run.rows[0].problem_codes == ["http-502"] and staffed.time_off(99) == []
    assert ledger_entries(tmp_path) == [("2024-03-04", "sending", None)]

    result, again = run_import(tmp_path, staffed, source)
    assert result.exit_code == 0
    assert again.rows[0].outcome.value == "added"
    [record] = staffed.time_off(99)
    assert ledger_entries(tmp_path) == [("2024-03-04", "stored", record["id"])]


def test_an_overlap_with_another_record_is_not_taken_for_a_lost_answer(tmp_path: Path, staffed: Any) -> None:
    staffed.set_faults(rules=[{"path": "/api/apply-ee-time-off", "status": 502, "count": 1}])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    run_import(tmp_path, staffed, source)
    # meanwhile someone books an overlapping day by hand on the platform
    body = {"customer_id": 99, "customer_system_id": "000101", "leave_type": "Annual Leave", "lang": "EN",
            "country": "MY", "start_date": "2024-03-05", "end_date": "2024-03-05", "total_days": "1"}
    assert staffed.http.post("/api/apply-ee-time-off", json=body, headers=staffed.auth(TOKEN)).status_code == 200

    result, again = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    (row,) = again.rows
    assert row.outcome.value == "overlaps_existing"
    assert "that answer was lost, but the service's answer does not show that the overlapping record is that " \
           "one: check it on the platform." in row.message
    assert ledger_entries(tmp_path) == [("2024-03-04", "sending", None)]  # still unresolved, still ours


def test_a_refused_row_leaves_nothing_in_the_ledger(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000999", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "SG", "", ""]])
    _, run = run_import(tmp_path, staffed, source)
    assert run.rows[0].outcome.value == "rejected"
    assert ledger_entries(tmp_path) == []


def test_a_dry_run_asks_the_calculation_but_adds_nothing(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""],
        ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 9), "", 5, "SG", "", ""]])
    result, run = run_import(tmp_path, staffed, source, None, "--dry-run")
    assert result.exit_code == 0
    assert [o.outcome.value for o in run.rows] == ["valid", "valid"]
    assert run.rows[0].message == "Valid; would be sent with total_days 5 (dry run)."
    assert run.rows[1].problem_codes == ["total-days-differs"]  # the warning shows before anything is sent
    assert run.info.dry_run
    assert staffed.time_off(99) == []
    assert not [r for r in staffed.requests() if r["path"].endswith("/api/apply-ee-time-off")]


def test_validate_checks_the_file_without_the_network(tmp_path: Path, staffed: Any) -> None:
    source = tmp_path / "leave.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        writer.writerow(["000101", "Annual Leave", "04/03/2024", "08/03/2024", "", "", "MY", "", ""])
        writer.writerow(["000101", "Holiday Leave", "11/03/2024", "12/03/2024", "", "", "MY", "", ""])
    config = write_config(tmp_path)
    staffed.clear_requests()
    result = hrimport(["timeoff", "validate", str(config), str(source)], staffed)
    assert result.exit_code == 0, result.output  # a leave type hrimport does not know is the platform's to judge
    assert ("Warning: Row 3, column 'Leave Type': 'Holiday Leave' is not among the leave types hrimport knows "
            in result.stdout)
    assert "2 of 2 rows checked (1 with warnings)." in result.stdout
    assert staffed.requests() == []
    assert not (tmp_path / ".hrimport" / "timeoff_ledger.db").exists()


def test_the_report_has_the_time_off_columns(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""],
        ["000999", "病假", D(2024, 3, 4), D(2024, 3, 5), "", "", "MY", "", ""]])
    result, _ = run_import(tmp_path, staffed, source)
    folder = Path(result.stdout.split("Report folder: ")[1].splitlines()[0])
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert json.dumps(summary, ensure_ascii=False).count("timeoff") >= 1
    assert (folder / "report.xlsx").exists() and (folder / "report.html").exists()
    html = (folder / "report.html").read_text(encoding="utf-8")
    for text in ("Leave type", "Start date", "Total days", "病假", "Unknown staff member"):
        assert text in html


def test_the_report_names_people_from_the_file_the_staff_import_or_their_id(tmp_path: Path, staffed: Any) -> None:
    # 000001 was imported by a staff import sharing the state folder: the platform accepted "Person 1"
    staff = hrimport(["staff", "import", str(staff_files.write_config(tmp_path / "staff.toml")),
                      str(staff_files.write_csv(tmp_path / "staff.csv", [staff_files.person(1)])),
                      "--report-dir", str(tmp_path / "reports")], staffed)
    assert staff.exit_code == 0, staff.output
    header = [*HEADER, "Employee Name"]
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "MY", "", "", "Aisha Rahman"],
        ["000001", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "MY", "", "", ""],
        ["000104", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "CN", "", "", ""],
        ["000999", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "SG", "", "", "Nobody Known"],
    ], header)
    result, run = run_import(tmp_path, staffed, source)
    assert [(o.name, o.outcome.value) for o in run.rows] == [
        ("Aisha Rahman", "added"), ("Person 1", "added"), ("000104", "added"), ("Nobody Known", "rejected")]
    folder = Path(result.stdout.split("Report folder: ")[1].splitlines()[0])
    assert "Aisha Rahman" in (folder / "report.html").read_text(encoding="utf-8")
    # the name column is read for the report, so it is not listed among the columns ignored
    assert "Employee Name" not in result.output
    assert run.info.ignored_columns == []

    # a column the config names wins over one found by its header
    header = [*HEADER, "Name", "Preferred"]
    source = write_xlsx(tmp_path / "leave2.xlsx", [
        ["000105", "Annual Leave", D(2024, 3, 4), D(2024, 3, 4), "", "", "CN", "", "", "Li Wei", "Wei"]], header)
    _, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='name = "Preferred"'))
    assert [o.name for o in run.rows] == ["Wei"]


_COLUMNS = """
[timeoff.columns]
"Employee ID" = "customer_system_id"
"Leave Type" = "leave_type"
"From" = "start_date"
"To" = "end_date"
"Country" = "country"
"""


@pytest.mark.parametrize(("config_text", "message"), [
    ((Path(__file__).parent.parent / "samples" / "bamboohr_staff.toml").read_text(encoding="utf-8"),
     "has no [timeoff] section"),
    ('[service]\ncustomer_id = 99\n[timeoff]\nlang = "FR"\n' + _COLUMNS, 'lang must be "EN", "ZH" or "auto"'),
    ('[service]\ncustomer_id = 99\n[timeoff]\nhalf_start = "Start Half"\n' + _COLUMNS,
     "half_start names column 'Start Half', which is not in the file"),
])
def test_a_bad_config_is_one_line_and_exit_2(tmp_path: Path, staffed: Any, config_text: str, message: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(config_text, encoding="utf-8")
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    result = hrimport(["timeoff", "import", str(config), str(source)], staffed)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ") and message in result.stderr


def test_a_refused_token_is_exit_4_and_never_printed(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    secret = "s3cret-token-value"
    result = hrimport(["timeoff", "import", str(write_config(tmp_path)), str(source)], staffed, token=secret)
    assert result.exit_code == 4
    assert result.stderr.startswith("Error: the service refused the token")
    assert "HRIMPORT_TOKEN" in result.stderr
    assert secret not in result.output


def test_a_second_import_on_the_same_state_folder_exits_3(tmp_path: Path, staffed: Any) -> None:
    from hrimport.state.lock import job_lock

    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""]])
    config = write_config(tmp_path)
    with job_lock(tmp_path / ".hrimport", "timeoff-ledger"):
        result = hrimport(["timeoff", "import", str(config), str(source)], staffed)
    assert result.exit_code == 3
    # the lock is the ledger's, shared by every job using the folder: no job is named 'timeoff-ledger'
    assert result.stderr.startswith("Error: a time-off import using this state folder's ledger is already "
                                    "running (pid ")
    assert staffed.time_off(99) == []


def test_a_period_of_only_weekends_and_holidays_is_booked_with_0_days_and_a_warning(
        tmp_path: Path, staffed: Any) -> None:
    """The interface sets no rule against a record of 0 days (its own example books a weekend), so a period the
    service counts no working day in is no reason to refuse HR's row: "likely wrong dates" is our guess. It is
    sent with the service's 0 and a warning saying what to check; total_days = "strict" holds it back."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        # Saturday 10 Feb to Monday 12 Feb 2024: weekend and Chinese New Year in Singapore
        ["000106", "Annual Leave", D(2024, 2, 10), D(2024, 2, 12), "", "", "SG", "", ""]])
    said = ("Row 2: the service counts no working day in 2024-02-10..2024-02-12 in SG (weekends and public holidays "
            "of SG), and the file gives no number of days")
    check = "check the dates, and if the leave is counted every day, write its days in the total_days column."

    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='total_days = "strict"'))
    assert result.exit_code == 1
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("invalid", ["no-leave-days"])
    assert row.message == f'{said}; not sent (total_days = "strict"): {check}'
    assert (row.problems[0].column, row.problems[0].field) == ("Days", "total_days")
    assert staffed.time_off(99) == []

    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 0, result.output
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("added", ["no-leave-days"])
    (warning,) = row.problems
    assert (warning.severity, warning.column, warning.field) == ("warning", "Days", "total_days")
    assert warning.message == f"{said}; the service's 0 is used: {check}"
    assert f"Warning: {warning.message}" in result.stdout
    assert [json.loads(body)["total_days"] for body in staffed.bodies if b"leave_type" in body] == ["0"]
    assert stored(staffed) == [("000106", 1, "2024-02-10", "2024-02-12", 0)]


def test_a_leave_type_hrimport_does_not_know_is_sent_as_written_for_the_platform_to_take_or_refuse(
        tmp_path: Path, staffed: Any) -> None:
    """The platform publishes no list of its leave types, so ours (the sandbox's by default) only doubts a name:
    a platform that has the type adds the record, one that does not refuses it. [timeoff] strict_checks holds
    such rows back."""
    added = hrimport(["sandbox", "add-leave-type", "--db", str(staffed.db_path), "Volunteer Leave", "志愿假"])
    assert added.exit_code == 0, added.output
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Volunteer Leave", D(2024, 3, 4), D(2024, 3, 4), "", "1", "MY", "", ""],
        ["000106", "志愿假", D(2024, 3, 5), D(2024, 3, 5), "", "1", "SG", "", ""],
        ["000110", "Garden Leave", D(2024, 3, 6), D(2024, 3, 6), "", "1", "SG", "", ""]])

    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='strict_checks = ["unknown-leave-type"]'))
    assert result.exit_code == 1
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "invalid", ["unknown-leave-type"]), (3, "invalid", ["unknown-leave-type"]),
        (4, "invalid", ["unknown-leave-type"])]
    assert staffed.time_off(99) == []

    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1, result.output
    sent = [json.loads(body) for body in staffed.bodies if b"leave_type" in body]
    # the records are sent by several workers at once: in no set order
    assert sorted((b["customer_system_id"], b["leave_type"], b["lang"]) for b in sent) == [
        ("000101", "Volunteer Leave", "EN"), ("000106", "志愿假", "ZH"), ("000110", "Garden Leave", "EN")]
    rows = by_row(run)
    assert (rows[2].outcome.value, rows[3].outcome.value, rows[4].outcome.value) == ("added", "added", "rejected")
    assert ("Warning: Row 2, column 'Leave Type': 'Volunteer Leave' is not among the leave types hrimport knows "
            "(closest known:") in result.stdout
    assert [p.severity for p in rows[2].problems] == ["warning"]
    assert rows[4].message.startswith("Row 4: the service refused leave type 'Garden Leave': ")
    # LEAVE_IDS' types are 1 to 15: the platform stored both records under the type added to it, 16
    assert stored(staffed) == [("000101", 16, "2024-03-04", "2024-03-04", 1), ("000106", 16, "2024-03-05", "2024-03-05", 1)]

    # the ledger holds them under the names sent: a second run sends neither again
    _, run = run_import(tmp_path, staffed, source)
    assert [(o.row, o.outcome.value) for o in run.rows] == [(2, "already_imported"), (3, "already_imported"),
                                                            (4, "rejected")]


def test_a_corrected_file_imported_again_names_each_correction_the_platform_will_not_get(
        tmp_path: Path, staffed: Any) -> None:
    """March's file is imported, then corrected (HR's 4.5 days were 5, a reason reworded, a pending leave
    approved) and imported again. The ledger knows each leave by person, leave type and dates: nothing is sent
    again, and the platform's interface cannot change a record. So each corrected row says what its record still
    holds and what the file now gives, instead of a bare "already imported"; an untouched row says nothing."""
    march = [["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 7), "", "4.5", "MY", "Family trip", "Approved"],
             ["000104", "Annual Leave", D(2025, 3, 10), D(2025, 3, 11), "", "", "CN", "", "Pending"],
             ["000105", "Annual Leave", D(2025, 3, 12), D(2025, 3, 12), "", "1", "CN", "", "Approved"]]
    first, _ = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03.xlsx", march))
    assert first.exit_code == 0, first.output
    corrected = [["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 7), "", "5", "MY", "Family trip (Ipoh)",
                  "Approved"],
                 ["000104", "Annual Leave", D(2025, 3, 10), D(2025, 3, 11), "", "", "CN", "", "Approved"],
                 march[2]]
    staffed.clear_requests()

    result, run = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03_v2.xlsx", corrected))

    assert result.exit_code == 0, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "already_imported", ["changed-since-imported"]), (3, "already_imported", ["changed-since-imported"]),
        (4, "already_imported", [])]
    told = [p.message.split(" was sent with other values than the file now gives: ")[1].split(". The ")[0]
            for o in run.rows[:2] for p in o.problems]
    assert told == ["total_days ('Days') '4.5' → '5'; notes ('Reason') 'Family trip' → 'Family trip (Ipoh)'",
                    "decision ('Status') (empty) → 'Approve'"]
    assert run.rows[0].problems[0].message.startswith("Row 2: this leave, imported on ")
    record = next(r["id"] for r in staffed.time_off(99) if r["customer_system_id"] == "000101")
    assert run.rows[0].problems[0].message.endswith(
        f" as record {record} from leave_2025-03.xlsx row 2, was sent with other values than the file now gives: "
        "total_days ('Days') '4.5' → '5'; notes ('Reason') 'Family trip' → 'Family trip (Ipoh)'. The platform's "
        "interface adds time off but does not change it, so nothing is sent: if the file is right, change the "
        "record on the platform.")
    assert [r["path"] for r in staffed.requests() if "apply" in r["path"]] == []
    assert [(sid, days) for sid, _, _, _, days in stored(staffed)] == [("000101", 4.5), ("000104", 2), ("000105", 1)]


def test_a_leave_whose_dates_or_type_were_corrected_names_the_record_imported_before(tmp_path: Path,
                                                                                   staffed: Any) -> None:
    """March's file is imported; then HR moves one leave by a day and changes another's type, and imports the
    corrected file. The ledger knows a record by person, type and dates, so each corrected row is a new record to
    send; the platform's interface cannot change or remove the old one. Each such row, in the dry run and in the
    import, names the record imported before that it overlaps, so that HR changes it on the platform, where a
    bare "overlaps" left them to guess which; the platform refuses both as overlapping, and holds the old ones.
    A leave the file still lists as imported, and a new one that overlaps nothing, say nothing of the kind."""
    march = [["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 5), "", "3", "MY", "", "Approved"],
             ["000104", "Annual Leave", D(2025, 3, 10), D(2025, 3, 10), "", "1", "CN", "", "Approved"],
             ["000105", "Annual Leave", D(2025, 3, 12), D(2025, 3, 12), "", "1", "CN", "", "Approved"]]
    first, _ = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03.xlsx", march))
    assert first.exit_code == 0, first.output
    records = {r["customer_system_id"]: r["id"] for r in staffed.time_off(99)}
    corrected = write_xlsx(tmp_path / "leave_2025-03_v2.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 4), D(2025, 3, 6), "", "3", "MY", "", "Approved"],
        ["000104", "Sick Leave", D(2025, 3, 10), D(2025, 3, 10), "", "1", "CN", "", "Approved"],
        march[2],
        ["000106", "Annual Leave", D(2025, 3, 4), D(2025, 3, 4), "", "1", "SG", "", "Approved"]])

    dry, planned = run_import(tmp_path, staffed, corrected, None, "--dry-run")
    result, run = run_import(tmp_path, staffed, corrected)

    assert dry.exit_code == 0, dry.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in planned.rows] == [
        (2, "valid", ["overlaps-imported"]), (3, "valid", ["overlaps-imported"]), (4, "already_imported", []),
        (5, "valid", [])]
    assert result.exit_code == 1
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "overlaps_existing", ["overlaps-existing", "overlaps-imported"]),
        (3, "overlaps_existing", ["overlaps-existing", "overlaps-imported"]),
        (4, "already_imported", []), (5, "added", [])]
    told = {o.row: next(p.message for p in o.problems if p.code == "overlaps-imported") for o in run.rows[:2]}
    assert told[2] == (
        "Row 2: Annual Leave 2025-03-04..2025-03-06 overlaps time off imported before for '000101': Annual Leave "
        f"2025-03-03..2025-03-05 (3 day(s)), imported on {ledger_time(tmp_path, '000101')} as record "
        f"{records['000101']} from leave_2025-03.xlsx row 2. If this row corrects that leave, change or cancel "
        "that record on the platform: its interface adds time off but cannot change or remove a record, and a "
        "platform that checks takes no leave overlapping another of the same person.")
    assert told[3].startswith("Row 3: Sick Leave 2025-03-10..2025-03-10 overlaps time off imported before for "
                              "'000104': Annual Leave 2025-03-10..2025-03-10 (1 day(s)), imported on ")
    assert planned.rows[0].problems == tuple(p for p in run.rows[0].problems if p.code == "overlaps-imported")
    assert run.rows[0].message.endswith("; not added.")
    assert "overlaps-imported" in (folder_of(result) / "report.html").read_text(encoding="utf-8")
    assert [(sid, start, end) for sid, _, start, end, _ in stored(staffed)] == [
        ("000101", "2025-03-03", "2025-03-05"), ("000104", "2025-03-10", "2025-03-10"),
        ("000105", "2025-03-12", "2025-03-12"), ("000106", "2025-03-04", "2025-03-04")]


def test_strict_checks_hold_back_a_row_overlapping_a_leave_imported_before(tmp_path: Path, staffed: Any) -> None:
    """With overlaps-imported in [timeoff] strict_checks, a corrected leave is not sent until HR has changed the
    old record on the platform: the row is invalid, in to_fix, and says so; the other rows go as usual."""
    run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 5), "", "3", "MY", "", "Approved"]]))
    staffed.clear_requests()
    config = write_config(tmp_path, extra='strict_checks = ["overlaps-imported"]')

    result, run = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03_v2.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 4), D(2025, 3, 6), "", "3", "MY", "", "Approved"],
        ["000106", "Annual Leave", D(2025, 3, 4), D(2025, 3, 4), "", "1", "SG", "", "Approved"]]), config)

    assert result.exit_code == 1, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "invalid", ["overlaps-imported"]), (3, "added", [])]
    assert run.rows[0].message.endswith(
        "from leave_2025-03.xlsx row 2. Not sent ([timeoff] strict_checks lists overlaps-imported): if this row "
        "corrects that leave, change or cancel that record on the platform first, then take overlaps-imported out "
        "of strict_checks to send it; else correct the dates.")
    assert [json.loads(body)["customer_system_id"] for body in staffed.bodies if b"leave_type" in body] == ["000106"]
    assert (folder_of(result) / "to_fix.xlsx").is_file()


def test_a_state_folder_left_behind_stops_the_import_before_any_leave_is_booked_twice(tmp_path: Path,
                                                                                     staffed: Any) -> None:
    """The job moves to a new machine and `.hrimport/`, a dot folder, is left behind: the ledger is gone, but the
    report folder shows that earlier imports sent time off. Sending the leave history again would book each leave
    twice on a platform that does not refuse overlaps, so the import (and its dry run) stops in one line, sends
    nothing, and says what to do. With the folder back, the rows are already imported. A person who knows the
    time off is not on the platform passes --new-ledger once: the rows are sent (here the sandbox refuses them as
    overlapping), the note says so, and the next month is not stopped again."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 5), "", "3", "MY", "", "Approved"],
        ["000105", "Annual Leave", D(2025, 3, 12), D(2025, 3, 12), "", "1", "CN", "", "Approved"]])
    first, _ = run_import(tmp_path, staffed, source)
    assert first.exit_code == 0, first.output
    state = tmp_path / ".hrimport"
    shutil.move(state, tmp_path / "kept")
    staffed.clear_requests()

    for extra in ([], ["--dry-run"]):
        stopped = hrimport(["timeoff", "import", str(write_config(tmp_path)), str(source), "--report-dir",
                            str(tmp_path / "reports"), *extra], staffed)
        assert stopped.exit_code == 2, stopped.output
        (line,) = stopped.stderr.splitlines()[-1:]
        last = min(p for p in (tmp_path / "reports" / "leave").iterdir() if p.is_dir())
        assert line == (
            f"Error: the time-off ledger {state / 'timeoff_ledger.db'} knows no time off sent to this service for "
            f"customer 99, but 1 earlier import(s) in {tmp_path / 'reports' / 'leave'} sent some (2 record(s) "
            f"added; the last: {last}): the state folder was lost or moved, and sending this file could book leave "
            f"twice. Bring the folder back to {state} (a folder whose name starts with a dot is easily left behind "
            "when copying), or rebuild the ledger from those reports with hrimport timeoff rebuild-ledger, or, if "
            "that time off is not on the platform, run again with --new-ledger")
    assert [r for r in staffed.requests() if "apply" in r["path"]] == []

    shutil.rmtree(state)
    shutil.move(tmp_path / "kept", state)
    back, run = run_import(tmp_path, staffed, source)
    assert back.exit_code == 0, back.output
    assert [o.outcome.value for o in run.rows] == ["already_imported", "already_imported"]

    shutil.rmtree(state)
    anew, run = run_import(tmp_path, staffed, source, None, "--new-ledger")
    assert anew.exit_code == 1, anew.output
    assert [o.outcome.value for o in run.rows] == ["overlaps_existing", "overlaps_existing"]
    assert "Note: The time-off ledger is started anew (--new-ledger): it knows nothing of the time off earlier " \
           "imports sent" in anew.stdout
    assert len(staffed.time_off(99)) == 2  # the sandbox refuses an overlap: nothing booked twice here
    later, _ = run_import(tmp_path, staffed, source)
    assert later.exit_code == 1 and "started anew" not in later.stdout


def test_a_lost_ledger_is_rebuilt_from_the_reports_of_the_imports_that_sent_the_time_off(tmp_path: Path,
                                                                                          staffed: Any) -> None:
    """The state folder is gone for good, but the reports are there: `hrimport timeoff rebuild-ledger` reads
    back every record they list as added or already imported (a Chinese leave type under its English key, as the
    import keys it) and the next import of the cumulative history sends only the new leave. A report whose run
    was killed before it was written is named, not read."""
    march = [["000101", "Annual Leave", D(2025, 3, 3), D(2025, 3, 5), "", "3", "MY", "", "Approved"],
             ["000105", "年假", D(2025, 3, 12), D(2025, 3, 12), "", "1", "CN", "", "Approved"]]
    run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-03.xlsx", march))
    april = [*march, ["000106", "Annual Leave", D(2025, 4, 7), D(2025, 4, 7), "", "1", "SG", "", "Approved"]]
    second, _ = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-04.xlsx", april))
    assert second.exit_code == 0, second.output
    # a run killed as it sent: its journal, the row it had an answer for, and no report
    killed = tmp_path / "reports" / "leave" / "2025-04-30_120000"
    killed.mkdir()
    journal = (folder_of(second) / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()
    (killed / "outcomes.jsonl").write_text(json.dumps({
        "record": "journal", "kind": "timeoff", "job": "leave", "source": "leave_2025-04.xlsx",
        "started_at": "2025-04-30T12:00:00+00:00"}) + "\n" + journal[-1] + "\n", encoding="utf-8")
    shutil.rmtree(tmp_path / ".hrimport")
    staffed.clear_requests()

    # rebuilding sends nothing: it needs no token, the service's key comes from its URL alone
    rebuilt = hrimport(["timeoff", "rebuild-ledger", str(write_config(tmp_path)), "--report-dir",
                        str(tmp_path / "reports")], staffed, token="")

    assert rebuilt.exit_code == 0, rebuilt.output
    assert rebuilt.stdout == (f"Rebuilt the time-off ledger {tmp_path / '.hrimport' / 'timeoff_ledger.db'} from 2 "
                              f"report(s) in {tmp_path / 'reports' / 'leave'}: 3 record(s) added, each taken as on "
                              "the platform.\n")
    assert rebuilt.stderr.startswith(f"Not read (its rows are not taken as on the platform): {killed}: ")
    with open_ledger(tmp_path / ".hrimport") as ledger:
        assert sorted((e.key.external_id, e.key.leave_type, e.key.start_date, e.source_file, e.stored)
                      for e in ledger.entries()) == [
            ("000101", "Annual Leave", "2025-03-03", "leave_2025-03.xlsx", True),
            ("000105", "Annual Leave", "2025-03-12", "leave_2025-03.xlsx", True),
            ("000106", "Annual Leave", "2025-04-07", "leave_2025-04.xlsx", True)]
    may = [*april, ["000110", "Sick Leave", D(2025, 5, 6), D(2025, 5, 6), "", "1", "SG", "", "Approved"]]
    result, run = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave_2025-05.xlsx", may))
    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["already_imported"] * 3 + ["added"]
    assert [json.loads(body)["customer_system_id"] for body in staffed.bodies if b"leave_type" in body] == ["000110"]


def ledger_time(tmp_path: Path, external_id: str) -> str:
    with open_ledger(tmp_path / ".hrimport") as ledger:
        return next(e.accepted_at for e in ledger.entries() if e.key.external_id == external_id)


def folder_of(result: Result) -> Path:
    return Path(next(line for line in result.stdout.splitlines() if line.startswith("Report folder: "))
                .removeprefix("Report folder: "))


def test_a_record_the_platform_took_is_not_told_again_next_month_that_it_may_not_take_its_region_code(
        tmp_path: Path, staffed: Any) -> None:
    """A leave history lists last month's records again every month. Once the platform has taken a record with a
    region's code, its row says so (already imported) without the region-code doubt, which the platform
    answered; a doubt about the data itself (a reason that starts like a formula) is still told."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "US-CA", "", "Approved"],
        ["000104", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "US-CA", "@home office", "Approved"],
        ["000105", "Annual Leave", D(2025, 6, 16), D(2025, 6, 20), "", "", "DE", "", "Approved"]])
    _, first = run_import(tmp_path, staffed, source)
    assert [(o.row, o.outcome.value, o.problem_codes) for o in first.rows] == [
        (2, "added", ["region-code"]), (3, "added", ["formula-like-text", "region-code"]), (4, "added", [])]

    again, second = run_import(tmp_path, staffed, source)

    assert again.exit_code == 0
    assert [(o.row, o.outcome.value, o.problem_codes) for o in second.rows] == [
        (2, "already_imported", []), (3, "already_imported", ["formula-like-text"]), (4, "already_imported", [])]
    assert "region-code" not in again.output


def test_time_off_in_a_region_is_sent_with_its_iso_3166_2_code_and_counts_the_regions_holidays(
        tmp_path: Path, staffed: Any) -> None:
    """A country cell may be a region's ISO 3166-2 code (api-notes: such codes "appear in the option set"): it is
    sent as ISO writes it, and the service counts the region's public holidays (California's Cesar Chavez Day,
    Monday 31 March 2025; Bavaria's Corpus Christi, Thursday 19 June 2025), where the country's code would not.
    The spec's tables say "ISO Alpha-2", so each such row carries a region-code warning. A code written so that
    ISO does not list is held back in one line, and sends nothing."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "US-CA", "", "Approved"],  # row 2
        ["000104", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "us-ca", "", "Approved"],
        ["000105", "Annual Leave", D(2025, 6, 16), D(2025, 6, 20), "", "", "DE-BY", "", "Approved"],
        ["000106", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "US-XX", "", "Approved"]])
    country_alone = {"US": ("2025-03-31", "2025-04-04"), "DE": ("2025-06-16", "2025-06-20")}
    for country, (first, last) in country_alone.items():  # the country's holidays alone: 5 working days each
        answer = staffed.http.post("/api/calculate-total-days", headers=staffed.auth(TOKEN), json={
            "country": country, "start_date": first, "end_date": last})
        assert answer.json() == {"totaldays": 5}
    staffed.clear_requests()

    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1, result.output
    rows = by_row(run)
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "added", ["region-code"]), (3, "added", ["region-code"]), (4, "added", ["region-code"]),
        (5, "invalid", ["unknown-country"])]
    asked = sorted(json.loads(body)["country"] for body in staffed.bodies if b"is_half_start_date" in body)
    assert asked == ["DE-BY", "US-CA"]  # one calculation per region and period
    sent = [json.loads(body) for body in staffed.bodies if b"leave_type" in body]
    assert sorted((b["customer_system_id"], b["country"], b["start_date"], b["total_days"]) for b in sent) == [
        ("000101", "US-CA", "2025-03-31", "4"), ("000104", "US-CA", "2025-03-31", "4"),
        ("000105", "DE-BY", "2025-06-16", "4")]  # nothing for 000106
    assert sorted((r["customer_system_id"], r["country"], r["total_days"]) for r in staffed.time_off(99)) == [
        ("000101", "US-CA", 4), ("000104", "US-CA", 4), ("000105", "DE-BY", 4)]

    (warning,) = rows[2].problems
    assert (warning.severity, warning.column, warning.field, warning.value) == ("warning", "Country", "country",
                                                                                "US-CA")
    assert warning.message == (
        "Row 2, column 'Country': US-CA (California, United States) is a region's code (ISO 3166-2), where the "
        "platform's interface names a two-letter country code; kept as written, so that the region's public "
        "holidays count (the platform's documents list such codes too): if the platform refuses it, write US.")
    assert rows[4].problems[0].message.startswith("Row 4, column 'Country': DE-BY (Bayern, Germany) is a region's")
    assert rows[5].message == (
        "Row 5, column 'Country': 'US-XX' is not a region of United States (US) that ISO 3166-2 lists; write the "
        "two-letter country code US, or the region's code as ISO 3166-2 writes it, such as US-AK for Alaska.")
    assert f"{rows[5].message}\n" in result.stdout
    # the report shows the case changed as it shows a country code's ("my" -> "MY")
    (region,) = [c for c in run.info.values_read if c.field == "country"]
    rule = "a region's code as ISO 3166-2 writes it, in capitals"
    assert (region.kind, region.rule, region.rows) == ("region-code", rule, 1)
    assert [(e.row, e.read, e.sent) for e in region.examples] == [(3, "us-ca", "US-CA")]


def test_a_region_code_is_held_back_when_the_config_makes_the_check_strict(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "us-ca", "", ""],
        ["000104", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "US", "", ""]])
    staffed.clear_requests()

    result, run = run_import(tmp_path, staffed, source, write_config(tmp_path, extra='strict_checks = ["region-code"]'))

    assert result.exit_code == 1, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [(2, "invalid", ["region-code"]),
                                                                           (3, "added", [])]
    assert run.rows[0].message == (
        "Row 2, column 'Country': US-CA (California, United States) is a region's code (ISO 3166-2), where the "
        "platform's interface names a two-letter country code; not sent ([timeoff] strict_checks lists "
        "region-code): write US, or take region-code out of strict_checks to send it.")
    assert [json.loads(body)["country"] for body in staffed.bodies if b"leave_type" in body] == ["US"]
    assert [r["total_days"] for r in staffed.time_off(99)] == [5]  # the US's holidays alone


def test_a_regions_name_is_not_read_as_its_code(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2025, 3, 31), D(2025, 4, 4), "", "", "California", "", ""]])

    result = hrimport(["timeoff", "validate", str(write_config(tmp_path)), str(source)])

    assert result.exit_code == 1
    assert result.stdout.startswith(
        "Row 2, column 'Country': 'California' is not a country we recognise (use an ISO code such as SG, MY or "
        "CN, or a region's ISO 3166-2 code such as US-CA, or the country's name in English or another common "
        "language, spelt in full).\n")


def test_a_time_of_day_in_a_date_column_is_held_back_in_one_line_never_sent_as_a_date(
        tmp_path: Path, staffed: Any) -> None:
    """Time off is read as staff files are: a cell of a time format (hh:mm) shows a time of day whatever day its
    number also holds (1.5 shows 12:00, 45355.5625 shows 13:30), so a start or end date holding one is no date;
    it was read as 1900-01-01 12:00 or 2024-03-04 13:30, the first sent as 1900-01-01."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", "", "MY", "", ""],
        ["000104", "Annual Leave", 1.5, D(2024, 3, 8), "", "", "CN", "", ""],
        ["000106", "Annual Leave", D(2024, 3, 4), 45355.5625, "", "", "SG", "", ""],
    ])
    from openpyxl import load_workbook

    book = load_workbook(source)
    book.active["C3"].number_format = book.active["D4"].number_format = "hh:mm"
    book.save(source)
    result, run = run_import(tmp_path, staffed, source)
    assert result.exit_code == 1
    assert {o.row: [(p.code, p.column, p.value) for p in o.problems] for o in run.rows if o.problems} == {
        3: [("not-a-date", "From", "12:00:00")], 4: [("not-a-date", "To", "13:30:00")]}
    assert [line for line in result.output.splitlines() if line.startswith("Row ")] == [
        ("Row 3, column 'From': '12:00:00' is not a real date (expected a real calendar date, such as 2020-01-31, "
         "or an Excel date cell)."),
        ("Row 4, column 'To': '13:30:00' is not a real date (expected a real calendar date, such as 2020-01-31, "
         "or an Excel date cell).")]
    assert stored(staffed) == [("000101", 1, "2024-03-04", "2024-03-08", 5)]


def test_days_with_a_decimal_comma_from_a_german_excel_csv_are_sent_as_decimals_and_shown(
        tmp_path: Path, staffed: Any) -> None:
    """A German or French Excel saves a CSV ("CSV UTF-8") with ';' between fields and a comma for decimals: half a day is
    "1,5". A comma before one or two digits has no other reading (a thousands group has three digits), so it is
    sent as 1.5, listed in "How values were read"; "1,500" may be 1.5 or 1500, so it is held back saying so."""
    text = ("Employee ID;Leave Type;From;To;Half Day;Days;Country;Reason;Status\r\n"
            "000101;Annual Leave;04.03.2024;08.03.2024;;5,0;MY;Urlaub;Approved\r\n"
            "000104;Annual Leave;04.03.2024;05.03.2024;;1,5;CN;Arzttermin;Approved\r\n"
            "000106;Annual Leave;04.03.2024;04.03.2024;;1,500;SG;Überstunden;Approved\r\n")
    source = tmp_path / "abwesenheiten.csv"
    source.write_bytes(text.encode("utf-8-sig"))
    staffed.clear_requests()

    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "added", []), (3, "added", ["total-days-differs"]), (4, "invalid", ["not-a-number"])]
    sent = [json.loads(body) for body in staffed.bodies if b"leave_type" in body]
    assert sorted((b["customer_system_id"], b["total_days"]) for b in sent) == [("000101", "5"), ("000104", "1.5")]
    assert by_row(run)[4].message == (
        "Row 4, column 'Days': '1,500' is not a number: its comma may be a decimal comma (1.5) or separate "
        "thousands (1500); write it with digits and a dot for decimals.")
    (comma,) = [c for c in run.info.values_read if c.kind == "decimal-comma"]
    assert (comma.field, comma.column, comma.rows) == ("total_days", "Days", 2)
    assert comma.rule == "a comma before one or two digits is a decimal comma (a thousands group has three)"
    assert [(e.row, e.read, e.sent) for e in comma.examples] == [(2, "5,0", "5"), (3, "1,5", "1.5")]


def test_half_day_cells_of_a_german_export_say_ja_and_nein(tmp_path: Path, staffed: Any) -> None:
    """Personio writes its half-day columns as ja/nein, the yes/no words the staff import reads
    (schemas/value_words.toml): a leave starting at noon is counted so, where 'ja' was not-a-half-day-marker and
    the row, without its own figure, was held back."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000106", "Annual Leave", D(2024, 9, 9), D(2024, 9, 13), "ja", "", "SG", "", "Approved"],  # from noon: 4.5
        ["000110", "Annual Leave", D(2024, 9, 9), D(2024, 9, 13), "nein", "", "SG", "", "Approved"],  # whole: 5
        ["000101", "Annual Leave", D(2024, 9, 10), D(2024, 9, 10), "Ja", "", "MY", "", "Approved"],  # one day: 0.5
    ])
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('half_day = "Half Day"', 'half_start = "Half Day"'), encoding="utf-8")
    result, run = run_import(tmp_path, staffed, source, config)
    assert result.exit_code == 0, result.output
    assert {o.row: (o.outcome.value, o.details["half_days"]) for o in run.rows} == {
        2: ("added", "start"), 3: ("added", ""), 4: ("added", "half day")}
    assert stored(staffed) == [("000101", 1, "2024-09-10", "2024-09-10", 0.5),
                               ("000106", 1, "2024-09-09", "2024-09-13", 4.5),
                               ("000110", 1, "2024-09-09", "2024-09-13", 5)]


def test_a_figure_with_a_decimal_comma_is_quoted_as_the_file_writes_it(tmp_path: Path, staffed: Any) -> None:
    """A German export writes four and a half days '4,5': it is sent as 4.5 (the report's "How values were read"
    says so), and every message about the figure quotes the cell as HR wrote it, never a 4.5 nobody wrote."""
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 9), "", "4,5", "SG", "", ""],  # the service counts 4
        ["000101", "Annual Leave", D(2024, 3, 11), D(2024, 3, 13), "yes", "2,5", "MY", "", ""],  # which end?
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    first, second = run.rows
    assert [(p.code, p.value, p.message) for p in first.problems] == [(
        "total-days-differs", "4,5",
        ("Row 2: total_days is 4,5 in the file but the service counts 4 for 2024-08-05..2024-08-09 in SG; "
         "the file's 4,5 is kept."))]
    assert [p.message for p in second.problems if "total_days" in p.message] == [
        ("Row 3, column 'Half Day': 'yes' marks a half day on a record of several days without saying which end: "
         "write AM (ends at noon) or PM (starts at noon), or use the half_start/half_end columns; the record carries "
         "no half days, so the file's total_days 2,5 stands, without the service's check (the service counts a "
         "period's days from its half days).")]
    assert "4.5" not in "".join(p.message for o in run.rows for p in o.problems)
    assert stored(staffed) == sorted([("000106", 1, "2024-08-05", "2024-08-09", 4.5),
                                      ("000101", 1, "2024-03-11", "2024-03-13", 2.5)])
