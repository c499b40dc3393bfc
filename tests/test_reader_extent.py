"""How far a sheet's cells reach, found in its XML before a library lays it out: real workbooks written by
xlsxwriter, openpyxl and odfpy, and the sheet XML of writers that leave things out."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableCell, TableRow
from odf.text import P

from hrimport.errors import InputFileError
from hrimport.reader import read_spreadsheet
from hrimport.reader.extent import TAIL_CELLS, SheetExtent, check_extent, ods_sheet_extents, xlsx_sheet_extent

SHEET = "xl/worksheets/sheet1.xml"


def write_staff(path: Path, tail: int = 0, tail_text: str = "") -> Path:
    """A two-row table with merged cells and a hyperlink (parts after the rows), and ``tail`` rows of
    ``tail_text`` under it in columns A and C."""
    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("Staff")
    sheet.write_row(0, 0, ["Employee ID", "Name", "Note"])
    sheet.write_row(1, 0, ["000001", "Ana Lim", "first"])
    sheet.write_row(2, 0, ["000002", "Bo Tan"])
    sheet.merge_range("E1:F1", "merged")
    sheet.write_url("E2", "https://example.com/", string="link")
    for r in range(3, 3 + tail):
        sheet.write_string(r, 0, tail_text)
        sheet.write_string(r, 2, tail_text)
    workbook.close()
    return path


def test_a_table_reaches_its_last_row_and_farthest_column(tmp_path: Path) -> None:
    extent = xlsx_sheet_extent(write_staff(tmp_path / "staff.xlsx"), SHEET, "xl/sharedStrings.xml")
    assert (extent.last_row, extent.last_column, extent.far_cell, extent.last_cell) == (3, 5, "E1", "B3")
    assert extent.values == 10
    assert not extent.has_blank_tail


@pytest.mark.parametrize("text", ["", "\u3000"])  # empty, or an ideographic space: blank to a person
def test_a_blank_tail_is_cut_off_and_the_table_reads_the_same(tmp_path: Path, text: str) -> None:
    plain = read_spreadsheet(write_staff(tmp_path / "plain.xlsx"))
    rows = TAIL_CELLS // 5 + 1  # columns A to E
    tailed = write_staff(tmp_path / "tailed.xlsx", tail=rows, tail_text=text)
    extent = xlsx_sheet_extent(tailed, SHEET, "xl/sharedStrings.xml")
    assert (extent.last_row, extent.grid_rows, extent.has_blank_tail) == (3, rows + 3, True)
    table = read_spreadsheet(tailed)
    assert table.frame.to_dict("records") == plain.frame.to_dict("records")
    assert table.row_numbers == plain.row_numbers == [2, 3]


def without_references(xml: bytes) -> bytes:
    """The sheet as a rare writer saves it: no r="A1" on cells nor rows."""
    return re.sub(rb' r="[A-Z]*[0-9]+"', b"", xml)


def test_cells_without_references_are_placed_one_after_another(tmp_path: Path) -> None:
    path = write_staff(tmp_path / "staff.xlsx")
    data = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(data, "w") as target:
        for name in source.namelist():
            part = source.read(name)
            target.writestr(name, without_references(part) if name == SHEET else part)
    path.write_bytes(data.getvalue())
    extent = xlsx_sheet_extent(path, SHEET, "xl/sharedStrings.xml")
    assert (extent.last_row, extent.last_column) == (3, 4)  # E1 and E2 come right after C1 and C2


def test_a_value_far_below_an_openpyxl_table_is_refused_naming_it(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Staff"
    sheet.append(["Employee ID", "Name"])
    sheet.append(["000001", "Ana Lim"])
    sheet["AD400000"] = 0  # a zero typed far away: 400,000 rows x 30 columns for 5 values
    workbook.save(tmp_path / "staff.xlsx")
    with pytest.raises(InputFileError) as refused:
        read_spreadsheet(tmp_path / "staff.xlsx")
    assert str(refused.value).startswith(
        f"{tmp_path / 'staff.xlsx'}: sheet 'Staff' has cells far outside its table (at AD400000): read, they would "
        "make a grid of 400,000 rows x 30 columns; delete everything outside the table"
    )


def test_only_a_big_grid_mostly_empty_is_refused() -> None:
    full = SheetExtent(last_row=12_000, last_column=500, values=6_000_000)  # big, and every cell holds a value
    check_extent(Path("wide.xlsx"), "Staff", full)
    small = SheetExtent(last_row=1_000, last_column=5_000, values=10)  # mostly empty, but 5,000,000 cells
    check_extent(Path("sparse.xlsx"), "Staff", small)
    stray = SheetExtent(last_row=1_001, last_column=5_000, values=1_251_000, far_cell="GJH1", last_cell="A1001")
    with pytest.raises(InputFileError, match=r"at GJH1 and A1001\): read, they would make a grid of 1,001 rows x 5,000"):
        check_extent(Path("stray.xlsx"), "Staff", stray)


def test_ods_repeats_are_counted_not_expanded(tmp_path: Path) -> None:
    doc = OpenDocumentSpreadsheet()
    for name, blank_rows, tail_text in (("Staff", 1_048_000, None), ("Lists", 0, " ")):
        table = Table(name=name)
        row = TableRow()
        for text in ("Employee ID", "Name"):
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=text))
            row.addElement(cell)
        table.addElement(row)
        if blank_rows:
            empty = TableRow(numberrowsrepeated=blank_rows)
            empty.addElement(TableCell(numbercolumnsrepeated=1024))
            table.addElement(empty)
        if tail_text is not None:
            spaces = TableRow(numberrowsrepeated=500_000)
            cell = TableCell(valuetype="string", numbercolumnsrepeated=20)
            cell.addElement(P(text=tail_text))
            spaces.addElement(cell)
            table.addElement(spaces)
        doc.spreadsheet.addElement(table)
    doc.save(str(tmp_path / "staff.ods"))
    extents = ods_sheet_extents(tmp_path / "staff.ods")
    assert (extents["Staff"].last_row, extents["Staff"].grid_rows, extents["Staff"].has_blank_tail) == (1, 1, False)
    lists = extents["Lists"]
    assert (lists.last_row, lists.grid_rows, lists.grid_columns, lists.has_blank_tail) == (1, 500_001, 20, True)
