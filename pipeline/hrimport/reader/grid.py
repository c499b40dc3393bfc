"""The table in a sheet's text cells: header row, header names, blank rows, and the ``SourceTable``.

Workbooks and text files both arrive here as rows of text; finding the header below report titles,
naming its columns and dropping blank rows (keeping Excel row numbers) is done once, so every format
is read the same way.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.errors import InputFileError
from hrimport.listing import SHOWN, quoted, shorten, some
from hrimport.outcomes import Problem, SourceInfo, header_place
from hrimport.reader.hidden_columns import HiddenColumns, hidden_headers
from hrimport.reader.hidden_rows import HiddenRows, hidden_header_note
from hrimport.reader.repeated_header import HeaderRepeats
from hrimport.to_fix_format import restore_csv_cell

if TYPE_CHECKING:
    from hrimport.reader.merged_header import MergedRange

#: The most characters a cell of a workbook holds (Excel's limit, which LibreOffice keeps to in .xlsx): a longer
#: text (a broken writer's, or a hostile file's 100 MB name) is shown by no spreadsheet program.
CELL_CHARACTERS = 32_767
CELL_TOO_LONG = "cell-too-long"

#: How many rows at the top of a sheet may hold titles before the header.
HEADER_SCAN_ROWS = 30
_HAS_LETTER = re.compile(r"[^\W\d_]")
_LOOKS_NUMERIC_OR_DATE = re.compile(r"^[\d\s.,:/\-+%年月日]+$")


class NoDataRowsError(InputFileError):
    """The file has a header row but no data rows under it."""


#: The ``CellsRead`` kind of the cells holding an error value (``#N/A``, ``#DIV/0!``): not a way a value was
#: read but a cell with none, which the mapper makes an ``error-value`` problem on its row where the
#: column is sent (``hrimport.mapper``).
ERROR_VALUE = "error-value"
#: The ``CellsRead`` kind of the cells holding a formula saved without its result (by a program that does not
#: calculate, such as openpyxl): the libraries read them as empty cells; the mapper makes them a
#: ``formula-not-calculated`` problem where the column is sent.
FORMULA_NOT_CALCULATED = "formula-not-calculated"
#: The ``CellsRead`` kind of the formula cells saved with a value in a workbook that asks to be calculated again
#: when opened (``calcPr fullCalcOnLoad``, as xlsxwriter writes it): the value is a stand-in (xlsxwriter's 0),
#: not the result Excel shows; the mapper makes them a ``formula-not-calculated`` problem where the column is
#: sent.
FORMULA_TO_RECALCULATE = "formula-to-recalculate"


@dataclass(frozen=True)
class CellsRead:
    """Cells of one column read in a way the report tells (issue 15, provenance): ``kind`` is a
    ``hrimport.provenance.KINDS`` code (``excel-date-cell``, ``number-format``, ``formula-value``), ``rule``
    what decided it (``number format 000000``), ``positions`` their rows, ascending (0-based: grid rows in
    the format readers, table positions in a ``SourceTable``), and ``held``, when it says more than the text
    read, what each cell holds (the number stored, the formula)."""

    kind: str
    rule: str
    positions: np.ndarray
    held: tuple[str, ...] | None = None


@dataclass
class SourceTable:
    """A sheet read as text: its facts, one ``str`` column per header, and each row's Excel row number.

    ``row_problems`` holds what the reader found wrong with single rows (bytes that are not text in the
    file's encoding, more cells than the header...), keyed by Excel row number: those rows are read as
    well as they can be and flagged, while the other rows go on.
    ``hidden_rows``: the Excel row numbers of the table's rows the workbook hides (by a filter or Hide:
    ``hidden_rows``), ascending; ``zero_height_rows``, those among them hidden by a height of zero alone.
    """

    info: SourceInfo
    frame: pd.DataFrame
    row_numbers: list[int]
    row_problems: dict[int, list[Problem]] = field(default_factory=dict)
    # header -> the cells of that column the reader read in a way the report tells (workbooks only)
    cells_read: dict[str, list[CellsRead]] = field(default_factory=dict)
    hidden_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    zero_height_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _by_key: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def column(self, wanted: str) -> str | None:
        """The frame column whose header matches ``wanted`` ignoring case and spaces, or None."""
        if not self._by_key:
            self._by_key = {normalize_header(str(c)): str(c) for c in self.frame.columns}
        return self._by_key.get(normalize_header(wanted))


def normalize_header(text: str) -> str:
    """The key headers are matched on: case-folded, trimmed, inner runs of spaces collapsed to one, and
    to_fix.csv's guard undone (``_display_header``)."""
    return _display_header(text).casefold()


def _display_header(text: str) -> str:
    """The header as named: trimmed, inner runs of spaces collapsed to one, and without the ``'`` that
    to_fix.csv puts before a header a spreadsheet would run as a formula (``'+Cost Centre``), as the import
    reads the cells below it: the same config reads the to_fix again. A cell longer than any a workbook holds
    is cut first: its words, one string each, took gigabytes (a 100 MB name in the rows the header is sought in)."""
    return restore_csv_cell(" ".join(text[:CELL_CHARACTERS].split()))


def _is_blank(row: Sequence[str]) -> bool:
    return not any(c.strip() for c in row)


def _find_header(rows: list[list[str]], expected: set[str], merged_down: Collection[int] = ()) -> int | None:
    """0-based index of the header among ``rows`` (the top of the sheet), or None if all are blank.

    A title and a run date above the header are common, so the header is the row holding most of the
    expected headers; failing that, the widest row of mostly distinct labels. A row in ``merged_down``
    has cells merged down over the row under it (a header over two rows, ``merged_header``): it is looked
    at with that row, as one row of both rows' cells.
    """
    if merged_down:
        rows = [_with_row_under(rows, i) if i in merged_down else row for i, row in enumerate(rows)]
    candidates = [i for i, row in enumerate(rows) if not _is_blank(row)]
    if not candidates:
        return None
    if expected:
        scores = [(len({normalize_header(c) for c in rows[i]} & expected), -i) for i in candidates]
        best_score, best = max(scores)
        if best_score >= max(1, (len(expected) + 1) // 2):
            return -best
    widest = max(sum(1 for c in rows[i] if c.strip()) for i in candidates)
    label_rows: list[tuple[int, int]] = []
    for i in candidates:
        cells = [c.strip() for c in rows[i] if c.strip()]
        if 2 * len(cells) < widest:  # a title or "Run date: ..." row: narrower than the table
            continue
        labels = sum(1 for c in cells if _looks_like_a_label(c))
        distinct = len({normalize_header(c) for c in cells})
        # Mostly labels, and at least half distinct (a header with a duplicated name is still the header:
        # it gets its own clear error later).
        if 5 * labels >= 4 * len(cells) and 2 * distinct >= len(cells):
            label_rows.append((i, len(cells)))
    if not label_rows:
        return candidates[0]
    # The first label row about as wide as the widest: a title above is narrower, and a text-only data
    # row below may be a little wider than a header with a blank cell or two.
    most = max(width for _, width in label_rows)
    return next(i for i, width in label_rows if 5 * width >= 4 * most)


def _with_row_under(rows: list[list[str]], i: int) -> list[str]:
    """Row ``i``'s cells and the row under it's, as one row: each column's non-empty cells."""
    under = rows[i + 1] if i + 1 < len(rows) else []
    return [cell for pair in itertools.zip_longest(rows[i], under, fillvalue="") for cell in pair if str(cell).strip()]


def _looks_like_a_label(cell: str) -> bool:
    """A header-like cell: has letters and is neither a number, a date nor an e-mail address."""
    return bool(_HAS_LETTER.search(cell)) and not _LOOKS_NUMERIC_OR_DATE.match(cell) and "@" not in cell


def _column_letter(index: int) -> str:
    """Excel's letter for a 0-based column index (0 -> A, 26 -> AA)."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _header_names(
    path: Path, cells: Sequence[str], header_row: int, has_data: Sequence[bool], first_column: int = 0,
    header_rows: int = 1,
) -> list[str | None]:
    """Display names of the header cells; None for a column with neither a header nor data (dropped).

    A column with data but no header is kept as "Column D" so it is listed (never silently dropped).
    ``header_rows``: 2 when ``cells`` are the names of a header over two rows (``merged_header``).
    """
    names: list[str | None] = []
    for j, cell in enumerate(cells):
        text = _display_header(cell)
        if not text:
            text = f"Column {_column_letter(first_column + j)}" if has_data[j] else ""
        names.append(text or None)
    seen: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        if name is not None:
            seen.setdefault(normalize_header(name), []).append(j)
    duplicates = [cols for cols in seen.values() if len(cols) > 1]
    if duplicates:
        listed = some([
            f"'{shorten(str(names[cols[0]]))}' (columns {_letters(cols, first_column)})"
            for cols in duplicates[:SHOWN]
        ], len(duplicates), separator="; ")
        where = f"the header row (row {header_row})" if header_rows == 1 else f"the {header_place(header_row, header_rows)}"
        raise InputFileError(f"{path}: {where} has duplicate column names: {listed}; rename them so each is unique")
    return names


def _letters(columns: list[int], first_column: int) -> str:
    """``A, C and F``, or a few letters and how many more columns: one name may repeat 10,000 times."""
    letters = [_column_letter(first_column + j) for j in columns[: SHOWN + 1]]
    if len(columns) > SHOWN + 1:
        return some(letters[:SHOWN], len(columns))
    return f"{', '.join(letters[:-1])} and {letters[-1]}"


# How a refusal naming a workbook's other sheets says to choose one (``hrimport init`` says its option instead).
SHEET_HINT = "name the one to read with the 'sheet' setting in [source]"


def _no_data(path: Path, header_row: int, info: SourceInfo | None = None) -> NoDataRowsError:
    """The refusal of a sheet or file with a header and nothing under it. In a workbook of several sheets it
    names the sheet read and what its header row holds, and the workbook's other sheets: a cover page in front
    of the table (one title cell) is read, never guessed past, and the line says which sheet to name."""
    others = [name for name in info.sheets if name != info.sheet] if info is not None else []
    if info is not None and info.header_rows > 1:
        where = f"a {info.header_place}"
        if not others:
            return NoDataRowsError(f"{path} has {where} but no data rows under it")
        return NoDataRowsError(f"{path} has {where} (sheet '{shorten(str(info.sheet))}': {quoted(info.headers)}) but "
                               f"no data rows under it; the workbook's other sheets are {quoted(others)}: {SHEET_HINT}")
    if info is None or not others:
        return NoDataRowsError(f"{path} has a header row (row {header_row}) but no data rows under it")
    holds = f": {quoted(info.headers)}" if info.headers else ""
    return NoDataRowsError(
        f"{path} has a header row (row {header_row}, sheet '{shorten(str(info.sheet))}'{holds}) but no data rows "
        f"under it; the workbook's other sheets are {quoted(others)}: {SHEET_HINT}"
    )


def _checked_header_index(
    path: Path, header_row: int | None, rows: list[list[str]], total: int
) -> int | None:
    """The 0-based index of an explicitly given header row, checked to exist and hold something."""
    if header_row is None:
        return None
    if header_row < 1:
        raise InputFileError(f"{path}: header row must be 1 or more (got {header_row})")
    if header_row > total:
        raise InputFileError(f"{path}: header row {header_row} is beyond the last row ({total})")
    index = header_row - 1
    if index < len(rows) and _is_blank(rows[index]):
        raise InputFileError(f"{path}: row {header_row} is blank, so it cannot be the header row")
    return index


def _table_below_header(
    path: Path,
    info: SourceInfo,
    grid: pd.DataFrame,
    index: int,
    first_column: int,
    preamble: list[list[str]],
    row_problems: dict[int, list[Problem]] | None = None,
    scan_replacements: bool = True,
    cells_read: dict[int, list[CellsRead]] | None = None,
    two_rows: Sequence[str] | None = None,
    merges: Sequence[MergedRange] = (),
    hidden: HiddenRows | None = None,
    hidden_columns: HiddenColumns | None = None,
) -> SourceTable:
    """The table under the header: ``grid`` starts with the header, which is Excel row ``index + 1``.

    Fully blank rows are dropped, but their row numbers are still counted. ``row_problems`` (by Excel row
    number) are the format reader's own findings; cells holding U+FFFD are added here for every format.
    ``cells_read`` (by grid column, at grid rows) become the table's, by header and table position.
    ``two_rows``: the names of a header over grid rows ``index`` and ``index + 1`` (``merged_header``),
    one per grid column; the data begin under both. ``merges``: the sheet's cells merged down, whose value
    each row they cover is given (``merged_cells``). ``hidden``: the rows the sheet hides (``hidden_rows``);
    ``hidden_columns``: its columns hidden, whose headers become ``info.hidden_columns``.
    """
    header_rows = 1 if two_rows is None else 2
    header_cells = [str(c) for c in grid.iloc[0].tolist()] if two_rows is None else list(two_rows)
    body = grid.iloc[header_rows:]
    filled, nonempty = _filled_rows(body)
    numbers = np.flatnonzero(filled) + index + 1 + header_rows
    has_data = [bool((has_text & filled).any()) for has_text in nonempty]
    names = _header_names(path, header_cells, index + 1, has_data, first_column, header_rows)
    headers = [n for n in names if n is not None]
    info.header_row, info.header_rows = index + 1, header_rows
    info.headers = headers
    if hidden_columns:
        info.hidden_columns = hidden_headers(names, first_column, hidden_columns)
    if hidden:
        info.header_note = hidden_header_note(hidden, index + 1, header_rows, headers)
    info.preamble = [_trim_trailing([str(c) for c in r]) for r in preamble]
    info.rows_read = len(numbers)
    if not len(numbers):
        raise _no_data(path, index + 1, info)
    table = _rows_of(info, body[filled], names, numbers, row_problems, scan_replacements,
                     HeaderRepeats(header_cells, names))
    if cells_read:
        table.cells_read = _cells_in_table(cells_read, names, numbers - 1)
    if hidden:
        table.hidden_rows = hidden.among(numbers)
        table.zero_height_rows = hidden.among(numbers, of_zero_height=True)
    if merges:
        from hrimport.reader.merged_cells import MergedDown  # it builds on this module

        MergedDown(merges, index + header_rows, first_column, names).fill(table)
    return table


def _filled_rows(body: pd.DataFrame) -> tuple[np.ndarray, list[np.ndarray]]:
    """Which rows of ``body`` hold something, and, per column, which cells are not "" (a cell of spaces
    alone does not make a row hold something)."""
    nonempty = [(body[col] != "").to_numpy() for col in body.columns]
    # A row is blank when every cell is empty or whitespace. Cheap test first (any cell not ""), then
    # the whitespace test only for rows not yet shown to hold something: after the first column or two
    # that is almost none, so the costly strip runs on a handful of cells instead of millions.
    filled = np.zeros(len(body), dtype=bool)
    undecided = np.logical_or.reduce(nonempty) if nonempty else filled.copy()
    for col, has_text in zip(body.columns, nonempty):
        rows = np.flatnonzero(undecided & has_text)
        if len(rows):
            real = rows[(body[col].iloc[rows].str.strip() != "").to_numpy()]
            filled[real] = True
            undecided[real] = False
            if not undecided.any():
                break
    return filled, nonempty


def _rows_of(info: SourceInfo, body: pd.DataFrame, names: Sequence[str | None], numbers: np.ndarray,
             row_problems: dict[int, list[Problem]] | None, scan_replacements: bool,
             header: HeaderRepeats) -> SourceTable:
    """The ``SourceTable`` of rows that hold something (``body``, one column per header cell; ``names``
    None for a column dropped) at Excel rows ``numbers``. A row repeating the ``header`` (two exports joined
    into one file) has that problem alone: its cells are no values, so nothing else is said of them."""
    headers = [n for n in names if n is not None]
    data = {name: body[col].reset_index(drop=True) for name, col in zip(names, body.columns) if name is not None}
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(numbers)), columns=headers)
    row_numbers = numbers.tolist()
    problems = {row: list(found) for row, found in (row_problems or {}).items()}
    if scan_replacements:  # False when the reader knows no cell holds U+FFFD or a NUL (_cells_not_text)
        for row, found in _cells_not_text(frame, row_numbers, info.encoding).items():
            problems.setdefault(row, []).extend(found)
    if info.format not in ("csv", "tsv"):
        for row, found in _cells_too_long(frame, row_numbers).items():
            problems.setdefault(row, []).extend(found)
    for row, repeated in header.problems(frame, row_numbers, info.header_row, info.header_rows).items():
        problems[row] = [repeated]
    return SourceTable(info=info, frame=frame, row_numbers=row_numbers, row_problems=problems)


#: The most cells a chunk holds: a wide export is cut in fewer rows at a time, so that memory follows the
#: cells, not the rows (2,000 columns x 20,000 rows in one chunk took 2.4 GB; in chunks of 2,000 rows 540 MB,
#: for a fifth more time). A 40-column export's chunks are not cut by it (100,000 rows).
CHUNK_CELLS = 4_000_000


def rows_per_chunk(chunk_rows: int, columns: int) -> int:
    """The rows of a chunk of a table ``columns`` wide: ``chunk_rows``, or fewer to hold ``CHUNK_CELLS``."""
    return max(1, min(chunk_rows, CHUNK_CELLS // max(1, columns)))


def table_chunks(table: SourceTable, rows: int) -> Iterator[SourceTable]:
    """``table`` in pieces of ``rows`` rows, each a ``SourceTable`` of its own (positions from 0, the rows'
    problems and the cells read that fall in it); the table itself when it fits in one."""
    total = len(table.frame)
    if total <= rows:
        yield table
        return
    for start in range(0, total, rows):
        stop = min(start + rows, total)
        numbers = table.row_numbers[start:stop]
        first, last = numbers[0], numbers[-1]
        cells_read: dict[str, list[CellsRead]] = {}
        for header, reads in table.cells_read.items():
            for read in reads:
                inside = (read.positions >= start) & (read.positions < stop)
                if inside.any():
                    held = (tuple(h for h, keep in zip(read.held, inside) if keep)
                            if read.held is not None else None)
                    cells_read.setdefault(header, []).append(
                        CellsRead(read.kind, read.rule, read.positions[inside] - start, held))
        yield SourceTable(
            info=table.info,
            frame=table.frame.iloc[start:stop].reset_index(drop=True),
            row_numbers=numbers,
            row_problems={row: found for row, found in table.row_problems.items() if first <= row <= last},
            cells_read=cells_read,
            hidden_rows=table.hidden_rows[(table.hidden_rows >= first) & (table.hidden_rows <= last)],
            zero_height_rows=table.zero_height_rows[(table.zero_height_rows >= first)
                                                    & (table.zero_height_rows <= last)],
        )


def _cells_in_table(
    found: dict[int, list[CellsRead]], names: Sequence[str | None], grid_rows: np.ndarray
) -> dict[str, list[CellsRead]]:
    """``found`` (grid column -> cells at grid rows) by header, at table positions: cells of the header row,
    the rows above it and blank rows are left out."""
    placed: dict[str, list[CellsRead]] = {}
    for j, reads in found.items():
        name = names[j] if j < len(names) else None
        if name is None:
            continue
        for read in reads:
            at = np.searchsorted(grid_rows, read.positions)
            inside = (at < len(grid_rows)) & (grid_rows[np.minimum(at, len(grid_rows) - 1)] == read.positions)
            if inside.any():
                held = tuple(h for h, keep in zip(read.held, inside) if keep) if read.held is not None else None
                placed.setdefault(name, []).append(CellsRead(read.kind, read.rule, at[inside], held))
    return placed


#: What a decoder puts where the file's bytes were not text in its encoding.
REPLACEMENT_CHARACTER = "\ufffd"
#: A zero byte: no text holds one (a damaged export, or fields padded with zeros), and no platform stores it.
NUL = "\x00"


def _cells_not_text(frame: pd.DataFrame, row_numbers: list[int], encoding: str | None) -> dict[int, list[Problem]]:
    """A ``bad-encoding`` problem for every cell holding U+FFFD (bytes that were not text in the file's
    encoding: a row pasted from another program, or a workbook that already stored the broken text) or a
    NUL (a zero byte). The cell is never sent as it is: nobody can tell what it said."""
    found: dict[int, list[Problem]] = {}
    everything = pa.chunked_array([pa.array(frame[column], type=pa.large_string()) for column in frame.columns],
                                  type=pa.large_string())
    if not any(pc.any(pc.match_substring(everything, char)).as_py() for char in (REPLACEMENT_CHARACTER, NUL)):
        return found  # one look at all the columns at once: nearly every file has none
    where = f"{encoding} text" if encoding else "text"
    for column in frame.columns:
        cells = frame[column]
        hits = cells.str.contains(REPLACEMENT_CHARACTER, regex=False) | cells.str.contains(NUL, regex=False)
        if not hits.any():
            continue
        for pos in hits.to_numpy().nonzero()[0].tolist():
            row = row_numbers[pos]
            value = str(frame[column].iat[pos])
            if REPLACEMENT_CHARACTER in value:
                what = f"holds bytes that are not {where} (shown as \ufffd: '{_shorten(value)}')"
            else:
                what = f"holds a zero byte (NUL), which is not text ('{_shorten(value.replace(NUL, '<NUL>'))}')"
            found.setdefault(row, []).append(Problem(
                "bad-encoding",
                f"Row {row}, column '{column}': {what}; retype the value in the HR system or the file.",
                row, str(column), None, value,
            ))
    return found


def _cells_too_long(frame: pd.DataFrame, row_numbers: list[int]) -> dict[int, list[Problem]]:
    """A ``cell-too-long`` problem for every cell of a workbook holding more characters than a cell holds
    (``CELL_CHARACTERS``): no spreadsheet program shows it, so nobody read what would be sent. It is never sent
    (the row is held back, a rule of the workbook's own program, not ours); the frame keeps the part a cell
    holds, so that what follows (checks, the report, to_fix) handles no more than that."""
    found: dict[int, list[Problem]] = {}
    for column in frame.columns:
        cells = pa.array(frame[column], type=pa.large_string())
        if (pc.max(pc.binary_length(cells)).as_py() or 0) <= CELL_CHARACTERS:  # bytes: never fewer than characters
            continue
        lengths = pc.utf8_length(cells).to_numpy(zero_copy_only=False)
        for pos in np.flatnonzero(lengths > CELL_CHARACTERS).tolist():
            row, length = row_numbers[pos], int(lengths[pos])
            frame.iat[pos, frame.columns.get_loc(column)] = str(frame[column].iat[pos])[:CELL_CHARACTERS]
            found.setdefault(row, []).append(Problem(
                CELL_TOO_LONG,
                f"Row {row}, column '{column}': the cell holds {length:,} characters, more than a spreadsheet cell "
                f"holds ({CELL_CHARACTERS:,}), so nobody can have read it in Excel; not sent: correct the cell in "
                "the HR system (a program wrote it) and export the file again.",
                row, str(column), None, None,
            ))
    return found


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _trim_trailing(row: list[str]) -> list[str]:
    end = len(row)
    while end and not row[end - 1].strip():
        end -= 1
    return row[:end]
