"""Two exports joined into one file (May's export pasted under June's, or ``cat june.csv may.csv``): the second
header row is one problem on one line, ``header-row-repeated``, never ten lines refusing 'Hire Date' as a date
and 'Country' as a country; it is not sent, and the rows around it are imported as usual.

Real files: CSV bytes by the csv module (joined as ``cat`` joins them), workbooks by openpyxl and xlsxwriter;
imports into the sandbox over real HTTP.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter
from click.testing import CliRunner

from hrimport import reader
from hrimport.cli import main
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.reader import xlsx_stream
from tests import test_timeoff_import as leave
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import hrimport, latest_run

pytestmark = pytest.mark.usefixtures("instant_retries")

JOINED_AT_ROW_4 = ("Row 4 repeats the header row (row 1): two exports may have been joined into one file; delete "
                   "this row, and check that the rows below it are the export you meant to import.")


def joined_csv(folder: Path, *exports: list[dict[str, str]], header: list[str] = HEADER) -> Path:
    """The exports, each written by the csv module with its header, joined byte for byte as ``cat`` joins them."""
    parts = [write_csv(folder / f"export-{k}.csv", rows, header) for k, rows in enumerate(exports)]
    joined = folder / "staff.csv"
    joined.write_bytes(b"".join(part.read_bytes() for part in parts))
    return joined


def row_records(report_folder: Path) -> dict[int, dict[str, Any]]:
    lines = (report_folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["row"]: r for r in map(json.loads, lines) if r["record"] == "row"}


def test_a_second_header_row_is_told_once_in_one_line(tmp_path: Path) -> None:
    source = joined_csv(tmp_path, [person(1), person(2)], [person(3), person(4)])
    result = CliRunner().invoke(main, ["staff", "validate", str(write_config(tmp_path / "staff.toml")), str(source)])
    assert result.exit_code == 1, result.output
    told = [line for line in result.output.splitlines() if line.startswith(("Row ", "Warning: Row "))]
    assert told == [JOINED_AT_ROW_4]
    assert "Rows read: 5 = 4 valid + 1 invalid" in result.output


def test_the_joined_files_rows_are_imported_and_the_header_row_is_not_sent(tmp_path: Path, sandbox: Any) -> None:
    source = joined_csv(tmp_path, [person(1), person(2)], [person(3), person(4)])
    config = write_config(tmp_path / "staff.toml")
    result = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)
    assert result.exit_code == 1, result.output
    assert "Rows read: 5 = 4 added + 1 invalid" in result.output
    sent = [e["customer_system_id"] for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]]
    assert sent == ["000001", "000002", "000003", "000004"]

    summary = latest_run(tmp_path)
    assert json.loads(summary.read_text())["problems"] == {"header-row-repeated": 1}
    row = row_records(summary.parent)[4]
    assert (row["outcome"], [(p["code"], p["column"], p["message"]) for p in row["problems"]]) == (
        "invalid", [("header-row-repeated", None, JOINED_AT_ROW_4)])
    html = (summary.parent / "report.html").read_text(encoding="utf-8")
    assert "Header row repeated" in html and "Other problem" not in html


def test_three_exports_joined_are_two_header_rows_not_a_duplicate_id(tmp_path: Path) -> None:
    source = joined_csv(tmp_path, [person(1)], [person(2)], [person(3)])
    config = load_config(write_config(tmp_path / "staff.toml"))
    run = import_file(config, source, validate_only=True).result
    assert {o.row: [p.code for p in o.problems] for o in run.rows if o.problems} == {
        3: ["header-row-repeated"], 5: ["header-row-repeated"]}


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ([h.upper() for h in HEADER], "an older export's header, in capitals"),
        ([f" {h} " for h in HEADER], "spaces around each name, which the reader trims from headers"),
        ([*HEADER[:3], "Department", *HEADER[3:]], "last year's layout: a column more, the names after it moved"),
        ([*HEADER[:8], *[""] * 8], "the header cut short: half its names"),
    ],
)
def test_a_header_row_written_otherwise_is_still_the_header(tmp_path: Path, header: list[str], why: str) -> None:
    header_row = ",".join(f'"{h}"' if h.strip() != h else h for h in header)
    source = write_csv(tmp_path / "june.csv", [person(1), person(2)])
    source.write_bytes(source.read_bytes() + header_row.encode() + b"\r\n")
    config = load_config(write_config(tmp_path / "staff.toml"))
    run = import_file(config, source, validate_only=True).result
    assert {o.row: [p.code for p in o.problems] for o in run.rows if o.problems} == {4: ["header-row-repeated"]}, why


def test_a_person_whose_cells_hold_a_few_header_names_is_a_person(tmp_path: Path) -> None:
    """Fewer than half of the header's columns: values that happen to be a column's name, not a header."""
    odd = person(2, Title="Title", **{"Cost Centre": "Cost Centre", "Shoe Size": "Name", "Birth Date": ""})
    config = load_config(write_config(tmp_path / "staff.toml"))
    run = import_file(config, write_csv(tmp_path / "staff.csv", [person(1), odd]), validate_only=True).result
    assert [o.row for o in run.rows if o.problems] == []


def paste_under(path: Path, exports: list[list[dict[str, str]]]) -> Path:
    """A workbook (openpyxl) holding the exports one under the other, each with its header: May's pasted
    under June's."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Staff"
    for rows in exports:
        sheet.append(HEADER)
        for row in rows:
            sheet.append([row[h] for h in HEADER])
    book.save(path)
    return path


def test_an_export_pasted_under_another_in_a_workbook_read_whole_and_streamed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # big enough to be streamed once the thresholds go down: the header's 30 rows of search, and more
    june, may = [person(n) for n in range(1, 36)], [person(n) for n in range(36, 46)]
    source = paste_under(tmp_path / "staff.xlsx", [june, may])
    config = load_config(write_config(tmp_path / "staff.toml"))
    expected = {37: ["header-row-repeated"]}
    whole = import_file(config, source, validate_only=True).result
    assert {o.row: [p.code for p in o.problems] for o in whole.rows if o.problems} == expected
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 3)
    assert reader.read_spreadsheet_chunks(source, chunk_rows=2, expected_headers=HEADER)[1]  # streamed
    streamed = import_file(config, source, validate_only=True, chunk_rows=2).result
    assert {o.row: [p.code for p in o.problems] for o in streamed.rows if o.problems} == expected


def test_a_joined_csv_streamed_in_chunks_tells_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = joined_csv(tmp_path, [person(n) for n in range(1, 4)], [person(n) for n in range(4, 9)])
    config = load_config(write_config(tmp_path / "staff.toml"))
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    assert reader.read_spreadsheet_chunks(source, chunk_rows=2, expected_headers=HEADER)[1]  # streamed
    run = import_file(config, source, validate_only=True, chunk_rows=2).result
    assert {o.row: [p.message for p in o.problems] for o in run.rows if o.problems} == {
        5: [JOINED_AT_ROW_4.replace("Row 4", "Row 5")]}


def test_a_joined_leave_history_sends_its_records_and_tells_the_header_row_once(tmp_path: Path,
                                                                               sandbox: Any) -> None:
    leave.add_staff(sandbox, [("000101", "MY"), ("000106", "SG")])

    def export(name: str, rows: list[list[str]]) -> bytes:
        path = tmp_path / name
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(leave.HEADER)
            writer.writerows(rows)
        return path.read_bytes()

    june = export("june.csv", [["000101", "Annual Leave", "11/06/2024", "12/06/2024", "", "2", "MY", "", "Approved"]])
    may = export("may.csv", [["000106", "Sick Leave", "06/05/2024", "06/05/2024", "", "1", "SG", "", "Approved"]])
    source = tmp_path / "leave.csv"
    source.write_bytes(june + may)
    result, run = leave.run_import(tmp_path, sandbox, source)
    assert result.exit_code == 1, result.output
    assert {o.row: (o.outcome.value, [p.code for p in o.problems]) for o in run.rows} == {
        2: ("added", []), 3: ("invalid", ["header-row-repeated"]), 4: ("added", [])}
    told = [line for line in result.output.splitlines() if line.startswith("Row 3")]
    assert told == [JOINED_AT_ROW_4.replace("Row 4", "Row 3")]
    assert sorted(r["customer_system_id"] for r in sandbox.time_off(99)) == ["000101", "000106"]


def test_the_header_repeated_at_once_under_itself_in_an_xlsxwriter_workbook(tmp_path: Path) -> None:
    """Some exports write their header twice (a template's row, then the data's): the second is the first data
    row, told as what it is."""
    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    sheet.write_row(1, 0, HEADER)
    for r, row in enumerate([person(1), person(2)], start=2):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    book.close()
    config = load_config(write_config(tmp_path / "staff.toml"))
    run = import_file(config, path, validate_only=True).result
    assert {o.row: [p.code for p in o.problems] for o in run.rows if o.problems} == {2: ["header-row-repeated"]}


@pytest.mark.parametrize("chunk_rows", [None, 1, 2])
def test_how_values_were_read_says_nothing_of_the_header_rows_cells(tmp_path: Path, chunk_rows: int | None) -> None:
    """The run summary's 'How values were read' listed the second header row's cells ('Email' -> 'email' on
    row 4, lower-cased), though nothing but the repeat is said of them: read whole or in chunks alike."""
    source = joined_csv(tmp_path, [person(1), person(2)], [person(3), person(4)])
    config = load_config(write_config(tmp_path / "staff.toml"))
    run = import_file(config, source, validate_only=True, chunk_rows=chunk_rows).result
    told = [(c.column, c.kind, c.rows, [(e.row, e.read, e.sent) for e in c.examples]) for c in run.info.values_read]
    assert [t for t in told if any(row == 4 for row, _, _ in t[3])] == []
    assert [t for t in told if t[0] == "Email"] == []  # the people's e-mails are written as sent
