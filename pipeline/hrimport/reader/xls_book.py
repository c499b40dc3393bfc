"""An Excel 97-2003 workbook opened with xlrd, and checked before python-calamine lays it out.

calamine reads an .xls in Rust, trusting what the file says of itself. Damaged files (a truncated download,
flipped bits) made it panic on a slice out of range, follow a chain of sectors that loops until memory ran out
(a 6 KB file took 8 GB, then the process aborted), or reserve room for the 4 billion rows a sheet's
DIMENSIONS record claimed (aborted: no error a reader can catch). xlrd reads the same compound document in
Python and checks it as it goes (sectors out of range, chains seen twice): a workbook it cannot open is
refused before calamine runs, with what xlrd said, and so is a sheet declaring more rows or columns than an
.xls holds. Every .xls was opened by xlrd anyway (its date system, formats and error cells).

xlrd writes its warnings to stdout unless told otherwise (``WARNING *** file size (7282) not 512 + multiple
of sector size``): ``open_xls`` sends them to the debug log (``--debug``).
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xlrd

log = logging.getLogger(__name__)

#: The most rows and columns a sheet of an .xls (BIFF8) holds.
MAX_ROWS, MAX_COLUMNS = 65_536, 256

_DIMENSIONS = 0x0200
_EOF = 0x000A
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

    return xlrd.open_workbook(str(path), logfile=_DebugLog(), **options)


def check_xls(path: Path) -> None:
    """Raise what xlrd says of a damaged .xls, or ``ValueError`` naming a sheet that declares more rows or
    columns than an .xls holds; the reader turns either into its one line (``damaged or incomplete``)."""
    book = open_xls(path, on_demand=True)  # the compound document and the workbook's own records, no sheet
    try:
        for name, start in zip(book.sheet_names(), book._sh_abs_posn):
            rows, columns = _declared_size(book.mem, start)
            if rows > MAX_ROWS or columns > MAX_COLUMNS:
                raise ValueError(f"sheet '{name}' declares {rows:,} rows x {columns:,} columns, more than an .xls "
                                 f"holds ({MAX_ROWS:,} x {MAX_COLUMNS})")
    finally:
        book.release_resources()


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
