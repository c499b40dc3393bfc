"""Leave imported before that an export no longer lists (cancelled, or moved, in the HR system) is told.

The real CLI in-process, real xlsx files written by openpyxl, the real sandbox over HTTP (``sandbox``), and a real
ledger in the config's state folder: month 1 imports Ana's and Bo's leave, month 2's export drops one of Ana's,
and the report, summary.json and the note name that record, so HR cancels it on the platform.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from openpyxl import load_workbook

from hrimport.cli import main
from hrimport.outcomes import RunResult
from hrimport.state.ledger import LedgerEntry, LedgerKey, open_ledger
from tests.mail_relay import Inbox
from tests.staff_files import write_csv
from tests.test_run_job import LEAVE_HEADER, JobFolder, notify_table, run_cli
from tests.test_timeoff_import import (
    HEADER,
    add_staff,
    folder_of,
    hrimport,
    run_import,
    write_config,
    write_xlsx,
)

D = dt.date
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
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
        assert ("Note: 1 leave imported before is no longer in this export, which covers its person and dates: "
                "cancel it on the platform if it was cancelled or moved in the HR system; it stays there otherwise, "
                "and payroll counts it. The report lists it (No longer in the export); once cancelled on the "
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


def test_a_monthly_export_and_a_person_missing_from_the_export_name_nothing(tmp_path: Path, staffed: Any) -> None:
    """A monthly export lists only its month's leave: January's records lie before the period February's file
    spans, and are not told. A person the export no longer lists at all (a leaver, dropped from it) cancelled
    nothing either: Bo's January leave is not told when a cumulative export lists only Ana."""
    month_1(tmp_path, staffed)

    monthly, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-02.xlsx", [ANA_FEB, BO_FEB]))
    assert monthly.exit_code == 0, monthly.output
    assert [o.outcome.value for o in run.rows] == ["added", "added"]
    assert gone(run) == [] and summary(monthly)["no_longer_in_export"] == 0
    assert "no longer in this export" not in monthly.stdout
    assert 'id="no-longer-in-export"' not in (folder_of(monthly) / "report.html").read_text(encoding="utf-8")

    without_bo, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-03.xlsx",
                                                           [ANA_JAN, ANA_SICK, ANA_LATE_JAN, ANA_FEB]))
    assert without_bo.exit_code == 0, without_bo.output
    assert [o.outcome.value for o in run.rows] == ["already_imported"] * 4
    assert gone(run) == [] and summary(without_bo)["no_longer_in_export"] == 0


def test_a_monthly_export_listing_a_long_leave_begun_months_before_names_none_of_those_months_leave(
        tmp_path: Path, staffed: Any) -> None:
    """A month's export lists the leave taken in its month, and so a long leave begun before it (Bo's unpaid leave
    from 20 January to 12 February, in January's export and February's). February's export starts its leave on
    20 January, yet it no more lists Ana's January leave than January's export lists February's: her sick day and
    annual leave of late January are not named (HR, told so, would cancel leave she took). Only a record whose
    start lies among the export's starts and whose end among its ends is one the export would list."""
    bo_long = ["000106", "Annual Leave", D(2025, 1, 20), D(2025, 2, 12), "", "18", "SG", "", "Approved", "Bo Tan"]
    result, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-01.xlsx",
                                                       [ANA_JAN, ANA_SICK, ANA_LATE_JAN, bo_long]))
    assert [o.outcome.value for o in run.rows] == ["added"] * 4, result.output

    february, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-02.xlsx", [bo_long, ANA_FEB]))

    assert february.exit_code == 0, february.output
    assert [o.outcome.value for o in run.rows] == ["already_imported", "added"]
    assert gone(run) == [] and summary(february)["no_longer_in_export"] == 0
    assert "no longer in this export" not in february.stdout


def test_a_person_whose_row_cannot_be_read_has_nothing_named(tmp_path: Path, staffed: Any) -> None:
    """Ana's sick day is in month 2's export, but its date cannot be read: which leave the row is, is not known,
    so none of Ana's records is named (the row needs attention, and says why); Bo's cancelled leave still is."""
    records = month_1(tmp_path, staffed)
    unreadable = [*ANA_SICK[:2], "20.13.2025", *ANA_SICK[3:]]
    result, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-02.xlsx",
                                                       [ANA_JAN, unreadable, ANA_LATE_JAN, ANA_FEB, BO_FEB]))
    assert result.exit_code == 1, result.output
    assert [o.outcome.value for o in run.rows] == ["already_imported", "invalid", "already_imported", "added", "added"]
    assert gone(run) == [("000106", "Bo Tan", "Annual Leave", "2025-01-15", "2025-01-15", "1",
                          records["000106 1 2025-01-15"], "leave_2025-01.xlsx", 5)]


def test_a_record_marked_cancelled_is_no_longer_named_and_its_leave_put_back_is_sent_again(
        tmp_path: Path, staffed: Any) -> None:
    """HR cancels Ana's sick day on the platform and marks it with `hrimport timeoff mark-cancelled`: month 3's
    export (the same as month 2's) names nothing. When the HR system puts the leave back in a later export, it is
    sent again (the platform no longer holds it) and the sandbox stores it. The ledger keeps the cancelled
    record, with when. An id the ledger does not hold is one line, exit 2, and marks nothing; marking again says
    when it was marked."""
    records = month_1(tmp_path, staffed)
    sick_id = records["000101 2 2025-01-20"]
    config = tmp_path / "leave.toml"
    month_2 = export(tmp_path, "leave_2025-02.xlsx", [ANA_JAN, ANA_LATE_JAN, BO_JAN])
    _, run = run_import(tmp_path, staffed, month_2)
    assert [g.record_id for g in run.gone] == [sick_id]

    unknown = hrimport(["timeoff", "mark-cancelled", str(config), str(sick_id), "99999"], staffed)
    assert unknown.exit_code == 2, unknown.output
    assert unknown.stderr == (
        f"Error: record 99999 is not among the time off the time-off ledger {tmp_path / '.hrimport' / 'timeoff_ledger.db'}"
        f" holds as sent to sandbox at {staffed.base_url}"
        " for customer 99: nothing was marked; give the record ids the report's 'No longer in the export' lists "
        "(column Record id)\n")
    with open_ledger(tmp_path / ".hrimport") as ledger:
        assert sick_id in [e.record_id for e in ledger.entries()]

    staffed.cancel_time_off(sick_id)  # HR, in the platform's own pages
    # marking sends nothing: it needs no token (HR's shell has none), the service's key comes from its URL alone
    marked = hrimport(["timeoff", "mark-cancelled", str(config), str(sick_id)], staffed, token="")
    assert marked.exit_code == 0, marked.output
    assert marked.stdout == (
        f"Marked as cancelled on the platform in {tmp_path / '.hrimport' / 'timeoff_ledger.db'}: record(s) {sick_id} "
        "(000101 Sick Leave 2025-01-20..2025-01-20); no longer told, and sent again if a later export lists the "
        "leave again.\n")
    again = hrimport(["timeoff", "mark-cancelled", str(config), str(sick_id)], staffed)
    assert again.exit_code == 0 and again.stdout.startswith(f"Record {sick_id} was marked as cancelled on 20")

    month_3, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-03.xlsx", [ANA_JAN, ANA_LATE_JAN, BO_JAN]))
    assert month_3.exit_code == 0, month_3.output
    assert gone(run) == [] and summary(month_3)["no_longer_in_export"] == 0
    assert sent(staffed) == []

    put_back, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-04.xlsx", MONTH_1))
    assert put_back.exit_code == 0, put_back.output
    assert [o.outcome.value for o in run.rows] == ["already_imported", "added", "already_imported", "already_imported"]
    assert sent(staffed) == ["000101 2025-01-20"]
    assert [(r["start_date"], r["deleted_at"] != 0) for r in staffed.time_off(99)
            if r["customer_system_id"] == "000101" and r["leave_type"] == 2] == [("2025-01-20", True),
                                                                                ("2025-01-20", False)]
    with open_ledger(tmp_path / ".hrimport") as ledger:
        assert [(e.key.leave_type, e.key.start_date, e.record_id != sick_id) for e in ledger.entries()
                if e.key.leave_type == "Sick Leave"] == [("Sick Leave", "2025-01-20", True)]
        kept = ledger._conn.execute("SELECT record_id, cancelled_at FROM cancelled").fetchall()
    assert [record_id for record_id, _ in kept] == [sick_id] and kept[0][1].startswith("20")


def test_an_export_of_changes_only_names_nothing_and_a_bad_setting_is_one_line(tmp_path: Path,
                                                                                 staffed: Any) -> None:
    """`export_holds = "changes"`: the HR system exports only the leave changed since the last export, so every
    unchanged leave would look gone; nothing is named. Any other value is refused in one line, exit 2."""
    changes = write_config(tmp_path, extra='export_holds = "changes"')
    month_1(tmp_path, staffed, changes)
    result, run = run_import(tmp_path, staffed, export(tmp_path, "leave_2025-02.xlsx", [ANA_JAN]), changes)
    assert result.exit_code == 0, result.output
    assert gone(run) == [] and summary(result)["no_longer_in_export"] == 0

    bad = write_config(tmp_path, extra='export_holds = "cumulative"')
    refused = hrimport(["timeoff", "import", str(bad), str(tmp_path / "leave_2025-02.xlsx")], staffed)
    assert refused.exit_code == 2
    assert refused.stderr == (
        'Error: leave.toml [timeoff] export_holds must be "all" (the export lists every leave of the period it '
        "covers: a cumulative history, or a month's leave) or \"changes\" (only the leave changed since the last "
        "export), not 'cumulative'\n")


def test_the_look_up_over_20000_ledger_records_is_one_query_and_bounded(tmp_path: Path) -> None:
    """A ledger of 20,000 records (2,000 people, 10 leaves each) and an export listing 1,000 of those people
    with all their leave but one each (in the middle of the period): the 1,000 records named are found by one
    query over temporary tables (SQLite's trace shows the ledger's table read once, never a statement per
    record), in well under a second or two on a shared machine."""
    service, customer = "https://hr.example/api", "99"

    def key(person: int, leave: int) -> LedgerKey:
        day = dt.date(2024, 1, 1) + dt.timedelta(days=leave * 30)
        return LedgerKey(service, customer, f"E{person:05d}", "Annual Leave", day.isoformat(), day.isoformat())

    with open_ledger(tmp_path / "state") as ledger:
        ledger.add_stored(LedgerEntry(key(p, n), 1_000 * p + n, "1", "history.xlsx", 2 + 10 * p + n, "2024-12-01")
                          for p in range(2_000) for n in range(10))
        statements: list[str] = []
        ledger._conn.set_trace_callback(statements.append)
        t = time.perf_counter()
        with ledger.listing(service, customer) as listing:
            for start in range(0, 1_000, 100):  # a chunk of the file at a time, as the import adds them
                keys = [key(p, n) for p in range(start, start + 100) for n in range(10) if n != 5]
                listing.add(keys, [""] * len(keys))
            found = [g.entry.key for g in listing.missing()]
        took = time.perf_counter() - t
        ledger._conn.set_trace_callback(None)
    assert found == [key(p, 5) for p in range(1_000)]
    # the export's leave goes into temporary tables (a statement per row added: the file's, not the ledger's); the
    # ledger's records are read by one query
    assert len([s for s in statements if "accepted" in s]) == 1
    assert took < 5, took


def test_a_monthly_run_tells_the_leave_no_longer_in_the_export_in_its_line_and_an_email(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    """`hrimport run`, e-mailing when something needs attention: month 2's leave export no longer lists one leave
    of the second person, though every row is fine (exit 0). The step's line in cron's log, the verdict and an
    e-mail say so, since the record stays on the platform and is paid as leave until HR cancels it."""
    box, port = relay
    job = JobFolder(tmp_path / "job", sandbox, notify=notify_table(port), timeoff=True)
    job.export("2024-03", job.people(2))

    def leave(month: str, rows: list[tuple[int, str, str]]) -> None:
        path = write_csv(job.root / "exports" / f"leave_{month}.csv",
                         [{"Employee ID": job.ext(n), "Leave Type": "Annual Leave", "From": start, "To": end,
                           "Country": "MY", "Status": "Approved"} for n, start, end in rows], LEAVE_HEADER)
        later = time.time() + len(list((job.root / "exports").iterdir()))
        os.utime(path, (later, later))

    leave("2024-03", [(1, "04/03/2024", "05/03/2024"), (2, "04/03/2024", "05/03/2024")])
    first = run_cli("run", str(job.job))
    assert first.exit_code == 0, first.output
    assert box.messages == []
    leave("2024-04", [(1, "04/03/2024", "05/03/2024"), (2, "07/03/2024", "07/03/2024")])

    second = run_cli("run", str(job.job))

    assert second.exit_code == 0, second.output
    line = next(line for line in second.stderr.splitlines() if line.startswith("timeoff: "))
    assert line.endswith(". No longer in the export: 1 leave imported before (the report lists each: cancel it on "
                         "the platform if it was cancelled or moved, then mark it with hrimport timeoff "
                         "mark-cancelled)")
    [msg] = box.messages
    assert msg["Subject"].startswith(f"[hrimport] monthly: timeoff: everything imported{job.on_sandbox}; 1 leave "
                                     "imported before no longer in the export (cancel it on the platform if "
                                     "cancelled or moved: see the report); staff: no new export: ")
    assert "No longer in the export: 1 leave imported before" in str(msg)


def test_init_writes_the_setting_commented_out_with_what_it_is(tmp_path: Path) -> None:
    """`hrimport init` on a leave export writes export_holds commented out, with one line saying what it is."""
    config = tmp_path / "leave.toml"
    result = CliRunner().invoke(main, ["init", str(SAMPLES / "leave_history.xlsx"), "-o", str(config)],
                                env={"HRIMPORT_TOKEN": "", "HRIMPORT_BASE_URL": ""}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [line] = [line for line in config.read_text(encoding="utf-8").splitlines() if "export_holds" in line]
    assert line.startswith('# export_holds = "all"')
    assert line.endswith('# what each export lists: "all" (default), every leave of the period it covers, so leave '
                         'imported before and missing is told; "changes", only leave changed since the last one')
