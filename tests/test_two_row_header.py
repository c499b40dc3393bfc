"""An HR person imports a Workday/SuccessFactors/ADP export whose header is written over two rows: group
labels merged across ('Personal' over First Name, Last Name, Email) and single labels merged down ('Employee
ID', 'Country'). The tool reads it as one header of the names a person sees, the people from row 3 on, and
refuses in one line a shape of merges it cannot be sure of (README, "Layout and refusals")."""

from __future__ import annotations

import html
import json
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
import xlwt
from click.testing import CliRunner, Result
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import CoveredTableCell, Table, TableCell, TableRow
from odf.text import P
from openpyxl.cell.cell import MergedCell

from hrimport import reader
from hrimport.cli import main
from hrimport.reader import read_spreadsheet, read_spreadsheet_chunks, xlsx_stream

pytestmark = pytest.mark.usefixtures("instant_retries")

TOKEN = "demo-customer-99"
PEOPLE = [
    ["E1", "Ana", "Lima", "ana@example.com", "Nurse", "2024-01-02", "Portugal"],
    ["E2", "Bo", "Chen", "bo@example.com", "Clerk", "2023-05-06", "China"],
]
NAMES = ["Employee ID", "First Name", "Last Name", "Email", "Title", "Start Date", "Country"]
READ_AS = ("header over rows 1-2 (merged cells): read as 'Employee ID', 'First Name', 'Last Name', 'Email', "
           "'Title', 'Start Date', 'Country'")


def hrimport(*args: str, base_url: str = "") -> Result:
    env = {"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": base_url}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def two_row_export(path: Path, people: list[list[str]] = PEOPLE) -> Path:
    """The export of the story, written as Workday writes it (openpyxl ``merge_cells``)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    for ref, label in (("A1:A2", "Employee ID"), ("B1:D1", "Personal"), ("E1:F1", "Job"), ("G1:G2", "Country")):
        ws[ref.split(":")[0]] = label
        ws.merge_cells(ref)
    for column, label in enumerate(["First Name", "Last Name", "Email", "Title", "Start Date"], start=2):
        ws.cell(2, column, label)
    for row in people:
        ws.append(row)
    wb.save(path)
    return path


def xlsxwriter_export(path: Path) -> Path:
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Staff")
    ws.merge_range("A1:A2", "Employee ID")
    ws.merge_range("B1:D1", "Personal")
    ws.merge_range("E1:F1", "Job")
    ws.merge_range("G1:G2", "Country")
    ws.write_row("B2", ["First Name", "Last Name", "Email", "Title", "Start Date"])
    for i, row in enumerate(PEOPLE, start=2):
        ws.write_row(i, 0, row)
    wb.close()
    return path


def xls_export(path: Path) -> Path:
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    ws.write_merge(0, 1, 0, 0, "Employee ID")
    ws.write_merge(0, 0, 1, 3, "Personal")
    ws.write_merge(0, 0, 4, 5, "Job")
    ws.write_merge(0, 1, 6, 6, "Country")
    for column, label in enumerate(["First Name", "Last Name", "Email", "Title", "Start Date"], start=1):
        ws.write(1, column, label)
    for i, row in enumerate(PEOPLE, start=2):
        for j, value in enumerate(row):
            ws.write(i, j, value)
    wb.save(str(path))
    return path


def text_cell(text: str, **spans: int) -> TableCell:
    """An ODS text cell, spanning rows or columns as ``spans`` say (``numberrowsspanned=2``)."""
    made = TableCell(valuetype="string", **spans)
    made.addElement(P(text=text))
    return made


def ods_export(path: Path) -> Path:
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    cell = text_cell
    top = TableRow()
    for element in (cell("Employee ID", numberrowsspanned=2), cell("Personal", numbercolumnsspanned=3),
                    CoveredTableCell(), CoveredTableCell(), cell("Job", numbercolumnsspanned=2), CoveredTableCell(),
                    cell("Country", numberrowsspanned=2)):
        top.addElement(element)
    table.addElement(top)
    lower = TableRow()
    lower.addElement(CoveredTableCell())
    for label in ["First Name", "Last Name", "Email", "Title", "Start Date"]:
        lower.addElement(cell(label))
    lower.addElement(CoveredTableCell())
    table.addElement(lower)
    for person in PEOPLE:
        row = TableRow()
        for value in person:
            row.addElement(cell(value))
        table.addElement(row)
    doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def filled_in(config: Path) -> Path:
    """The config init wrote, its TODOs filled in as the person would."""
    text = config.read_text()
    text = text.replace('customer_id = "TODO"', 'customer_id = "99"')
    text = text.replace('customer_system_id_type = "TODO"', 'customer_system_id_type = "Workday"')
    text = text.replace('staff_type = "TODO: System | Payroll | HRO | EOR"', 'staff_type = "System"')
    assert not [line for line in text.splitlines() if '"TODO' in line and not line.startswith("#")]
    config.write_text(text)
    return config


def test_a_header_over_two_rows_imports_the_two_people_under_it(tmp_path: Path, sandbox, engine: str) -> None:
    export = two_row_export(tmp_path / "two.xlsx")
    config = tmp_path / "staff.toml"

    init = hrimport("init", str(export), "-o", str(config))
    assert init.exit_code == 0, init.output
    assert init.output.splitlines()[0] == f"Read two.xlsx, sheet 'Staff', {READ_AS}: a staff export of 2 rows."
    assert "expected_columns" in config.read_text() and '"First Name",' in config.read_text()

    result = hrimport("staff", "import", str(filled_in(config)), str(export), "--report-dir",
                      str(tmp_path / "reports"), base_url=sandbox.base_url)

    assert result.exit_code == 0, result.output
    assert f"Read: two.xlsx: XLSX, sheet 'Staff', {READ_AS}" in result.output
    sent = {person["customer_system_id"]: person for person in sandbox.staff(99)
            if person["customer_system_id"] in ("E1", "E2")}
    assert {key: (p["name"], p["system_email"], p["job_title"], p["job_start_date"], p["country"])
            for key, p in sent.items()} == {
        "E1": ("Ana Lima", "ana@example.com", "Nurse", "2024-01-02", "PT"),
        "E2": ("Bo Chen", "bo@example.com", "Clerk", "2023-05-06", "CN"),
    }
    bulk = [r for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")]
    assert [r["elements"] for r in bulk] == [2]  # the two people, not the row of labels under 'Personal'
    run = max((tmp_path / "reports").glob("*/*/summary.json"))
    summary = json.loads(run.read_text())
    assert (summary["source"]["header_row"], summary["source"]["header_rows"]) == (1, 2)
    rows = [json.loads(line) for line in (run.parent / "outcomes.jsonl").read_text().splitlines()[1:]]
    assert [(row["row"], row["external_id"], row["outcome"]) for row in rows] == [(3, "E1", "added"),
                                                                                    (4, "E2", "added")]
    assert "<dt>Header row</dt><dd>1-2 (merged cells): read as 'Employee ID', 'First Name'," in html.unescape(
        (run.parent / "report.html").read_text())


@pytest.mark.parametrize("write", [two_row_export, xlsxwriter_export, xls_export, ods_export],
                         ids=["openpyxl", "xlsxwriter", "xls", "ods"])
def test_every_workbook_format_reads_the_names_a_person_sees(tmp_path: Path, write, engine: str) -> None:
    suffix = {"xls_export": ".xls", "ods_export": ".ods"}.get(write.__name__, ".xlsx")
    table = read_spreadsheet(write(tmp_path / f"two{suffix}"))

    assert (table.info.header_row, table.info.header_rows, table.info.preamble) == (1, 2, [])
    assert table.info.headers == NAMES
    assert table.row_numbers == [3, 4]
    assert table.frame.to_numpy().tolist() == PEOPLE


def contract_and_probation(path: Path) -> Path:
    """'Start' and 'End' under both 'Contract' and 'Probation': each is named with its group."""
    wb = openpyxl.Workbook()
    ws = wb.active
    for ref, label in (("A1:A2", "Employee ID"), ("B1:B2", "Name"), ("C1:C2", "Email"), ("D1:E1", "Contract"),
                       ("F1:G1", "Probation")):
        ws[ref.split(":")[0]] = label
        ws.merge_cells(ref)
    for column, label in enumerate(["Start", "End", "Start", "End"], start=4):
        ws.cell(2, column, label)
    ws.append(["E1", "Ana Lima", "ana@example.com", "2024-01-02", "2025-01-01", "2024-01-02", "2024-04-01"])
    wb.save(path)
    return path


def test_a_label_under_two_groups_is_named_with_its_group_and_init_maps_it(tmp_path: Path) -> None:
    export = contract_and_probation(tmp_path / "contracts.xlsx")

    table = read_spreadsheet(export)
    assert table.info.headers == ["Employee ID", "Name", "Email", "Contract Start", "Contract End",
                                  "Probation Start", "Probation End"]

    config = tmp_path / "contracts.toml"
    assert hrimport("init", str(export), "-o", str(config)).exit_code == 0
    text = config.read_text()
    assert '"Contract Start" = "ec_start_date"' in text
    assert '"Contract End" = "ec_end_date"' in text
    assert '"Probation End" = "probation_end_date"' in text


def unsure(path: Path, merges: dict[str, str], lower: dict[str, str], people: list[list[str]]) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    for ref, label in merges.items():
        ws[ref.split(":")[0]] = label
        ws.merge_cells(ref)
    for ref, label in lower.items():
        ws[ref] = label
    for number, row in enumerate(people, start=3):
        for column, value in enumerate(row, start=1):
            if value and not isinstance(ws.cell(number, column), MergedCell):  # A3 of A1:A3 shows A1
                ws.cell(number, column, value)
    wb.save(path)
    return path


@pytest.mark.parametrize(("merges", "lower", "said"), [
    ({"A1:A3": "Employee ID", "B1:C1": "Personal"}, {"B2": "First Name", "C2": "Email"},
     ("the header over rows 1-2 has merged cells that do not form one header hrimport can read "
      "(A1:A3 is merged over 3 rows)")),
    ({"A1:A2": "Employee ID", "B1:D1": "Personal"}, {"B2": "First Name", "D2": "Email"},
     ("the header over rows 1-2 has merged cells that do not form one header hrimport can read "
      "('Personal' (B1:D1) has no label under it in C2)")),
], ids=["three-rows", "group-without-labels"])
def test_merges_that_do_not_form_a_two_row_header_are_refused_in_one_line(tmp_path: Path, merges, lower,
                                                                          said: str) -> None:
    export = unsure(tmp_path / "unsure.xlsx", merges, lower, [["E1", "Ana", "x", "ana@example.com"]] * 2)

    result = hrimport("init", str(export), "-o", str(tmp_path / "staff.toml"))

    assert result.exit_code == 2
    assert result.output == (f"Error: {export} (sheet 'Staff'): {said}; unmerge the header cells and keep one "
                             "header row (or name the columns in one row above the data)\n")


def test_a_cell_merged_over_rows_of_data_under_a_two_row_header_shows_on_each_of_them(tmp_path: Path) -> None:
    export = two_row_export(tmp_path / "two.xlsx", PEOPLE + [["E3", "Cy", "Diaz", "cy@example.com", "", "", "China"]])
    wb = openpyxl.load_workbook(export)
    wb.active.merge_cells("E4:E5")  # 'Clerk' shown on Bo's row and on Cy's
    wb.save(export)

    table = read_spreadsheet(export)

    assert table.info.header_rows == 2
    assert table.frame["Title"].tolist() == ["Nurse", "Clerk", "Clerk"]  # as Excel shows it (merged_cells)


def titled(path: Path, header_row: int) -> Path:
    """A one-row header under an unrelated title merged across the top (and a run date, for row 3)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "Staff export May 2026"
    ws.merge_cells("A1:G1")
    if header_row == 3:
        ws["A2"] = "Run date: 2026-05-31"
        ws.merge_cells("A2:C2")
    for column, label in enumerate(NAMES, start=1):
        ws.cell(header_row, column, label)
    for number, person in enumerate(PEOPLE, start=header_row + 1):
        for column, value in enumerate(person, start=1):
            ws.cell(number, column, value)
    wb.save(path)
    return path


@pytest.mark.parametrize("header_row", [2, 3])
def test_a_title_merged_above_a_one_row_header_is_read_as_before(tmp_path: Path, header_row: int, engine: str) -> None:
    table = read_spreadsheet(titled(tmp_path / "titled.xlsx", header_row))

    assert (table.info.header_row, table.info.header_rows) == (header_row, 1)
    assert table.info.headers == NAMES
    assert table.info.preamble == [["Staff export May 2026"], ["Run date: 2026-05-31"]][: header_row - 1]
    assert table.row_numbers == [header_row + 1, header_row + 2]
    assert table.frame.to_numpy().tolist() == PEOPLE


def test_a_header_cell_merged_over_a_column_of_values_is_read_as_before(tmp_path: Path) -> None:
    """'Name' merged over B1:C1 with the first and last names under it: a one-row header, as before."""
    export = unsure(tmp_path / "name.xlsx", {"B1:C1": "Name"}, {}, [])
    wb = openpyxl.load_workbook(export)
    ws = wb.active
    ws["A1"], ws["D1"] = "Employee ID", "Email"
    for row in (["E1", "Ana", "Lima", "ana@example.com"], ["E2", "Bo", "Chen", "bo@example.com"]):
        ws.append(row)
    wb.save(export)

    table = read_spreadsheet(export)

    assert (table.info.header_row, table.info.header_rows) == (1, 1)
    assert table.info.headers == ["Employee ID", "Name", "Column C", "Email"]
    assert table.row_numbers == [2, 3]


def test_to_fix_of_a_two_row_header_has_the_one_header_row_the_config_reads(tmp_path: Path, sandbox) -> None:
    """The rows to fix go under one header row of the names read (the report's and the config's), which the
    same config reads again."""
    export = two_row_export(tmp_path / "two.xlsx", [PEOPLE[0], ["E2", "Bo", "Chen", "bo@example.com", "Clerk",
                                                                 "someday", "China"]])
    config = tmp_path / "staff.toml"
    assert hrimport("init", str(export), "-o", str(config)).exit_code == 0
    config = filled_in(config)

    first = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"),
                     base_url=sandbox.base_url)

    assert first.exit_code == 1, first.output
    to_fix = max((tmp_path / "reports").glob("*/*/to_fix.xlsx"))
    ws = openpyxl.load_workbook(to_fix).active
    assert [[c.value for c in row] for row in ws.iter_rows(max_col=7)] == [
        NAMES, ["E2", "Bo", "Chen", "bo@example.com", "Clerk", "someday", "China"]]
    assert ws.merged_cells.ranges == set()
    again = read_spreadsheet(to_fix, expected_headers=NAMES)
    assert (again.info.header_rows, again.row_numbers, again.info.headers[:7]) == (1, [2], NAMES)


def test_a_big_two_row_header_sheet_is_still_read_a_chunk_at_a_time(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    people = [[f"E{n}", f"Name{n}", "Lima", f"p{n}@example.com", "Nurse", "2024-01-02", "Portugal"]
              for n in range(1, 301)]
    export = two_row_export(tmp_path / "big.xlsx", people)
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # what an export above 8 MB gets
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 40)

    chunks, streamed = read_spreadsheet_chunks(export, chunk_rows=100)
    tables = list(chunks)

    assert streamed
    assert tables[0].info.headers == NAMES and tables[0].info.header_rows == 2
    assert [n for t in tables for n in t.row_numbers] == list(range(3, 303))
    assert [row for t in tables for row in t.frame.to_numpy().tolist()] == people
