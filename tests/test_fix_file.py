"""HR opens ``to_fix.xlsx`` in Excel, corrects the red cells and imports the file again (issues 4 and 16).

Each test imports a real export (written by openpyxl or the csv module) into the sandbox over HTTP, opens
the ``to_fix`` files the run wrote the way Excel would show them (openpyxl: types, formats, fills,
comments), and where the story goes on, corrects cells and imports the file again with the same config.
"""

from __future__ import annotations

import csv
import datetime as dt
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.cell.cell import Cell
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.hyperlink import Hyperlink

from hrimport.outcomes import Outcome, Problem, RowOutcome, read_outcomes
from hrimport.report import fix_workbook, write_report
from hrimport.report.fix_marks import bad_cells, problem_text
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import latest_run, run_import

pytestmark = pytest.mark.usefixtures("instant_retries")

HIRED = dt.datetime(2020, 1, 31)
WIDTHS = {"A": 14.0, "B": 24.0, "C": 30.0, "F": 13.5}


def styled_export(path: Path, rows: list[dict[str, str]]) -> Path:
    """An export as HR systems write them: a merged bold title and a run date above a coloured header on
    row 3, ids as numbers shown ``000000``, hire dates as date cells shown ``dd/mm/yyyy``, set widths,
    e-mail addresses as mailto links, a country dropdown, a filter that hides the 4th person, a taller
    2nd row with a note on its e-mail. A cell given as text (``"31/02/2024"``) stays text."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws["A1"] = "Acme Sdn Bhd: staff export"
    ws["A1"].font = Font(bold=True, size=14)
    ws.merge_cells("A1:D1")
    ws["A2"] = "Run 2024-05-01 08:55"
    ws.append(HEADER)
    for cell in ws[3]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill(fill_type="solid", fgColor="DDEBF7")
    for row in rows:
        hired = HIRED if row["Hire Date"] == HIRED.date().isoformat() else row["Hire Date"]
        ws.append([int(row["Employee ID"]), *(row[h] for h in HEADER[1:5]), hired,
                   *(row[h] for h in HEADER[6:])])
        line = ws.max_row
        ws.cell(line, 1).number_format = "000000"
        if isinstance(hired, dt.datetime):
            ws.cell(line, 6).number_format = "dd/mm/yyyy"
        ws.cell(line, 3).hyperlink = Hyperlink(ref="", target=f"mailto:{row['Email']}")
    for letter, width in WIDTHS.items():
        ws.column_dimensions[letter].width = width
    countries = DataValidation(type="list", formula1='"MY,SG,CN"')
    countries.add("D4:D1000")
    ws.add_data_validation(countries)
    ws.auto_filter.ref = f"A3:P{ws.max_row}"
    ws.auto_filter.add_filter_column(3, ["MY", "SG"])
    if ws.max_row >= 7:
        ws.row_dimensions[7].hidden = True  # filtered out: not MY or SG
    ws.row_dimensions[5].height = 30
    ws["C5"].comment = Comment("Checked with payroll", "HRIS")
    wb.save(path)
    return path


def refusing_config(tmp_path: Path) -> Path:
    """The tests' staff config, also sending "Shoe Size", a data type the sandbox's company 99 does not have:
    a row with a shoe size is refused by the service (a problem about the row, not a cell). Its e-mail check
    is strict: an address that is not name@example.com is a cell to fix."""
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    custom = '"Cost Centre" = "Cost Center"'
    config.write_text(config.read_text().replace(custom, f'{custom}\n"Shoe Size" = "Shoe Size"'))
    return config


def first_month(tmp_path: Path, sandbox: Any) -> Path:
    """Five people, four needing attention: rows 5 (e-mail), 7 (country), 8 (a text that is no date) and 9
    (refused by the service); returns the run's report folder."""
    rows = [
        person(1, **{"Shoe Size": ""}),
        person(2, Email="nope", **{"Shoe Size": ""}),
        person(3, **{"Shoe Size": ""}),
        person(4, Country="Atlantis", **{"Shoe Size": ""}),
        person(5, **{"Hire Date": "31/02/2024", "Shoe Size": ""}),
        person(6),  # a shoe size the service refuses
    ]
    result, _ = run_import(tmp_path, sandbox, styled_export(tmp_path / "staff.xlsx", rows),
                           config=refusing_config(tmp_path))
    assert result.exit_code == 1, result.output
    return latest_run(tmp_path).parent


def is_red(cell: Cell) -> bool:
    return cell.fill.fill_type == "solid" and str(cell.fill.fgColor.rgb).endswith("FFC7CE")  # Excel's red


def test_to_fix_xlsx_is_the_source_workbook_with_only_the_rows_to_fix(tmp_path: Path, sandbox: Any) -> None:
    folder = first_month(tmp_path, sandbox)
    assert not (folder / "to_fix.csv").exists()
    ws = openpyxl.load_workbook(folder / "to_fix.xlsx")["Staff"]

    # the title rows as they were: merged, bold
    assert ws["A1"].value == "Acme Sdn Bhd: staff export" and ws["A1"].font.b
    assert [str(r) for r in ws.merged_cells.ranges] == ["A1:D1"]
    assert ws["A2"].value == "Run 2024-05-01 08:55"
    # the header on its own row, as styled, and the Problem column after the last one
    assert [c.value for c in ws[3]] == [*HEADER, "Problem"]
    assert ws["A3"].font.b and ws["A3"].fill.fgColor.rgb == "00DDEBF7"
    assert {letter: ws.column_dimensions[letter].width for letter in WIDTHS} == WIDTHS
    assert ws.freeze_panes == "A4"

    # rows 5, 7, 8 and 9, in order, moved up under the header, with their cells' types and formats
    assert ws.max_row == 7
    assert [ws.cell(r, 1).value for r in range(4, 8)] == [2, 4, 5, 6]
    assert {ws.cell(r, 1).number_format for r in range(4, 8)} == {"000000"}
    for r in (4, 5, 7):
        assert ws.cell(r, 6).is_date and ws.cell(r, 6).value == HIRED
        assert ws.cell(r, 6).number_format == "dd/mm/yyyy"
    assert ws["F6"].value == "31/02/2024" and not ws["F6"].is_date
    # a link still opens its own address, from the cell it moved to
    assert ws["C5"].hyperlink.target == "mailto:person4@acme.example" and ws["C5"].hyperlink.ref == "C5"
    # the row the filter hid is shown, a row keeps its height, the dropdown is still there
    assert not any(ws.row_dimensions[r].hidden for r in range(4, 8))
    assert ws.auto_filter.ref == "A3:P9" and not ws.auto_filter.filterColumn
    assert ws.row_dimensions[4].height == 30
    assert [dv.formula1 for dv in ws.data_validations.dataValidation] == ['"MY,SG,CN"']

    problems = [ws.cell(r, len(HEADER) + 1).value for r in range(4, 8)]
    assert [p.split(":")[0] for p in problems] == [f"Original row {n}" for n in (5, 7, 8, 9)]
    assert "'nope' is not an e-mail address" in problems[0]
    assert "Shoe Size" in problems[3]


def test_each_bad_cell_is_red_with_its_problem_in_a_comment(tmp_path: Path, sandbox: Any) -> None:
    ws = openpyxl.load_workbook(first_month(tmp_path, sandbox) / "to_fix.xlsx")["Staff"]
    marked = {c.coordinate: c.comment.text for row in ws.iter_rows() for c in row if is_red(c)}
    assert set(marked) == {"C4", "D5", "F6"}  # e-mail of original row 5, country of 7, hire date of 8
    assert marked["C4"].startswith("'nope' is not an e-mail address")
    assert "How to fix: If it is a typo, correct the address" in marked["C4"]
    assert marked["C4"].endswith("\n\nChecked with payroll")  # the file's own note stays, under ours
    assert marked["D5"].startswith("'Atlantis' is not a country")
    assert marked["F6"].startswith("'31/02/2024' is not a real date")
    # the row the service refused names no cell: only its Problem column says why
    assert not any(is_red(c) or c.comment for c in ws[7])
    assert ws.cell(7, len(HEADER) + 1).value.startswith("Original row 9: ")
    assert all(c.comment is None for row in ws.iter_rows() for c in row if not is_red(c))


def test_hr_fixes_the_red_cells_and_the_same_import_sends_the_rows(tmp_path: Path, sandbox: Any) -> None:
    folder = first_month(tmp_path, sandbox)
    wb = openpyxl.load_workbook(folder / "to_fix.xlsx")
    ws = wb["Staff"]
    ws["C4"] = "person2@acme.example"
    ws["D5"] = "SG"
    ws["F6"] = dt.datetime(2024, 2, 29)
    ws["P7"] = None  # the shoe size the service refused
    fixed = tmp_path / "to_fix_corrected.xlsx"
    wb.save(fixed)

    result, summary = run_import(tmp_path, sandbox, fixed, config=refusing_config(tmp_path))

    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 4 and summary["rows_read"] == 4
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000002"]["system_email"] == "person2@acme.example"
    assert stored["000004"]["country"] == "SG"
    assert stored["000005"]["job_start_date"] == "2024-02-29"
    assert stored["000006"]["job_start_date"] == "2020-01-31"  # a date cell carried over as a date
    # the Problem column is not sent, and the plan knows this file holds only the rows that needed fixing
    assert "Problem" not in result.output
    assert read_outcomes(latest_run(tmp_path).parent / "outcomes.jsonl").info.plan["partial"] is True


def test_a_to_fix_imported_with_a_row_still_wrong_gives_a_to_fix_with_one_problem_column(
    tmp_path: Path, sandbox: Any
) -> None:
    folder = first_month(tmp_path, sandbox)
    wb = openpyxl.load_workbook(folder / "to_fix.xlsx")
    wb["Staff"]["C4"] = "person2@acme.example"  # the rest left as they were
    wb.save(tmp_path / "half_fixed.xlsx")

    result, _ = run_import(tmp_path, sandbox, tmp_path / "half_fixed.xlsx", config=refusing_config(tmp_path))

    assert result.exit_code == 1, result.output
    ws = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx")["Staff"]
    assert [c.value for c in ws[3]] == [*HEADER, "Problem"]
    assert [ws.cell(r, 1).value for r in range(4, ws.max_row + 1)] == [4, 5, 6]
    # rows 5 to 7 of the file just imported
    problems = [ws.cell(r, 17).value.split(":")[0] for r in range(4, 7)]
    assert problems == [f"Original row {n}" for n in (5, 6, 7)]
    assert {c.coordinate for row in ws.iter_rows() for c in row if is_red(c)} == {"D4", "F5"}


def test_a_csv_source_gets_to_fix_xlsx_of_exact_text_beside_to_fix_csv(tmp_path: Path, sandbox: Any) -> None:
    config = phone_config(tmp_path)
    rows = [person(1, Phone="+65 8123 4567"), person(123, Phone="+65 8123 4567", Email="nope")]
    export = write_csv(tmp_path / "staff.csv", rows, [*HEADER, "Phone"])
    result, summary = run_import(tmp_path, sandbox, export, config=config)
    assert result.exit_code == 1, result.output
    folder = latest_run(tmp_path).parent
    assert {"to_fix.xlsx", "to_fix.csv"} <= set(summary["files"])

    ws = openpyxl.load_workbook(folder / "to_fix.xlsx").active
    assert [c.value for c in ws[1]] == [*HEADER, "Phone", "Problem"]
    id_cell, phone = ws["A2"], ws.cell(2, len(HEADER) + 1)
    assert (id_cell.value, id_cell.data_type) == ("000123", "s")  # not 123
    assert (phone.value, phone.data_type) == ("+65 8123 4567", "s")  # not a formula, not a number
    assert is_red(ws["C2"]) and ws["C2"].comment.text.startswith("'nope' is not an e-mail address")
    assert ws.cell(2, len(HEADER) + 2).value.startswith("Original row 3: ")

    # the CSV keeps its guard: Excel opening it would otherwise run +65 8123 4567 as a formula
    with open(folder / "to_fix.csv", encoding="utf-8-sig", newline="") as fh:
        [fix_row] = list(csv.DictReader(fh))
    assert fix_row["Phone"] == "'+65 8123 4567" and fix_row["Employee ID"] == "000123"
    assert fix_row["Problem"] == ws.cell(2, len(HEADER) + 2).value
    page = " ".join((folder / "report.html").read_text(encoding="utf-8").split())
    assert "<b>to_fix.xlsx</b>" in page and "open it in Excel, correct the cells marked red" in page
    assert "<b>to_fix.csv</b> holds the same rows for systems that need CSV." in page


def test_the_to_fix_xlsx_of_a_csv_source_imports_with_the_csv_config(tmp_path: Path, sandbox: Any) -> None:
    config = phone_config(tmp_path)
    rows = [person(123, Phone="+65 8123 4567", Email="nope")]
    run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows, [*HEADER, "Phone"]), config=config)
    wb = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx")
    wb.active["C2"] = "person123@acme.example"
    fixed = tmp_path / "fixed.xlsx"
    wb.save(fixed)

    result, _ = run_import(tmp_path, sandbox, fixed, config=config)

    assert result.exit_code == 0, result.output
    [stored] = sandbox.staff(99)
    assert stored["customer_system_id"] == "000123"
    assert stored["phone"] == "+65 8123 4567"
    assert stored["system_email"] == "person123@acme.example"


def phone_config(tmp_path: Path) -> Path:
    """Phone mapped; e-mail checked strictly, so that a row with "nope" for an address is a row to fix."""
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    mapped = '"Move Date" = "new_country_effective_date"'
    config.write_text(config.read_text().replace(mapped, f'{mapped}\n"Phone" = "phone"'))
    return config


def test_a_workbook_above_the_openpyxl_limit_gets_to_fix_from_the_run_with_cells_still_marked(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fix_workbook, "MAX_SHEET_XML", 1_000)  # as if the export were 100,000 rows
    ws = openpyxl.load_workbook(first_month(tmp_path, sandbox) / "to_fix.xlsx")["Staff"]
    fast_path_layout(ws)


def test_a_workbook_merging_a_whole_sheet_gets_to_fix_from_the_run_in_bounded_time(tmp_path: Path,
                                                                                   sandbox: Any) -> None:
    # the title's merge saved as covering every cell of the sheet (A1:XFD1048576: a 5 KB file): openpyxl makes
    # an object of each merged cell, and to_fix took 37 s and 3.7 GB; it is made from the cells the run kept
    export = styled_export(tmp_path / "staff.xlsx", [
        person(1, **{"Shoe Size": ""}), person(2, Email="nope", **{"Shoe Size": ""}),
        person(3, **{"Shoe Size": ""}), person(4, Country="Atlantis", **{"Shoe Size": ""}),
        person(5, **{"Hire Date": "31/02/2024", "Shoe Size": ""}), person(6)])
    with zipfile.ZipFile(export) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    sheet = "xl/worksheets/sheet1.xml"
    assert members[sheet].count(b'<mergeCell ref="A1:D1" />') == 1
    members[sheet] = members[sheet].replace(b'<mergeCell ref="A1:D1" />', b'<mergeCell ref="A1:XFD1048576" />')
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)

    result, _ = run_import(tmp_path, sandbox, export, config=refusing_config(tmp_path))

    assert result.exit_code == 1, result.output
    folder = latest_run(tmp_path).parent
    source = read_outcomes(folder / "outcomes.jsonl").info.source
    assert fix_workbook.source_workbook(source) is None  # not loaded by openpyxl at all
    ws = openpyxl.load_workbook(folder / "to_fix.xlsx")["Staff"]
    fast_path_layout(ws)


def test_a_report_rendered_again_after_the_export_changed_takes_the_cells_the_run_kept(
    tmp_path: Path, sandbox: Any
) -> None:
    folder = first_month(tmp_path, sandbox)
    styled_export(tmp_path / "staff.xlsx", [person(9)])  # next month's export, saved over this one
    files = write_report(read_outcomes(folder / "outcomes.jsonl"), tmp_path / "again")
    assert files.to_fix is not None
    fast_path_layout(openpyxl.load_workbook(files.to_fix)["Staff"])


def fast_path_layout(ws: Any) -> None:
    """The to_fix written from the cells the run kept: the same rows and marks, every cell text as the
    import read it (a date as 2020-01-31)."""
    assert ws["A1"].value == "Acme Sdn Bhd: staff export"
    assert [c.value for c in ws[3]] == [*HEADER, "Problem"]
    assert [ws.cell(r, 1).value for r in range(4, 8)] == ["000002", "000004", "000005", "000006"]
    assert ws["F4"].value == "2020-01-31"
    marked = {c.coordinate: c.comment.text for row in ws.iter_rows() for c in row if is_red(c)}
    assert set(marked) == {"C4", "D5", "F6"}
    assert marked["D5"].startswith("'Atlantis' is not a country")
    assert ws.cell(7, len(HEADER) + 1).value.startswith("Original row 9: ")


# --- what a row's marks say -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "text"),
    [
        (["Row 7, column 'Country': 'Atlantis' is not a country."],
         "Original row 7: Column 'Country': 'Atlantis' is not a country."),
        (["Row 7: Start date '31/02/2024' is not a date", "Row 7: Country 'Atlantis' is not a country code"],
         "Original row 7: Start date '31/02/2024' is not a date; Country 'Atlantis' is not a country code"),
        (["Row 7: the service rejected 'Ada': too long"],
         "Original row 7: The service rejected 'Ada': too long"),
        (["Row 7, column 'Name': the cell is empty.", "Row 7, column 'Country': 'Atlantis' is not a country."],
         "Original row 7: Column 'Name': the cell is empty. Column 'Country': 'Atlantis' is not a country."),
        ([], "Original row 7: Permission denied"),  # no problem: the outcome says it
        (["Row 7, column 'Name': 'A\x01da' is not valid."],  # a control character XML cannot hold
         "Original row 7: Column 'Name': 'A\ufffdda' is not valid."),
    ],
)
def test_the_problem_column_names_the_original_row_once(messages: list[str], text: str) -> None:
    row = RowOutcome(7, "E1", "Ada", Outcome.PERMISSION_DENIED, tuple(Problem("x", m, 7) for m in messages))
    assert problem_text(row) == text


def test_a_joined_field_marks_each_of_its_columns_and_a_warning_marks_none() -> None:
    problems = (
        Problem("missing-value", "Row 4, column 'First + Last': a value is required.", 4, "First + Last",
                "name"),
        Problem("ambiguous-country", "Row 4, column 'Country': 'Georgia' could be GE or US-GA.", 4, "Country",
                "country", "Georgia", severity="warning"),
        Problem("unknown-country", "Row 4: from the config.", 4, "(config constant country)", "country"),
    )
    marks = bad_cells(RowOutcome(4, "E1", "", Outcome.INVALID, problems), ["ID", "first", "LAST", "Country"])
    assert list(marks) == ["first", "LAST"]
    assert marks["first"].startswith("A value is required.\nHow to fix: ")



def test_the_to_fix_csv_of_a_cp1252_export_imports_with_the_same_config(tmp_path: Path, sandbox: Any) -> None:
    # A French export saved in Windows-1252, which the README says needs `encoding` set once: to_fix.csv is
    # written as UTF-8 with a BOM, and HR imports it with that same config.
    config = phone_config(tmp_path)
    config.write_text(config.read_text().replace("[source]\n", '[source]\nencoding = "cp1252"\n'))
    rows = [person(1, Name="Hélène Dupré"), person(2, Name="Zoë Bréhaut", Email="nope")]
    export = write_csv(tmp_path / "staff.csv", rows, [*HEADER, "Phone"], encoding="cp1252")
    result, _ = run_import(tmp_path, sandbox, export, config=config)
    assert result.exit_code == 1, result.output
    with open(latest_run(tmp_path).parent / "to_fix.csv", encoding="utf-8-sig", newline="") as fh:
        [fix_row] = list(csv.DictReader(fh))
    fix_row["Email"] = "zoe@acme.example"
    fixed = write_csv(tmp_path / "to_fix_corrected.csv", [fix_row], [*HEADER, "Phone", "Problem"],
                      encoding="utf-8-sig")

    result, summary = run_import(tmp_path, sandbox, fixed, config=config)

    assert result.exit_code == 0, result.output
    assert summary["source"]["encoding"] == "utf-8-sig"  # the file's byte-order mark, not the config's cp1252
    assert {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)} == {
        "000001": "Hélène Dupré", "000002": "Zoë Bréhaut"}


def test_a_to_fix_is_not_an_export_that_changed_for_a_config_made_by_init(tmp_path: Path, sandbox: Any) -> None:
    # hrimport init writes expected_columns; the Problem column to_fix adds is not a new column of the export,
    # so the re-import says nothing about updating them (which would put "Problem" in the config).
    config = phone_config(tmp_path)
    expected = ", ".join(f'"{h}"' for h in [*HEADER, "Phone"])
    config.write_text(config.read_text().replace("[source]\n", f"[source]\nexpected_columns = [{expected}]\n"))
    rows = [person(1), person(2, Email="nope")]
    run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows, [*HEADER, "Phone"]), config=config)
    folder = latest_run(tmp_path).parent
    wb = openpyxl.load_workbook(folder / "to_fix.xlsx")
    wb.active["C2"] = "person2@acme.example"
    wb.save(tmp_path / "fixed.xlsx")

    for fixed in (tmp_path / "fixed.xlsx", folder / "to_fix.csv"):
        result, summary = run_import(tmp_path, sandbox, fixed, config=config)

        assert result.exit_code in (0, 1), result.output
        assert "export changed" not in result.output
        assert summary["notes"] == []
