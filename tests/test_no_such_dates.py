"""Date cells showing a day that never was, in Excel's 1900 calendar: 29 February 1900 (serial 60: Excel counts
1900 as a leap year, as Lotus 1-2-3 did) and 0 January 1900 (how Excel shows a 0, an HR system's "no date").
The libraries read 60 as 28 February and 0 as a time of day; a value sent must be what the person sees, and no
real date is, so the cell is held back wherever its column is sent, in one line saying what it shows and what
to do. In a workbook of the 1904 date system (Mac Excel's) the same serials are ordinary days, sent as such.

Workbooks written by xlsxwriter, openpyxl and xlwt; read whole through fastexcel and python-calamine, and streamed.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter
import xlwt
from click.testing import CliRunner

from hrimport import reader
from hrimport.cli import main
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.outcomes import RunResult
from hrimport.reader import read_spreadsheet, xlsx_stream
from hrimport.reader.no_such_dates import shows_a_date
from tests import test_timeoff_import as leave
from tests.staff_files import HEADER, person, write_config

LEAP_DAY = ("the cell holds 60, which Excel shows as the date 29/02/1900, a day that never existed (1900 was no "
            "leap year; Excel counts it as one, as Lotus 1-2-3 did), so no date can be sent for it; enter the "
            "real date.")
DATE = "dd/mm/yyyy"

#: A cell written as a number through a number format: (value, format).
Cells = dict[tuple[int, str], tuple[float, str]]


def with_xlsxwriter(path: Path, rows: list[dict[str, str]], numbers: Cells, date_1904: bool = False) -> Path:
    book = xlsxwriter.Workbook(str(path), {"date_1904": date_1904})
    sheet = book.add_worksheet("Staff")
    formats = {code: book.add_format({"num_format": code}) for _, code in numbers.values()}
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate(rows, start=1):
        for c, header in enumerate(HEADER):
            if (r, header) in numbers:
                value, code = numbers[r, header]
                sheet.write_number(r, c, value, formats[code])
            else:
                sheet.write_string(r, c, row[header])
    book.close()
    return path


def with_openpyxl(path: Path, rows: list[dict[str, str]], numbers: Cells, date_1904: bool = False) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Staff"
    book.epoch = openpyxl.utils.datetime.CALENDAR_MAC_1904 if date_1904 else book.epoch
    sheet.append(HEADER)
    for r, row in enumerate(rows, start=1):
        sheet.append([row[h] for h in HEADER])
        for (at, header), (value, code) in numbers.items():
            if at == r:
                cell = sheet.cell(r + 1, HEADER.index(header) + 1, value)
                cell.number_format = code
    book.save(path)
    return path


def with_xlwt(path: Path, rows: list[dict[str, str]], numbers: Cells, date_1904: bool = False) -> Path:
    book = xlwt.Workbook()
    book.dates_1904 = date_1904
    sheet = book.add_sheet("Staff")
    for c, header in enumerate(HEADER):
        sheet.write(0, c, header)
    for r, row in enumerate(rows, start=1):
        for c, header in enumerate(HEADER):
            if (r, header) in numbers:
                value, code = numbers[r, header]
                sheet.write(r, c, value, xlwt.easyxf(num_format_str=code))
            else:
                sheet.write(r, c, row[header])
    book.save(str(path))
    return path


WRITERS: dict[str, tuple[Callable[..., Path], str]] = {
    "xlsxwriter": (with_xlsxwriter, ".xlsx"), "openpyxl": (with_openpyxl, ".xlsx"), "xlwt": (with_xlwt, ".xls")}


def validate(tmp_path: Path, source: Path) -> tuple[int, list[str]]:
    """``staff validate``: its exit code and the lines it prints about rows."""
    result = CliRunner().invoke(main, ["staff", "validate", str(write_config(tmp_path / "staff.toml")), str(source)])
    assert "Traceback" not in result.output
    return result.exit_code, [line for line in result.output.splitlines() if line.startswith(("Row ", "Warning"))]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_29_february_1900_is_held_back_where_it_would_be_sent_never_sent_as_28_february(
        tmp_path: Path, engine: str, writer: str) -> None:
    write, suffix = WRITERS[writer]
    rows = [person(n) for n in range(1, 7)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (1, "Hire Date"): (59, DATE),  # 28/02/1900, a real day
        (2, "Hire Date"): (60, DATE),  # 29/02/1900
        (3, "Hire Date"): (61, DATE),  # 01/03/1900
        (4, "Cost Centre"): (60, DATE),  # custom data: sent as text, so not as 1900-02-28 either
        (5, "Shoe Size"): (60, DATE),  # a column not sent: nothing to hold back
    })
    table = read_spreadsheet(source)
    assert table.frame["Hire Date"].tolist()[:3] == ["1900-02-28", "1900-02-29", "1900-03-01"]
    assert table.frame["Cost Centre"].tolist()[3] == table.frame["Shoe Size"].tolist()[4] == "1900-02-29"
    code, told = validate(tmp_path, source)
    assert code == 1
    assert told == [f"Row 3, column 'Hire Date': {LEAP_DAY}", f"Row 5, column 'Cost Centre': {LEAP_DAY}"]


def test_29_february_1900_with_a_time_and_in_a_date_time_format(tmp_path: Path, engine: str) -> None:
    rows = [person(1), person(2)]
    source = with_xlsxwriter(tmp_path / "staff.xlsx", rows, {
        (1, "Hire Date"): (60.5, "dd/mm/yyyy hh:mm"), (2, "Hire Date"): (60.25, DATE)})
    assert read_spreadsheet(source).frame["Hire Date"].tolist() == ["1900-02-29 12:00:00", "1900-02-29 06:00:00"]
    code, told = validate(tmp_path, source)
    assert (code, told) == (1, [f"Row {r}, column 'Hire Date': {LEAP_DAY.replace('60,', f'{v},')}"
                                for r, v in ((2, 60.5), (3, 60.25))])


@pytest.mark.parametrize("writer", list(WRITERS))
def test_in_the_1904_date_system_serial_60_is_an_ordinary_day(tmp_path: Path, writer: str) -> None:
    """Mac Excel's calendar counts from 1 January 1904 (serial 0), and 1904 was a leap year: 59 is 29 February
    1904, 60 is 1 March 1904; both are sent as the days Excel shows."""
    write, suffix = WRITERS[writer]
    rows = [person(1), person(2), person(3)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (1, "Hire Date"): (59, DATE), (2, "Hire Date"): (60, DATE), (3, "Cost Centre"): (60, DATE)}, date_1904=True)
    table = read_spreadsheet(source)
    assert table.info.date_system == 1904
    assert table.frame["Hire Date"].tolist() == ["1904-02-29", "1904-03-01", "2020-01-31"]
    assert table.frame["Cost Centre"].tolist() == ["CC-1", "CC-1", "1904-03-01"]
    assert validate(tmp_path, source) == (0, [])


def validated_whole_and_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path
                                 ) -> tuple[RunResult, RunResult]:
    """``staff validate`` of ``source`` read whole, then streamed (pieces of 3 rows, chunks of 2)."""
    config = load_config(write_config(tmp_path / "staff.toml"))
    whole = import_file(config, source, validate_only=True).result
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 3)
    assert reader.read_spreadsheet_chunks(source, chunk_rows=2, expected_headers=HEADER)[1]  # streamed
    streamed = import_file(config, source, validate_only=True, chunk_rows=2).result
    return whole, streamed


def told(run: RunResult) -> dict[int, list[tuple[str, str | None, str | None]]]:
    """Each row with problems: (code, column, value) of each."""
    return {o.row: [(p.code, p.column, p.value) for p in o.problems] for o in run.rows if o.problems}


def test_a_workbook_streamed_in_pieces_holds_back_the_same_cells(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [person(n) for n in range(1, 41)]
    source = with_xlsxwriter(tmp_path / "staff.xlsx", rows, {
        (2, "Hire Date"): (60, DATE), (33, "Birth Date"): (0, DATE), (37, "Hire Date"): (60, DATE),
        (38, "Hire Date"): (61, DATE)})

    whole, streamed = validated_whole_and_streamed(tmp_path, monkeypatch, source)

    assert told(streamed) == told(whole) == {
        3: [("not-a-date", "Hire Date", "1900-02-29")], 34: [("not-a-date", "Birth Date", "1900-01-00")],
        38: [("not-a-date", "Hire Date", "1900-02-29")]}
    assert [c.kind for c in whole.info.values_read] == [c.kind for c in streamed.info.values_read]


def test_a_leave_record_starting_on_29_february_1900_is_held_back(tmp_path: Path) -> None:
    path = tmp_path / "leave.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet, date = book.add_worksheet("Leave"), book.add_format({"num_format": DATE})
    sheet.write_row(0, 0, leave.HEADER)
    sheet.write_row(1, 0, ["000101", "Annual Leave", "", "", "", "1", "MY", "", "Approved"])
    sheet.write_number(1, 2, 60, date)
    sheet.write_datetime(1, 3, dt.datetime(2024, 6, 11), date)
    book.close()
    result = CliRunner().invoke(main, ["timeoff", "validate", str(leave.write_config(tmp_path)), str(path)])
    assert result.exit_code == 1, result.output
    assert [line for line in result.output.splitlines() if line.startswith("Row ")] == [
        f"Row 2, column 'From': {LEAP_DAY}"]


@pytest.mark.parametrize(
    ("code", "date"),
    [("dd/mm/yyyy", True), ("m/d/yy h:mm", True), ("d-mmm", True), ("mmm-yy", True), ('yyyy"年"m"月"d"日"', True),
     ("[$-409]mmmm d, yyyy", True), ("yyyy-mm-dd hh:mm:ss", True), ("hh:mm", False), ("h:mm AM/PM", False),
     ("[h]:mm:ss", False), ("[h]:mm", False), ("mm:ss", False), ("General", False), ("0.00E+00", False), ("000000", False),
     ("0%", False), ("@", False)],
)
def test_which_number_formats_show_a_date(code: str, date: bool) -> None:
    assert shows_a_date(code) is date


def test_the_report_explains_the_day_that_never_was(tmp_path: Path, sandbox: Any) -> None:
    source = with_xlsxwriter(tmp_path / "staff.xlsx", [person(1), person(2)], {(2, "Birth Date"): (0, DATE)})
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "import", str(config), str(source), "--report-dir",
                                       str(tmp_path / "reports")],
                                env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url})
    assert result.exit_code == 1, result.output
    sent = [e["customer_system_id"] for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]]
    assert sent == ["000001"]
    html = next((tmp_path / "reports").glob("*/*/report.html")).read_text(encoding="utf-8")
    assert "0 January 1900" in html and "29 February 1900" in html  # the problem, and what not-a-date means
