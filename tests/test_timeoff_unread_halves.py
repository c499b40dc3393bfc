"""A half-day cell hrimport cannot read ('maybe'; a bare 'yes' on a leave of several days) on a row that gives its
own number of days. The time-off record carries no half days (spec, endpoint 5): they only ask the calculation
for its count. So under ``[timeoff] total_days = "file"`` (the default) the row is sent with its own figure,
unchecked, and carries a warning of the half-day code (principle 2); without a figure, or under ``"service"``
and ``"strict"``, the count needs the half days and the row is held back, as before.

Real imports into the sandbox over HTTP, from workbooks written by openpyxl, in the style of
``tests/test_timeoff_import.py``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_timeoff_import import add_staff, hrimport, run_import, stored, write_config, write_xlsx

pytestmark = pytest.mark.usefixtures("instant_retries")

D = dt.date
CALCULATE, APPLY = "/api/calculate-total-days", "/api/apply-ee-time-off"

# Monday 5 to Wednesday 7 August: the service counts 3 days, or 2.5 with a half day it cannot be told of
MAYBE: list[object] = ["000106", "Annual Leave", D(2024, 8, 5), D(2024, 8, 7), "maybe", 2.5, "SG", "", ""]
# a bare "yes" on a leave of three days: which end is the half day is not said
YES: list[object] = ["000110", "Annual Leave", D(2024, 3, 4), D(2024, 3, 6), "yes", 2.5, "SG", "", ""]

MAYBE_SENT = (
    "Row 2, column 'Half Day': 'maybe' is not a half-day value (use yes/no, AM/PM, First Half/Second Half, "
    "上午/下午); the record carries no half days, so the file's total_days 2.5 stands, without the service's "
    "check (the service counts a period's days from its half days).")
YES_SENT = (
    "Row 3, column 'Half Day': 'yes' marks a half day on a record of several days without saying which end: write "
    "AM (ends at noon) or PM (starts at noon), or use the half_start/half_end columns; the record carries no half "
    "days, so the file's total_days 2.5 stands, without the service's check (the service counts a period's days "
    "from its half days).")
NOT_READ = "'maybe' is not a half-day value (use yes/no, AM/PM, First Half/Second Half, 上午/下午)"


@pytest.fixture
def staffed(sandbox: Any) -> Any:
    """The sandbox with staff 000106 and 000110 (SG) of customer 99, its requests cleared."""
    add_staff(sandbox, [("000106", "SG"), ("000110", "SG")])
    sandbox.clear_requests()
    return sandbox


def paths(sandbox: Any, path: str) -> list[dict[str, Any]]:
    return [r for r in sandbox.requests() if r["path"].endswith(path)]


def posted(sandbox: Any, holding: bytes) -> list[dict[str, Any]]:
    """The bodies of the requests the sandbox received holding ``holding``, as they were sent."""
    return [json.loads(body) for body in sandbox.bodies if holding in body]


def report_folder(stdout: str) -> Path:
    return Path(stdout.split("Report folder: ")[1].splitlines()[0])


def test_a_row_giving_its_days_is_sent_with_them_unchecked_when_its_half_day_cell_cannot_be_read(
        tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [MAYBE, YES])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output  # sent and added: warnings only
    maybe, yes = run.rows
    assert (maybe.outcome.value, yes.outcome.value) == ("added", "added")
    assert [(p.code, p.severity, p.column, p.field, p.value) for p in maybe.problems] == [
        ("not-a-half-day-marker", "warning", "Half Day", "half_day", "maybe")]
    assert [(p.code, p.severity, p.value) for p in yes.problems] == [("ambiguous-half-day", "warning", "yes")]
    assert (maybe.problems[0].message, yes.problems[0].message) == (MAYBE_SENT, YES_SENT)
    # the report claims no half days it does not know, and shows the figure sent
    assert [(o.details["half_days"], o.details["total_days"]) for o in run.rows] == [("not read", "2.5")] * 2
    assert stored(staffed) == [("000106", 1, "2024-08-05", "2024-08-07", 2.5),
                               ("000110", 1, "2024-03-04", "2024-03-06", 2.5)]
    assert sorted(body["total_days"] for body in posted(staffed, b'"leave_type"')) == ["2.5", "2.5"]
    assert paths(staffed, CALCULATE) == []  # its count follows half days that are not known: not asked
    assert ("Note: 2 row(s) keep the file's figure unchecked, a half-day cell not read "
            "(not-a-half-day-marker, ambiguous-half-day).\n") in result.stdout
    summary = json.loads((report_folder(result.stdout) / "summary.json").read_text(encoding="utf-8"))
    assert summary["warnings"] == {"not-a-half-day-marker": 1, "ambiguous-half-day": 1}

    # the ledger knows them: the same file again adds nothing
    staffed.clear_requests()
    again, rerun = run_import(tmp_path, staffed, source)
    assert again.exit_code == 0, again.output
    assert [o.outcome.value for o in rerun.rows] == ["already_imported", "already_imported"]
    assert [o.details["total_days"] for o in rerun.rows] == ["2.5", "2.5"]
    # not sent this time: the cell is still told, in words true of a row not sent (the figure stands)
    assert [[p.message for p in o.problems] for o in rerun.rows] == [[MAYBE_SENT], [YES_SENT]]
    assert paths(staffed, APPLY) == [] and paths(staffed, CALCULATE) == []
    assert len(stored(staffed)) == 2


def test_the_calculation_is_still_asked_for_the_rows_whose_half_days_are_read(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [
        MAYBE,
        ["000110", "Annual Leave", D(2024, 3, 4), D(2024, 3, 6), "PM", "", "SG", "", ""],  # counted: 2.5
    ])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["added", "added"]
    assert run.rows[1].details["half_days"] == "start"
    assert [body["start_date"] for body in posted(staffed, b'"is_half_start_date"')] == ["2024-03-04"]
    assert stored(staffed) == [("000106", 1, "2024-08-05", "2024-08-07", 2.5),
                               ("000110", 1, "2024-03-04", "2024-03-06", 2.5)]
    assert ("Note: 1 distinct period(s) asked of the calculation endpoint. total_days filled from the calculation "
            "for 1 row(s) without a figure. 1 row(s) keep the file's figure unchecked") in result.stdout


#: Why a row whose count needs the half days is not sent, by policy: without a figure, and with one
WHY_HELD_BACK = [
    ("file", "", ("not sent: the service counts the days from the half days, and the row gives no number of days "
                  "of its own (write them in the 'Days' column to send it with them)")),
    ("service", 2.5, 'not sent (total_days = "service": the service\'s count, which is sent, follows the half days)'),
    ("strict", 2.5, ('not sent (total_days = "strict": the file\'s figure is checked against the service\'s count, '
                     "which follows the half days)")),
]


@pytest.mark.parametrize(("policy", "days", "why"), WHY_HELD_BACK)
def test_a_row_whose_count_needs_the_half_days_is_held_back_saying_why(tmp_path: Path, staffed: Any, policy: str,
                                                                       days: object, why: str) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [[*MAYBE[:5], days, *MAYBE[6:]]])
    config = write_config(tmp_path, extra=f'total_days = "{policy}"')
    result, run = run_import(tmp_path, staffed, source, config)

    assert result.exit_code == 1
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes, row.problems[0].severity) == (
        "invalid", ["not-a-half-day-marker"], "error")
    assert row.message == f"Row 2, column 'Half Day': {NOT_READ}; {why}."
    assert row.details["half_days"] == "not read"  # not "" (no half days): the cell says something else
    assert staffed.time_off(99) == [] and paths(staffed, CALCULATE) == []


def test_a_dry_run_and_validate_show_the_row_sent_with_its_figure(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [MAYBE])
    result, run = run_import(tmp_path, staffed, source, None, "--dry-run")
    assert result.exit_code == 0, result.output
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("valid", ["not-a-half-day-marker"])
    assert row.message == "Valid; would be sent with total_days 2.5 (dry run)."
    assert row.details["half_days"] == "not read"
    assert staffed.requests() == []  # neither asked nor sent

    checked = hrimport(["timeoff", "validate", str(write_config(tmp_path)), str(source)], staffed)
    assert checked.exit_code == 0, checked.output
    assert f"Warning: {MAYBE_SENT}" in checked.stdout
    assert "1 of 1 rows checked (1 with warnings)." in checked.stdout


def test_the_same_leave_listed_twice_with_the_same_unread_cell_is_sent_once(tmp_path: Path, staffed: Any) -> None:
    source = write_xlsx(tmp_path / "leave.xlsx", [MAYBE, MAYBE])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 0, result.output
    first, second = run.rows
    assert (first.outcome.value, first.problem_codes) == ("added", ["not-a-half-day-marker"])
    assert second.outcome.value == "added"
    assert sorted(second.problem_codes) == ["duplicate-row", "not-a-half-day-marker"]
    assert stored(staffed) == [("000106", 1, "2024-08-05", "2024-08-07", 2.5)]


@pytest.mark.parametrize("other", ["perhaps", ""])
def test_rows_of_one_leave_whose_half_day_cells_differ_are_all_held_back(tmp_path: Path, staffed: Any,
                                                                        other: str) -> None:
    # "maybe" and "perhaps" may mean different days, and "" is a full day: which row is right is not known
    source = write_xlsx(tmp_path / "leave.xlsx", [MAYBE, [*MAYBE[:4], other, *MAYBE[5:]]])
    result, run = run_import(tmp_path, staffed, source)

    assert result.exit_code == 1
    assert [(o.outcome.value, o.problem_codes[0]) for o in run.rows] == [("invalid", "overlaps-in-file")] * 2
    assert run.rows[0].problem_codes == ["overlaps-in-file", "not-a-half-day-marker"]
    assert staffed.time_off(99) == []


def test_strict_checks_hold_back_a_row_whose_half_day_cell_cannot_be_read_even_with_its_own_days(
        tmp_path: Path, staffed: Any) -> None:
    """A company that wants every half day read lists the codes in [timeoff] strict_checks: the rows are held back,
    each saying what to write and how to send it as it is, and nothing is posted."""
    config = write_config(tmp_path, extra='strict_checks = ["not-a-half-day-marker", "ambiguous-half-day"]')
    result, run = run_import(tmp_path, staffed, write_xlsx(tmp_path / "leave.xlsx", [MAYBE, YES]), config)

    assert result.exit_code == 1, result.output
    assert [(o.outcome.value, o.problem_codes, [p.severity for p in o.problems]) for o in run.rows] == [
        ("invalid", ["not-a-half-day-marker"], ["error"]), ("invalid", ["ambiguous-half-day"], ["error"])]
    assert run.rows[0].message == (
        f"Row 2, column 'Half Day': {NOT_READ}; not sent ([timeoff] strict_checks lists not-a-half-day-marker): "
        "write the half day as one of the values above, or take not-a-half-day-marker out of strict_checks to send "
        "the row with the file's total_days 2.5.")
    assert paths(staffed, APPLY) == []
