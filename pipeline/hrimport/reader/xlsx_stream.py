"""A big XLSX sheet read a few thousand rows at a time, so memory holds a chunk or two whatever the sheet's
size (issue 17).

calamine (under fastexcel) cannot stream a sheet: it lays the whole of it out at once, and its cells cost
several times their text. But a sheet's part can be cut: its XML is inflated as a stream and cut before a
``<row`` element every ``PIECE_ROWS`` rows, and each piece goes to fastexcel as a small workbook of its
own (uncompressed, in a private temporary file): the archive's small parts (workbook, styles,
relationships) as they are, a shared strings table of the strings the piece uses (``xlsx_piece_strings``),
and the sheet part made of the original head up to ``<sheetData>`` (without its ``<dimension>``), the
piece, and the closing tags. fastexcel renders each cell as text by
itself, so every cell reads exactly as in the whole read (``workbook``), and ``SheetScanner`` looks through
the same pieces for what fastexcel's text loses. The pieces are joined into grids of a chunk's rows, and
the table is cut exactly where ``table_chunks`` cuts the whole read's.

calamine places cells by their ``r`` references, and a grid starting at row 40,001 would be laid out from
row 1: each piece after the first starts with a row of one marker cell just above its first row, and the
grid is read from its first row holding something (that marker), so a frame position is a known row.

What only the whole sheet shows ends the stream with ``StreamBroken`` (the import reads the file whole
again, before anything is sent): a value in a column the first chunk did not name, cells left of the
table, rows out of order, anything fastexcel refuses. When what the first chunk shows needs the whole
read (no header found in it, a header row below it, a sheet that fits in one piece, rows without
references) ``stream_xlsx`` returns None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from hrimport.errors import HrimportError
from hrimport.memory import release_freed_memory
from hrimport.outcomes import Problem, SourceInfo
from hrimport.reader.grid import (
    ERROR_VALUE,
    FORMULA_NOT_CALCULATED,
    FORMULA_TO_RECALCULATE,
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
    rows_per_chunk,
    table_chunks,
)
from hrimport.reader.hidden_columns import hidden_headers
from hrimport.reader.hidden_rows import HiddenRows, hidden_header_note
from hrimport.reader.merged_cells import MergedDown
from hrimport.reader.merged_header import data_merges, merged_down, rows_around, two_row_header
from hrimport.reader.no_such_dates import NO_SUCH_DATE
from hrimport.reader.repeated_header import HeaderRepeats
from hrimport.reader.text import StreamBroken
from hrimport.reader.workbook import _Layout
from hrimport.reader.xlsx_pieces import ChunkGrid, ChunkReader, NotStreamable

log = logging.getLogger(__name__)

#: Rows fastexcel reads at a time: its cells cost ~12 KB a row of 40 columns while it reads them (Rust
#: objects, then Arrow strings). Read alone, 100k x 40 costs 5.9 s of CPU and peaks at +180 MB in pieces
#: of 2,000 rows; +170 MB and 6.9 s at 1,000 (a piece's fixed costs); +210 MB and 6.7 s at 4,000.
PIECE_ROWS = 2000


def stream_xlsx(path: Path, info: SourceInfo, layout: _Layout, chunk_rows: int, header_row: int | None,
                expected: Iterable[str]) -> Iterator[SourceTable] | None:
    """The table of an XLSX sheet in chunks of ``chunk_rows`` rows (exactly ``read_spreadsheet``'s table
    cut by ``table_chunks``), or None when the sheet needs the whole read. fastexcel reads pieces of
    ``PIECE_ROWS`` rows (its cells, as Rust and Arrow objects, cost several times their text): the first
    here, the others in a thread while the caller works on the chunk before (fastexcel releases the GIL).

    The sheet's extent (``extent``) is found in another thread meanwhile: its refusal of a sheet whose
    grid would be mostly empty comes before a piece reaching past column ZZ is laid out, or at the end;
    either way before the caller has the whole file. A blank tail is left unread once the extent is known
    (what was read of it is dropped as blank rows, as the whole read would have)."""
    chosen = layout.sheets[layout.choice.index]
    if not chosen.part:
        return None
    info.sheet, info.sheet_note, info.date_system = chosen.name, layout.choice.note, layout.date_system
    info.sheets = [s.name for s in layout.sheets]
    scan_rows = max(HEADER_SCAN_ROWS, header_row or 0)
    piece_rows = max(1, min(chunk_rows, PIECE_ROWS))
    reader = ChunkReader(path, layout, chosen.part, chosen.name, scan_rows + 1)
    worker = ThreadPoolExecutor(max_workers=1)
    try:
        top_rows = max(piece_rows, scan_rows) + 1
        first = worker.submit(reader.next_grid, top_rows, top_rows).result()
        if first is None or first.last:
            raise NotStreamable
        grid, first_read = first.text()
        if header_row is not None and header_row > len(grid):
            raise NotStreamable
        top = grid.iloc[:HEADER_SCAN_ROWS].to_numpy().tolist()
        # the merged cells are after the rows in the sheet's XML: the extent's pass has them at its end
        extent = reader.extent.result()
        merges = extent.merges
        index = _checked_header_index(path, header_row, top, len(grid))
        if index is None:
            index = _find_header(top, {normalize_header(h) for h in expected}, merged_down(merges))
        if index is None:
            raise NotStreamable
        two_rows = two_row_header(path, chosen.name,
                                  rows_around(lambda a, b: grid.iloc[a:b].to_numpy().tolist(), index), index,
                                  merges, first.first_column)
        header_rows = 1 if two_rows is None else 2
        if two_rows is not None:
            index = two_rows.top
            header_cells = list(two_rows.names)
        else:
            header_cells = [str(c) for c in grid.iloc[index].tolist()]
        body = grid.iloc[index + header_rows:]
        filled, nonempty = _filled_rows(body)
        names = _header_names(path, header_cells, index + 1, [bool((n & filled).any()) for n in nonempty],
                              first.first_column, header_rows)
    except NotStreamable:
        reader.close(worker)
        return None
    except (HrimportError, MemoryError):
        reader.close(worker)
        raise
    except Exception:  # whatever fastexcel or the archive says, the whole read says it in one line
        log.debug("the sheet of %s is read whole", path, exc_info=True)
        reader.close(worker)
        return None
    info.header_row, info.header_rows = index + 1, header_rows
    info.headers = [n for n in names if n is not None]
    info.hidden_columns = hidden_headers(names, first.first_column, extent.hidden_columns)
    if extent.hidden:
        info.header_note = hidden_header_note(extent.hidden, index + 1, header_rows, info.headers)
    info.preamble = [_trim_trailing([str(c) for c in r]) for r in grid.iloc[:index].to_numpy().tolist()]
    info.rows_read = 0
    table = _Table(path, info, names, first.first_column, index + 1, HeaderRepeats(header_cells, names),
                   MergedDown(data_merges(path, chosen.name, merges), index + header_rows, first.first_column, names),
                   extent.hidden)
    chunk_rows = rows_per_chunk(chunk_rows, len(info.headers))  # as the whole read's table is cut
    piece_rows = max(1, min(chunk_rows, PIECE_ROWS))
    read_next = partial(reader.next_grid, chunk_rows, piece_rows)
    del first
    # the next grid ends where the first chunk does, so that chunks are rarely put together from two grids
    following = worker.submit(reader.next_grid, max(1, chunk_rows - int(filled.sum())), piece_rows)
    pieces = table.pieces(first_read, body, filled, index + 1 + header_rows, following, reader, worker, read_next)
    return _rechunked(pieces, chunk_rows)


def _rechunked(tables: Iterator[SourceTable], rows: int) -> Iterator[SourceTable]:
    """``tables`` (consecutive rows of one table) as tables of ``rows`` rows, the last maybe fewer."""
    pending: list[SourceTable] = []
    held = 0
    for table in tables:
        pending.append(table)
        held += len(table.frame)
        if held < rows:
            continue
        parts = list(table_chunks(_joined(pending), rows))
        pending = [parts.pop()] if len(parts[-1].frame) < rows else []
        held = sum(len(t.frame) for t in pending)
        yield from parts
    if pending:
        yield _joined(pending)


#: The order of the kinds of ``CellsRead`` in a column, as ``fastexcel_text`` makes them.
_KIND_ORDER = {"number-format": 0, ERROR_VALUE: 1, "number-as-stored": 2, "formula-value": 3,
               FORMULA_NOT_CALCULATED: 4, FORMULA_TO_RECALCULATE: 5, "excel-date-cell": 6, NO_SUCH_DATE: 7}


def _joined(tables: list[SourceTable]) -> SourceTable:
    """Consecutive rows of one table as one table."""
    if len(tables) == 1:
        return tables[0]
    reads: dict[str, dict[tuple[str, str], list[tuple[np.ndarray, tuple[str, ...] | None]]]] = {}
    offset = 0
    for table in tables:
        for header, found in table.cells_read.items():
            for read in found:
                reads.setdefault(header, {}).setdefault((read.kind, read.rule), []).append(
                    (read.positions + offset, read.held))
        offset += len(table.frame)
    cells_read: dict[str, list[CellsRead]] = {}
    for header, by_rule in reads.items():
        for (kind, rule), parts in sorted(by_rule.items(), key=lambda item: _KIND_ORDER.get(item[0][0], len(_KIND_ORDER))):
            held = None if parts[0][1] is None else tuple(h for _, part in parts for h in part or ())
            cells_read.setdefault(header, []).append(
                CellsRead(kind, rule, np.concatenate([positions for positions, _ in parts]), held))
    problems: dict[int, list[Problem]] = {}
    for table in tables:
        problems.update(table.row_problems)
    return SourceTable(info=tables[0].info, frame=pd.concat([t.frame for t in tables], ignore_index=True),
                       row_numbers=[n for t in tables for n in t.row_numbers], row_problems=problems,
                       cells_read=cells_read, hidden_rows=np.concatenate([t.hidden_rows for t in tables]),
                       zero_height_rows=np.concatenate([t.zero_height_rows for t in tables]))


class _Table:
    """The table's columns as the first chunk names them, and the pieces laid out under them."""

    def __init__(self, path: Path, info: SourceInfo, names: list[str | None], first_column: int,
                 header_row: int, header: HeaderRepeats, merged: MergedDown, hidden: HiddenRows) -> None:
        self.path, self.info, self.names = path, info, names
        self.first_column, self.header_row, self.header = first_column, header_row, header
        self.merged = merged  # the cells merged down over rows of data, given to each row (``merged_cells``)
        self.hidden = hidden  # the rows the sheet hides (``hidden_rows``), from the extent's pass
        self.rows = 0

    def pieces(self, first_read: dict[int, list[CellsRead]], body: pd.DataFrame, filled: np.ndarray, body_row: int,
               following: Future[ChunkGrid | None], reader: ChunkReader, worker: ThreadPoolExecutor,
               read_next: Callable[[], ChunkGrid | None]) -> Iterator[SourceTable]:
        try:
            table = self._table(body, filled, body_row, first_read)
            del first_read, body
            if table is not None:
                yield table
            while True:
                try:
                    grid = following.result()
                except (HrimportError, MemoryError, StreamBroken):
                    raise
                except Exception as exc:  # the whole read says it in one line
                    log.debug("reading %s in chunks failed", self.path, exc_info=True)
                    raise StreamBroken(f"{self.path}: {exc}") from None
                if grid is None:
                    break
                following = worker.submit(read_next)
                table = self._later(grid)
                del grid
                release_freed_memory()
                if table is not None:
                    yield table
        finally:
            reader.close(worker)
        if not self.rows:
            raise _no_data(self.path, self.header_row, self.info)

    def _later(self, grid: ChunkGrid) -> SourceTable | None:
        """A piece after the first, laid out under the first chunk's columns; ``StreamBroken`` when it holds
        what the whole read lays out otherwise (a column the header did not name, cells left of it)."""
        rows = grid.table.num_rows - 1  # without the marker's row
        for column in range(min(self.first_column, grid.table.num_columns)):
            held = rows + 1 - grid.table.column(column).null_count - (column == 0)
            if held:
                raise StreamBroken(f"{self.path}: a cell left of the table")
        frame, found = grid.text()
        everything = frame.iloc[1:]
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
        cells_read = {at - self.first_column: reads for at, reads in found.items()
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
        held = body if len(numbers) == len(body) else body[filled]  # every row: no copy of the grid
        table = _rows_of(self.info, held, self.names, numbers, None, True, self.header)
        if cells_read:
            table.cells_read = _cells_in_table(cells_read, self.names, numbers - 1)
        if self.hidden:
            table.hidden_rows = self.hidden.among(numbers)
            table.zero_height_rows = self.hidden.among(numbers, of_zero_height=True)
        self.merged.fill(table)
        return table


