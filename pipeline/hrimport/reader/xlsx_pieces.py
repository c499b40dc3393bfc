"""The pieces of an XLSX sheet that ``xlsx_stream`` hands to fastexcel: the sheet part inflated as a
stream, cut before a ``<row`` element every so many rows, and each piece read by fastexcel from a small
workbook of its own (the archive's small parts, the shared strings the piece uses, and a sheet part made
of the original head, a marker row above the piece when it is not the first, the piece, and the closing
tags). See ``xlsx_stream``.
"""

from __future__ import annotations

import math
import re
import zipfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.memory import share_malloc_arenas
from hrimport.private_files import ScratchFiles
from hrimport.reader.extent import check_extent, greater_pattern, holds_match, xlsx_sheet_extent
from hrimport.reader.grid import CellsRead
from hrimport.reader.text import StreamBroken
from hrimport.reader.workbook import _Layout, fastexcel_table, fastexcel_text
from hrimport.reader.xlsx_cells import LOOK_ALIKE_ANCHORS, SheetScan, SheetScanner, look_alike_shared_strings
from hrimport.reader.xlsx_piece_strings import SharedStrings

#: Parts of the archive up to this size go into every chunk's workbook as they are (the workbook, its
#: relationships, styles, theme...); bigger ones (other sheets, pictures) are left out, but for the shared
#: strings, which the cells need: each piece gets those its cells use (``xlsx_piece_strings``).
SMALL_PART = 1 << 20
_READ = 1 << 22  # bytes inflated at a time
#: fastexcel parses the shared strings table again for every piece: where the whole table goes with every
#: piece (``xlsx_piece_strings`` cannot cut it), a piece holds at least this many times the table's bytes
#: (a 100k x 40 sheet of 700,000 distinct strings: 6 pieces, its validation +36% of CPU over the whole
#: read; in pieces of 2,000 rows the table would be parsed 50 times).
SHARED_STRINGS_SHARE = 2
_ROW_TAG = b"<row "  # a row with attributes: its r="1" (a sheet whose rows have none is read whole)
_WIDE = re.compile(rb'<c r="[A-Za-z]{3}')  # a cell past column ZZ
_DIMENSION = re.compile(rb"<dimension\b[^>]*/>")
_ROWS_END = b"</sheetData>"
_SHEET_END = b"</sheetData></worksheet>"
#: The one cell of the row above each piece after the first: the grid is read from it.
MARKER = "hrimport: chunk starts below"


class NotStreamable(Exception):
    """The sheet needs the whole read (found before any chunk was handed on)."""


@dataclass
class _Piece:
    """A run of whole ``<row>`` elements of the sheet: their XML, the first and last row numbers."""

    rows: bytes
    first_row: int
    last_row: int
    last: bool  # the sheet's last piece


@dataclass
class _Prepared:
    """A piece ready for fastexcel: its workbook written (``book``), and whether it has a cell past column ZZ
    or below its last row (``far``)."""

    piece: _Piece
    book: Path
    far: bool


@dataclass
class ChunkGrid:
    """Pieces read by fastexcel: ``table``'s columns start at column ``first_column`` (0-based), its first
    row is grid row ``offset`` (Excel row - 1); ``scan``: what their XML says of the cells fastexcel's
    text flattens. ``text`` makes them the text Excel shows, in the thread that uses them (pyarrow's
    allocator keeps what one thread frees for another as long as it likes)."""

    table: pa.RecordBatch
    first_column: int
    offset: int
    scan: SheetScan
    last: bool

    def text(self) -> tuple[pd.DataFrame, dict[int, list[CellsRead]]]:
        """The cells as Excel shows them, by grid column, and the cells read in a way the report tells
        (at grid rows)."""
        return fastexcel_text(self.table, self.first_column, self.scan, self.offset)


class ChunkReader:
    """The sheet part inflated as a stream and handed to fastexcel a piece at a time (``next_grid``),
    each piece in a workbook of its own. One thread at a time calls ``next_grid``; the sheet's extent is
    found in another thread meanwhile; in a third, the next piece of a grid is cut and written, and the
    piece before scanned, while fastexcel reads one (it releases the GIL): the reading thread is the one
    the import waits for."""

    def __init__(self, path: Path, layout: _Layout, part: str, sheet: str, merge_rows: int) -> None:
        self.path, self.part, self.sheet = path, part, sheet
        share_malloc_arenas()
        self.measuring = ThreadPoolExecutor(max_workers=1)
        # the extent's pass also collects the merged cells (``merged_header``), which shape the header
        self.extent = self.measuring.submit(xlsx_sheet_extent, path, part, layout.shared_strings, merge_rows)
        self.extent_checked = False
        # the pieces hold HR data: files no one else can read, none left behind however the process ends
        self.scratch = ScratchFiles([f"piece-{k}.xlsx" for k in range(2)])
        self.books = self.scratch.paths  # one read, the other written
        self.preparing = ThreadPoolExecutor(max_workers=1)
        self.archive = zipfile.ZipFile(path)
        self.stream: IO[bytes] = self.archive.open(part)
        self.buffer = bytearray()
        self.consumed = 0  # bytes of the sheet part before the buffer
        self.ended = False
        self.head: bytes | None = None
        self.previous_row = 0  # the last row of the pieces before
        self.pieces = 0
        self.styles, self.asks_recalculation = layout.styles, layout.asks_recalculation
        self.date_styles, self.date_system = layout.date_styles, layout.date_system
        self.look_alike = (look_alike_shared_strings(str(path), layout.shared_strings)
                           if layout.shared_strings else set())
        self.parts = [(info, self.archive.read(info)) for info in self.archive.infolist()
                      if info.filename != part
                      and (info.file_size <= SMALL_PART or info.filename == layout.shared_strings)]
        self.shared_part = layout.shared_strings
        whole_table = next((data for info, data in self.parts if info.filename == self.shared_part), b"")
        # the table cut down for each piece, or (None) the whole table with every piece, in bigger pieces
        self.strings = SharedStrings.of(whole_table) if whole_table else None
        self.shared_bytes = 0 if self.strings is not None else len(whole_table)
        self.rows_read = self.bytes_read = 0  # row elements cut so far, and their bytes

    def close(self, worker: ThreadPoolExecutor) -> None:
        worker.shutdown(wait=True, cancel_futures=True)  # the worker reads the archive: let it finish first
        self.preparing.shutdown(wait=True, cancel_futures=True)
        self.measuring.shutdown(wait=True)
        self.scratch.close()
        self.stream.close()
        self.archive.close()

    def next_grid(self, rows: int, piece_rows: int) -> ChunkGrid | None:
        """The next ``rows`` rows of the sheet (the rest, when fewer are left), or None at its end, read
        ``piece_rows`` at a time and laid out as one grid: the first piece of the sheet alone."""
        tables: list[tuple[pa.RecordBatch, int, Future[SheetScan]]] = []
        last = False
        taken = 0
        size = min(self._piece_rows(piece_rows), rows) if self.pieces else rows
        following: Future[_Prepared | None] | None = None
        while not last and taken < rows:
            prepared = following.result() if following is not None else self._prepare(size)
            following = None
            taken += size
            if prepared is None or self.extent.done() or prepared.far:
                # at the end, as soon as the extent is known, and before laying out a piece with a cell past
                # column ZZ or below its rows (fastexcel lays the piece out down to it)
                self.check_extent()
            if prepared is None:
                break
            piece = prepared.piece
            last = piece.last
            if self.pieces == 1:
                table, first_column = self._read(prepared, first=True)
                return ChunkGrid(table, first_column, 0, self._scan(piece.rows, _anchors(table)), last)
            if not last and taken < rows:  # the next piece, the same size as it would be after this one
                size = min(self._piece_rows(piece_rows), rows - taken)
                following = self.preparing.submit(self._prepare, size)
            table, first_column = self._read(prepared, first=False)
            if first_column != 0 or table.num_rows == 0 or table.column(0)[0].as_py() != MARKER \
                    or table.num_rows > piece.last_row - piece.first_row + 2:
                raise StreamBroken(f"{self.path}: the rows of the sheet are out of order")
            tables.append((table, piece.first_row, self.preparing.submit(self._scan, piece.rows, _anchors(table))))
        if not tables:
            return None
        offset = tables[0][1] - 2  # the grid row of the first piece's marker
        scans = [scanned.result() for _, _, scanned in tables]
        pieces = [(t, first_row) for t, first_row, _ in tables]
        del tables
        table = _joined_pieces(pieces, offset)
        scan = SheetScan([n for s in scans for n in s.numbers], {cell for s in scans for cell in s.look_alike_text},
                         [f for s in scans for f in s.formulas], [f for s in scans for f in s.uncalculated],
                         [c for s in scans for c in s.shown], [f for s in scans for f in s.to_recalculate],
                         [d for s in scans for d in s.no_such_dates], [d for s in scans for d in s.dates_and_times])
        del scans
        return ChunkGrid(table, 0, offset, scan, last)

    def _piece_rows(self, rows: int) -> int:
        """``rows``, or more when the shared strings table is big: fastexcel parses it for every piece, so
        a piece holds at least ``SHARED_STRINGS_SHARE`` times its bytes (by the rows' bytes so far)."""
        if not self.shared_bytes or not self.rows_read:
            return rows
        return max(rows, math.ceil(SHARED_STRINGS_SHARE * self.shared_bytes * self.rows_read / self.bytes_read))

    def _prepare(self, rows: int) -> _Prepared | None:
        """The next ``rows`` rows of the sheet cut and written as a workbook for fastexcel; None at the end
        of the sheet."""
        piece = self._next_piece(rows)
        if piece is None:
            return None
        assert self.head is not None
        first = self.pieces == 1
        xml: bytes | bytearray = piece.rows
        strings = None
        if self.strings is not None:
            cut = self.strings.cut(piece.rows)
            if cut is None:  # cells written in a form not renumbered: the whole table, in bigger pieces
                self.shared_bytes = len(self.strings.xml)
            else:
                xml, strings = cut
        book = self.books[self.pieces % 2]
        self._write_workbook(book, strings, self.head, b"" if first else _marker_row(piece.first_row - 1), xml)
        del xml
        return _Prepared(piece, book, _WIDE.search(piece.rows) is not None or _below(piece.rows, piece.last_row))

    def _scan(self, rows: bytes, anchors: tuple[bytes, ...]) -> SheetScan:
        """What the XML of a piece's ``rows`` says of the cells fastexcel's text flattens (``anchors``:
        the look-alike renderings that text holds)."""
        scanner = SheetScanner(self.styles, lossy=True, look_alike_strings=self.look_alike, formulas=True,
                               anchors=anchors, asks_recalculation=self.asks_recalculation,
                               date_styles=self.date_styles, date_system=self.date_system)
        scanner.add(rows)
        return scanner.result()

    def _read(self, prepared: _Prepared, first: bool) -> tuple[pa.RecordBatch, int]:
        """A piece as fastexcel's text, and the index of its first column."""
        # The first piece from row 1, blank rows included, as the whole read; the others from their
        # marker's row (skip_rows=None: the grid starts at its first row holding something).
        return fastexcel_table(self.path, prepared.book, self.sheet, skip_rows=0 if first else None)

    def check_extent(self) -> None:
        """Refuse the sheet as the whole read does if its grid would be big and mostly empty."""
        if not self.extent_checked:
            check_extent(self.path, self.sheet, self.extent.result())
            self.extent_checked = True

    def _write_workbook(self, path: Path, strings: bytes | None, *sheet_xml: bytes | bytearray) -> None:
        """The workbook fastexcel reads a piece from: the archive's small parts (the shared strings table:
        ``strings`` when given) and the sheet part made of ``sheet_xml``, uncompressed, in a file (fastexcel
        streams it from there: given bytes, it copies them)."""
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as book:
            for info, data in self.parts:
                book.writestr(info.filename, strings if strings is not None and info.filename == self.shared_part
                              else data)
            with book.open(self.part, "w", force_zip64=True) as sheet:
                for xml in (*sheet_xml, _SHEET_END):
                    sheet.write(xml)

    def _fill(self) -> bool:
        """Inflate more of the sheet part into the buffer; False at its end."""
        if self.ended:
            return False
        data = self.stream.read(_READ)
        if not data:
            self.ended = True
            return False
        self.buffer += data
        return True

    def _next_piece(self, rows: int) -> _Piece | None:
        if self.head is None:
            self._read_head()
        buffer = self.buffer
        seen = 0  # row tags in the buffer before ``counted_to``
        counted_to = 0
        while True:
            # literal counts and finds: the piece ends where the row after ``rows`` rows starts
            found = buffer.count(_ROW_TAG, counted_to)
            if seen + found > rows:
                cut = counted_to - 1
                for _ in range(rows - seen + 1):
                    cut = buffer.find(_ROW_TAG, cut + 1)
                last = False
                break
            seen += found
            counted_to = max(counted_to, len(buffer) - len(_ROW_TAG) + 1)  # a tag cut in two is counted later
            if not self._fill():
                end = buffer.find(_ROWS_END)
                cut = len(buffer) if end < 0 else end
                last = True
                break
        stop = self._tail_start()
        if stop is not None and self.consumed + cut >= stop:  # the blank tail is left unread, as the whole read
            cut, last = max(0, stop - self.consumed), True
        piece = bytes(buffer[:cut])
        del buffer[:cut]
        self.consumed += cut
        if last:
            buffer.clear()
            self.ended = True
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
        self.rows_read += rows
        self.bytes_read += len(piece)
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
                raise NotStreamable
        if self.buffer[end - 1 : end] == b"/":
            raise NotStreamable  # no rows at all
        self.head = _DIMENSION.sub(b"", bytes(self.buffer[: end + 1]))
        del self.buffer[: end + 1]
        self.consumed = end + 1

    def _tail_start(self) -> int | None:
        """Where the rows under the table holding only blank cells begin in the sheet part, once the extent
        is known and says they make a big grid (``SheetExtent.has_blank_tail``): the whole read cuts them
        off, and read a piece at a time they would only cost time."""
        if not self.extent.done() or self.extent.exception() is not None:
            return None
        extent = self.extent.result()
        return extent.tail_start if extent.has_blank_tail else None


def _joined_pieces(tables: list[tuple[pa.RecordBatch, int]], offset: int) -> pa.RecordBatch:
    """The pieces' cells (each with its marker's row, its first row number) as one grid from grid row
    ``offset`` (the first piece's marker): the other markers dropped, blank rows between pieces that
    fastexcel left out (rows without values after a piece's last value) put back. ``tables`` is emptied,
    and each column's pieces are let go once it is joined."""
    width = max(table.num_columns for table, _ in tables)
    parts: list[list[pa.Array]] = [[] for _ in range(width)]
    end = offset  # the grid row after the rows placed
    for k, (table, first_row) in enumerate(tables):
        if k:
            table = table.slice(1)
            gap = first_row - 1 - end
            if gap < 0:
                raise StreamBroken("the rows of the sheet are out of order")
            if gap:
                for column in parts:
                    column.append(pa.nulls(gap, pa.string()))
            end += gap
        for j, column in enumerate(parts):
            column.append(table.column(j).cast(pa.string()) if j < table.num_columns
                          else pa.nulls(table.num_rows, pa.string()))
        end += table.num_rows
    # one array a column (pandas' string methods pay per chunk), in malloc's pool, not pyarrow's: made in
    # the reading thread, freed in another
    pool = pa.system_memory_pool()
    del table
    tables.clear()
    joined = []
    for j in range(width):
        joined.append(pa.concat_arrays(parts[j], memory_pool=pool))
        parts[j] = []
    return pa.RecordBatch.from_arrays(joined, names=[str(j) for j in range(width)])


def _anchors(table: pa.RecordBatch) -> tuple[bytes, ...]:
    """The ``LOOK_ALIKE_ANCHORS`` of the renderings of typed cells fastexcel's text holds."""
    cells = pa.chunked_array([column.cast(pa.string()) for column in table.columns], type=pa.string())
    anchors: list[bytes] = []
    if pc.any(pc.is_in(cells, value_set=pa.array(["true", "false"]))).as_py():
        anchors += [b">true<", b">false<"]
    if pc.any(pc.ends_with(cells, " 00:00:00")).as_py():
        anchors.append(b" 00:00:00<")
    if pc.any(pc.starts_with(cells, "1899-12-3")).as_py():
        anchors.append(b">1899-12-3")
    assert set(anchors) <= set(LOOK_ALIKE_ANCHORS)
    return tuple(anchors)


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


def _below(rows: bytes, last_row: int) -> bool:
    """Whether ``rows`` hold a cell or a row whose reference is below ``last_row``, the piece's last row:
    written out of order (``<c r="A1048576">`` or ``<row r="1048576">`` amid row 5), as only a damaged or
    hostile file has it. One regular expression, in RE2; a piece in order has none."""
    return holds_match(rb'<(?:c r="[A-Za-z]+|row r=")(?:' + greater_pattern(str(last_row).encode(), b"0-9") + rb')"', rows)


def _marker_row(row: int) -> bytes:
    return f'<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>{MARKER}</t></is></c></row>'.encode()
