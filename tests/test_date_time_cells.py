"""Date, time and duration cells sent as the person sees them in Excel: a time format (``hh:mm``, ``h:mm AM/PM``)
on a number of 1 or more shows only its time of day, an elapsed time (``[h]:mm``) its hours in full, a 0 in a date
cell of the 1904 date system 01/01/1904; a number Excel cannot show as a date (it shows ########) and an East
Asian built-in format whose meaning depends on the computer's language are held back in one line.

Workbooks written by xlsxwriter, openpyxl and xlwt, imported into the sandbox through fastexcel and python-calamine;
what the sandbox stored is read back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import xlsxwriter
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.reader import read_spreadsheet
from tests.staff_files import person, write_config
from tests.test_no_such_dates import WRITERS

TIME = "hh:mm"
NOT_SHOWN = ("the cell holds {}, a number Excel cannot show as a date or a time (it shows ########: before 1900 or "
             "after 9999, or below zero), so no date can be sent for it; enter the date, or leave the cell empty "
             "if there is none.")


def imported(tmp_path: Path, sandbox: Any, source: Path) -> tuple[int, list[str], dict[str, dict[str, Any]]]:
    """``staff import`` of ``source`` into the sandbox: its exit code, the lines it prints about rows, and what the
    sandbox stored, by external id."""
    result = CliRunner().invoke(
        main, ["staff", "import", str(write_config(tmp_path / "staff.toml")), str(source),
               "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url})
    assert "Traceback" not in result.output, result.output
    told = [line for line in result.output.splitlines() if line.startswith(("Row ", "Warning"))]
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99) if s["customer_system_id"].startswith("0000")}
    return result.exit_code, told, stored


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_time_of_day_on_a_number_of_one_or_more_is_the_time_excel_shows(
        tmp_path: Path, sandbox: Any, engine: str, writer: str) -> None:
    write, suffix = WRITERS[writer]
    rows = [person(n) for n in range(1, 9)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (6, "Cost Centre"): (45000, TIME),  # 00:00: a whole number, the .xls read it as 2023-03-15
        # to the nearest second, as LibreOffice shows them (12:30:15, or 1899-12-31 12:30:15.500, were read)
        (7, "Cost Centre"): (45015.5 / 86400, "hh:mm:ss"),  # 12:30:16
        (8, "Cost Centre"): (86399.6 / 86400, TIME),  # 23:59:59.6 shows 00:00 (LibreOffice rounds the seconds)
        (1, "Cost Centre"): (1.5, TIME),  # Excel shows 12:00
        (2, "Cost Centre"): (45355.5625, "h:mm AM/PM"),  # 1:30 PM
        (3, "Cost Centre"): (36.5 / 24, "[h]:mm"),  # 36:30, an elapsed time
        (4, "Hire Date"): (1.5, TIME),  # a time in a date column: 12:00, not a date
        (5, "Hire Date"): (45355, "dd/mm/yyyy"),  # 04/03/2024
    })
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: (s["job_start_date"], s["customer_data_type"][0]["value"]) for k, s in stored.items()} == {
        "000001": ("2020-01-31", "12:00:00"), "000002": ("2020-01-31", "13:30:00"),
        "000003": ("2020-01-31", "36:30:00"), "000005": ("2024-03-04", "CC-1"), "000006": ("2020-01-31", "00:00:00"),
        "000007": ("2020-01-31", "12:30:16"), "000008": ("2020-01-31", "00:00:00")}
    assert (code, told) == (1, [("Row 5, column 'Hire Date': '12:00:00' is not a real date (expected a real "
                                 "calendar date, such as 2020-01-31, or an Excel date cell).")])


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_date_cell_excel_cannot_show_is_held_back_never_sent(
        tmp_path: Path, sandbox: Any, engine: str, writer: str) -> None:
    write, suffix = WRITERS[writer]
    rows = [person(n) for n in range(1, 6)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (1, "Hire Date"): (-1, "dd/mm/yyyy"),  # ########: a negative date
        (2, "Hire Date"): (3_000_000, "dd/mm/yyyy"),  # ########: after 31/12/9999
        (3, "Cost Centre"): (-2, "yyyy-mm-dd"),
        (4, "Hire Date"): (2_958_465, "dd/mm/yyyy"),  # 31/12/9999, the last day Excel shows
        (5, "Cost Centre"): (3_000_000, "dd/mm/yyyy"),  # custom data: an .xls sent the number 3000000
    })
    assert read_spreadsheet(source).frame["Hire Date"].tolist() == [
        "########", "########", "2020-01-31", "9999-12-31", "2020-01-31"]
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: s["job_start_date"] for k, s in stored.items()} == {"000004": "9999-12-31"}
    assert (code, told) == (1, [f"Row 2, column 'Hire Date': {NOT_SHOWN.format(-1)}",
                                f"Row 3, column 'Hire Date': {NOT_SHOWN.format(3000000)}",
                                f"Row 4, column 'Cost Centre': {NOT_SHOWN.format(-2)}",
                                f"Row 6, column 'Cost Centre': {NOT_SHOWN.format(3000000)}"])


@pytest.mark.parametrize("writer", list(WRITERS))
def test_in_the_1904_date_system_a_zero_is_1_january_1904_and_a_time_stays_a_time(
        tmp_path: Path, sandbox: Any, engine: str, writer: str) -> None:
    """Mac Excel's calendar: its serial 0 is a real day, 01/01/1904; python-calamine read it as the time 00:00:00,
    and fastexcel read a time of day (0.5 as hh:mm) as 1904-01-01 12:00."""
    write, suffix = WRITERS[writer]
    rows = [person(1), person(2)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (1, "Hire Date"): (0, "dd/mm/yyyy"), (2, "Cost Centre"): (0.5, TIME)}, date_1904=True)
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: (s["job_start_date"], s["customer_data_type"][0]["value"]) for k, s in stored.items()} == {
        "000001": ("1904-01-01", "CC-1"), "000002": ("2020-01-31", "12:00:00")}
    assert (code, told) == (0, [])


@pytest.mark.parametrize("writer", list(WRITERS))
def test_in_the_1904_date_system_a_number_below_zero_shows_a_minus_sign_not_hashes(
        tmp_path: Path, sandbox: Any, engine: str, writer: str) -> None:
    """Mac Excel's calendar shows a number below 0 with a minus sign (Microsoft KB 182247: -1 as dd/mm/yyyy is
    -02/01/1904, -0.5 as hh:mm is -12:00), where the 1900 system shows ########: the line said 'it shows
    ########', which the person does not see, and the time was held back as no time."""
    write, suffix = WRITERS[writer]
    rows = [person(1), person(2), person(3)]
    source = write(tmp_path / f"staff{suffix}", rows, {
        (1, "Hire Date"): (-1, "dd/mm/yyyy"), (2, "Cost Centre"): (-0.5, TIME),
        (3, "Cost Centre"): (-1.25, "[h]:mm")}, date_1904=True)
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: (s["job_start_date"], s["customer_data_type"][0]["value"]) for k, s in stored.items()} == {
        "000002": ("2020-01-31", "-12:00:00"), "000003": ("2020-01-31", "-30:00:00")}
    assert (code, told) == (1, [("Row 2, column 'Hire Date': the cell holds -1, a number below zero, which Excel "
                                "shows in this workbook's 1904 date system as a date with a minus sign (-1904-01-02), "
                                "not a real date, so no date can be sent for it; enter the date, or leave the cell "
                                "empty if there is none."),
                                # sent as read; a value starting with '-' is one a spreadsheet may run (as typed)
                                *[f"Warning: Row {row}, column 'Cost Centre': '{time}' looks like a spreadsheet "
                                  "formula; kept as written (formula_text = \"reject\" in the config's [source] would "
                                  "hold the row back)." for row, time in ((3, "-12:00:00"), (4, "-30:00:00"))]])


def east_asian(path: Path, formats: list[tuple[str, int]]) -> Path:
    """A workbook whose cells use East Asian built-in number formats by id, as Japanese or Chinese Excel writes
    them (ECMA-376 Part 1, 18.8.30: the format is not written out; the computer's language says what it shows)."""
    from tests.staff_files import HEADER

    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, (column, format_id) in enumerate(formats, start=1):
        row = person(r)
        sheet.write_row(r, 0, [row[h] for h in HEADER])
        sheet.write_number(r, HEADER.index(column), 45355, book.add_format({"num_format": format_id}))
    book.close()
    return path


def test_east_asian_built_in_formats_a_date_everywhere_is_sent_a_date_or_a_time_is_held_back(
        tmp_path: Path, sandbox: Any, engine: str) -> None:
    """Ids 27-31, 36, 50, 51, 54, 57 and 58 show a date in Chinese, Japanese, Korean and English Excel (an era's
    year, 年月日 or m/d/yyyy): the day is sent, as python-calamine read it and fastexcel did not (45355). Ids
    32-35, 52, 53, 55 and 56 show a time in Chinese Excel and a date in Japanese: held back."""
    source = east_asian(tmp_path / "staff.xlsx", [("Hire Date", 31), ("Cost Centre", 27), ("Hire Date", 55),
                                                  ("Cost Centre", 32), ("Hire Date", 58)])
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: (s["job_start_date"], s["customer_data_type"][0]["value"]) for k, s in stored.items()} == {
        "000001": ("2024-03-04", "CC-1"), "000002": ("2020-01-31", "2024-03-04"), "000005": ("2024-03-04", "CC-1")}
    why = ("the cell holds 45355 in one of Excel's East Asian built-in formats, which shows it as a date or as a time "
           "depending on the language of the computer opening the file, so what is seen cannot be known from the "
           "file; give the column a date format such as yyyy-mm-dd (or a time format), or enter the value as text.")
    assert (code, told) == (1, [f"Row 4, column 'Hire Date': {why}", f"Row 5, column 'Cost Centre': {why}"])


def test_an_east_asian_date_or_time_cell_below_zero_is_told_as_such_not_as_a_1904_date(
        tmp_path: Path, sandbox: Any, engine: str) -> None:
    """A number below zero in format 32 (a time in Chinese Excel, a date in Japanese) of a 1900-system workbook
    is held back for its format, as 45355 is: the line never says the workbook is of the 1904 date system."""
    from tests.staff_files import HEADER

    source = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(source))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    sheet.write_row(1, 0, [person(1)[h] for h in HEADER])
    sheet.write_number(1, HEADER.index("Hire Date"), -1, book.add_format({"num_format": 32}))
    book.close()
    code, told, stored = imported(tmp_path, sandbox, source)
    why = ("the cell holds -1 in one of Excel's East Asian built-in formats, which shows it as a date or as a time "
           "depending on the language of the computer opening the file, so what is seen cannot be known from the "
           "file; give the column a date format such as yyyy-mm-dd (or a time format), or enter the value as text.")
    assert (code, told, stored) == (1, [f"Row 2, column 'Hire Date': {why}"], {})


def test_a_workbook_streamed_in_pieces_reads_times_and_dates_as_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_no_such_dates import told, validated_whole_and_streamed, with_xlsxwriter

    rows = [person(n) for n in range(1, 41)]
    source = with_xlsxwriter(tmp_path / "staff.xlsx", rows, {
        (4, "Cost Centre"): (1.5, TIME), (34, "Cost Centre"): (36.5 / 24, "[h]:mm"),
        (36, "Hire Date"): (-1, "dd/mm/yyyy"), (39, "Hire Date"): (1.25, TIME)})

    whole, streamed = validated_whole_and_streamed(tmp_path, monkeypatch, source)

    assert told(streamed) == told(whole) == {
        37: [("not-a-date", "Hire Date", "########")], 40: [("not-a-date", "Hire Date", "06:00:00")]}


def ods_with_times(path: Path, times: dict[tuple[int, str], tuple[str, str | None] | tuple[str, None, str]]) -> Path:
    """The export as an ODS whose cells ``times`` are time cells (duration, text shown), as LibreOffice saves them:
    the duration in ``office:time-value`` (a time-formatted date-time as hours since 30/12/1899), the text it
    showed in ``text:p``; or (duration, None), saved without the text, as odfpy writes them, or (duration, None,
    format) with a time format, ``HH:MM`` (the time of day) or ``[HH]:MM`` (hours in full)."""
    from odf.number import Hours, Minutes, TimeStyle
    from odf.number import Text as Separator
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    from tests.staff_files import HEADER

    doc = OpenDocumentSpreadsheet()
    styles = {}
    for name, elapsed in (("HH:MM", False), ("[HH]:MM", True)):
        time_format = TimeStyle(name=f"time-{len(styles)}", **({"truncateonoverflow": "false"} if elapsed else {}))
        for part in (Hours(style="long"), Separator(text=":"), Minutes(style="long")):
            time_format.addElement(part)
        doc.automaticstyles.addElement(time_format)
        styles[name] = Style(name=f"cell-{len(styles)}", family="table-cell", datastylename=time_format)
        doc.automaticstyles.addElement(styles[name])
    table = Table(name="Staff")
    last = max(r for r, _ in times)
    for r, row in enumerate([dict(zip(HEADER, HEADER)), *(person(n) for n in range(1, last + 1))]):
        line = TableRow()
        for header in HEADER:
            shown: str | None
            if (r, header) in times:
                duration, shown, *time_format = times[r, header]
                cell = TableCell(valuetype="time", timevalue=duration,
                                 **({"stylename": styles[time_format[0]]} if time_format else {}))
            else:
                cell, shown = TableCell(valuetype="string"), row[header]
            if shown is not None:
                cell.addElement(P(text=shown))
            line.addElement(cell)
        table.addElement(line)
    doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def test_an_ods_time_of_a_day_or_more_is_what_libreoffice_shows_never_its_iso_duration(
        tmp_path: Path, sandbox: Any) -> None:
    """python-calamine read a duration of a day or more as its ISO 8601 text (PT36H30M00S), which would be sent
    as custom data: a person sees 36:30:00 in LibreOffice ([HH]:MM:SS), or 13:30:00 for a date-time formatted
    as a time (LibreOffice saves it as hours since 30/12/1899); in a date field such a time is no date."""
    source = ods_with_times(tmp_path / "staff.ods", {
        (1, "Cost Centre"): ("PT36H30M00S", "36:30:00"),
        (2, "Cost Centre"): ("PT1088533H30M00S", "13:30:00"),  # 04/03/2024 13:30 shown as a time
        (3, "Hire Date"): ("PT1088533H30M00S", "01:30:00 PM"),
    })
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: (s["job_start_date"], s["customer_data_type"][0]["value"]) for k, s in stored.items()} == {
        "000001": ("2020-01-31", "36:30:00"), "000002": ("2020-01-31", "13:30:00")}
    assert (code, told) == (1, [("Row 4, column 'Hire Date': '13:30:00' is not a real date (expected a real "
                                 "calendar date, such as 2020-01-31, or an Excel date cell).")])


def test_an_ods_time_without_its_text_below_zero_or_with_a_fraction_of_a_second_is_what_libreoffice_shows(
        tmp_path: Path, sandbox: Any) -> None:
    """A time cell saved without the text it shows (odfpy writes none) or below zero was sent as its ISO 8601
    duration (PT36H30M00S, -PT6H00M00S), and a fraction of a second was cut (12:30:15.5 read 12:30:15). Now as
    LibreOffice shows them: without a time format a day or more shows its hours in full, with one as that format
    says; below zero, an elapsed time has a minus sign and a time of day counts back from midnight; to the
    nearest second."""
    source = ods_with_times(tmp_path / "staff.ods", {
        (1, "Cost Centre"): ("PT36H30M00S", None),  # LibreOffice's standard format: [HH]:MM:SS
        (2, "Cost Centre"): ("PT36H30M00S", None, "HH:MM"),  # 12:30
        (3, "Cost Centre"): ("PT36H30M00S", None, "[HH]:MM"),  # 36:30
        (4, "Cost Centre"): ("-PT6H00M00S", "-06:00:00"),
        (5, "Cost Centre"): ("-PT6H00M00S", "18:00:00"),  # HH:MM:SS counts back from midnight
        (6, "Cost Centre"): ("PT12H30M15.5S", "12:30:16"),
    })
    code, told, stored = imported(tmp_path, sandbox, source)
    assert {k: s["customer_data_type"][0]["value"] for k, s in stored.items()} == {
        "000001": "36:30:00", "000002": "12:30:00", "000003": "36:30:00", "000004": "-06:00:00",
        "000005": "18:00:00", "000006": "12:30:16"}
    assert (code, told) == (0, [  # sent as read; a value starting with '-' is one a spreadsheet may run (as typed)
        ("Warning: Row 5, column 'Cost Centre': '-06:00:00' looks like a spreadsheet formula; kept as written "
         "(formula_text = \"reject\" in the config's [source] would hold the row back).")])
