"""A cell merged down over rows of data: its value on each row it shows on.

Hand-kept workbooks merge a department's or a site's name down over the rows of its people: Excel shows
``Jurong`` once, across rows 2 to 4, and stores it in the first cell alone, so the other rows read empty. Read
as stored, a person whose row shows ``Jurong`` would be sent no location (or held back for a required country
the sheet shows): the value sent would not be the value the person sees. So each row under the first cell of
such a merge, within its first column, is given the value that cell holds, and the report tells it
(``merged-cell`` in "How values were read", with the range). Only rows that hold something else are given it
(a blank row under a merge stays a blank row), and only a value merged DOWN: a value merged across columns
shows on one row already, in its first column. A cell under a merge that stores a value of its own (a program
wrote it; Excel drops such values when it merges) shows the merge's value all the same: that is what is sent,
and the report tells it on a line of its own, stored value -> value shown.

The merges come from the sheet (``merged_header.SheetMerges``); a streamed read hands its chunks here one by
one (``MergedDown`` keeps the value of a merge whose first row was in an earlier chunk).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from hrimport.reader.grid import CellsRead, SourceTable
from hrimport.reader.merged_header import MergedRange

#: The kind of ``CellsRead`` (``hrimport.provenance.KINDS``), and its rules as the report shows them.
MERGED_CELL = "merged-cell"
MERGED_RULE = "a cell merged down over rows: the value its first cell holds, on each row it covers, as Excel shows it"
# a value stored in a cell under a merge, which Excel does not show (Excel itself drops such values when cells are
# merged; a program writing the file may keep them): the row is sent what Excel shows, its own stored value told
MERGED_OVER_RULE = ("a cell merged down over rows: the value its first cell holds, as Excel shows it, over a value "
                    "stored under the merge that Excel does not show")


class MergedDown:
    """The merges down of a sheet's data (below Excel row ``header_end``), to fill a table's chunks with."""

    def __init__(self, merges: Iterable[MergedRange], header_end: int, first_column: int,
                 names: Sequence[str | None]) -> None:
        self.first_column = first_column
        self.names = list(names)
        self.merges = sorted((m for m in merges if m.down and m.first_row > header_end
                              and self._name(m) is not None), key=lambda m: m.first_row)
        self._values: dict[MergedRange, str] = {}  # the value of each merge whose first row was read

    def _name(self, merged: MergedRange) -> str | None:
        j = merged.first_column - 1 - self.first_column
        return self.names[j] if 0 <= j < len(self.names) else None

    def fill(self, table: SourceTable) -> None:
        """Give each row of ``table`` under the first cell of a merge down the value that cell holds, in the
        merge's first column, where the row's cell is empty; added to ``table.cells_read``."""
        if not self.merges or not table.row_numbers:
            return
        numbers = np.asarray(table.row_numbers, dtype=np.int64)
        first, last = int(numbers[0]), int(numbers[-1])
        # column -> what its merges give: the positions of its empty cells, of those storing a value Excel hides
        given: dict[str, list[tuple[np.ndarray, np.ndarray, str]]] = {}
        for merged in self.merges:
            if merged.first_row > last:
                break
            if merged.last_row < first:
                continue
            name = self._name(merged)
            assert name is not None  # kept only with a name
            column = table.frame[name]
            at = int(np.searchsorted(numbers, merged.first_row))
            if at < len(numbers) and numbers[at] == merged.first_row:
                self._values[merged] = column.iat[at]
            value = self._values.get(merged, "")
            if not value.strip():
                continue
            lo = int(np.searchsorted(numbers, merged.first_row + 1))
            hi = int(np.searchsorted(numbers, merged.last_row, side="right"))
            positions = np.arange(lo, hi, dtype=np.int64)
            cells = column.iloc[positions].to_numpy()
            empty, stored = positions[cells == ""], positions[(cells != "") & (cells != value)]
            if len(empty) or len(stored):
                given.setdefault(name, []).append((empty, stored, value))
        for name, merges in given.items():
            column = table.frame[name].copy()
            empty = np.concatenate([at for at, _, _ in merges])
            stored = np.concatenate([at for _, at, _ in merges])
            held = tuple(column.iloc[stored].tolist())
            for at_empty, at_stored, value in merges:
                column.iloc[np.concatenate([at_empty, at_stored])] = value
            table.frame[name] = column
            # one read per column, whatever the number of merges (each chunk's alike): the examples name the rows
            if len(empty):
                table.cells_read.setdefault(name, []).append(
                    CellsRead(MERGED_CELL, MERGED_RULE, empty, ("",) * len(empty)))
            if len(stored):
                table.cells_read.setdefault(name, []).append(CellsRead(MERGED_CELL, MERGED_OVER_RULE, stored, held))
        # a merge ending in this chunk is done: its value is not needed by the next
        self._values = {m: v for m, v in self._values.items() if m.last_row > last}
