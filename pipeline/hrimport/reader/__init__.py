"""Read an HRIS export (CSV, TSV, XLSX, XLSM, XLS, ODS) into a table of text cells.

``read_spreadsheet`` is the reader stage (issue 3, "Reader"): every cell comes back as text exactly as a
person reads it in Excel (leading zeros kept, ``123`` not ``123.0``, date cells as ISO dates), the header
row is found below report titles, fully blank rows are dropped, and every data row keeps the row number a
person sees in Excel. A file that cannot be read raises ``InputFileError`` with one line that names the
file and says how to fix it (whatever a workbook library raised: ``--debug`` logs it); a file with a
header and nothing under it raises ``NoDataRowsError``. With no ``sheet`` the first visible sheet of
cells is read, and ``SourceInfo.sheet_note`` says which sheets before it were skipped.

Example::

    table = read_spreadsheet("staff.xlsx", expected_headers=["Employee ID", "Email"])
    table.frame[table.column("employee id")]   # every cell a str
    table.row_numbers[0]                       # e.g. 5 when titles and the header fill rows 1-4
"""

from __future__ import annotations

import hashlib
import logging
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from hrimport.config import DEFAULT_MAX_UNPACKED_MB
from hrimport.errors import HrimportError, InputFileError
from hrimport.gc_pause import paused_gc
from hrimport.memory import use_returning_arrow_pool
from hrimport.outcomes import SourceInfo
from hrimport.reader import workbook
from hrimport.reader.grid import NoDataRowsError, SourceTable, normalize_header, rows_per_chunk, table_chunks
from hrimport.reader.other_sheets import check_other_sheets
from hrimport.reader.sniff import _TEXT_FORMATS, _check_content
from hrimport.reader.text import STREAM_BYTES, StreamBroken, _build_from_text, _TextGrid, stream_text
from hrimport.reader.workbook import _build_from_workbook, _xlsx_layout
from hrimport.reader.xlsx_prefixes import odd_parts
from hrimport.reader.xlsx_stream import stream_xlsx

log = logging.getLogger(__name__)

__all__ = ["FORMATS", "NoDataRowsError", "SourceTable", "StreamBroken", "normalize_header", "read_spreadsheet",
           "read_spreadsheet_chunks"]

#: File name extension -> format reported in ``SourceInfo.format`` (".txt" is read as delimited text).
FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "csv",
    ".xlsx": "xlsx",
    ".xlsm": "xlsm",
    ".xls": "xls",
    ".ods": "ods",
}


def read_spreadsheet(
    path: str | Path,
    *,
    sheet: str | int | None = None,
    header_row: int | None = None,
    expected_headers: Iterable[str] = (),
    encoding: str | None = None,
    delimiter: str | None = None,
    max_unpacked_mb: int = DEFAULT_MAX_UNPACKED_MB,
    other_sheets: Literal["refuse", "tell"] = "refuse",
) -> SourceTable:
    """Read one sheet of a spreadsheet, or a delimited text file, as text cells.

    ``sheet`` is a name or a 0-based position (by default the first visible sheet that is not a chart;
    ignored for CSV/TSV).
    ``header_row`` is the header's Excel row number; without it the header is the row among the first
    30 holding most of ``expected_headers``, else the first row that looks like a header.
    ``encoding`` and ``delimiter`` override detection for CSV/TSV.
    ``max_unpacked_mb``: a workbook (.xlsx, .xlsm, .ods: a ZIP) whose parts unpack to more is refused
    before any part is unpacked.
    ``other_sheets``: with no ``sheet``, a workbook whose other visible sheets hold the same table is refused
    (``other_sheets.SameTableError``); "tell" names them in ``SourceInfo.same_table_sheets`` instead.
    """
    path = Path(path)
    fmt = _format_of(path)
    if fmt not in _TEXT_FORMATS:
        use_returning_arrow_pool()  # a workbook's cells go through several Arrow copies (``memory``)
    data = path.read_bytes()
    if not data or data.isspace():  # isspace stops at the first visible byte: no copy of a big file
        raise InputFileError(f"{path} is empty; export the data again")
    info = SourceInfo(
        path=str(path),
        name=path.name,
        format=fmt,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    _check_content(path, fmt, data, max_unpacked_mb)
    if fmt in _TEXT_FORMATS:
        grid = _TextGrid.load(path, fmt, data, encoding, delimiter)
        del data  # the decoded copy is all that is needed from here on
        info.encoding, info.delimiter = grid.encoding, grid.delimiter
        if fmt == "csv" and grid.delimiter == "\t":
            info.format = "tsv"
        return _build_from_text(path, info, grid, header_row, expected_headers)
    del data
    expected_headers = list(expected_headers)
    tell = other_sheets == "tell"
    try:
        if fmt in ("xlsx", "xlsm"):  # before the sheet is read: its other sheets' tops are read on their own
            check_other_sheets(path, info, sheet, header_row, expected_headers, tell=tell)
        table = _build_from_workbook(path, info, sheet, header_row, expected_headers)
        if fmt in ("ods", "xls"):  # after: the read's checks have looked through every sheet
            check_other_sheets(path, info, sheet, header_row, expected_headers, tell=tell)
        return table
    except (HrimportError, MemoryError):
        raise
    except Exception as exc:  # the one place any workbook library's failure becomes one line
        log.debug("reading %s failed", path, exc_info=True)  # --debug shows what the library said
        raise _unreadable(path, exc) from exc


def read_spreadsheet_chunks(
    path: str | Path,
    *,
    chunk_rows: int,
    stream: bool = True,
    sheet: str | int | None = None,
    header_row: int | None = None,
    expected_headers: Iterable[str] = (),
    encoding: str | None = None,
    delimiter: str | None = None,
    max_unpacked_mb: int = DEFAULT_MAX_UNPACKED_MB,
) -> tuple[Iterator[SourceTable], bool]:
    """``read_spreadsheet``'s table in chunks of ``chunk_rows`` rows (fewer in a wide table: ``rows_per_chunk``;
    issue 17), all sharing one ``SourceInfo`` (its ``rows_read`` complete after the last chunk), and whether
    they are streamed.

    A UTF-8 text file or an XLSX/XLSM workbook above ``STREAM_BYTES`` is read a chunk at a time
    (``stream_text``, ``xlsx_stream.stream_xlsx``), so memory holds a chunk or two; anything else is read
    whole here and cut in chunks. While streaming, ``StreamBroken`` says the file needs the whole read after
    all: read it again with ``stream=False``."""
    path = Path(path)
    fmt = _format_of(path)
    if fmt not in _TEXT_FORMATS:
        use_returning_arrow_pool()  # each piece's freed pages go back to the system (``memory``)
    if stream and fmt in _TEXT_FORMATS and path.stat().st_size > STREAM_BYTES:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)
            _check_content(path, fmt, head, max_unpacked_mb)
            fh.seek(0)
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        info = SourceInfo(path=str(path), name=path.name, format=fmt, size=path.stat().st_size, sha256=digest)
        chunks = stream_text(path, info, chunk_rows, header_row, expected_headers, encoding, delimiter)
        if chunks is not None:
            return chunks, True
    if stream and fmt in ("xlsx", "xlsm") and workbook.FAST_XLSX and path.stat().st_size > STREAM_BYTES:
        expected_headers = list(expected_headers)
        chunks = _stream_workbook(path, fmt, chunk_rows, sheet, header_row, expected_headers, max_unpacked_mb)
        if chunks is not None:
            return chunks, True
    table = read_spreadsheet(path, sheet=sheet, header_row=header_row, expected_headers=expected_headers,
                             encoding=encoding, delimiter=delimiter, max_unpacked_mb=max_unpacked_mb)
    return table_chunks(table, rows_per_chunk(chunk_rows, len(table.frame.columns))), False


def _stream_workbook(path: Path, fmt: str, chunk_rows: int, sheet: str | int | None, header_row: int | None,
                     expected_headers: Iterable[str], max_unpacked_mb: int) -> Iterator[SourceTable] | None:
    """An XLSX sheet's chunks read a chunk at a time (``stream_xlsx``), or None when it needs the whole read."""
    data = path.read_bytes()
    if not data or data.isspace():
        return None
    info = SourceInfo(path=str(path), name=path.name, format=fmt, size=len(data),
                      sha256=hashlib.sha256(data).hexdigest())
    _check_content(path, fmt, data, max_unpacked_mb)
    del data
    check_other_sheets(path, info, sheet, header_row, expected_headers)
    try:
        if odd_parts(path):  # read whole, through a copy written as Excel writes it (``xlsx_prefixes``)
            return None
        layout = _xlsx_layout(path, sheet)
    except HrimportError:
        raise
    except Exception:  # the whole read turns it into one line
        log.debug("the workbook %s is read whole", path, exc_info=True)
        return None
    with paused_gc():
        return stream_xlsx(path, info, layout, chunk_rows, header_row, expected_headers)


def _format_of(path: Path) -> str:
    """The format of the file at ``path`` by its name, once it is known to be a regular file."""
    if not path.exists():
        raise InputFileError(f"{path}: file not found; check the path and the file name")
    if path.is_dir():
        raise InputFileError(f"{path} is a folder, not a file; give the path of the spreadsheet itself")
    _check_regular_file(path)
    suffix = path.suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise InputFileError(
            f"{path}: unsupported file type '{suffix or path.name}'; save it as "
            ".csv, .tsv, .txt, .xlsx, .xlsm, .xls or .ods"
        )
    return fmt


_FILE_KINDS = {stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
               stat.S_IFSOCK: "a socket"}


def _check_regular_file(path: Path) -> None:
    """Refuse anything but a regular file (after following links): reading a link to /dev/zero never ends
    and fills the memory, and reading a named pipe waits forever for a writer."""
    mode = path.stat().st_mode
    if stat.S_ISREG(mode):
        return
    kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a file")
    target = path.resolve()
    what = f"links to {target}, {kind}" if target != path.absolute() else f"is {kind}"
    raise InputFileError(
        f"{path} {what}; it must be a regular file: save the export as a file and give its path"
    )


def _unreadable(path: Path, exc: Exception) -> InputFileError:
    """A workbook its library could not read (truncated, corrupt, not what its name says) as one line."""
    detail = " ".join(str(exc).split("Context:")[0].split())[:120] or type(exc).__name__
    return InputFileError(f"{path} is damaged or incomplete ({detail}); download or export it again")
