"""Rows that repeat the header row: two exports joined into one file.

Someone pastes May's export under June's, or joins two exports (``cat june.csv may.csv``): the second
export's header row is then read as a row of data, and each of its cells would be refused on its own
(``'Hire Date' is not a real date``, ``'Country' is not a country we recognise``...), ten lines for one
row that is no person at all, none of them saying what happened. ``HeaderRepeats`` finds such rows, so
that each is told once, as what it is (``header-row-repeated``), and nothing else is told of it
(``keep_alone``: the mapper and the validator drop whatever else they find in its cells), and it is never
sent.

A row repeats the header when at least half of the header's columns, and at least two (the one column of a
one-column header), hold one of the header's names: in the place of their own column or of another (an
export of last year's layout, with a column added, is a header all the same, and the rows under it are
then that layout's), compared as the reader reads the header, spaces around a name aside, and written as in
the header, all in capitals or all in small letters. No row of a person holds "Hire Date", "Country" and
"Gender" in half of its cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.outcomes import Problem
from hrimport.reader.summary_rows import TOTALS_OR_FOOTER_ROW

#: The problem of a data row that repeats the header row (README, "Layout and refusals").
HEADER_ROW_REPEATED = "header-row-repeated"
#: The problems of a row that holds no record (a header row again, a totals row, a footer line): told alone.
NO_RECORD = (HEADER_ROW_REPEATED, TOTALS_OR_FOOTER_ROW)


class HeaderRepeats:
    """The header of one table (its cells as the file holds them, and as the reader names them), and the
    rows of that table's chunks that repeat it (``problems``)."""

    def __init__(self, header_cells: Sequence[str], names: Sequence[str | None]) -> None:
        spellings: set[str] = set()
        for cell, name in zip(header_cells, names):
            if name is None or not " ".join(cell.split()):
                continue  # no header here ("Column D" names a column of values under an empty cell)
            for text in (name, cell.strip()):
                spellings.update((text, text.upper(), text.lower()))
        self._spellings = pa.array(sorted(spellings), type=pa.large_string())
        self._named = [name for cell, name in zip(header_cells, names) if name is not None and cell.strip()]
        count = len(self._named)
        # half the header's columns (rounded up), but two at least where there are two: one cell holding a
        # header name ("Status" in a column of statuses) is a coincidence; a one-column header is its one cell
        self.needed = max(min(count, 2), (count + 1) // 2)

    def problems(self, frame: pd.DataFrame, row_numbers: Sequence[int], header_row: int | None,
                 header_rows: int = 1) -> dict[int, Problem]:
        """The ``header-row-repeated`` problem of each row of ``frame`` (one column per header name, at Excel
        rows ``row_numbers``) that repeats the header (row ``header_row``, over ``header_rows`` rows)."""
        if not self._named or not len(frame):
            return {}
        columns = [name for name in self._named if name in frame.columns]
        # A row needs ``needed`` cells: once the columns looked at leave fewer unseen than that, a row holding
        # none so far can no longer reach it, and a file holding no header name there is done (nearly all).
        decisive = max(len(columns) - self.needed + 1, 0)
        holding = self._holding(frame, columns[:decisive])  # per row: the cells holding a header name
        if not holding.any():
            return {}
        holding += self._holding(frame, columns[decisive:])
        found = {}
        for pos in np.flatnonzero(holding >= self.needed).tolist():
            row = row_numbers[pos]
            found[row] = Problem(HEADER_ROW_REPEATED, repeated_header_message(row, header_row, header_rows), row)
        return found

    def _holding(self, frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
        """Per row of ``frame``, how many of its cells in ``columns`` hold one of the header's names (spaces
        around it aside), in Arrow: the columns' own buffers (pandas' strings are Arrow's), no Python object
        per cell. The columns are looked up together: each look-up builds the set of names anew, and one per
        column made a file of 10,000 columns take minutes."""
        if not columns:
            return np.zeros(len(frame), dtype=np.int32)
        chunks: list[pa.Array] = []
        for name in columns:
            cells = pa.array(frame[name], type=pa.large_string())
            chunks += cells.chunks if isinstance(cells, pa.ChunkedArray) else [cells]
        trimmed = pc.utf8_trim_whitespace(pa.chunked_array(chunks, type=pa.large_string()))
        hits = np.asarray(pc.is_in(trimmed, value_set=self._spellings).to_numpy(zero_copy_only=False), dtype=bool)
        return np.asarray(hits.reshape(len(columns), len(frame)).sum(axis=0), dtype=np.int32)


def repeated_header_message(row: int, header_row: int | None, header_rows: int = 1) -> str:
    """The one line telling a row that repeats the header row."""
    header = f" (row {header_row})" if header_row else ""
    if header_row and header_rows > 1:
        header = f" (rows {header_row}-{header_row + header_rows - 1})"
    return (f"Row {row} repeats the header row{header}: two exports may have been joined into one file; delete "
            "this row, and check that the rows below it are the export you meant to import.")


def holds_no_record(found: Iterable[Problem]) -> bool:
    """Whether a row with the problems ``found`` holds no record, nor an id: it repeats the header row, or is a
    totals row or a footer line (``hrimport.reader.summary_rows``)."""
    return any(problem.code in NO_RECORD for problem in found)


def keep_alone(problems: dict[int, list[Problem]], warnings: dict[int, list[Problem]]) -> None:
    """Leave each row of ``problems`` (by position) that holds no record (``holds_no_record``) with the problem
    saying so alone: what its cells would be told as values (not a date, not a country, a value required...)
    is not told, nor any warning of it in ``warnings`` (formula-like text...)."""
    for pos, found in problems.items():
        alone = next((problem for problem in found if problem.code in NO_RECORD), None)
        if alone is not None:
            problems[pos] = [alone]
            warnings.pop(pos, None)
