"""A config made last year maps a column the HR system's export has since started to hide (Workday hides its ID
columns), or one a person hid in Excel (Hide, or a width dragged to zero). Its values are still in the file:
hrimport sends them, as it sends every value the config maps, but never without a word: each row holding a value
in it carries a ``hidden-column`` warning naming the column, in the report and summary.json, or is held back when
``strict_checks`` lists the code (principles 1 and 2). A hidden column the config does not send says nothing.

Real files: workbooks by xlsxwriter (``set_column(..., {"hidden": True})``, a width of 0), openpyxl, odfpy and
xlwt; imports into the sandbox over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from hrimport import reader
from hrimport.reader import read_spreadsheet, read_spreadsheet_chunks, xlsx_stream
from tests.staff_files import HEADER, person, write_config
from tests.test_staff_import import hrimport
from tests.test_two_row_header import text_cell

pytestmark = pytest.mark.usefixtures("instant_retries")

COST_CENTRE, SHOE_SIZE = HEADER.index("Cost Centre"), HEADER.index("Shoe Size")


# the summary's lines tell the rows of one message together; the report and summary.json have each row's
WARNED = ("Warning: Rows 2, 4 and 5, column 'Cost Centre' is hidden in the workbook: its value is sent all the same, "
          "though nobody sees it in Excel; unhide the column and check it, or take it out of the config.")
HELD = ("Row 4, column 'Cost Centre' is hidden in the workbook: not sent (strict_checks lists hidden-column); unhide "
        "the column in Excel and check it, then import the row again, or take it out of the config.")


def cost_centre_hidden(path: Path, people: int = 4) -> Path:
    """Four people, Excel rows 2-5, by xlsxwriter: 'Cost Centre' (the config's custom field Cost Center) hidden
    with Hide, person 2's empty; 'Shoe Size', which the config does not send, dragged to a width of 0."""
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for n in range(1, people + 1):
        sheet.write_row(n, 0, [person(n, **{"Cost Centre": "" if n == 2 else f"CC-{n}"})[h] for h in HEADER])
    sheet.set_column(COST_CENTRE, COST_CENTRE, None, None, {"hidden": True})
    sheet.set_column(SHOE_SIZE, SHOE_SIZE, 0)
    book.close()
    return path


def summary_of(tmp_path: Path) -> dict[str, Any]:
    return json.loads(max((tmp_path / "reports").glob("*/*/summary.json")).read_text())


def sent_cost_centres(sandbox: Any) -> dict[str, list[dict[str, str]]]:
    return {e["customer_system_id"]: e.get("customer_data_type", [])
            for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]}


def test_a_value_in_a_hidden_column_the_config_sends_is_warned_on_its_row(tmp_path: Path, sandbox: Any) -> None:
    export = cost_centre_hidden(tmp_path / "staff.xlsx")
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 0, result.output
    assert sent_cost_centres(sandbox) == {
        "000001": [{"name": "Cost Center", "value": "CC-1"}], "000002": [],
        "000003": [{"name": "Cost Center", "value": "CC-3"}], "000004": [{"name": "Cost Center", "value": "CC-4"}]}
    assert [line for line in result.output.splitlines() if line.startswith("Warning")] == [WARNED]
    summary = summary_of(tmp_path)
    assert (summary["exit_code"], summary["warnings"], summary["problems"]) == (0, {"hidden-column": 3}, {})
    html = max((tmp_path / "reports").glob("*/*/report.html")).read_text()
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert "Value in a hidden column of the workbook" in warnings and "Shoe Size" not in warnings
    outcomes = [json.loads(line) for line in
                max((tmp_path / "reports").glob("*/*/outcomes.jsonl")).read_text().splitlines()]
    assert [(o["row"], [(p["code"], p["column"]) for p in o["problems"]]) for o in outcomes if o.get("problems")] == [
        (2, [("hidden-column", "Cost Centre")]), (4, [("hidden-column", "Cost Centre")]),
        (5, [("hidden-column", "Cost Centre")])]


def test_strict_checks_hold_back_the_rows_holding_a_value_in_a_hidden_column(tmp_path: Path, sandbox: Any) -> None:
    """A company that sends only what it sees lists hidden-column in [staff] strict_checks: the rows holding a
    value in the hidden column are held back, their lines saying so; person 2, whose cell is empty, is sent."""
    export = cost_centre_hidden(tmp_path / "staff.xlsx")
    config = write_config(tmp_path / "staff.toml", strict_checks=("hidden-column",))

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)

    assert result.exit_code == 1, result.output
    assert list(sent_cost_centres(sandbox)) == ["000002"]
    assert HELD.replace("Row 4", "Rows 2, 4 and 5") in result.output.splitlines()
    summary = summary_of(tmp_path)
    assert (summary["counts"]["added"], summary["counts"]["invalid"], summary["problems"]) == (
        1, 3, {"hidden-column": 3})
    outcomes = [json.loads(line) for line in
                max((tmp_path / "reports").glob("*/*/outcomes.jsonl")).read_text().splitlines()]
    assert [(o["row"], o["outcome"]) for o in outcomes if o.get("row")] == [
        (2, "invalid"), (3, "added"), (4, "invalid"), (5, "invalid")]
    assert next(o for o in outcomes if o.get("row") == 4)["problems"][0]["message"] == HELD


def test_a_hidden_column_packed_as_custom_data_is_warned_too(tmp_path: Path) -> None:
    """pack_unmapped = true sends every column the config does not map: 'Shoe Size', of width 0, is sent so. A row
    holding values in both hidden columns has one warning naming both."""
    export = cost_centre_hidden(tmp_path / "staff.xlsx")
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace('customer_system_id_type = "TestHRIS"',
                                                 'customer_system_id_type = "TestHRIS"\npack_unmapped = true'))

    result = hrimport("staff", "validate", str(config), str(export))

    assert result.exit_code == 0, result.output
    told = [line for line in result.output.splitlines() if "hidden" in line]
    assert told == [
        ("Warning: Rows 2, 4 and 5, columns 'Cost Centre' and 'Shoe Size' are hidden in the workbook: their values are "
         "sent all the same, though nobody sees them in Excel; unhide the columns and check them, or take them out of "
         "the config."),
        ("Warning: Row 3, column 'Shoe Size' is hidden in the workbook: its value is sent all the same, though nobody "
         "sees it in Excel; unhide the column and check it, or take it out of the config.")]


def test_the_streamed_read_names_the_hidden_columns_as_the_whole_read(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    export = cost_centre_hidden(tmp_path / "staff.xlsx", people=100)
    assert read_spreadsheet(export).info.hidden_columns == ["Cost Centre", "Shoe Size"]

    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # what an export above 8 MB gets
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 40)
    chunks, streamed = read_spreadsheet_chunks(export, chunk_rows=50)
    tables = list(chunks)

    assert streamed and len(tables) == 2
    assert tables[0].info.hidden_columns == ["Cost Centre", "Shoe Size"]


def test_the_calamine_read_of_an_xlsx_names_the_same_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hrimport.reader import workbook

    export = cost_centre_hidden(tmp_path / "staff.xlsx")
    monkeypatch.setattr(workbook, "FAST_XLSX", False)
    assert read_spreadsheet(export).info.hidden_columns == ["Cost Centre", "Shoe Size"]


def test_columns_hidden_by_openpyxl_over_a_range_and_under_a_title(tmp_path: Path) -> None:
    """openpyxl groups the hidden columns D:E in one <col min="4" max="5" hidden="1">; the table starts in column
    B under a title row, so the columns are named by the header above them, not by their place in the grid."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet["B1"] = "Staff list, November"
    for j, header in enumerate(["Employee ID", "Name", "Worker WID", "Position ID", "Email"], start=2):
        sheet.cell(3, j, header)
        sheet.cell(4, j, f"{header} 1")
    sheet.column_dimensions.group("D", "E", hidden=True)
    export = tmp_path / "staff.xlsx"
    book.save(export)

    assert read_spreadsheet(export).info.hidden_columns == ["Worker WID", "Position ID"]


def saved_ods(document: Any, table: Any, path: Path, rows: list[list[str]]) -> Path:
    """``table`` (its columns declared) with ``rows`` of text cells, saved as ``document`` at ``path``."""
    from odf.table import TableRow

    for values in rows:
        row = TableRow()
        for value in values:
            row.addElement(text_cell(value))
        table.addElement(row)
    document.spreadsheet.addElement(table)
    document.save(str(path))
    return path


def test_collapsed_columns_of_an_ods_are_named(tmp_path: Path) -> None:
    """LibreOffice writes a hidden column table:visibility="collapse"; a run of them is one repeated column."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style, TableColumnProperties
    from odf.table import Table, TableColumn

    document = OpenDocumentSpreadsheet()
    shut = Style(name="co2", family="table-column")  # a column dragged to a width of zero
    shut.addElement(TableColumnProperties(columnwidth="0in"))
    document.automaticstyles.addElement(shut)
    table = Table(name="Staff")
    table.addElement(TableColumn())  # A
    table.addElement(TableColumn(visibility="collapse", numbercolumnsrepeated="2"))  # B, C
    table.addElement(TableColumn(numbercolumnsrepeated="2"))  # D, E
    table.addElement(TableColumn(stylename="co2"))  # F
    export = saved_ods(document, table, tmp_path / "staff.ods", [
        ["Employee ID", "Worker WID", "Position ID", "Name", "Email", "Cost Centre"],
        ["000001", "W1", "P1", "Ann", "ann@acme.example", "CC-1"]])

    assert read_spreadsheet(export).info.hidden_columns == ["Worker WID", "Position ID", "Cost Centre"]


def test_hidden_and_shut_columns_of_an_xls_are_named(tmp_path: Path) -> None:
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    for j, header in enumerate(["Employee ID", "Worker WID", "Name", "Cost Centre"]):
        sheet.write(0, j, header)
        sheet.write(1, j, f"{header} 1")
    sheet.col(1).hidden = True
    sheet.col(3).width = 0
    export = tmp_path / "staff.xls"
    book.save(str(export))

    assert read_spreadsheet(export).info.hidden_columns == ["Worker WID", "Cost Centre"]


def test_a_hidden_id_column_of_a_time_off_workbook_is_warned(tmp_path: Path, sandbox: Any) -> None:
    """Workday hides the Employee ID column of its leave export: each row's id, which says whose leave it is,
    was sent unseen."""
    from tests.test_timeoff_import import D, add_staff, run_import, write_config, write_xlsx

    add_staff(sandbox, [("000101", "MY"), ("000104", "CN")])
    export = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", D(2024, 3, 4), D(2024, 3, 8), "", 5, "MY", "trip", "Approved"],
        ["000104", "Annual Leave", D(2024, 5, 6), D(2024, 5, 8), "", 3, "CN", "", "Approved"],
    ])
    book = openpyxl.load_workbook(export)
    book.active.column_dimensions["A"].hidden = True
    book.save(export)

    result, run = run_import(tmp_path, sandbox, export)
    assert result.exit_code == 0, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "added", ["hidden-column"]), (3, "added", ["hidden-column"])]

    strict = write_config(tmp_path, extra='strict_checks = ["hidden-column"]')
    result, run = run_import(tmp_path, sandbox, export, strict)
    assert result.exit_code == 1, result.output
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "invalid", ["hidden-column"]), (3, "invalid", ["hidden-column"])]


def test_init_names_the_hidden_columns_of_an_ods(tmp_path: Path) -> None:
    """init marks the hidden columns of any workbook it reads, from the reader's own pass: an ODS's too."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableColumn

    document = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    header = ["Employee ID", "Name", "Email", "Country", "Title", "Hire Date", "Staff Type", "Worker WID"]
    table.addElement(TableColumn(numbercolumnsrepeated="7"))
    table.addElement(TableColumn(visibility="collapse"))
    export = saved_ods(document, table, tmp_path / "staff.ods", [
        header, ["000001", "Ann Lee", "ann@acme.example", "SG", "Analyst", "2020-01-05", "Payroll",
                 "3aa5550b7fe348b98d7b5741afc65534"]])

    result = hrimport("init", str(export), "-o", str(tmp_path / "staff.toml"), "--json")

    assert result.exit_code == 0, result.output
    assert [c["column"] for c in json.loads(result.output)["columns"] if c["hidden"]] == ["Worker WID"]


def test_a_row_held_back_for_a_hidden_column_is_fixed_in_to_fix_where_the_column_shows(tmp_path: Path,
                                                                                        sandbox: Any) -> None:
    """to_fix.xlsx shows the hidden column (its red cell would be where nobody sees it), so that the rows held back
    for it, once checked there, import from it with the same config, the column seen."""
    export = cost_centre_hidden(tmp_path / "staff.xlsx")
    config = write_config(tmp_path / "staff.toml", strict_checks=("hidden-column",))
    assert hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                    base_url=sandbox.base_url).exit_code == 1
    fix = max((tmp_path / "reports").glob("*/*/to_fix.xlsx"))
    letter = openpyxl.utils.get_column_letter(COST_CENTRE + 1)
    sheet = openpyxl.load_workbook(fix)["Staff"]
    assert [sheet.cell(r, COST_CENTRE + 1).value for r in (2, 3, 4)] == ["CC-1", "CC-3", "CC-4"]
    assert not sheet.column_dimensions[letter].hidden

    again = hrimport("staff", "import", str(config), str(fix), "--report-dir", str(tmp_path / "fixed"),
                     base_url=sandbox.base_url)

    assert again.exit_code == 0, again.output
    assert list(sent_cost_centres(sandbox)) == ["000002", "000001", "000003", "000004"]
