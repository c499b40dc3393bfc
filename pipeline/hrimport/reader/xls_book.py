"""An Excel 97-2003 workbook opened with xlrd, and checked before python-calamine lays it out.

calamine reads an .xls in Rust, trusting what the file says of itself. Damaged files (a truncated download,
flipped bits) made it panic on a slice out of range, follow a chain of sectors that loops until memory ran out
(a 6 KB file took 8 GB, then the process aborted), or reserve room for the 4 billion rows a sheet's
DIMENSIONS record claimed (aborted: no error a reader can catch). xlrd reads the same compound document in
Python and checks it as it goes (sectors out of range, chains seen twice): a workbook it cannot open is
refused before calamine runs, with what xlrd said, and so is a sheet declaring more rows or columns than an
.xls holds. Every .xls was opened by xlrd anyway (its date system, formats and error cells).

xlrd does not check everything either. A workbook stream under 4 KB lives in the compound document's short
sectors, whose chain xlrd follows until it ends: a chain that loops made it append sectors for ever (a 5 KB
file hung, then ran out of memory). ``open_xls`` follows that chain first, each sector once. And calamine
lays a sheet out as one grid from A1 to its farthest cell, wherever the cell records say they are: a single
record at row 65,001, column 65,001 (an .xls has 256 columns) asked for 135 GB and aborted the process, one at
IV65001 for 16 million cells, more than a 2 GB process holds. ``check_xls`` reads where each cell record of
every sheet is (calamine lays out every sheet on opening) and refuses a column past the last, or a grid
mostly empty (``check_extent``: a stray value far from the table), before calamine runs.

xlrd writes its warnings to stdout unless told otherwise (``WARNING *** file size (7282) not 512 + multiple
of sector size``): ``open_xls`` sends them to the debug log (``--debug``).
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrimport.reader.extent import SheetExtent, check_extent, column_letters
from hrimport.reader.hidden_columns import HiddenColumns
from hrimport.reader.hidden_rows import HiddenRows

if TYPE_CHECKING:
    import xlrd

log = logging.getLogger(__name__)

#: The most rows and columns a sheet of an .xls (BIFF8) holds.
MAX_ROWS, MAX_COLUMNS = 65_536, 256

_DIMENSIONS = 0x0200
_BOF, _EOF, _BOUNDSHEET = 0x0809, 0x000A, 0x0085
#: The records of one cell holding a value (row, then column, first in the record): NUMBER, RK, LABELSST,
#: LABEL, RSTRING, BOOLERR, FORMULA (BIFF5-8 and BIFF4's). BLANK and MULBLANK (a format, no value) are not
#: laid out by calamine.
_VALUE_CELLS = frozenset({0x0203, 0x027E, 0x00FD, 0x0204, 0x00D6, 0x0205, 0x0006, 0x0406})
_MULRK = 0x00BD  # a run of numbers in one row: row, first column, 6 bytes a cell, last column
_MULBLANK = 0x00BE  # a run of formatted empty cells: row, first column, 2 bytes a cell, last column
_CELL_KINDS = _VALUE_CELLS | {_MULRK, 0x0201, _MULBLANK}  # and BLANK
#: Records looked through after a sheet's BOF for its DIMENSIONS (it comes after a few settings records).
_RECORDS_BEFORE_DIMENSIONS = 200


class _DebugLog:
    """A file-like object for xlrd's ``logfile``: each warning a line of the debug log."""

    def write(self, text: str) -> None:
        if text.strip():
            log.debug("xlrd: %s", text.strip())

    def flush(self) -> None:
        pass


def open_xls(path: str | Path, **options: Any) -> xlrd.Book:
    """``xlrd.open_workbook(path, **options)``, its warnings in the debug log instead of on stdout."""
    import xlrd  # only for XLS files: it is slow, and needed nowhere else

    _check_short_sectors(Path(path).read_bytes())
    return xlrd.open_workbook(str(path), logfile=_DebugLog(), **options)


def _check_short_sectors(data: bytes) -> None:
    """Raise ``ValueError`` when the workbook stream lives in short sectors whose chain repeats a sector or
    ends before the stream does (xlrd follows it with no such check: a loop never ends). What xlrd checks
    itself (the header, the sector tables, the directory) it raises here as it would on opening."""
    from xlrd import compdoc

    if data[:8] != compdoc.SIGNATURE:
        return  # not a compound document: xlrd says what it is
    doc = compdoc.CompDoc(data, logfile=_DebugLog())
    children = [doc.dirlist[i] for i in doc.dirlist[0].children if 0 <= i < len(doc.dirlist)]
    # the stream xlrd reads: the first called Workbook, else the first called Book
    entry = next((e for name in ("workbook", "book") for e in children if e.name.lower() == name), None)
    if entry is None or entry.etype != 2 or entry.tot_size >= doc.min_size_std_stream:
        return  # none (xlrd says so), or in whole sectors, whose chain xlrd checks
    needed = -(-entry.tot_size // doc.short_sec_size)
    sector, seen = entry.first_SID, set[int]()
    while sector >= 0 and len(seen) < needed:
        if sector in seen or sector >= len(doc.SSAT):
            break
        seen.add(sector)
        sector = doc.SSAT[sector]
    if len(seen) < needed or sector != compdoc.EOCSID:
        raise ValueError(f"the chain of short sectors holding its workbook stream loops or breaks at sector {sector}")


def check_xls(path: Path, book: xlrd.Book) -> None:
    """Raise ``ValueError`` naming a sheet of the .xls at ``path`` (opened as ``book``, ``open_xls``: what xlrd
    says of a damaged file it raised then) that declares more rows or columns than an .xls holds, or holds a
    cell past its last column; the reader turns either into its one line (``damaged or incomplete``). A sheet
    whose grid would be big and mostly empty is refused in the words of ``check_extent``."""
    for name, start in _sheet_starts(book) or zip(book.sheet_names(), book._sh_abs_posn):
        rows, columns = _declared_size(book.mem, start)
        if rows > MAX_ROWS or columns > MAX_COLUMNS:
            raise ValueError(f"sheet '{name}' declares {rows:,} rows x {columns:,} columns, more than an .xls "
                             f"holds ({MAX_ROWS:,} x {MAX_COLUMNS})")
        extent, beyond = _cells_extent(book.mem, start)
        if beyond:
            raise ValueError(f"sheet '{name}' has a cell in column {beyond:,}, past IV, the last column an "
                             ".xls holds")
        check_extent(path, name, extent)


def _sheet_starts(book: xlrd.Book) -> list[tuple[str, int]]:
    """Every sheet the workbook's BOUNDSHEET records list, and where its BOF is in ``book.mem``: macro and
    chart sheets too, which xlrd leaves out and calamine lays out all the same (a macro sheet's cell at
    column 65,001 aborted the process)."""
    from xlrd.biffh import unpack_string, unpack_unicode

    stream, at, end = book.mem, book.base, len(book.mem)
    sheets: list[tuple[str, int]] = []
    while at + 4 <= end:
        kind, size = struct.unpack_from("<HH", stream, at)
        body = stream[at + 4 : at + 4 + size]
        at += 4 + size
        if kind == _BOUNDSHEET and len(body) >= 6:
            try:
                name = (unpack_unicode(body, 6, lenlen=1) if book.biff_version >= 80
                        else unpack_string(body, 6, book.encoding, lenlen=1))
            except (ValueError, LookupError, IndexError, struct.error):  # a damaged name: looked at all the same
                name = f"#{len(sheets) + 1}"
            sheets.append((name, struct.unpack_from("<i", body)[0] + book.base))
        elif kind == _EOF:  # the end of the workbook's own records
            break
    return sheets


def _cells_extent(stream: bytes, start: int) -> tuple[SheetExtent, int]:
    """The grid calamine would lay out for the sheet whose BOF is at ``start``: from A1 to the farthest row
    and column of a cell record holding a value (blank text included), with the number of such cells; and
    the column (from 1) of a cell record past the last an .xls holds, or 0. A pass over the records, each
    looked at once (half a second for a million cells). The cells an embedded chart keeps of its series
    (records inside its own BOF and EOF) are not the sheet's: calamine leaves them out."""
    values = beyond = 0
    last_row = far_column = -1
    last_cell = far_cell = (0, 0)
    at, depth, end = start, 0, len(stream)
    unpack, cell_kinds, value_kinds = struct.unpack_from, _CELL_KINDS, _VALUE_CELLS
    while at + 4 <= end:
        kind, size = unpack("<HH", stream, at)
        body = at + 4
        at = body + size
        if kind in cell_kinds:
            if size < 4 or at > end or depth > 1:
                continue  # too short to say where: calamine refuses or skips it
            row, column = unpack("<HH", stream, body)
            cells = 1
            if kind == _MULRK:
                cells = max((size - 6) // 6, 0)
                column = max(column + cells - 1, unpack("<H", stream, at - 2)[0])
            elif kind == _MULBLANK:  # its last column ends it
                column = max(column, unpack("<H", stream, at - 2)[0])
            if column >= MAX_COLUMNS:
                beyond = max(beyond, column + 1)
            if kind not in value_kinds and kind != _MULRK or not cells:
                continue
            values += cells
            if row > last_row:
                last_row, last_cell = row, (row, column)
            if column > far_column:
                far_column, far_cell = column, (row, column)
        elif kind == _BOF:
            depth += 1
        elif kind == _EOF:
            depth -= 1
            if depth <= 0:
                break
    extent = SheetExtent(last_row=last_row + 1, last_column=far_column + 1, values=values)
    if values:
        extent.last_cell = f"{column_letters(last_cell[1] + 1)}{last_cell[0] + 1}"
        extent.far_cell = f"{column_letters(far_cell[1] + 1)}{far_cell[0] + 1}"
    return extent, beyond


def _declared_size(stream: bytes, start: int) -> tuple[int, int]:
    """The rows and columns the DIMENSIONS record of the sheet whose BOF is at ``start`` spans (0, 0 without
    one); a first row or column after the last counts as the whole range of the field."""
    at = start
    for _ in range(_RECORDS_BEFORE_DIMENSIONS):
        if at + 4 > len(stream):
            break
        kind, size = struct.unpack_from("<HH", stream, at)
        body = stream[at + 4 : at + 4 + size]
        if kind == _DIMENSIONS and len(body) >= 10:
            if len(body) >= 14:  # BIFF8: 32-bit rows
                first_row, end_row, first_column, end_column = struct.unpack_from("<IIHH", body)
            else:  # BIFF5/7: 16-bit rows
                first_row, end_row, first_column, end_column = struct.unpack_from("<HHHH", body)
            rows = end_row - first_row if end_row >= first_row else 1 << 32
            columns = end_column - first_column if end_column >= first_column else 1 << 16
            return rows, columns
        if kind == _EOF:
            break
        at += 4 + size
    return 0, 0


def xls_hidden_rows(book: xlrd.Book, sheet: str) -> HiddenRows:
    """The rows the XLS sheet ``sheet`` of ``book`` (opened with its formatting) hides, by a filter or Hide: its
    ROW records' hidden flag, or a height of zero set on the row (``height_mismatch``: not the font's), which
    Excel shows nothing of (``hidden_rows``). An .xls has at most 65,536 rows."""
    hidden = HiddenRows()
    rows = book.sheet_by_name(sheet).rowinfo_map
    for row in sorted(r for r, info in rows.items() if info.hidden or (info.height == 0 and info.height_mismatch)):
        hidden.add(row + 1, zero_height=not rows[row].hidden)
    return hidden


def xls_hidden_columns(book: xlrd.Book, sheet: str) -> HiddenColumns:
    """The columns the XLS sheet ``sheet`` of ``book`` (opened with its formatting) hides: its COLINFO records'
    hidden flag, or a width of zero (``hidden_columns``). An .xls has at most 256 columns."""
    hidden = HiddenColumns()
    columns = book.sheet_by_name(sheet).colinfo_map
    for column in sorted(c for c, info in columns.items() if info.hidden or info.width == 0):
        hidden.add(column + 1)
    return hidden
