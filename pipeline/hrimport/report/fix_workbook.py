"""``to_fix.xlsx`` made from the source workbook itself (issue 16): the rows to fix in the file's own layout.

openpyxl loads the workbook the run read (the very same bytes: its SHA-256 is checked) and the read sheet
is cut down to its title rows, its header and the rows needing attention, moved up under the header in
their order. Everything else stays as the file had it: cell types (a date cell stays a date), number
formats, fonts and fills, column widths, row heights, merged title cells, dropdowns (data validation) and
the other sheets, so the same config reads it, a ``sheet`` setting included. Then each bad cell is filled
red with a comment holding its problem (``fix_marks``), and the ``Problem`` column goes after the last
header (a fix file's own ``Problem`` column is reused).

A cell keeps the value it showed, which is what the import read: a formula cell becomes its last value
(``data_only``), since its references would not survive the rows moving anyway. A cell that held no value to
send keeps none (``fix_values``): an error stays the error, a formula saved without its result is written
again, moved with its row when it reads only its own row, else the cell shows ``#N/A``. Filters are cleared and
every kept row shown (a row of height zero given Excel's own height), so no row to fix is hidden, and every
column of the table shown (a hidden one, or one of width zero, given Excel's own width), so no cell to fix is
hidden either (a row held back for a value in a hidden column, ``hidden-column``, imports once fixed); a protected
sheet is unprotected, so it can be fixed.

openpyxl is slow: about 20 us of CPU a cell to load, whichever sheet the cell is on, measured on this
project's 2-core machine (``write_fix_from_workbook`` end to end, 1 in 100 rows to fix): 1,000 rows x 30
columns (1.2 MB of sheet XML) 0.6 s of CPU; 4,500 x 30 (4.8 MB) 2.3 s; 5,000 x 30 (5.3 MB) 3.2 s. So a
workbook whose sheets and shared strings unpack to more than ``MAX_SHEET_XML`` (5 MB: about 135,000 cells,
~3 s) takes the fast path (``fix_file.write_fix_xlsx``, ~10 us a cell of the rows to fix only), as does a
source that is gone or changed since the run, or whose merges cover more than ``MAX_MERGED_CELLS`` cells
(openpyxl makes an object of each).
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import openpyxl
from openpyxl.cell.cell import Cell
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from hrimport.outcomes import RowOutcome, SourceInfo
from hrimport.private_files import open_private
from hrimport.reader.grid import CELL_CHARACTERS, CELL_TOO_LONG
from hrimport.reader.merged_header import MergedRange, SheetMerges, two_row_header
from hrimport.report.fix_marks import (
    BAD_CELL_FILL,
    PROBLEM_FILL,
    PROBLEM_FONT,
    bad_cells,
    comment_size,
    header_key,
    problem_text,
)
from hrimport.report.fix_values import no_value_cells
from hrimport.report.scratch import partial_workbook, temporary_files_in
from hrimport.to_fix_format import FIX_COLUMN, FORMULA_TRIGGERS, day_month_date

__all__ = ["MAX_MERGED_CELLS", "MAX_SHEET_XML", "WORKBOOK_FORMATS", "source_workbook", "write_fix_from_workbook"]

#: Source formats openpyxl reads (XLS and ODS take the fast path).
WORKBOOK_FORMATS = frozenset({"xlsx", "xlsm"})
#: Bytes of sheet XML (worksheets and shared strings, unpacked) up to which to_fix is made with openpyxl.
MAX_SHEET_XML = 5_000_000
#: Cells covered by merges up to which to_fix is made with openpyxl, which makes an object of every merged
#: cell: one merge A1:XFD1048576 in a 5 KB file took 37 s and 3.7 GB.
MAX_MERGED_CELLS = 100_000
# a merge's range in a sheet's XML (any namespace prefix)
_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="\$?([A-Z]{1,3})\$?(\d{1,7})(?::\$?([A-Z]{1,3})\$?(\d{1,7}))?"')
_MAX_WIDTH = 80
_UNNAMED = "Column "  # the reader's name for a column with data but no header: "Column D"


def source_workbook(source: SourceInfo) -> bytes | None:
    """The bytes of the workbook the run read, when ``to_fix`` can be made from it: an XLSX/XLSM still at
    its path with the same SHA-256, whose sheets openpyxl can load in a few seconds and a bounded memory."""
    if source.format.lower() not in WORKBOOK_FORMATS or source.size > MAX_SHEET_XML:
        return None  # sheets unpack to more than they pack: bigger packed is over the limit (pictures aside)
    try:
        data = Path(source.path).read_bytes()
        if hashlib.sha256(data).hexdigest() != source.sha256:
            return None
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            sheets = [i for i in archive.infolist() if _is_sheet_xml(i.filename)]
            if sum(i.file_size for i in sheets) > MAX_SHEET_XML:  # as the archive says, before unpacking
                return None
            merged = sum(_merged_cells(archive.read(i)) for i in sheets if i.filename.startswith("xl/worksheets/"))
    except (OSError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, EOFError):
        return None  # the reader refused a damaged workbook before; one that changed is not the run's
    return data if merged <= MAX_MERGED_CELLS else None


def _merged_cells(sheet_xml: bytes) -> int:
    """How many cells the merges of a sheet's XML cover."""
    total = 0
    for match in _MERGE.finditer(sheet_xml):
        first_col, first_row, last_col, last_row = (g.decode("ascii") if g else "" for g in match.groups())
        if not last_col:
            continue  # one cell merged with itself: nothing to make
        rows = abs(int(last_row) - int(first_row)) + 1
        columns = abs(column_index_from_string(last_col) - column_index_from_string(first_col)) + 1
        total += rows * columns
    return total


def _is_sheet_xml(name: str) -> bool:
    return name.startswith("xl/worksheets/") or name == "xl/sharedStrings.xml"


def write_fix_from_workbook(data: bytes, source: SourceInfo, rows: Sequence[RowOutcome], path: Path,
                            date_orders: Mapping[str, str] | None = None) -> Path:
    """Write ``to_fix.xlsx`` from the source workbook ``data`` (``source_workbook``); mode 0600. ``date_orders``:
    the columns whose day/month dates the run read in a known order -> that order: such a date written as text
    is made a date cell shown as written (``_date_cells``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns about the parts it cannot keep (extensions...)
        wb = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    ws = wb[source.sheet] if source.sheet in wb.sheetnames else wb.worksheets[0]
    header_row = source.header_row
    if source.header_rows > 1:
        _one_header_row(ws, source)
    _fill_merged_down(ws, header_row + max(source.header_rows, 1) - 1)
    columns = _header_columns(ws, header_row, source.headers)
    problem_column = columns.pop(FIX_COLUMN, None) or max(columns.values(), default=ws.max_column) + 1
    ordered = sorted(rows, key=lambda r: r.row)  # rows only move up, so none is overwritten before it moves
    _keep_rows(ws, header_row, [r.row for r in ordered], max(problem_column, *columns.values()))
    _show_columns(ws, columns.values())
    _date_cells(ws, header_row + 1, header_row + len(ordered), columns, date_orders or {})

    _problem_cell(ws.cell(header_row, problem_column), FIX_COLUMN, bold=True)
    width = len(FIX_COLUMN) + 2
    letters = {header: get_column_letter(column) for header, column in columns.items()}
    for at, outcome in enumerate(ordered, start=header_row + 1):
        for header, nothing in no_value_cells(outcome, list(columns), source.format, move_to=(letters, at)).items():
            cell = ws.cell(at, columns[header])
            cell.value = nothing.formula or nothing.error  # openpyxl: "=..." is a formula, "#N/A" an error
            cell.quotePrefix = False
        for header, comment in bad_cells(outcome, list(columns)).items():
            _mark_bad(ws.cell(at, columns[header]), comment)
        for problem in outcome.problems:  # what a cell holds (and Excel opens): the import read no more
            if problem.code == CELL_TOO_LONG and problem.column in columns:
                cell = ws.cell(at, columns[problem.column])
                cell.value = str(cell.value)[:CELL_CHARACTERS]
        text = problem_text(outcome)
        _problem_cell(ws.cell(at, problem_column), text)
        width = max(width, len(text) + 1)
    ws.column_dimensions[get_column_letter(problem_column)].width = min(width, _MAX_WIDTH)

    if ws.freeze_panes is None:
        ws.freeze_panes = ws.cell(header_row + 1, 1)
    ws.auto_filter.filterColumn = []  # a filter saved in the source must not hide a row to fix
    ws.auto_filter.sortState = None
    ws.protection.sheet = False  # the file is for correcting: a protected export could not be
    wb.active = ws
    for sheet in wb.worksheets:
        sheet.sheet_view.tabSelected = sheet is ws
    with partial_workbook(path) as writing, open_private(writing, "wb") as fh, temporary_files_in(writing.parent):
        wb.save(fh)
    return path


def _one_header_row(ws: Worksheet, source: SourceInfo) -> None:
    """A header over two rows with merged cells (``reader.merged_header``) made the one row of the names the
    import read, on its upper row (the lower is then written over by the rows to fix, as ``_keep_rows`` moves
    them up): the names the report and the config use, in every to_fix alike (``fix_file`` writes them so
    too, and ``view.fix_file_rows`` counts one header row); the same config reads it again."""
    upper = source.header_row
    merged = [m for m in ws.merged_cells.ranges if m.min_row <= upper + 1 and m.max_row >= upper]
    merges = SheetMerges([MergedRange(m.min_row, m.min_col, m.max_row, m.max_col) for m in merged])
    rows = {at - 1: ["" if cell.value is None else str(cell.value) for cell in ws[at]] for at in (upper, upper + 1)}
    header = two_row_header(Path(source.path), source.sheet, rows, upper - 1, merges)
    if header is None:
        return
    for m in merged:
        ws.unmerge_cells(m.coord)
    for column, name in enumerate(header.names, start=1):
        ws.cell(upper, column).value = name or None


def _fill_merged_down(ws: Worksheet, header_end: int) -> None:
    """Each cell merged down over rows of data (below row ``header_end``) undone, the value of its first cell
    written on each row it covers that holds nothing there: the value the import read on that row
    (``reader.merged_cells``), which a row to fix keeps when the rows move up (the merge cannot follow them)."""
    for merged in list(ws.merged_cells.ranges):
        if merged.min_row <= header_end or merged.max_row == merged.min_row:
            continue
        first = ws.cell(merged.min_row, merged.min_col)
        value, number_format = first.value, first.number_format
        ws.unmerge_cells(merged.coord)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        for row in range(merged.min_row + 1, merged.max_row + 1):
            cell = ws.cell(row, merged.min_col)
            if cell.value is None or cell.value == "":
                cell.value, cell.number_format = value, number_format


def _header_columns(ws: Worksheet, header_row: int, headers: Sequence[str]) -> dict[str, int]:
    """Each of the reader's ``headers`` -> its column number in ``ws``, found by the header row's text
    (or the letter of a column the reader named "Column D"); a ``Problem`` column comes as ``FIX_COLUMN``."""
    by_key: dict[str, int] = {}
    for cell in ws[header_row]:
        if cell.value is not None and str(cell.value).strip():
            by_key.setdefault(header_key(str(cell.value)), cell.column)
    found: dict[str, int] = {}
    for name in headers:
        column = by_key.get(header_key(name))
        if column is None and name.startswith(_UNNAMED) and name[len(_UNNAMED):].isalpha():
            column = column_index_from_string(name[len(_UNNAMED):])
        if column is not None:
            found[FIX_COLUMN if header_key(name) == header_key(FIX_COLUMN) else name] = column
    return found


def _show_columns(ws: Worksheet, columns: Iterable[int]) -> None:
    """Show the table's ``columns`` (numbers, from 1) the sheet hides, or keeps at a width of zero: nobody would
    see the cell to fix there (Workday hides its ID columns; ``hidden-column``)."""
    wanted = set(columns)
    for dimension in ws.column_dimensions.values():
        first, last = dimension.min or 0, dimension.max or 0
        if not wanted.intersection(range(first, last + 1)):
            continue
        dimension.hidden = False
        if dimension.width is not None and dimension.width <= 0:
            dimension.width = None  # Excel's own width
            dimension.customWidth = False


def _keep_rows(ws: Worksheet, header_row: int, keep: list[int], last_column: int) -> None:
    """Move rows ``keep`` (ascending Excel row numbers below the header) up under the header, in order,
    and delete every other row below it, with the rows' heights and styles. Cells are moved up to
    ``last_column``, the table's last: ``ws.max_column`` may be 16,384 for one blank cell far to the right,
    and ``move_range`` visits every cell of the range."""
    for merged in list(ws.merged_cells.ranges):  # merges below the header would not survive the move
        if merged.max_row > header_row:
            ws.unmerge_cells(merged.coord)
    last_letter = get_column_letter(max(last_column, 1))
    heights = ws.row_dimensions
    kept_heights = {}
    for at, row in enumerate(keep, start=header_row + 1):
        if row in heights:
            kept_heights[at] = heights[row]
        if row != at:
            ws.move_range(f"A{row}:{last_letter}{row}", rows=at - row)
    last = header_row + len(keep)
    if ws.max_row > last:
        ws.delete_rows(last + 1, ws.max_row - last)
    for row in [r for r in heights if r > header_row]:
        del heights[row]
    for at, dimension in kept_heights.items():
        dimension.index, dimension.hidden = at, False
        if not dimension.height:  # a row of height zero shows nothing: it is given Excel's own height
            dimension.height = None
        heights[at] = dimension
    for line in ws.iter_rows(min_row=header_row + 1, max_row=last):
        for cell in line:
            if cell.hyperlink is not None:
                cell.hyperlink = cell.hyperlink  # a link names its cell: name the one it moved to
            text = cell.value
            if cell.data_type == "s" and isinstance(text, str) and text.startswith(FORMULA_TRIGGERS):
                cell.quotePrefix = True  # text, never a formula, even after someone edits the cell


def _date_cells(ws: Worksheet, first: int, last: int, columns: Mapping[str, int], orders: Mapping[str, str]) -> None:
    """Each day/month date written as text (``01/02/2020``) in rows ``first`` to ``last`` of a column the run
    read in a known order made a date cell, its number format showing it as written (``day_month_date``): the
    rows to fix alone may prove no order (the export's ``25/03/2020`` did), and the import guesses none."""
    by_key = {header_key(column): order for column, order in orders.items()}
    for header, column in columns.items():
        order = by_key.get(header_key(header))
        if order is None:
            continue
        for (cell,) in ws.iter_rows(min_row=first, max_row=last, min_col=column, max_col=column):
            if cell.data_type == "s" and isinstance(cell.value, str) and (read := day_month_date(cell.value, order)):
                cell.value, cell.number_format = read
                cell.quotePrefix = False


def _mark_bad(cell: Cell, comment: str) -> None:
    cell.fill = PatternFill(fill_type="solid", fgColor=BAD_CELL_FILL)
    if cell.comment is not None:  # the file's own note stays, under ours
        comment = f"{comment}\n\n{cell.comment.text}"
    width, height = comment_size(comment)
    cell.comment = Comment(comment, "hrimport", width=width, height=height)


def _problem_cell(cell: Cell, text: str, *, bold: bool = False) -> None:
    cell.value = text  # never formula-like: it starts with "Original row" (or is the header)
    cell.font = Font(bold=bold, color=PROBLEM_FONT)
    cell.fill = PatternFill(fill_type="solid", fgColor=PROBLEM_FILL)
