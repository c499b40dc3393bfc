"""HR imports ``to_fix`` again: a cell nobody touched sends what the first import would have sent.

Principle 1 on the way round: HR corrects the red cells of ``to_fix.xlsx`` (or ``to_fix.csv``) and imports it
with the same config. Every other cell must come back as the first import read it, and a cell that held no
value to send (an error, a formula saved without its result) must still hold none, so that the import flags it
again instead of sending a stand-in. Each test imports a real export (written by the csv module, xlsxwriter,
xlwt or odfpy) into the sandbox over HTTP, then imports the ``to_fix`` that run wrote, as it is or corrected
with openpyxl, and compares what the sandbox stored.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter

from hrimport.report import fix_workbook
from tests.staff_files import HEADER, person, write_config, write_csv, write_formulas_workbook
from tests.test_staff_import import (
    FIXTURES,
    _ods_with_errors,
    _xls_with_errors,
    latest_run,
    outcome_of,
    run_import,
)

pytestmark = pytest.mark.usefixtures("instant_retries")


def problems_of(tmp_path: Path, external_id: str) -> list[tuple[str, str | None, str | None]]:
    """(code, column, value) of each problem the latest run found on the row of ``external_id``."""
    return [(p["code"], p["column"], p["value"]) for p in outcome_of(tmp_path, external_id)["problems"]
            if p["severity"] == "error"]


def to_fix_of_latest_run(tmp_path: Path) -> Path:
    return latest_run(tmp_path).parent / "to_fix.xlsx"


def column_of(header: str) -> int:
    return HEADER.index(header) + 1


# --- a CSV made for Excel --------------------------------------------------------------------------------------


def test_an_id_a_csv_writes_for_excel_as_a_formula_comes_back_from_to_fix_xlsx_as_the_id(
    tmp_path: Path, sandbox: Any
) -> None:
    # Exports made for Excel keep an id's zeros as ="000002", which the import reads as 000002, the text Excel
    # shows. to_fix.xlsx showed the formula's text instead, and imported again it added a second person,
    # '="000002"', beside the first import's people.
    rows = [person(1), person(2, Email="nope")]
    for row in rows:
        row["Employee ID"] = f'="{row["Employee ID"]}"'
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    result, _ = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows), config=config)
    assert result.exit_code == 1, result.output

    book = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path))
    sheet = book.active
    assert (sheet["A2"].value, sheet["A2"].data_type) == ("000002", "s")
    sheet["C2"] = "person2@acme.example"
    book.save(tmp_path / "corrected.xlsx")
    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)

    assert result.exit_code == 0, result.output
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001", "000002"]


def test_an_apostrophe_of_the_value_stays_and_only_the_guard_of_to_fix_csv_goes(tmp_path: Path, sandbox: Any) -> None:
    # Dutch surnames start with an apostrophe ('t Hooft): it is the name, not to_fix.csv's guard, which only
    # ever stands before a value a spreadsheet would run (=, +, -, @).
    rows = [person(1, Name="'t Hooft", Title="+Lead", Email="nope")]
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows), config=config)
    to_fix_csv = latest_run(tmp_path).parent / "to_fix.csv"
    text = to_fix_csv.read_text(encoding="utf-8-sig")
    assert ",'t Hooft,nope," in text and ",'+Lead," in text
    sheet = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path)).active
    assert [sheet.cell(2, column_of(h)).value for h in ("Name", "Title")] == ["'t Hooft", "+Lead"]
    (tmp_path / "corrected.csv").write_text(text.replace(",nope,", ",hooft@acme.example,"), encoding="utf-8-sig")

    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.csv", config=config)

    assert result.exit_code == 0, result.output
    [stored] = sandbox.staff(99)
    assert (stored["name"], stored["job_title"]) == ("'t Hooft", "+Lead")


def test_a_header_a_spreadsheet_would_run_comes_back_from_to_fix_csv_as_named(tmp_path: Path, sandbox: Any) -> None:
    # The HR system names a column "+Cost Centre": to_fix.csv guards the header as it guards cells
    # ('+Cost Centre), and imported again with the same config it was refused: the mapped column was missing.
    header = [("+Cost Centre" if h == "Cost Centre" else h) for h in HEADER]
    rows = [{("+Cost Centre" if k == "Cost Centre" else k): v for k, v in person(n, **{"Cost Centre": f"CC-{n}"}).items()}
            for n in (1, 2)]
    rows[1]["Email"] = "nope"
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    config.write_text(config.read_text().replace('"Cost Centre" = "Cost Center"', '"+Cost Centre" = "Cost Center"'))
    result, _ = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows, header), config=config)
    assert result.exit_code == 1, result.output
    text = (latest_run(tmp_path).parent / "to_fix.csv").read_text(encoding="utf-8-sig")
    assert ",'+Cost Centre," in text.splitlines()[0]  # still guarded for the spreadsheet that opens it
    (tmp_path / "corrected.csv").write_text(text.replace(",nope,", ",person2@acme.example,"), encoding="utf-8-sig")

    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.csv", config=config)

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: {d["name"]: d["value"] for d in s["customer_data_type"]}
              for s in sandbox.staff(99)}
    assert stored == {"000001": {"Cost Center": "CC-1"}, "000002": {"Cost Center": "CC-2"}}


# --- cells that hold no value to send --------------------------------------------------------------------------


@pytest.fixture(params=["from the workbook", "from the cells read"])
def to_fix_writer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """to_fix.xlsx written from the source workbook (openpyxl), or from the cells the run read, as for a
    workbook above the openpyxl limit."""
    if request.param == "from the cells read":
        monkeypatch.setattr(fix_workbook, "MAX_SHEET_XML", 1_000)
    return request.param


def test_a_formula_saved_with_a_stand_in_is_still_not_calculated_in_to_fix(
    tmp_path: Path, sandbox: Any, to_fix_writer: str
) -> None:
    # xlsxwriter saves 0 (or the value it is told) with each formula and asks for them to be calculated again:
    # the first import sends none of them. to_fix held the stand-ins as values, so importing it as it was
    # sent person 3's cost centre as 2, the value xlsxwriter was told, never calculated.
    config = write_config(tmp_path / "staff.toml")
    result, _ = run_import(tmp_path, sandbox, write_formulas_workbook(tmp_path / "staff.xlsx"), config=config)
    assert result.exit_code == 1, result.output
    first = {n: problems_of(tmp_path, n) for n in ("000002", "000003")}
    assert [code for code, _, _ in first["000003"]] == ["formula-not-calculated"]

    sheet = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path)).active
    assert sheet.cell(3, column_of("Cost Centre")).value == "=1+1"  # a formula again, at its new row
    result, _ = run_import(tmp_path, sandbox, to_fix_of_latest_run(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001"]
    assert [code for code, _, _ in problems_of(tmp_path, "000003")] == ["formula-not-calculated"]
    assert {(code, column) for code, column, _ in problems_of(tmp_path, "000002")} == {
        (code, column) for code, column, _ in first["000002"]}


def formulas_on_other_rows(path: Path) -> Path:
    """The staff export by xlsxwriter, persons 2 and 3 with formulas saved without results: person 2's title
    made of its own row's name (``=B3&" (acting)"``), person 3's cost centre copied from the row above."""
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate([person(1), person(2), person(3)], start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    sheet.write_formula(2, HEADER.index("Title"), '=B3&" (acting)"', None, "")
    sheet.write_formula(3, HEADER.index("Cost Centre"), "=O3", None, "")
    book.close()
    return path


def test_a_formula_moves_with_its_row_in_to_fix_or_else_shows_n_a(
    tmp_path: Path, sandbox: Any, to_fix_writer: str
) -> None:
    # A formula reading its own row still means the same once its row moves up in the workbook itself; one
    # reading another row would read whatever row now sits there, so to_fix shows #N/A: no value, until HR
    # types one. Written from the cells the run read, whose columns may sit elsewhere than in the source, a
    # formula with references shows #N/A too.
    config = write_config(tmp_path / "staff.toml")
    run_import(tmp_path, sandbox, formulas_on_other_rows(tmp_path / "staff.xlsx"), config=config)

    sheet = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path)).active
    assert [sheet.cell(r, 1).value for r in (2, 3)] == ["000002", "000003"]
    title, cost_centre = sheet.cell(2, column_of("Title")), sheet.cell(3, column_of("Cost Centre"))
    assert (cost_centre.value, cost_centre.data_type) == ("#N/A", "e")
    result, _ = run_import(tmp_path, sandbox, to_fix_of_latest_run(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    if to_fix_writer == "from the workbook":
        assert (title.value, title.data_type) == ('=B2&" (acting)"', "f")
        assert problems_of(tmp_path, "000002") == [("formula-not-calculated", "Title", '=B2&" (acting)"')]
    else:
        assert (title.value, title.data_type) == ("#N/A", "e")
        assert problems_of(tmp_path, "000002") == [("error-value", "Title", "#N/A")]
    assert problems_of(tmp_path, "000003") == [("error-value", "Cost Centre", "#N/A")]
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001"]


def xlsx_with_errors(path: Path) -> Path:
    """The export with person 2's Country and Cost Centre showing #N/A and #DIV/0!, by openpyxl."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Staff"
    sheet.append(HEADER)
    for row in (person(1, Country="MY"), person(2)):
        sheet.append([row[h] for h in HEADER])
    sheet.cell(3, column_of("Country")).value = "#N/A"
    sheet.cell(3, column_of("Cost Centre")).value = "#DIV/0!"
    book.save(path)
    return path


def saved_by_libreoffice(path: Path) -> Path:
    return Path(shutil.copy(FIXTURES / f"staff_errors{path.suffix}", path))


@pytest.mark.parametrize(("name", "write", "big"), [
    ("staff.xlsx", xlsx_with_errors, False), ("staff.xlsx", xlsx_with_errors, True),
    ("staff.xls", _xls_with_errors, False), ("staff.ods", _ods_with_errors, False),
    ("staff.xls", saved_by_libreoffice, False), ("staff.ods", saved_by_libreoffice, False),
], ids=["xlsx", "xlsx-big", "xls-xlwt", "ods-odfpy", "xls-libreoffice", "ods-libreoffice"])
def test_a_cell_showing_an_error_still_shows_it_in_to_fix(
    tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch, name: str, write: Callable[[Path], Path],
    big: bool
) -> None:
    # to_fix of an .xls or .ods (and of a big .xlsx) is written from the cells the run read: an error came out
    # as the text '#N/A', which the import sends like any text. HR corrected the red Country and the cost
    # centre '#DIV/0!' reached payroll.
    if big:  # as if above the openpyxl limit: to_fix written from the cells the run read
        monkeypatch.setattr(fix_workbook, "MAX_SHEET_XML", 1_000)
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')
    run_import(tmp_path, sandbox, write(tmp_path / name), config=config)
    first = problems_of(tmp_path, "000002")
    assert first == [("error-value", "Country", "#N/A"), ("error-value", "Cost Centre", "#DIV/0!")]

    result, _ = run_import(tmp_path, sandbox, to_fix_of_latest_run(tmp_path), config=config)
    assert result.exit_code == 1, result.output
    assert problems_of(tmp_path, "000002") == first

    book = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path))
    book.active.cell(2, column_of("Country")).value = "MY"  # HR corrects the cell marked red, and only it
    book.save(tmp_path / "corrected.xlsx")
    run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)
    assert problems_of(tmp_path, "000002") == [("error-value", "Cost Centre", "#DIV/0!")]
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001"]


# --- what the to_fix of an .xls, an .ods or a big .xlsx keeps of the workbook ----------------------------------


def xls_of_1904(path: Path, *, sheets: tuple[str, ...] = ("Staff",)) -> Path:
    """A Mac Excel 97-2003 export (dates counted from 1904-01-01, xlwt): the table on the last of ``sheets``,
    hire dates as date cells and birth dates as the serial numbers a date column shows in General format;
    person 2's e-mail is 'nope'."""
    import xlwt

    book = xlwt.Workbook()
    book.dates_1904 = True
    for name in sheets[:-1]:
        book.add_sheet(name).write(0, 0, "Headcount report")
    sheet = book.add_sheet(sheets[-1])
    date = xlwt.easyxf(num_format_str="dd/mm/yyyy")
    births = {1: 32645, 2: 29261}  # 1993-05-18 and 1984-02-11 in the 1904 date system
    for c, header in enumerate(HEADER):
        sheet.write(0, c, header)
    for n in (1, 2):
        row = person(n, Email="nope" if n == 2 else f"person{n}@acme.example")
        for c, header in enumerate(HEADER):
            if header == "Hire Date":
                sheet.write(n, c, dt.datetime(2020, 1, 31), date)
            elif header == "Birth Date":
                sheet.write(n, c, births[n])
            else:
                sheet.write(n, c, row[header])
    book.save(str(path))
    return path


def test_a_birth_date_of_a_mac_excel_xls_is_the_same_day_after_to_fix(tmp_path: Path, sandbox: Any) -> None:
    # to_fix.xlsx counted the serial numbers it carried from 1900, as Windows Excel does: person 2's birth
    # date, 1984-02-11, came back four years and a day earlier.
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    result, _ = run_import(tmp_path, sandbox, xls_of_1904(tmp_path / "staff.xls"), config=config)
    assert result.exit_code == 1, result.output
    book = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path))
    book.active.cell(2, column_of("Email")).value = "person2@acme.example"
    book.save(tmp_path / "corrected.xlsx")

    result, _ = run_import(tmp_path, sandbox, tmp_path / "corrected.xlsx", config=config)

    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"]: s["birthdate"] for s in sandbox.staff(99)} == {
        "000001": "1993-05-18", "000002": "1984-02-11"}


def test_the_to_fix_of_an_xls_read_by_sheet_position_imports_with_the_same_config(
    tmp_path: Path, sandbox: Any
) -> None:
    # The config reads the second sheet (sheet = 1); to_fix.xlsx had only that sheet, and the same config
    # refused it (exit 2): "has no sheet number 1".
    config = write_config(tmp_path / "staff.toml", email_check="strict")
    config.write_text(config.read_text().replace("[source]\n", "[source]\nsheet = 1\n"))
    export = xls_of_1904(tmp_path / "staff.xls", sheets=("Cover", "Staff"))
    result, _ = run_import(tmp_path, sandbox, export, config=config)
    assert result.exit_code == 1, result.output

    result, summary = run_import(tmp_path, sandbox, to_fix_of_latest_run(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    assert summary["source"]["sheet"] == "Staff"
    assert problems_of(tmp_path, "000002") == [("not-an-email", "Email", "nope")]
    book = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path))
    assert book.sheetnames == ["Cover", "Staff"] and book.active.title == "Staff"
    assert book["Cover"].sheet_state == "hidden"  # a place holder, so that the position still names Staff


# --- LibreOffice ------------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed here")
def test_a_formula_kept_in_to_fix_is_calculated_once_libreoffice_saves_it(tmp_path: Path, sandbox: Any) -> None:
    # The comment on the cell says to open the file and save it: LibreOffice then calculates the formula at
    # its new row, and the import sends the result.
    config = write_config(tmp_path / "staff.toml")
    run_import(tmp_path, sandbox, formulas_on_other_rows(tmp_path / "staff.xlsx"), config=config)
    book = openpyxl.load_workbook(to_fix_of_latest_run(tmp_path))
    book.active.cell(3, column_of("Cost Centre")).value = "CC-3"  # the #N/A, typed by HR
    book.save(tmp_path / "corrected.xlsx")
    saved = tmp_path / "saved"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{tmp_path}/lo", "--headless", "--convert-to", "xlsx",
                    "--outdir", str(saved), str(tmp_path / "corrected.xlsx")],
                   check=True, capture_output=True, timeout=120)

    result, _ = run_import(tmp_path, sandbox, saved / "corrected.xlsx", config=config)

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000002"]["job_title"] == "Person 2 (acting)"
    assert stored["000003"]["customer_data_type"] == [{"name": "Cost Center", "value": "CC-3"}]
