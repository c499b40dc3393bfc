"""``StreamedSheet``: report.xlsx's Rows and Problems sheets and to_fix.xlsx write each row's XML themselves
for speed; the files must be exactly those xlsxwriter writes cell by cell, whatever the cells hold."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from hrimport.report.streamed_sheet import Cell, StreamedSheet

# texts xlsxwriter writes as they are, and texts it changes (escapes, cuts, marks to keep their spaces)
PLAIN = ["Ada Lovelace", "0000123", "=1+1", "+65 8123 4567", "李小龙", "Zoë 'quoted' \"twice\"", "line\nbreak",
         "tab\tinside", "🎉 party", "_x00 and x0041_ apart", ""]
CHANGED = ["Fish & Chips", "<script>alert(1)</script>", "<r><t>rich?</t></r>", "a\x00b\x1fc", "carriage\r",
           "_x0041_ look-alike", " leading space", "trailing space ", "\u3000ideographic",
           "\xa0no-break", "next line\x85", "ends with a line break\n", "non\ufffechar",
           "x" * 20_000, "🎉" * 17_000]

# (first row, cells) per row, as the reporters give them: a number, texts, some formatted; rows left out
Rows = list[tuple[int, list[tuple[int, str | int, str | None]]]]


def _rows() -> Rows:
    rows: Rows = []
    texts = PLAIN + CHANGED
    for i in range(60):
        cells: list[tuple[int, str | int, str | None]] = [(0, i + 2, None)]
        cells.append((1, texts[i % len(texts)], "quoted" if i % 3 == 0 else None))
        if i % 4:
            cells.append((3, PLAIN[i % len(PLAIN)], "wrapped"))
        if i % 7 == 0:
            cells.append((6, texts[(i * 5) % len(texts)], None))
        rows.append((i + 1 + i // 10, cells))  # a blank row every ten
    rows.append((rows[-1][0] + 1, [(2, "only here", "last")]))  # a format first used on the last row
    return rows


def _write(path: Path, rows: Rows, *, streamed: bool, comments: bool = False,
           before: Callable[[Worksheet], None] | None = None) -> None:
    wb = xlsxwriter.Workbook(str(path), {"constant_memory": True, "strings_to_numbers": False})
    formats: dict[str | None, Format | None] = {
        None: None,
        "quoted": wb.add_format({"quote_prefix": True}),
        "wrapped": wb.add_format({"text_wrap": True}),
        "last": wb.add_format({"bold": True, "bg_color": "#FDF0D5"}),
        "header": wb.add_format({"bold": True}),
    }
    ws = wb.add_worksheet("Rows", worksheet_class=StreamedSheet if streamed else None)
    if before is not None:
        before(ws)
    for col, text in enumerate(["Row", "Text", "Other", "Message"]):
        ws.write_string(0, col, text, formats["header"])
    for row, given in rows:
        _write_row(ws, row, [(col, value, formats[name]) for col, value, name in given], streamed=streamed)
        if comments and row % 2:  # to_fix marks its bad cells with comments, written after the row's cells
            ws.write_comment(row, 1, f"comment of row {row + 1}", {"author": "hrimport"})
    ws.set_column(0, 0, 12)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, rows[-1][0], 6)
    wb.close()


def _write_row(ws: Worksheet, row: int, cells: list[Cell], *, streamed: bool) -> None:
    """One row, by ``StreamedSheet.write_cells`` or cell by cell through xlsxwriter's own API."""
    if streamed:
        assert isinstance(ws, StreamedSheet)
        ws.write_cells(row, cells)
        return
    for col, value, cell_format in cells:
        if isinstance(value, str):
            ws.write_string(row, col, value, cell_format)
        else:
            ws.write_number(row, col, value, cell_format)


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        # the creation time is the one thing two writes of the same cells may differ in
        return {n: re.sub(rb"<dcterms:(created|modified)[^<]*<", b"", zf.read(n)) for n in zf.namelist()}


@pytest.mark.parametrize("comments", [False, True], ids=["cells", "cells-and-comments"])
def test_a_streamed_sheet_is_byte_for_byte_the_sheet_xlsxwriter_writes(tmp_path: Path, comments: bool) -> None:
    rows = _rows()
    _write(tmp_path / "xlsxwriter.xlsx", rows, streamed=False, comments=comments)
    _write(tmp_path / "streamed.xlsx", rows, streamed=True, comments=comments)
    assert _parts(tmp_path / "streamed.xlsx") == _parts(tmp_path / "xlsxwriter.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "streamed.xlsx")["Rows"]
    assert sheet["B2"].value == PLAIN[0] and sheet["B2"].quotePrefix
    assert sheet.cell(rows[-1][0] + 1, 3).value == "only here"


def test_rows_given_out_of_order_or_with_row_formats_come_out_as_xlsxwriter_writes_them(tmp_path: Path) -> None:
    rows = _rows()
    rows[5] = (rows[5][0], list(reversed(rows[5][1])))  # columns right to left
    rows.insert(9, (rows[3][0], [(4, "above the rows written", None)]))  # dropped by xlsxwriter, and here

    def tall_row(ws: Worksheet) -> None:
        ws.set_row(8, 30)

    _write(tmp_path / "xlsxwriter.xlsx", rows, streamed=False, before=tall_row)
    _write(tmp_path / "streamed.xlsx", rows, streamed=True, before=tall_row)
    assert _parts(tmp_path / "streamed.xlsx") == _parts(tmp_path / "xlsxwriter.xlsx")


def _write_two_sheets(path: Path, rows: Rows, *, streamed: bool) -> None:
    """``rows`` on two sheets written turn by turn, as report.xlsx writes its Rows and Problems sheets: which
    format xlsxwriter numbers first depends on when each sheet's rows go out."""
    wb = xlsxwriter.Workbook(str(path), {"constant_memory": True, "strings_to_numbers": False})
    names = ["quoted", "wrapped", "last", "header"]
    formats: dict[str | None, Format | None] = {None: None}
    formats.update({name: wb.add_format({"bold": True, "font_size": 10 + i}) for i, name in enumerate(names)})
    sheets = [wb.add_worksheet(name, worksheet_class=StreamedSheet if streamed else None) for name in ("A", "B")]
    for i, (row, given) in enumerate(rows):
        ws = sheets[i % 3 == 0]  # every third row to the second sheet
        _write_row(ws, row, [(col, value, formats[name]) for col, value, name in given], streamed=streamed)
    wb.close()


def test_many_rows_on_two_sheets_turn_by_turn_are_byte_for_byte_what_xlsxwriter_writes(tmp_path: Path) -> None:
    # more rows than go to a sheet's file at once, some that xlsxwriter writes itself among them, a format first
    # used on a row that xlsxwriter must write itself (its text changed) and on rows of the other sheet
    rows: Rows = []
    for i in range(1_300):
        cells: list[tuple[int, str | int, str | None]] = [(0, 2**53 + i if i % 97 == 0 else i + 2, None)]
        cells.append((1, (PLAIN + CHANGED)[i % 26] if i % 5 == 0 else f"{i:07d}", "quoted" if i % 7 == 0 else None))
        if i == 400:
            cells.append((2, "Fish & Chips", "last"))  # "last" first used with a text xlsxwriter escapes
        if i == 401:
            cells.append((2, "first plain use", "header"))
        cells.append((5, "Valid; not sent (dry run).", "wrapped" if i > 3 else None))
        rows.append((i + 1, cells))
    _write_two_sheets(tmp_path / "xlsxwriter.xlsx", rows, streamed=False)
    _write_two_sheets(tmp_path / "streamed.xlsx", rows, streamed=True)
    assert _parts(tmp_path / "streamed.xlsx") == _parts(tmp_path / "xlsxwriter.xlsx")


def test_a_cell_written_to_a_row_already_written_whole_is_refused(tmp_path: Path) -> None:
    wb = xlsxwriter.Workbook(str(tmp_path / "twice.xlsx"), {"constant_memory": True})
    ws = wb.add_worksheet("Rows", worksheet_class=StreamedSheet)
    assert isinstance(ws, StreamedSheet)
    ws.write_cells(1, [(0, 2, None), (1, "Ada", None)])
    ws.write_string(1, 2, "late")
    with pytest.raises(ValueError, match="row 2 of sheet 'Rows' was written twice"):
        ws.write_cells(2, [(0, 3, None)])
    ws.table.clear()  # the refused cell dropped, so that the workbook closes its files
    wb.close()
