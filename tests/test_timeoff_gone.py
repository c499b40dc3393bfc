"""Leave imported before that an export no longer lists (cancelled, or moved, in the HR system) is told.

The real CLI in-process, real xlsx files written by openpyxl, the real sandbox over HTTP (``sandbox``), and a real
ledger in the config's state folder: month 1 imports Ana's and Bo's leave, month 2's export drops one of Ana's,
and the report, summary.json and the note name that record, so HR cancels it on the platform.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from openpyxl import load_workbook

from hrimport.outcomes import RunResult
from tests.test_timeoff_import import HEADER, add_staff, folder_of, hrimport, run_import, write_config, write_xlsx

D = dt.date
NAMED = [*HEADER, "Employee Name"]
pytestmark = pytest.mark.usefixtures("instant_retries")

# Ana is 000101 (Malaysia), Bo 000106 (Singapore), in the sandbox's staff (``staffed``)
ANA_JAN = ["000101", "Annual Leave", D(2025, 1, 6), D(2025, 1, 7), "", "2", "MY", "", "Approved", "Ana Lim"]
ANA_SICK = ["000101", "Sick Leave", D(2025, 1, 20), D(2025, 1, 20), "", "1", "MY", "fever", "Approved", "Ana Lim"]
ANA_LATE_JAN = ["000101", "Annual Leave", D(2025, 1, 27), D(2025, 1, 28), "", "2", "MY", "", "Approved", "Ana Lim"]
BO_JAN = ["000106", "Annual Leave", D(2025, 1, 15), D(2025, 1, 15), "", "1", "SG", "", "Approved", "Bo Tan"]
ANA_FEB = ["000101", "Annual Leave", D(2025, 2, 10), D(2025, 2, 10), "", "1", "MY", "", "Approved", "Ana Lim"]
BO_FEB = ["000106", "Annual Leave", D(2025, 2, 12), D(2025, 2, 12), "", "1", "SG", "", "Approved", "Bo Tan"]
MONTH_1 = [ANA_JAN, ANA_SICK, ANA_LATE_JAN, BO_JAN]


@pytest.fixture
def staffed(sandbox: Any) -> Any:
    """The sandbox with Ana (000101, Malaysia) and Bo (000106, Singapore) on the staff of customer 99."""
    add_staff(sandbox, [("000101", "MY"), ("000106", "SG")])
    return sandbox


def export(tmp_path: Path, name: str, rows: list[list[object]]) -> Path:
    return write_xlsx(tmp_path / name, rows, header=NAMED)


def month_1(tmp_path: Path, sandbox: Any, config: Path | None = None) -> dict[str, int]:
    """Import month 1's leave; the platform's record id of each leave, by person, type and start."""
    result, run = run_import(tmp_path, sandbox, export(tmp_path, "leave_2025-01.xlsx", MONTH_1), config)
    assert result.exit_code == 0, result.output
    assert [o.outcome.value for o in run.rows] == ["added"] * 4
    sandbox.clear_requests()
    return {f"{r['customer_system_id']} {r['leave_type']} {r['start_date']}": r["id"] for r in sandbox.time_off(99)}


def summary(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder_of(result) / "summary.json").read_text(encoding="utf-8"))
    return data


def gone(run: RunResult) -> list[tuple[str, str, str, str, str, str, int | None, str, int]]:
    return [(g.external_id, g.name, g.leave_type, g.start_date, g.end_date, g.total_days, g.record_id,
             g.source_file, g.source_row) for g in run.gone]


def sent(sandbox: Any) -> list[str]:
    return [f"{b['customer_system_id']} {b['start_date']}" for b in map(json.loads, sandbox.bodies)
            if "leave_type" in b]


def test_a_leave_dropped_from_the_cumulative_export_is_named_so_hr_cancels_it_on_the_platform(
        tmp_path: Path, staffed: Any) -> None:
    """Month 1 imports three leaves of Ana and one of Bo. Ana's sick day is cancelled in the HR system, so month
    2's cumulative export no longer lists it, while its record stays on the platform and payroll counts it. The
    dry run and the import name exactly that record (person, type, dates, days, record id, when and whence it was
    imported) in a note, report.html, report.xlsx and summary.json; the three rows still listed are already
    imported, nothing is sent, and the exit code stays 0: the file's rows are all fine."""
    records = month_1(tmp_path, staffed)
    sick_id = records["000101 2 2025-01-20"]
    month_2 = export(tmp_path, "leave_2025-02.xlsx", [ANA_JAN, ANA_LATE_JAN, BO_JAN])

    dry, planned = run_import(tmp_path, staffed, month_2, None, "--dry-run")
    result, run = run_import(tmp_path, staffed, month_2)

    expected = [("000101", "Ana Lim", "Sick Leave", "2025-01-20", "2025-01-20", "1", sick_id, "leave_2025-01.xlsx", 3)]
    for told, outcomes in ((dry, planned), (result, run)):
        assert told.exit_code == 0, told.output
        assert [o.outcome.value for o in outcomes.rows] == ["already_imported"] * 3
        assert gone(outcomes) == expected
        assert outcomes.info.no_longer_in_export == 1
        assert summary(told)["no_longer_in_export"] == 1
        assert ("Note: 1 leave imported before is no longer in this export, which covers their people and dates: "
                "cancel it on the platform if it was cancelled or moved in the HR system; it stays there otherwise, "
                "and payroll counts it. The report lists each (No longer in the export); once cancelled on the "
                "platform, run hrimport timeoff mark-cancelled leave.toml RECORD_ID... so that it is no longer "
                "told.") in told.stdout
    assert sent(staffed) == []

    page = (folder_of(result) / "report.html").read_text(encoding="utf-8")
    assert 'id="no-longer-in-export"' in page
    assert (f"<td>000101</td><td>Ana Lim</td><td>Sick Leave</td><td>2025-01-20</td><td>2025-01-20</td>"
            f"<td class=\"num\">1</td><td class=\"num\">{sick_id}</td>") in page
    book = load_workbook(folder_of(result) / "report.xlsx", read_only=True)
    sheet = [list(r) for r in book["No longer in the export"].iter_rows(values_only=True)]
    book.close()
    assert sheet[0] == ["External id", "Name", "Leave type", "Start date", "End date", "Days", "Record id",
                        "Imported", "From file", "Row"]
    assert sheet[1][:7] == ["000101", "Ana Lim", "Sick Leave", "2025-01-20", "2025-01-20", "1", sick_id]
    assert sheet[1][8:] == ["leave_2025-01.xlsx", 3]
    assert len(sheet) == 2
