"""An HR person keeps the staff list in a workbook and merges each site's name down over the rows of its people:
Excel shows 'Jurong' once, across rows 2 to 4, and stores it in H2 alone. Read as stored, Bo and Cy (rows 3 and 4)
were sent no location, and a country merged the same way held them back as "value required" though the sheet
shows one. Now each row a merge covers is sent the value Excel shows on it, and the report says where it came
from (``merged-cell`` in "How values were read"); a blank row under a merge stays a blank row, and a value merged
across columns is not spread (README, "Layout and refusals")."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter
import xlwt
from click.testing import CliRunner, Result
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import CoveredTableCell, Table, TableRow

from hrimport import reader
from hrimport.cli import main
from hrimport.reader import read_spreadsheet, read_spreadsheet_chunks, xlsx_stream
from tests.test_two_row_header import text_cell

TOKEN = "demo-customer-99"
HEADER = ["Employee ID", "Name", "Email", "Country", "Title", "Start Date", "Staff Type", "Site"]
CONFIG = """
[service]
customer_id = 99
base_url = "{base_url}"

[report]
job = "sites"

[staff]
customer_system_id_type = "Sheet"

[staff.columns]
"Employee ID" = "customer_system_id"
"Name" = "name"
"Email" = "system_email"
"Country" = "country"
"Title" = "job_title"
"Start Date" = "job_start_date"
"Staff Type" = "staff_type"
"Site" = "location"
"""


def hrimport(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": TOKEN}, catch_exceptions=False)


def person(external_id: str, name: str, country: str = "", site: str = "") -> list[str]:
    return [external_id, name, f"{name.lower()}@example.com", country, "Nurse", "2024-01-02", "Payroll", site]


def sites_workbook(path: Path, prefix: str) -> Path:
    """Ana, Bo and Cy at Jurong (H2:H4), Di and Ed at Tampines (H5:H7, over the blank row 7); the country merged
    down over everyone (D2:D7), as a person keeps such a list."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(HEADER)
    ws.append(person(f"{prefix}1", "Ana", "SG", "Jurong"))
    ws.append(person(f"{prefix}2", "Bo"))
    ws.append(person(f"{prefix}3", "Cy"))
    ws.append(person(f"{prefix}4", "Di", site="Tampines"))
    ws.append(person(f"{prefix}5", "Ed"))
    for ref in ("H2:H4", "H5:H7", "D2:D6"):
        ws.merge_cells(ref)
    wb.save(path)
    return path


def test_each_person_under_a_merged_site_is_sent_the_site_excel_shows_and_the_report_says_so(
        tmp_path: Path, sandbox: Any) -> None:
    prefix = uuid.uuid4().hex[:6]
    export = sites_workbook(tmp_path / "staff.xlsx", prefix)
    config = tmp_path / "staff.toml"
    config.write_text(CONFIG.format(base_url=sandbox.base_url))

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"))

    assert result.exit_code == 0, result.output
    assert "5 of 5 rows imported." in result.output  # the blank row 7 under Tampines is no person
    stored = {s["customer_system_id"]: (s["country"], s["location"]) for s in sandbox.staff(99)
              if s["customer_system_id"].startswith(prefix)}
    assert stored == {f"{prefix}1": ("SG", "Jurong"), f"{prefix}2": ("SG", "Jurong"), f"{prefix}3": ("SG", "Jurong"),
                      f"{prefix}4": ("SG", "Tampines"), f"{prefix}5": ("SG", "Tampines")}
    summary = json.loads(max((tmp_path / "reports").glob("sites/*/summary.json")).read_text())
    told = [(v["field"], v["rule"], v["rows"], [(e["row"], e["read"], e["sent"], e["rows"]) for e in v["examples"]])
            for v in summary["values_read"] if v["kind"] == "merged-cell"]
    rule = "a cell merged down over rows: the value its first cell holds, on each row it covers, as Excel shows it"
    assert told == [("country", rule, 4, [(3, "", "SG", 4)]),
                    ("location", rule, 3, [(3, "", "Jurong", 2), (6, "", "Tampines", 1)])]


def test_a_merge_read_in_chunks_gives_every_chunk_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big sheet is read a chunk at a time: a site merged over rows 90 to 130 crosses the chunk that ends at
    row 101, and the rows of the next chunk get the value all the same, as the whole read gives them."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(HEADER)
    for n in range(1, 301):
        ws.append(person(f"E{n}", f"P{n}", "SG", "Jurong" if n == 89 else ""))
    ws.merge_cells("H90:H130")
    wb.save(tmp_path / "big.xlsx")
    whole = read_spreadsheet(tmp_path / "big.xlsx")
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)  # what an export above 8 MB gets
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 40)

    chunks, streamed = read_spreadsheet_chunks(tmp_path / "big.xlsx", chunk_rows=100)
    sites = [site for table in chunks for site in table.frame["Site"].tolist()]

    assert streamed
    assert sites == ["Jurong" if 90 <= row <= 130 else "" for row in range(2, 302)]
    assert whole.frame["Site"].tolist() == sites


def xls_sites(path: Path) -> Path:
    wb = xlwt.Workbook()
    ws = wb.add_sheet("Staff")
    for j, label in enumerate(HEADER):
        ws.write(0, j, label)
    rows = [person("E1", "Ana", "SG", ""), person("E2", "Bo", "SG"), person("E3", "Cy", "SG")]
    for i, row in enumerate(rows, start=1):
        for j, value in enumerate(row[:-1]):
            ws.write(i, j, value)
    ws.write_merge(1, 3, 7, 7, "Jurong")
    wb.save(str(path))
    return path


def ods_sites(path: Path) -> Path:
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    cell = text_cell
    header = TableRow()
    for label in HEADER:
        header.addElement(cell(label))
    table.addElement(header)
    for n, name in enumerate(["Ana", "Bo", "Cy"], start=1):
        row = TableRow()
        for value in person(f"E{n}", name, "SG")[:-1]:
            row.addElement(cell(value))
        row.addElement(cell("Jurong", numberrowsspanned=3) if n == 1 else CoveredTableCell())
        table.addElement(row)
    doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


@pytest.mark.parametrize("write", [xls_sites, ods_sites], ids=["xls", "ods"])
def test_an_xls_or_ods_merge_is_read_as_excel_shows_it_too(tmp_path: Path, write: Any) -> None:
    table = read_spreadsheet(write(tmp_path / f"staff.{write.__name__[:3]}"))

    assert table.frame["Site"].tolist() == ["Jurong", "Jurong", "Jurong"]
    assert [(read.kind, read.positions.tolist()) for read in table.cells_read["Site"]] == [("merged-cell", [1, 2])]


def test_a_value_merged_across_columns_stays_in_its_own_column(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(HEADER)
    ws.append(person("E1", "Ana", "SG", ""))
    ws["E2"] = "Nurse, Jurong"
    ws["F2"], ws["G2"] = None, None
    ws.merge_cells("E2:G2")  # the title shown over the start date and staff type columns
    wb.save(tmp_path / "across.xlsx")

    table = read_spreadsheet(tmp_path / "across.xlsx")

    assert table.frame[["Title", "Start Date", "Staff Type"]].to_numpy().tolist() == [["Nurse, Jurong", "", ""]]
    assert "merged-cell" not in [read.kind for reads in table.cells_read.values() for read in reads]


def test_a_row_to_fix_under_a_merged_site_keeps_the_site_it_was_read_with(tmp_path: Path, sandbox: Any) -> None:
    """Bo's row (under Jurong, merged over H2:H4) needs fixing: its to_fix row shows Jurong, the value the import
    read and Excel showed on it, where it was empty (the merge is undone as the rows move up), so that Bo, fixed
    and imported again, was sent no location."""
    prefix = uuid.uuid4().hex[:6]
    export = sites_workbook(tmp_path / "staff.xlsx", prefix)
    wb = openpyxl.load_workbook(export)
    wb["Staff"]["C3"] = "not an e-mail"  # Bo's
    wb["Staff"]["B3"] = None  # a required name: Bo needs attention
    wb.save(export)
    config = tmp_path / "staff.toml"
    config.write_text(CONFIG.format(base_url=sandbox.base_url))

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"))

    assert result.exit_code == 1, result.output
    fix = max((tmp_path / "reports").glob("sites/*/to_fix.xlsx"))
    rows = [list(r) for r in openpyxl.load_workbook(fix)["Staff"].iter_rows(values_only=True)]
    assert [row[:8] for row in rows[1:]] == [[f"{prefix}2", None, "not an e-mail", "SG", "Nurse", "2024-01-02",
                                              "Payroll", "Jurong"]]


def test_a_value_stored_under_a_merge_is_sent_as_excel_shows_the_merge_and_the_report_names_it(
        tmp_path: Path, sandbox: Any) -> None:
    """A program wrote Bo's site, Tampines, into H3, then merged H2:H4 under Jurong. Excel shows Jurong over all
    three rows and nothing of Tampines (Excel itself drops such a value when a person merges cells). Bo was sent
    Tampines, a value nobody saw; now Bo is sent Jurong, and the report's line says which value it stood over."""
    prefix = uuid.uuid4().hex[:6]
    export = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(export)
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for i, row in enumerate([person(f"{prefix}1", "Ana", "SG", "Jurong"), person(f"{prefix}2", "Bo", "SG"),
                             person(f"{prefix}3", "Cy", "SG")], start=1):
        sheet.write_row(i, 0, row)
    sheet.merge_range("H2:H4", "Jurong")
    sheet.write("H3", "Tampines")  # stored under the merge: Excel does not show it
    book.close()
    config = tmp_path / "staff.toml"
    config.write_text(CONFIG.format(base_url=sandbox.base_url))

    result = hrimport("staff", "import", str(config), str(export), "--report-dir", str(tmp_path / "reports"))

    assert result.exit_code == 0, result.output
    sites = {s["customer_system_id"]: s["location"] for s in sandbox.staff(99) if s["customer_system_id"].startswith(prefix)}
    assert sites == {f"{prefix}1": "Jurong", f"{prefix}2": "Jurong", f"{prefix}3": "Jurong"}
    summary = json.loads(max((tmp_path / "reports").glob("sites/*/summary.json")).read_text())
    told = [(v["rule"], v["rows"], [(e["row"], e["read"], e["sent"]) for e in v["examples"]])
            for v in summary["values_read"] if v["kind"] == "merged-cell"]
    assert told == [
        ("a cell merged down over rows: the value its first cell holds, on each row it covers, as Excel shows it",
         1, [(4, "", "Jurong")]),
        (("a cell merged down over rows: the value its first cell holds, as Excel shows it, over a value stored under "
         "the merge that Excel does not show"), 1, [(3, "Tampines", "Jurong")])]
