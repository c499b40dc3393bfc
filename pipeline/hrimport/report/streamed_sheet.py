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

A row of formats xlsxwriter has numbered already goes straight out (a few hundred rows to the file at a
time); a row with a format used for the first time is held like xlsxwriter holds its last row, so that the
formats are numbered in xlsxwriter's order. Issue 17: report.xlsx of that run, 1.6 s -> 1.2 s of CPU with
this (the rows part 0.9 s -> 0.6 s).

Cells, comments (``write_comment``) and everything else of the sheet still go through xlsxwriter's API;
a row given to ``write_cells`` is whole: no other cell may be written to it afterwards. A row holding a
``FormulaText`` or an ``ErrorText`` (``to_fix``'s cells that hold no value to send) is written by xlsxwriter
too: the formula by its ``write_formula``, without a result, the error by ``write_error``, which xlsxwriter
lacks (its own error cells are pictures in cells).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple
from xml.sax.saxutils import escape

from xlsxwriter.format import Format
from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell
from xlsxwriter.worksheet import Worksheet


class FormulaText(str):
    """A cell's formula (``=B2*2``), written as a formula saved without a result."""

    __slots__ = ()


class ErrorText(str):
    """An error a cell shows (``#N/A``, one of Excel's), written as an error cell."""

    __slots__ = ()


#: ``(column, value, format)``: a text cell or a number cell (or a formula, or an error), written with
#: ``format`` (None: none).
Cell = tuple[int, str | int, Format | None]


class _ErrorCell(NamedTuple):
    """An error cell in xlsxwriter's table of a row, until ``_write_cell`` writes it."""

    error: str
    format: Format | None

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
        # A row whose cells use a format that has no number yet, held like xlsxwriter holds its last row:
        # written when a later row comes or the sheet is closed, so every format gets its number at the
        # moment it would anyway (xlsxwriter numbers formats in the order it first writes them).
        self._held: tuple[int, list[Cell]] | None = None
        # The row write_cells wrote out itself last (-1: none): xlsxwriter has nothing of it to write.
        self._written = -1
        # Rows written, not yet in the file: the sheet's text file resets its decoder on every write (a
        # Python call), so rows go to it some hundred at a time; out before anything else writes there.
        self._pending: list[str] = []
        self._columns: list[str] = []  # column letters, by index
        # a format -> its ' s="N"' attribute, once the format has a number (formats hash by identity)
        self._styles: dict[Format | None, str] = {None: ""}

    def write_cells(self, row: int, cells: list[Cell]) -> None:
        """Write ``cells`` (in column order) as row ``row`` (zero-based), below the rows written so far; a text
        is a text cell, never a formula or a number (as ``write_string``). No other cell may be written to
        ``row`` afterwards."""
        if not cells:
            return
        xml = self._row_xml(row, cells) if self._streams(row, cells[-1][0]) else None
        if xml is None:  # not plain: xlsxwriter's own writes
            for col, value, cell_format in cells:
                if isinstance(value, FormulaText):
                    self.write_formula(row, col, value, cell_format, "")  # no result: the reader says so
                elif isinstance(value, ErrorText):
                    self.write_error(row, col, value, cell_format)
                elif isinstance(value, str):
                    self.write_string(row, col, value, cell_format)
                else:
                    self.write_number(row, col, value, cell_format)
            return
        if row > self.previous_row and (self._written != self.previous_row or self._held is not None or self.table):
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
        self.previous_row = row
        if xml is _HOLD:
            self._held = (row, cells)
            return
        self._written = row
        pending = self._pending
        pending.append(xml)
        if len(pending) >= _PENDING_ROWS:
            self.fh.write("".join(pending))
            pending.clear()

    def write_error(self, row: int, col: int, error: str, cell_format: Format | None = None) -> None:
        """Write the error ``error`` (``#N/A``) as the value of the cell at (``row``, ``col``), as Excel saves a
        cell showing an error (``<c t="e"><v>#N/A</v></c>``), the way xlsxwriter's own ``write_*`` store
        theirs."""
        if self._check_dimensions(row, col):
            raise ValueError(f"cell ({row}, {col}) is outside a worksheet")
        if self.constant_memory and row > self.previous_row:
            self._write_single_row(row)
        self.table[row][col] = _ErrorCell(error, cell_format)

    def _write_cell(self, row: int, col: int, cell: Any) -> None:
        if type(cell) is not _ErrorCell:
            super()._write_cell(row, col, cell)
            return
        style = f' s="{cell.format._get_xf_index()}"' if cell.format is not None else ""
        self.fh.write(f'<c r="{xl_rowcol_to_cell(row, col)}"{style} t="e"><v>{escape(cell.error)}</v></c>')

    def _streams(self, row: int, last_column: int) -> bool:
        """True when xlsxwriter would write ``row`` as a bare ``<row r="N">`` of its cells, each with its own
        format: below the rows written, within the sheet, no row or column formats or heights, no Excel 2010
        extras."""
        return (
            (row > self.previous_row
             or (row == self.previous_row and self._held is None and self._written != row and not self.table))
            and self.constant_memory
            and not self.row_info
            and not self.col_info
            and self.excel_version == 2007
            and self.default_row_height == self.original_row_height
            and row < self.xls_rowmax
            and last_column < self.xls_colmax
        )

    def _row_xml(self, row: int, cells: list[Cell], *, number_formats: bool = False) -> str | None:
        """Row ``row``'s XML as xlsxwriter writes it; None when xlsxwriter would change a text (see ``_SPECIAL``)
        or a cell is not a whole number or text or the columns do not go left to right; ``_HOLD`` when the
        row is plain but a format has no number yet and ``number_formats`` is false (the row is written
        later, numbering it)."""
        number = f"{row + 1}"
        columns = self._columns
        if cells[-1][0] >= len(columns):
            columns.extend(xl_col_to_name(col) for col in range(len(columns), cells[-1][0] + 1))
        styles = self._styles
        parts = [f'<row r="{number}">']
        texts = []  # checked together below: one search of the row's texts, not one per text
        before = -1
        hold = False
        for col, value, cell_format in cells:
            if col <= before:
                return None
            before = col
            if (style := styles.get(cell_format)) is None:
                assert cell_format is not None  # styles has None's: ""
                if cell_format.xf_index is None and not number_formats:
                    hold, style = True, ""
                else:  # asked when the format is first written, as xlsxwriter does: it numbers them so
                    style = styles[cell_format] = f' s="{cell_format._get_xf_index()}"'
            if type(value) is str:
                if value.strip() != value:
                    return None
                texts.append(value)
                parts.append(f'<c r="{columns[col]}{number}"{style} t="inlineStr"><is><t>{value}</t></is></c>')
            elif type(value) is int:
                # as xlsxwriter's f"{value:.16G}", without the float: the same digits below 10**16
                digits = str(value) if -_EXACT < value < _EXACT else f"{value:.16G}"
                parts.append(f'<c r="{columns[col]}{number}"{style}><v>{digits}</v></c>')
            else:
                return None
        # The texts joined by a line break (neither special nor part of an _xHHHH_ look-alike): a special
        # character or look-alike in them is one in a text. One search a row, not one a text: a search
        # costs more to start than to run along a text.
        joined = "\n".join(texts)
        if _SPECIAL.search(joined) or ("_x" in joined and _ESCAPE_LOOK_ALIKE.search(joined)):
            return None
        # xlsxwriter measures (and cuts) texts past half of Excel's limit in UTF-16 units
        longest = self.xls_strmax // 2
        if len(joined) > longest and any(len(text) > longest for text in texts):
            return None
        if hold:
            return _HOLD
        parts.append("</row>")
        return "".join(parts)

    def _write_single_row(self, current_row_num: int = 0) -> None:
        # xlsxwriter's own flush of the row it holds (when a later row comes, and when the sheet is closed):
        # the rows pending go first; a row write_cells wrote has nothing more to write (a cell written to it
        # since is refused); a held row of write_cells is written as its XML
        if self._pending:
            self.fh.write("".join(self._pending))
            self._pending.clear()
        row = self.previous_row
        if self._held is not None:
            row, cells = self._held
            self._held = None
            xml = self._row_xml(row, cells, number_formats=True)
            assert xml is not None and xml is not _HOLD  # plain when held, and every format numbered now
            self._written = row
        elif row == self._written:
            xml = ""
        else:
            super()._write_single_row(current_row_num)
            return
        if self.table.get(row):
            raise ValueError(f"row {row + 1} of sheet {self.name!r} was written twice")
        self.fh.write(xml)
        self.previous_row = current_row_num
        self.table.clear()


# _row_xml's answer for a row that must wait for its formats' numbers
_HOLD = "<held/>"
# rows written to the sheet's file at once: ~80 KB of XML (a row of report.xlsx is ~400 characters)
_PENDING_ROWS = 200
# whole numbers below this are exact floats of at most 16 digits: str() prints them as xlsxwriter's "{:.16G}"
_EXACT = 2**53
