"""A big XLSX sheet read a chunk of rows at a time, so memory holds one chunk whatever the sheet's size
(issue 17).

calamine (under fastexcel) cannot stream a sheet: it lays the whole of it out as one grid. But a sheet's
part can be cut: its XML is inflated as a stream and cut before a ``<row`` element every ``chunk_rows``
rows, and each piece goes to fastexcel as a small workbook built in memory: the archive's small parts
(workbook, styles, shared strings, relationships) as they are, and the sheet part made of the original
head up to ``<sheetData>`` (without its ``<dimension>``), the piece, and the closing tags. fastexcel
renders each cell as text by itself, so every cell reads exactly as in the whole read (``workbook``), and
``SheetScanner`` looks through the same pieces for what fastexcel's text loses.

calamine places cells by their ``r`` references, and a grid starting at row 40,001 would be laid out from
row 1: each piece after the first starts with a row of one marker cell just above its first row, and the
grid is read from its first row holding something (that marker), so a frame position is a known row.

What only the whole sheet shows ends the stream with ``StreamBroken`` (the import reads the file whole
again, before anything is sent): a value in a column the first chunk did not name, cells left of the
table, rows out of order or without references, anything fastexcel refuses. Whatever the first chunk
shows needs the whole read (no header found in it, a header row below it, a sheet that fits in one
chunk) makes ``stream_xlsx`` return None.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa

from hrimport.errors import HrimportError
from hrimport.outcomes import SourceInfo
from hrimport.reader.extent import check_extent, xlsx_sheet_extent
from hrimport.reader.grid import (
    HEADER_SCAN_ROWS,
    CellsRead,
    SourceTable,
    _cells_in_table,
    _checked_header_index,
    _filled_rows,
    _find_header,
    _header_names,
    _no_data,
    _rows_of,
    _trim_trailing,
    normalize_header,
)
from hrimport.reader.text import StreamBroken
from hrimport.reader.workbook import _Layout, fastexcel_table, fastexcel_text
from hrimport.reader.xlsx_cells import SheetScanner, look_alike_shared_strings

log = logging.getLogger(__name__)

#: Parts of the archive up to this size go into every chunk's workbook as they are (the workbook, its
#: relationships, styles, theme...); bigger ones (other sheets, pictures) are left out, but for the shared
#: strings, which the cells need.
SMALL_PART = 1 << 20
_READ = 1 << 22  # bytes inflated at a time
_ROW = re.compile(rb"<row[\s>]")
_DIMENSION = re.compile(rb"<dimension\b[^>]*/>")
_ROWS_END = b"</sheetData>"
_SHEET_END = b"</sheetData></worksheet>"
#: The one cell of the row above each piece after the first: the grid is read from it.
MARKER = "hrimport: chunk starts below"


class _NotStreamable(Exception):
    """The sheet needs the whole read (found before any chunk was handed on)."""


@dataclass
class _Piece:
    """A run of whole ``<row>`` elements of the sheet: their XML, the first and last row numbers."""

    rows: bytes
    first_row: int
    last_row: int
    last: bool  # the sheet's last piece


@dataclass
class _ChunkGrid:
    """A piece read by fastexcel as Excel shows it: ``frame``'s columns start at column ``first_column``
    (0-based); its first row is grid row ``offset`` (Excel row - 1); the cells read are at grid rows."""

    frame: pd.DataFrame
    table: pa.RecordBatch
    first_column: int
    offset: int
    cells_read: dict[int, list[CellsRead]]
    last: bool


def stream_xlsx(path: Path, info: SourceInfo, layout: _Layout, chunk_rows: int, header_row: int | None,
                expected: Iterable[str]) -> Iterator[SourceTable] | None:
    """The table of an XLSX sheet in chunks of about ``chunk_rows`` rows (``read_spreadsheet``'s table cut
    in pieces), or None when the sheet needs the whole read. The first chunk is read here, the others
    while the caller works on the one before (fastexcel releases the GIL)."""
    chosen = layout.sheets[layout.choice.index]
    if not chosen.part:
        return None
    info.sheet, info.sheet_note = chosen.name, layout.choice.note
    try:
        extent = xlsx_sheet_extent(path, chosen.part, layout.shared_strings)
    except KeyError:  # the workbook lists a sheet its archive does not hold: the whole read says so
        return None
    check_extent(path, chosen.name, extent)  # the whole read's refusal, before anything is laid out
    stop = extent.tail_start if extent.has_blank_tail else None
    scan_rows = max(HEADER_SCAN_ROWS, header_row or 0)
    reader = _ChunkReader(path, layout, chosen.part, chosen.name, stop)
    worker = ThreadPoolExecutor(max_workers=1)
    try:
        first = worker.submit(reader.next_grid, max(chunk_rows, scan_rows) + 1).result()
        if first is None or first.last:
            raise _NotStreamable
        grid = first.frame
        if header_row is not None and header_row > len(grid):
            raise _NotStreamable
        top = grid.iloc[:HEADER_SCAN_ROWS].to_numpy().tolist()
        index = _checked_header_index(path, header_row, top, len(grid))
        if index is None:
            index = _find_header(top, {normalize_header(h) for h in expected})
        if index is None:
            raise _NotStreamable
        header_cells = [str(c) for c in grid.iloc[index].tolist()]
        body = grid.iloc[index + 1:]
        filled, nonempty = _filled_rows(body)
        names = _header_names(path, header_cells, index + 1, [bool((n & filled).any()) for n in nonempty],
                              first.first_column)
    except _NotStreamable:
        reader.close(worker)
        return None
    except (HrimportError, MemoryError):
        reader.close(worker)
        raise
    except Exception:  # whatever fastexcel or the archive says, the whole read says it in one line
        log.debug("the sheet of %s is read whole", path, exc_info=True)
        reader.close(worker)
        return None
    info.header_row = index + 1
    info.headers = [n for n in names if n is not None]
    info.preamble = [_trim_trailing([str(c) for c in r]) for r in grid.iloc[:index].to_numpy().tolist()]
    info.rows_read = 0
    table = _Table(path, info, names, first.first_column, index + 1)
    following = worker.submit(reader.next_grid, chunk_rows)
    return table.chunks(first, body, filled, index + 2, following, reader, worker, chunk_rows)


class _Table:
    """The table's columns as the first chunk names them, and the chunks laid out under them."""

    def __init__(self, path: Path, info: SourceInfo, names: list[str | None], first_column: int,
                 header_row: int) -> None:
        self.path, self.info, self.names = path, info, names
        self.first_column, self.header_row = first_column, header_row
        self.rows = 0

    def chunks(self, first: _ChunkGrid, body: pd.DataFrame, filled: np.ndarray, body_row: int,
               following: Future[_ChunkGrid | None], reader: _ChunkReader, worker: ThreadPoolExecutor,
               chunk_rows: int) -> Iterator[SourceTable]:
        try:
            table = self._table(body, filled, body_row, first.cells_read)
            del first, body
            if table is not None:
                yield table
            while True:
                try:
                    grid = following.result()
                except (HrimportError, MemoryError):
                    raise
                except Exception as exc:  # the whole read says it in one line
                    log.debug("reading %s in chunks failed", self.path, exc_info=True)
                    raise StreamBroken(f"{self.path}: {exc}") from None
                if grid is None:
                    break
                following = worker.submit(reader.next_grid, chunk_rows)
                table = self._later(grid)
                del grid
                if table is not None:
                    yield table
        finally:
            reader.close(worker)
        if not self.rows:
            raise _no_data(self.path, self.header_row)

    def _later(self, grid: _ChunkGrid) -> SourceTable | None:
        """A piece after the first, laid out under the first chunk's columns; ``StreamBroken`` when it holds
        what the whole read lays out otherwise (a column the header did not name, cells left of it)."""
        if grid.first_column != 0 or grid.table.num_rows == 0 or grid.table.column(0)[0].as_py() != MARKER:
            raise StreamBroken(f"{self.path}: the rows of the sheet are out of order")
        rows = grid.table.num_rows - 1  # without the marker's row
        for column in range(min(self.first_column, grid.table.num_columns)):
            held = rows + 1 - grid.table.column(column).null_count - (column == 0)
            if held:
                raise StreamBroken(f"{self.path}: a cell left of the table")
        everything = grid.frame.iloc[1:]
        filled, nonempty = _filled_rows(everything)
        width = len(self.names)
        columns = []
        for j in range(width):
            at = self.first_column + j
            columns.append(everything.iloc[:, at] if at < everything.shape[1]
                           else pd.Series([""] * rows, index=everything.index, dtype="str"))
        for at, has_text in enumerate(nonempty):
            j = at - self.first_column
            named = 0 <= j < width and self.names[j] is not None
            if not named and at >= self.first_column and (has_text & filled).any():
                raise StreamBroken(f"{self.path}: a value in a column without a header")
        body = pd.concat(columns, axis=1, ignore_index=True) if columns else everything.iloc[:, :0]
        cells_read = {at - self.first_column: reads for at, reads in grid.cells_read.items()
                      if 0 <= at - self.first_column < width}
        return self._table(body, filled, grid.offset + 2, cells_read)

    def _table(self, body: pd.DataFrame, filled: np.ndarray, body_row: int,
               cells_read: dict[int, list[CellsRead]]) -> SourceTable | None:
        """The rows of ``body`` that hold something (``filled``), its first row Excel row ``body_row``."""
        numbers = np.flatnonzero(filled) + body_row
        if not len(numbers):
            return None
        self.rows += len(numbers)
        self.info.rows_read = self.rows
        table = _rows_of(self.info, body[filled], self.names, numbers, None, scan_replacements=True)
        if cells_read:
            table.cells_read = _cells_in_table(cells_read, self.names, numbers - 1)
        return table


class _ChunkReader:
    """The sheet part inflated as a stream and handed to fastexcel a piece at a time (``next_grid``),
    each piece in a workbook of its own built in memory. One thread at a time calls ``next_grid``."""

    def __init__(self, path: Path, layout: _Layout, part: str, sheet: str, stop: int | None) -> None:
        self.path, self.part, self.sheet, self.stop = path, part, sheet, stop
        self.archive = zipfile.ZipFile(path)
        self.stream: IO[bytes] = self.archive.open(part)
        self.read_bytes = 0
        self.buffer = bytearray()
        self.ended = False
        self.head: bytes | None = None
        self.previous_row = 0  # the last row of the pieces before
        self.pieces = 0
        self.padded = layout.padded
        self.look_alike = (look_alike_shared_strings(str(path), layout.shared_strings)
                           if layout.shared_strings else set())
        self.parts = [(info, self.archive.read(info)) for info in self.archive.infolist()
                      if info.filename != part
                      and (info.file_size <= SMALL_PART or info.filename == layout.shared_strings)]

    def close(self, worker: ThreadPoolExecutor) -> None:
        worker.shutdown(wait=True, cancel_futures=True)  # the worker reads the archive: let it finish first
        self.stream.close()
        self.archive.close()

    def next_grid(self, rows: int) -> _ChunkGrid | None:
        """The next ``rows`` rows of the sheet read (the rest, when fewer are left), or None at its end."""
        piece = self._next_piece(rows)
        if piece is None:
            return None
        scanner = SheetScanner(self.padded, lossy=True, look_alike_strings=self.look_alike, formulas=True)
        scanner.add(piece.rows)
        scan = scanner.result()
        assert self.head is not None
        first = self.pieces == 1
        marker = b"" if first else _marker_row(piece.first_row - 1)
        book = self._workbook(self.head + marker + piece.rows + _SHEET_END)
        del piece.rows
        # The first piece from row 1, blank rows included, as the whole read; the others from their
        # marker's row (skip_rows=None: the grid starts at its first row holding something).
        table, first_column = fastexcel_table(self.path, book, self.sheet, skip_rows=0 if first else None)
        del book
        offset = 0 if first else piece.first_row - 2
        frame, cells_read = fastexcel_text(table, first_column, scan, offset)
        if not first and table.num_rows > piece.last_row - piece.first_row + 2:
            raise StreamBroken(f"{self.path}: the rows of the sheet are out of order")
        return _ChunkGrid(frame, table, first_column, offset, cells_read, piece.last)

    def _workbook(self, sheet_xml: bytes) -> bytes:
        """A workbook of the archive's small parts and the sheet part ``sheet_xml``, uncompressed."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as book:
            for info, data in self.parts:
                book.writestr(info.filename, data)
            book.writestr(self.part, sheet_xml)
        return out.getvalue()

    def _fill(self) -> bool:
        """Inflate more of the sheet part into the buffer; False at its end (or at ``stop``)."""
        if self.ended:
            return False
        size = _READ if self.stop is None else min(_READ, self.stop - self.read_bytes)
        data = self.stream.read(size) if size > 0 else b""
        if not data:
            self.ended = True
            return False
        self.read_bytes += len(data)
        self.buffer += data
        return True

    def _next_piece(self, rows: int) -> _Piece | None:
        if self.head is None:
            self._read_head()
        buffer = self.buffer
        searched = 0  # rows counted in the buffer from its start, up to ``counted_to``
        counted_to = 0
        while True:
            # the start of the row after ``rows`` rows: the end of the piece
            match = next(islice(_ROW.finditer(buffer, counted_to), rows - searched, None), None)
            if match is not None:
                cut = match.start()
                last = False
                break
            # count the rows starting before ``boundary``: a tag cut by the buffer's end is counted later
            boundary = max(counted_to, len(buffer) - 4)
            searched += len(_ROW.findall(buffer, counted_to, boundary + 4))
            counted_to = boundary
            if not self._fill():
                end = buffer.find(_ROWS_END)
                cut = len(buffer) if end < 0 else end
                last = True
                break
        piece = bytes(buffer[:cut])
        del buffer[:cut]
        if last:
            buffer.clear()
        start = piece.find(b"<row")
        if start < 0:
            return None
        first_row = _row_number(piece, start)
        last_row = _row_number(piece, piece.rfind(b"<row"))
        if first_row is None or last_row is None or first_row <= self.previous_row or last_row < first_row:
            raise StreamBroken(f"{self.path}: rows without references or out of order")
        if not _has_references(piece, start):
            raise StreamBroken(f"{self.path}: cells without references")
        self.previous_row = last_row
        self.pieces += 1
        return _Piece(piece, first_row, last_row, last)

    def _read_head(self) -> None:
        """Everything before the first row (up to ``<sheetData>``), without ``<dimension>`` (calamine sizes
        its grid by it)."""
        while True:
            at = self.buffer.find(b"<sheetData")
            end = self.buffer.find(b">", at) if at >= 0 else -1
            if end >= 0:
                break
            if not self._fill():
                raise _NotStreamable
        if self.buffer[end - 1 : end] == b"/":
            raise _NotStreamable  # no rows at all
        self.head = _DIMENSION.sub(b"", bytes(self.buffer[: end + 1]))
        del self.buffer[: end + 1]


def _row_number(piece: bytes, start: int) -> int | None:
    """The ``r`` of the ``<row`` tag at ``start``."""
    end = piece.find(b">", start)
    at = piece.find(b' r="', start, end)
    if at < 0:
        return None
    number = piece[at + 4 : piece.find(b'"', at + 4)]
    return int(number) if number.isdigit() else None


def _has_references(piece: bytes, start: int) -> bool:
    """Whether the first cell after ``start`` has an ``r="A1"`` reference (writers leave them all out or
    none)."""
    cell = piece.find(b"<c ", start)
    return cell < 0 or piece.find(b' r="', cell, piece.find(b">", cell)) >= 0


def _marker_row(row: int) -> bytes:
    return f'<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>{MARKER}</t></is></c></row>'.encode()
