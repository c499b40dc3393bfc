"""A company keeps one table on several sheets (a sheet per country): the import reads one of them only when the
config names it, never the first one silently, leaving the people on the others without a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter
from click.testing import CliRunner, Result
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableRow
from openpyxl import Workbook

from hrimport import reader
from hrimport.cli import main
from hrimport.reader import read_spreadsheet, read_spreadsheet_chunks
from tests.test_timeoff_import import HEADER as LEAVE_HEADER
from tests.test_timeoff_import import add_staff
from tests.test_timeoff_import import write_config as write_leave_config
from tests.test_two_row_header import text_cell

pytestmark = pytest.mark.usefixtures("instant_retries")

TOKEN = "demo-customer-99"
HEADER = ["Employee ID", "Name", "Email", "Country", "Job Title", "Start Date", "Type"]
ANA = ["E1", "Ana", "a@example.com", "SG", "Nurse", "2024-01-02", "Payroll"]
BO = ["E2", "Bo", "b@example.com", "MY", "Clerk", "2024-01-02", "Payroll"]
REFUSAL = ("{path}: sheets 'Singapore' and 'Malaysia' both hold this table (header: 'Employee ID', 'Name', ...): "
           'name the one to import with sheet = "Singapore" in [source] (a config per sheet imports each)')

CONFIG = """
[service]
customer_id = 99

[source]
{source}

[report]
job = "sheets"

[staff]
customer_system_id_type = "HRIS"

[staff.columns]
"Employee ID" = "customer_system_id"
"Name" = "name"
"Email" = "system_email"
"Country" = "country"
"Job Title" = "job_title"
"Start Date" = "job_start_date"
"Type" = "staff_type"
"""


def hrimport(*args: str, sandbox: Any | None = None) -> Result:
    env = {"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": sandbox.base_url if sandbox else ""}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def country_workbook(path: Path, *, hidden_malaysia: bool = False, second: str = "Malaysia",
                     second_rows: tuple[list[str], ...] = (BO,)) -> Path:
    """The brief's workbook: a sheet per country, each holding the same table (the second sheet named ``second``,
    holding ``second_rows`` under its header)."""
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Singapore"
    ws.append(HEADER)
    ws.append(ANA)
    ws2 = wb.create_sheet(second)
    ws2.append(HEADER)
    for row in second_rows:
        ws2.append(row)
    if hidden_malaysia:
        ws2.sheet_state = "hidden"
    wb.save(path)
    return path


def write_config(path: Path, source: str = "") -> Path:
    path.write_text(CONFIG.format(source=source), encoding="utf-8")
    return path


def test_a_workbook_of_a_sheet_per_country_is_refused_before_anything_is_sent(tmp_path: Path, sandbox) -> None:
    source = country_workbook(tmp_path / "sheets.xlsx")
    result = hrimport("staff", "import", str(write_config(tmp_path / "staff.toml")), str(source),
                      "--report-dir", str(tmp_path / "reports"), sandbox=sandbox)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == "Error: " + REFUSAL.format(path=source)
    assert sandbox.staff(99) == []
    assert [r for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")] == []


def test_the_sheet_named_in_the_config_is_imported_alone(tmp_path: Path, sandbox) -> None:
    source = country_workbook(tmp_path / "sheets.xlsx")
    config = write_config(tmp_path / "staff.toml", 'sheet = "Malaysia"')
    result = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                      sandbox=sandbox)
    assert result.exit_code == 0, result.output
    assert [(s["customer_system_id"], s["name"], s["country"]) for s in sandbox.staff(99)] == [("E2", "Bo", "MY")]


def test_a_sheet_of_another_table_beside_the_people_imports_as_before(tmp_path: Path, sandbox) -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Staff"
    ws.append(HEADER)
    ws.append(ANA)
    lists = wb.create_sheet("Lists")
    lists.append(["Country", "Type", "Job Title"])  # the drop-down lists: some of the same words, no people
    lists.append(["SG", "Payroll", "Nurse"])
    wb.save(tmp_path / "staff.xlsx")
    result = hrimport("staff", "import", str(write_config(tmp_path / "staff.toml")), str(tmp_path / "staff.xlsx"),
                      "--report-dir", str(tmp_path / "reports"), sandbox=sandbox)
    assert result.exit_code == 0, result.output
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["E1"]


def test_a_hidden_sheet_holding_the_same_table_is_not_counted(tmp_path: Path) -> None:
    """Nobody sees a hidden sheet in Excel, the reader passes over hidden sheets when it chooses, and workbooks
    keep hidden copies of their table (last month's, a template): only visible sheets count."""
    source = country_workbook(tmp_path / "sheets.xlsx", hidden_malaysia=True)
    result = hrimport("staff", "validate", str(write_config(tmp_path / "staff.toml")), str(source))
    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked" in result.output


def test_a_visible_sheet_of_the_same_header_with_nobody_under_it_is_not_counted(tmp_path: Path) -> None:
    """A workbook keeps a sheet of this month's new joiners beside its staff, empty this month but for its header
    (or a blank template to copy rows from): it holds no one to import, and refusing for it would stop the monthly
    import that worked last month. Once someone is on it, the workbook is refused as before."""
    country_workbook(tmp_path / "sheets.xlsx", second="New joiners", second_rows=())
    config = write_config(tmp_path / "staff.toml")

    result = hrimport("staff", "validate", str(config), str(tmp_path / "sheets.xlsx"))

    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked" in result.output
    country_workbook(tmp_path / "sheets.xlsx", second="New joiners")  # Bo joins
    refused = hrimport("staff", "validate", str(config), str(tmp_path / "sheets.xlsx"))
    assert refused.exit_code == 2
    assert "sheets 'Singapore' and 'New joiners' both hold this table" in refused.output


def test_init_writes_the_sheet_it_read_and_names_the_others(tmp_path: Path) -> None:
    source = country_workbook(tmp_path / "sheets.xlsx")
    result = hrimport("init", "--kind", "staff", str(source), "-o", str(tmp_path / "staff.toml"))
    assert result.exit_code == 0, result.output
    first, second = result.output.splitlines()[:2]
    assert first.startswith("Read sheets.xlsx, sheet 'Singapore', header row 1")
    assert second == ("Sheet 'Malaysia' of sheets.xlsx holds the same table as 'Singapore': the config reads "
                      "'Singapore' alone (sheet = \"Singapore\" in [source]); one config per sheet imports each: "
                      "copy it and change sheet.")
    text = (tmp_path / "staff.toml").read_text(encoding="utf-8")
    lines = text.splitlines()
    at = lines.index("[source]")
    assert lines[at + 1:at + 4] == [
        "# sheet 'Malaysia' of sheets.xlsx holds the same table as 'Singapore': this config imports",
        "# 'Singapore' alone. One config per sheet: copy this one and change sheet.",
        'sheet = "Singapore"                         # the sheet init read',
    ]
    # the TODOs a person fills in, then the config checks the file: Singapore's people alone
    filled = text.replace('customer_id = "TODO"', "customer_id = 99")
    filled = filled.replace('customer_system_id_type = "TODO"', 'customer_system_id_type = "HRIS"')
    filled = "\n".join('staff_type = "Payroll"' if line.startswith('staff_type = "TODO') else line
                       for line in filled.splitlines())
    (tmp_path / "staff.toml").write_text(filled, encoding="utf-8")
    result = hrimport("staff", "validate", str(tmp_path / "staff.toml"), str(source))
    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked" in result.output
    preview = hrimport("init", "--kind", "staff", "--json", str(source), "-o", str(tmp_path / "json.toml"))
    assert json.loads(preview.output)["same_table_sheets"] == ["Malaysia"]


def test_a_big_workbook_read_in_chunks_is_refused_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A workbook above ``STREAM_BYTES`` is streamed (the threshold goes down: the file is small); its second
    sheet's top is read from its part, its shared strings only as far as those rows use."""
    source = tmp_path / "big.xlsx"
    book = xlsxwriter.Workbook(source)  # shared strings, as Excel writes them
    for name, prefix in (("Singapore", "S"), ("Malaysia", "M")):
        sheet = book.add_worksheet(name)
        sheet.write_row(0, 0, HEADER)
        for r in range(1, 3001):
            sheet.write_row(r, 0, [f"{prefix}{r}", f"Person {prefix}{r}", f"p{r}@{name}.example", "SG", "Nurse",
                                   "2024-01-02", "Payroll"])
    book.close()
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    with pytest.raises(reader.other_sheets.SameTableError) as refused:
        read_spreadsheet_chunks(source, chunk_rows=1000, expected_headers=HEADER)
    assert str(refused.value) == REFUSAL.format(path=source)
    chunks, streamed = read_spreadsheet_chunks(source, chunk_rows=1000, sheet="Malaysia", expected_headers=HEADER)
    assert streamed and sum(len(c.frame) for c in chunks) == 3000


def test_an_ods_of_a_sheet_per_country_is_refused(tmp_path: Path) -> None:
    doc = OpenDocumentSpreadsheet()
    for name, person in (("Singapore", ANA), ("Malaysia", BO)):
        table = Table(name=name)
        for values in (HEADER, person):
            row = TableRow()
            for value in values:
                row.addElement(text_cell(value))
            table.addElement(row)
        doc.spreadsheet.addElement(table)
    source = tmp_path / "sheets.ods"
    doc.save(str(source))
    with pytest.raises(reader.other_sheets.SameTableError) as refused:
        read_spreadsheet(source, expected_headers=HEADER)
    assert str(refused.value) == REFUSAL.format(path=source)
    assert read_spreadsheet(source, sheet="Malaysia", expected_headers=HEADER).frame["Name"].tolist() == ["Bo"]


def test_a_leave_workbook_of_a_year_per_sheet_is_refused(tmp_path: Path, sandbox) -> None:
    add_staff(sandbox, [("000101", "MY")])
    sandbox.clear_requests()
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "2024"
    ws.append(LEAVE_HEADER)
    ws.append(["000101", "Annual Leave", "04/03/2024", "08/03/2024", "", "", "MY", "", ""])
    ws2 = wb.create_sheet("2025")
    ws2.append(LEAVE_HEADER)
    ws2.append(["000101", "Annual Leave", "03/03/2025", "07/03/2025", "", "", "MY", "", ""])
    source = tmp_path / "leave.xlsx"
    wb.save(source)
    result = hrimport("timeoff", "import", str(write_leave_config(tmp_path)), str(source),
                      "--report-dir", str(tmp_path / "reports"), sandbox=sandbox)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"Error: {source}: sheets '2024' and '2025' both hold this table (header: 'Employee ID', 'Leave Type', ...): "
        'name the one to import with sheet = "2024" in [source] (a config per sheet imports each)')
    assert [r for r in sandbox.requests() if "time" in r["path"] or "leave" in r["path"]] == []
