"""A person checks the monthly workbook in Excel through a filter ("Status = Active") or hides the rows they
are done with, and saves it so. The hidden rows are still in the file: hrimport sends them, as it sends every
row, but never without a word: each carries a ``hidden-row`` warning on its row, in the report and
summary.json, or is held back when ``strict_checks`` lists the code (principles 1 and 2).

Real files: workbooks by openpyxl (Hide, and an AutoFilter as Excel saves it), xlsxwriter, odfpy and xlwt;
imports into the sandbox over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import openpyxl
import pytest

from hrimport import reader
from hrimport.reader import read_spreadsheet, read_spreadsheet_chunks, xlsx_stream
from tests.staff_files import HEADER, person, write_config
from tests.test_staff_import import hrimport

pytestmark = pytest.mark.usefixtures("instant_retries")

WARNED = ("Warning: Row 3 is hidden in the workbook (by a filter or Hide): it is sent all the same, though nobody "
          "sees it in Excel; unhide it and check it, or delete it if it is not to be imported.")
HELD = ("Row 3 is hidden in the workbook (by a filter or Hide): not sent (strict_checks lists hidden-row); unhide "
        "it in Excel and check it, then import it, or delete it if it is not to be imported.")
# a row of height zero: nobody hid it with Hide or a filter; someone set its height to 0 (or dragged it shut)
WARNED_SHUT = ("Warning: Row 3 is hidden in the workbook (its height is set to 0): it is sent all the same, though "
               "nobody sees it in Excel; give it a height again (Row Height) and check it, or delete it if it is not "
               "to be imported.")
HELD_SHUT = ("Row 3 is hidden in the workbook (its height is set to 0): not sent (strict_checks lists hidden-row); "
             "give it a height again (Row Height) in Excel and check it, then import it, or delete it if it is not to "
             "be imported.")


def four_people_row_3_hidden(path: Path, *, hidden: tuple[int, ...] = (3,), autofilter: bool = False) -> Path:
    """Four people under the header, Excel rows 2-5; ``hidden`` rows hidden (Hide), or filtered out by an
    AutoFilter on the Name column, as Excel saves a filtered sheet: the filter's range and each row it hides.
    Rows 8 and 9, empty, are hidden too, as Excel marks rows under a table: no row of the table, nothing said."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Staff"
    sheet.append(HEADER)
    for n in range(1, 5):
        sheet.append([person(n)[h] for h in HEADER])
    for row in (*hidden, 8, 9):
        sheet.row_dimensions[row].hidden = True
    if autofilter:
        sheet.auto_filter.ref = f"A1:{openpyxl.utils.get_column_letter(len(HEADER))}5"
        sheet.auto_filter.add_filter_column(1, ["Person 1", "Person 3", "Person 4"])
    book.save(path)
    return path


def summary_of(tmp_path: Path) -> dict[str, Any]:
    return json.loads(max((tmp_path / "reports").glob("*/*/summary.json")).read_text())


def sent_ids(sandbox: Any) -> list[str]:
    return [e["customer_system_id"] for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]]


@pytest.mark.parametrize("autofilter", [False, True], ids=["hide", "autofilter"])
def test_a_hidden_row_is_sent_with_a_warning_on_its_row(tmp_path: Path, sandbox: Any, autofilter: bool) -> None:
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", autofilter=autofilter)
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 0, result.output
    assert sent_ids(sandbox) == ["000001", "000002", "000003", "000004"]
    assert [line for line in result.output.splitlines() if line.startswith("Warning")] == [WARNED]
    summary = summary_of(tmp_path)
    assert (summary["exit_code"], summary["warnings"], summary["problems"]) == (0, {"hidden-row": 1}, {})
    html = (max((tmp_path / "reports").glob("*/*/report.html"))).read_text()
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert 'data-row="3"' in warnings and 'data-row="2"' not in warnings
    assert "Row hidden in the workbook" in warnings
    outcomes = [json.loads(line) for line in
                max((tmp_path / "reports").glob("*/*/outcomes.jsonl")).read_text().splitlines()]
    assert [(o["row"], [p["code"] for p in o["problems"]]) for o in outcomes if o.get("problems")] == [
        (3, ["hidden-row"])]


def test_strict_checks_hold_a_hidden_row_back(tmp_path: Path, sandbox: Any) -> None:
    """A company that sends only what it sees lists hidden-row in [staff] strict_checks: the hidden row is held
    back, its line saying so, and the run needs attention (exit 1)."""
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", autofilter=True)
    config = write_config(tmp_path / "staff.toml", strict_checks=("hidden-row",))

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 1, result.output
    assert sent_ids(sandbox) == ["000001", "000003", "000004"]
    assert HELD in result.output
    summary = summary_of(tmp_path)
    assert (summary["counts"]["added"], summary["counts"]["invalid"], summary["problems"]) == (3, 1, {"hidden-row": 1})


def big_sheet_hiding_rows(path: Path, hidden: set[int]) -> Path:
    """300 people by xlsxwriter (``set_row(..., {"hidden": True})``), Excel rows 2-301; ``hidden`` rows hidden,
    and empty hidden rows below the table, as Excel writes them under a filtered range."""
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    if 1 in hidden:  # the header
        sheet.set_row(0, None, None, {"hidden": True})
    for n in range(1, 301):
        sheet.write_row(n, 0, [person(n)[h] for h in HEADER])
        if n + 1 in hidden:
            sheet.set_row(n, None, None, {"hidden": True})
    for below in range(310, 320):  # empty rows hidden under the table: nobody's
        sheet.set_row(below, None, None, {"hidden": True})
    book.close()
    return path


HIDDEN = {2, 41, 42, 43, 120, 200, 201, 301}


def test_the_streamed_read_flags_the_rows_the_whole_read_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    export = big_sheet_hiding_rows(tmp_path / "staff.xlsx", HIDDEN)
    whole = read_spreadsheet(export)
    assert whole.hidden_rows.tolist() == sorted(HIDDEN)

    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # what an export above 8 MB gets
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 40)
    chunks, streamed = read_spreadsheet_chunks(export, chunk_rows=100)
    tables = list(chunks)

    assert streamed and len(tables) == 3
    assert [n for t in tables for n in t.hidden_rows.tolist()] == sorted(HIDDEN)
    assert [t.hidden_rows.tolist() for t in tables] == [[2, 41, 42, 43], [120, 200, 201], [301]]


def test_the_calamine_read_of_an_xlsx_flags_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hrimport.reader import workbook

    export = big_sheet_hiding_rows(tmp_path / "staff.xlsx", HIDDEN)
    monkeypatch.setattr(workbook, "FAST_XLSX", False)
    assert read_spreadsheet(export).hidden_rows.tolist() == sorted(HIDDEN)


def test_hidden_empty_rows_below_the_table_say_nothing(tmp_path: Path) -> None:
    """Excel writes hidden="1" on the empty rows under a filtered range too: they are no rows of the table, and
    only the person's hidden row is told."""
    export = big_sheet_hiding_rows(tmp_path / "staff.xlsx", {3})
    config = write_config(tmp_path / "staff.toml")
    result = hrimport("staff", "validate", str(config), str(export))
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if "hidden" in line] == [WARNED]


def test_collapsed_and_filtered_rows_of_an_ods_are_flagged(tmp_path: Path) -> None:
    """LibreOffice marks a row hidden with Hide (or folded in a group, or dragged to a height of zero)
    table:visibility="collapse", as ODF spells it ("collapsed" is read too), one a filter hides "filter"; a run
    of hidden rows is one repeated row."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    document = OpenDocumentSpreadsheet()
    table = Table(name="Staff")

    def row(cells: list[str], **attributes: Any) -> TableRow:
        element = TableRow(**attributes)
        for value in cells:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            element.addElement(cell)
        return element

    table.addElement(row(HEADER))
    table.addElement(row([person(1)[h] for h in HEADER]))  # row 2
    table.addElement(row([person(2)[h] for h in HEADER], visibility="collapse"))  # row 3, as LibreOffice writes
    table.addElement(row([person(3)[h] for h in HEADER]))  # row 4
    table.addElement(row([person(4)[h] for h in HEADER], visibility="filter"))  # row 5
    table.addElement(row([person(5)[h] for h in HEADER], visibility="collapsed", numberrowsrepeated="3"))  # 6-8
    table.addElement(row([person(9)[h] for h in HEADER]))  # row 9
    table.addElement(row([], visibility="collapsed", numberrowsrepeated="1048000"))  # empty, below the table
    document.spreadsheet.addElement(table)
    export = tmp_path / "staff.ods"
    document.save(str(export))

    read = read_spreadsheet(export)

    assert read.row_numbers == [2, 3, 4, 5, 6, 7, 8, 9]
    assert read.hidden_rows.tolist() == [3, 5, 6, 7, 8]


HEADER_HIDDEN = ("The header (row 1) is hidden in the workbook (by a filter or Hide): the columns were read by the "
                 "names it holds ('Employee ID', 'Name', 'Email', 'Country' and 12 more), which nobody sees in Excel; "
                 "unhide it and check that they name the values under them (or set header_row to the header shown).")


def test_a_hidden_header_row_is_told_and_the_rows_under_it_are_sent(tmp_path: Path, sandbox: Any) -> None:
    """Someone hid the header row (Hide): a person looking at the sheet sees no header above the values, or a row
    of other labels, and checks the mapping by those. The import goes on (nothing is wrong in the values) and
    says, once, which names the columns were read by."""
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", hidden=(1,))
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 0, result.output
    assert sent_ids(sandbox) == ["000001", "000002", "000003", "000004"]
    assert [line for line in result.output.splitlines() if line.startswith("Note")] == [f"Note: {HEADER_HIDDEN}"]
    summary = summary_of(tmp_path)
    assert HEADER_HIDDEN in summary["notes"] and summary["warnings"] == {}


def test_a_hidden_header_is_told_by_the_streamed_read_and_by_ods_and_xls(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import xlwt
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    document = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    for n, values in enumerate([HEADER, *([person(k)[h] for h in HEADER] for k in range(1, 4))]):
        element = TableRow(visibility="collapse") if n == 0 else TableRow()  # Hide, as LibreOffice saves it
        for value in values:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            element.addElement(cell)
        table.addElement(element)
    document.spreadsheet.addElement(table)
    document.save(str(tmp_path / "staff.ods"))
    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    for n, values in enumerate([HEADER, *([person(k)[h] for h in HEADER] for k in range(1, 4))]):
        for c, value in enumerate(values):
            sheet.write(n, c, value)
    sheet.row(0).height, sheet.row(0).height_mismatch = 0, True  # the header's height set to 0
    book.save(str(tmp_path / "staff.xls"))

    assert read_spreadsheet(tmp_path / "staff.ods").info.header_note == HEADER_HIDDEN
    assert read_spreadsheet(tmp_path / "staff.xls").info.header_note == HEADER_HIDDEN.replace(
        "by a filter or Hide", "its height is set to 0")
    export = big_sheet_hiding_rows(tmp_path / "staff.xlsx", {1, 3})
    assert read_spreadsheet(export).info.header_note == HEADER_HIDDEN
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # what an export above 8 MB gets
    chunks, streamed = read_spreadsheet_chunks(export, chunk_rows=100)
    assert streamed and next(iter(chunks)).info.header_note == HEADER_HIDDEN
    assert read_spreadsheet(four_people_row_3_hidden(tmp_path / "shown.xlsx")).info.header_note is None


def test_a_hidden_row_of_an_xls_is_flagged(tmp_path: Path) -> None:
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    for c, header in enumerate(HEADER):
        sheet.write(0, c, header)
    for n in range(1, 5):
        for c, header in enumerate(HEADER):
            sheet.write(n, c, person(n)[header])
    sheet.row(2).hidden = True  # Excel row 3
    export = tmp_path / "staff.xls"
    book.save(str(export))

    assert read_spreadsheet(export).hidden_rows.tolist() == [3]


def hidden_leave_workbook(tmp_path: Path, sandbox: Any) -> Path:
    """A leave workbook of two people the sandbox knows, the second's leave on row 3, hidden."""
    from tests.test_timeoff_import import D, add_staff, write_xlsx

    add_staff(sandbox, [("000101", "MY"), ("000104", "CN")])
    export = tmp_path / "leave.xlsx"
    write_xlsx(export, [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "trip", "Approved"],  # row 2
        ["000104", "Annual Leave", D(2024, 5, 6), D(2024, 5, 8), "", 3, "CN", "", "Approved"],  # row 3, hidden
    ])
    book = openpyxl.load_workbook(export)
    book.active.row_dimensions[3].hidden = True
    book.save(export)
    return export


def test_a_hidden_row_of_a_time_off_workbook_is_flagged(tmp_path: Path, sandbox: Any) -> None:
    from tests.test_timeoff_import import run_import

    export = hidden_leave_workbook(tmp_path, sandbox)

    result, run = run_import(tmp_path, sandbox, export)

    assert result.exit_code == 0, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "added", []), (3, "added", ["hidden-row"])]
    assert WARNED in result.output


def test_strict_checks_under_timeoff_hold_a_hidden_leave_row_back(tmp_path: Path, sandbox: Any) -> None:
    from tests.test_timeoff_import import run_import, write_config

    export = hidden_leave_workbook(tmp_path, sandbox)
    config = write_config(tmp_path, extra='strict_checks = ["hidden-row"]')

    result, run = run_import(tmp_path, sandbox, export, config)

    assert result.exit_code == 1, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "added", []), (3, "invalid", ["hidden-row"])]
    assert run.rows[1].message == HELD


def test_init_names_the_hidden_rows_on_its_first_lines(tmp_path: Path) -> None:
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", hidden=(3, 5))
    config = tmp_path / "staff.toml"

    result = hrimport("init", str(export), "-o", str(config))

    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:2] == [
        ("Read staff.xlsx, sheet 'Staff', header row 1: a staff export of 4 rows (2 of them hidden in the workbook: "
         "rows 3 and 5)."),
        ("Hidden rows of the workbook (by a filter or Hide): rows 3 and 5. The import sends them all the same, with a "
         "hidden-row warning, though nobody sees them in Excel: unhide them and check them, or delete those not to be "
         'imported (strict_checks = ["hidden-row"] in [staff] holds them back).')]
    preview = json.loads(hrimport("init", str(export), "-o", str(config), "--json", "--force").output)
    assert preview["hidden_rows"] == [3, 5]


def test_init_says_the_header_it_read_the_columns_by_is_hidden(tmp_path: Path) -> None:
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", hidden=(1,))

    result = hrimport("init", str(export), "-o", str(tmp_path / "staff.toml"))

    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1] == HEADER_HIDDEN


def test_a_sheet_hiding_many_rows_keeps_them_as_runs() -> None:
    """500,000 hidden rows in runs take a few integers; rows hidden one in two, two arrays of 250,000."""
    from hrimport.reader.hidden_rows import HiddenRows

    runs = HiddenRows()
    runs.add(2, 500_000)
    runs.add(500_002)
    assert (len(runs.firsts), len(runs.lasts)) == (1, 1)
    table = np.arange(2, 600_000)
    assert len(runs.among(table)) == 500_001 and runs.among(table)[-1] == 500_002

    alternate = HiddenRows()
    for row in range(2, 500_002, 2):
        alternate.add(row)
    assert len(alternate.firsts) == 250_000
    assert alternate.among(np.array([3, 4, 5, 500_000, 500_001])).tolist() == [4, 500_000]


def test_a_row_of_height_zero_is_hidden_as_excel_shows_it(tmp_path: Path, sandbox: Any) -> None:
    """A row whose height is set to zero (openpyxl's ``height = 0``: ``ht="0" customHeight="1"``) shows nothing in
    Excel: it is told as a hidden row, and strict_checks holds it back alike."""
    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", hidden=())
    book = openpyxl.load_workbook(export)
    book.active.row_dimensions[3].height = 0
    book.save(export)
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 0, result.output
    assert sent_ids(sandbox) == ["000001", "000002", "000003", "000004"]
    assert [line for line in result.output.splitlines() if line.startswith("Warning")] == [WARNED_SHUT]
    assert summary_of(tmp_path)["warnings"] == {"hidden-row": 1}

    strict = write_config(tmp_path / "strict.toml", strict_checks=("hidden-row",))
    result = hrimport("staff", "validate", str(strict), str(export))
    assert result.exit_code == 1, result.output
    assert HELD_SHUT in result.output


def test_row_heights_excel_shows_and_those_it_does_not(tmp_path: Path) -> None:
    """Rows 3 and 4 of height zero by xlsxwriter (``set_row(2, 0)``, which it saves hidden) and by a writer that
    sets the height alone (``ht="0.0" customHeight="1"``); row 5's ``ht="0"`` without ``customHeight`` is SAP
    abap2xlsx's, which writes it on every row and Excel sizes itself: shown, nothing said. The sheet's default of
    zero-height rows (``zeroHeight``) hides only the rows without data: nobody's."""
    import re
    import zipfile

    import xlsxwriter

    source = tmp_path / "written.xlsx"
    book = xlsxwriter.Workbook(str(source))
    sheet = book.add_worksheet("Staff")
    sheet.set_default_row(hide_unused_rows=True)
    sheet.write_row(0, 0, HEADER)
    for n in range(1, 6):
        sheet.write_row(n, 0, [person(n)[h] for h in HEADER])
    sheet.set_row(2, 0)
    book.close()
    export = tmp_path / "staff.xlsx"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(export, "w") as copy:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                assert b'zeroHeight="1"' in data
                data = re.sub(rb'<row r="4"', b'<row r="4" ht="0.0" customHeight="1"', data)
                data = re.sub(rb'<row r="5"', b'<row r="5" ht="0"', data)
            copy.writestr(item, data)

    table = read_spreadsheet(export)
    assert table.hidden_rows.tolist() == [3, 4]
    assert table.zero_height_rows.tolist() == [4]  # xlsxwriter's row 3 is marked hidden, as Excel saves it


def test_an_ods_row_whose_style_is_of_height_zero_is_flagged(tmp_path: Path) -> None:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style, TableRowProperties
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    document = OpenDocumentSpreadsheet()
    shut = Style(name="ro2", family="table-row")
    shut.addElement(TableRowProperties(rowheight="0in"))
    document.automaticstyles.addElement(shut)
    table = Table(name="Staff")
    for n, values in enumerate([HEADER, *([person(k)[h] for h in HEADER] for k in range(1, 4))]):
        element = TableRow(stylename="ro2") if n == 2 else TableRow()
        for value in values:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            element.addElement(cell)
        table.addElement(element)
    document.spreadsheet.addElement(table)
    export = tmp_path / "staff.ods"
    document.save(str(export))

    table = read_spreadsheet(export)
    assert (table.hidden_rows.tolist(), table.zero_height_rows.tolist()) == ([3], [3])


def test_an_xls_row_of_height_zero_is_flagged(tmp_path: Path) -> None:
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    for c, header in enumerate(HEADER):
        sheet.write(0, c, header)
    for n in range(1, 5):
        for c, header in enumerate(HEADER):
            sheet.write(n, c, person(n)[header])
    sheet.row(3).height, sheet.row(3).height_mismatch = 0, True  # Excel row 4: a height of its own, zero
    export = tmp_path / "staff.xls"
    book.save(str(export))

    table = read_spreadsheet(export)
    assert (table.hidden_rows.tolist(), table.zero_height_rows.tolist()) == ([4], [4])


def test_a_row_of_height_zero_held_back_is_shown_in_to_fix_and_imports_from_it(tmp_path: Path, sandbox: Any) -> None:
    """strict_checks holds back row 3, dragged to a height of zero (``ht="0" customHeight="1"``); HR opens
    to_fix.xlsx, sees the row, checks it and imports the file: the row is sent, where to_fix kept it of height zero
    (nobody saw it there either) and the import held it back again, run after run."""
    import zipfile

    export = four_people_row_3_hidden(tmp_path / "staff.xlsx", hidden=())
    with zipfile.ZipFile(export) as original, zipfile.ZipFile(tmp_path / "zero.xlsx", "w") as copy:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<row r="3"', b'<row r="3" ht="0" customHeight="1"', 1)
            copy.writestr(item, data)
    config = write_config(tmp_path / "staff.toml", strict_checks=("hidden-row",))

    result = hrimport("staff", "import", str(config), str(tmp_path / "zero.xlsx"), "--report-dir",
                      str(tmp_path / "reports"), base_url=sandbox.base_url)
    assert result.exit_code == 1, result.output
    assert HELD_SHUT in result.output
    to_fix = max((tmp_path / "reports").glob("*/*/to_fix.xlsx"))
    assert read_spreadsheet(to_fix).hidden_rows.tolist() == []

    result = hrimport("staff", "import", str(config), str(to_fix), "--report-dir", str(tmp_path / "again"),
                      base_url=sandbox.base_url)
    assert result.exit_code == 0, result.output
    assert sent_ids(sandbox) == ["000001", "000003", "000004", "000002"]
