"""``StreamedSheet``: a constant_memory xlsxwriter worksheet that writes a whole row of text and number cells
as its XML at once, for the sheets with a line per source row (``report.xlsx``'s Rows and Problems,
``to_fix.xlsx``).

xlsxwriter spends about 6 us of CPU on each cell it writes in constant_memory mode (checks, a tuple stored,
the row flushed cell by cell, each text run through three regular expressions): report.xlsx of a
100,000-row staff dry run took 4.6 s of CPU, 1.8 s with this. Most report cells are plain text (ids, names,
outcomes, a message) that need none of that, so ``write_cells`` writes the row's XML itself, the very text xlsxwriter would
write (tests/test_report_streamed_sheet.py compares the two byte for byte), and hands any row it cannot
write exactly so back to xlsxwriter's own ``write_string``/``write_number``: a text with XML-special or
control characters, an ``_xHHHH_`` look-alike, spaces at either end or past half of Excel's length limit,
a row or column with its own format or height, a row past Excel's last one.

Cells, comments (``write_comment``) and everything else of the sheet still go through xlsxwriter's API;
a row given to ``write_cells`` is whole: no other cell may be written to it afterwards.
"""

from __future__ import annotations

import re

from xlsxwriter.format import Format
from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet

#: ``(column, value, format)``: a text cell or a number cell, written with ``format`` (None: none).
Cell = tuple[int, str | int, Format | None]

# What makes xlsxwriter change a text on its way into the sheet's XML (``xmlwriter._escape_data``,
# ``_escape_control_characters``, ``utility._preserve_whitespace``, the ``<r>`` of a rich string): an XML-special
# or control character, an ``_xHHHH_`` look-alike, whitespace at either end (``\s`` is ``str.isspace``, what
# ``strip`` strips). A row with such a text goes through xlsxwriter itself. Three plain tests rather than one
# expression of four alternatives, tried at every character: a quarter of the time.
_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]")
_ESCAPE_LOOK_ALIKE = re.compile(r"_x[0-9a-fA-F]{4}_")


class StreamedSheet(Worksheet):  # type: ignore[misc]  # xlsxwriter ships no type information
    """A worksheet whose rows of plain cells are written as XML text in one go (``write_cells``); made with
    ``workbook.add_worksheet(name, worksheet_class=StreamedSheet)`` on a ``constant_memory`` workbook."""

    # xlsxwriter's own state that write_cells keeps as xlsxwriter does (set in Worksheet.__init__)
    previous_row: int  # the row xlsxwriter holds, written when a later row comes
    dim_rowmin: int | None
    dim_rowmax: int | None
    dim_colmin: int | None
    dim_colmax: int | None

    def __init__(self) -> None:
        super().__init__()
        # The row write_cells was given last, held like xlsxwriter holds its last row: written when a later
        # row comes or the sheet is closed, so every format gets its number at the moment it would anyway.
        self._held: tuple[int, list[Cell]] | None = None
        self._columns: list[str] = []  # column letters, by index
        self._xf: dict[int, int] = {}  # id(format) -> its xf index, once xlsxwriter has given it one

    def write_cells(self, row: int, cells: list[Cell]) -> None:
        """Write ``cells`` (in column order) as row ``row`` (zero-based), below the rows written so far; a text
        is a text cell, never a formula or a number (as ``write_string``). No other cell may be written to
        ``row`` afterwards."""
        if not cells:
            return
        if not self._is_plain(row, cells):
            for col, value, cell_format in cells:
                if isinstance(value, str):
                    self.write_string(row, col, value, cell_format)
                else:
                    self.write_number(row, col, value, cell_format)
            return
        if row > self.previous_row:
            self._write_single_row(row)  # the row held before (this one's or xlsxwriter's) goes out first
        # what xlsxwriter's _check_dimensions records of each cell, for the sheet's <dimension>
        first, last = cells[0][0], cells[-1][0]
        if self.dim_rowmin is None or row < self.dim_rowmin:
            self.dim_rowmin = row
        if self.dim_rowmax is None or row > self.dim_rowmax:
            self.dim_rowmax = row
        if self.dim_colmin is None or first < self.dim_colmin:
            self.dim_colmin = first
        if self.dim_colmax is None or last > self.dim_colmax:
            self.dim_colmax = last
        self._held = (row, cells)
        self.previous_row = row

    def _is_plain(self, row: int, cells: list[Cell]) -> bool:
        """True when xlsxwriter would write ``row`` as a bare ``<row r="N">`` holding the cells given as they
        are, each with its own format: below the rows written, within the sheet, no row or column formats or
        heights, no Excel 2010 extras, texts it does not change, whole numbers, columns left to right."""
        if not (
            (row > self.previous_row or (row == self.previous_row and self._held is None and not self.table))
            and self.constant_memory
            and not self.row_info
            and not self.col_info
            and self.excel_version == 2007
            and self.default_row_height == self.original_row_height
            and row < self.xls_rowmax
            and cells[-1][0] < self.xls_colmax
        ):
            return False
        longest = self.xls_strmax // 2  # xlsxwriter measures (and cuts) longer texts in UTF-16 units
        special, look_alike = _SPECIAL.search, _ESCAPE_LOOK_ALIKE.search
        before = -1
        for col, value, _ in cells:
            if col <= before:
                return False
            before = col
            if isinstance(value, str):
                if (len(value) > longest or special(value) or value.strip() != value
                        or ("_x" in value and look_alike(value))):
                    return False
            elif type(value) is not int:
                return False
        return True

    def _write_single_row(self, current_row_num: int = 0) -> None:
        # xlsxwriter's own flush of the row it holds: here the held row of write_cells, written as its XML
        if self._held is None:
            super()._write_single_row(current_row_num)
            return
        row, cells = self._held
        self._held = None
        if self.table.get(row):
            raise ValueError(f"row {row + 1} of sheet {self.name!r} was written twice")
        number = str(row + 1)
        columns = self._columns
        while len(columns) <= cells[-1][0]:
            columns.append(xl_col_to_name(len(columns)))
        xf = self._xf
        parts = [f'<row r="{number}">']
        for col, value, cell_format in cells:
            style = ""
            if cell_format is not None:
                index = xf.get(id(cell_format))
                if index is None:  # asked when the format is first used, as xlsxwriter does: it numbers them so
                    index = xf[id(cell_format)] = cell_format._get_xf_index()
                style = f' s="{index}"'
            if isinstance(value, str):
                parts.append(f'<c r="{columns[col]}{number}"{style} t="inlineStr"><is><t>{value}</t></is></c>')
            else:
                parts.append(f'<c r="{columns[col]}{number}"{style}><v>{value:.16G}</v></c>')
        parts.append("</row>")
        self.fh.write("".join(parts))
        self.previous_row = current_row_num
        self.table.clear()
