"""A header written over two rows with merged cells, read as one header of the names a person sees.

Workday, SAP SuccessFactors, ADP reports and hand-made templates head a sheet with two rows: group labels
merged across the columns they cover, over the real labels, and single labels merged down over both rows::

    A1:A2 "Employee ID" | B1:D1 "Personal"                   | E1:F1 "Job"        | G1:G2 "Country"
                        | First Name | Last Name | Email     | Title | Start Date |

Read as one row, the labels of row 2 were a row of data, and three columns had no name. Here the merges
of the sheet (``MergedRange``: from an XLSX's ``<mergeCells>``, an ODS's spanned cells, an XLS's merged
cells) decide it (``two_row_header``): a column merged down (or whose lower cell is empty) is named by its
upper label, a column under a group by its lower label, or, when that label is in the header more than
once (``Start`` under ``Contract`` and under ``Probation``), by both joined with a space (``Contract
Start``): the words a person would write in one header cell, which the synonym packs match word by word.

Nothing is guessed: merges at the header that do not form this shape (a cell merged over three rows, a
group whose lower cells are empty, a label merged across columns in the lower row) refuse the file in one
line naming the cells. A cell merged over several rows of data is read as Excel shows it
(``merged_cells``). Merges the header does not need are read as before: a title merged across the top, a footer line merged across a row, a header cell merged
over a column of values (a one-row header: the row under it holds values where labels stand alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from hrimport.errors import InputFileError
from hrimport.listing import shorten
from hrimport.reader.grid import _column_letter, _looks_like_a_label, normalize_header

#: How a group label and a label repeated under several groups are joined: a space, as a person writes
#: ``Contract Start`` in one cell (init's synonyms match it word by word, ``Probation End Date`` included).
JOINER = " "
#: The merged ranges kept from the top of a sheet: a real header has a few dozen; more is a hostile file.
MAX_TOP_MERGES = 100_000
#: The merges over rows of data kept (``merged_cells`` gives their value to each of their rows): a sheet
#: merging more is refused, not read with values left out.
MAX_DATA_MERGES = 100_000
#: How the refusals say what to do.
FIX = "unmerge the header cells and keep one header row (or name the columns in one row above the data)"


class MergedRange(NamedTuple):
    """A merged range of cells, rows and columns counted from 1, both ends included."""

    first_row: int
    first_column: int
    last_row: int
    last_column: int

    @property
    def ref(self) -> str:
        return (f"{_column_letter(self.first_column - 1)}{self.first_row}:"
                f"{_column_letter(self.last_column - 1)}{self.last_row}")

    @property
    def down(self) -> bool:
        """Merged over more than one row."""
        return self.last_row > self.first_row

    @property
    def across(self) -> bool:
        """Merged over more than one column."""
        return self.last_column > self.first_column


@dataclass
class SheetMerges:
    """The merges of a sheet: those starting in its top rows (``top``), which may shape its header, and those
    below them that cover several rows (``data``: a value shown on several rows of data, ``merged_cells``)."""

    top: list[MergedRange]
    data: list[MergedRange] = field(default_factory=list)
    cut: bool = False  # more than ``MAX_TOP_MERGES`` at the top: the header cannot be told
    data_cut: bool = False  # more than ``MAX_DATA_MERGES`` below: not all kept

    def __bool__(self) -> bool:
        return bool(self.top) or bool(self.data) or self.cut or self.data_cut

    @property
    def down(self) -> list[MergedRange]:
        """Every merge kept that covers several rows, top and data."""
        return [m for m in self.top if m.down] + self.data


#: A sheet without merged cells.
NO_MERGES = SheetMerges([])


class MergeCollector:
    """Collects a sheet's merges as a streamed scan meets them, bounded: those starting at or above row
    ``top_rows``, and those covering several rows below it."""

    def __init__(self, top_rows: int) -> None:
        self.top_rows = top_rows
        self.merges = SheetMerges([])

    def add(self, merged: MergedRange) -> None:
        if not merged.down and not merged.across:
            return  # a cell merged with itself: nothing to read
        if merged.first_row <= self.top_rows:
            if len(self.merges.top) >= MAX_TOP_MERGES:
                self.merges.cut = True
                return
            self.merges.top.append(merged)
        elif merged.down:
            if len(self.merges.data) >= MAX_DATA_MERGES:
                self.merges.data_cut = True
                return
            self.merges.data.append(merged)


# an XLSX merge's range (any namespace prefix, absolute references too): <mergeCell ref="B1:D1"/>
_XLSX_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="\$?([A-Za-z]{1,3})\$?(\d{1,7}):\$?([A-Za-z]{1,3})\$?(\d{1,7})"')


def add_xlsx_merges(xml: bytes, collector: MergeCollector) -> None:
    """Add the ``<mergeCell>`` ranges of an XLSX sheet part's tail (after ``</sheetData>``)."""
    for match in _XLSX_MERGE.finditer(xml):
        first_col, first_row, last_col, last_row = match.groups()
        rows = sorted((int(first_row), int(last_row)))
        columns = sorted((_column_number(first_col), _column_number(last_col)))
        collector.add(MergedRange(rows[0], columns[0], rows[1], columns[1]))


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def data_merges(path: Path, sheet: str | None, merges: SheetMerges) -> list[MergedRange]:
    """The sheet's cells merged down (``merged_cells`` gives their value to each row of data they cover), or
    ``InputFileError`` for a sheet merging more than ``MAX_DATA_MERGES`` over rows of data: never read with
    the values of some left out."""
    if merges.data_cut:
        raise InputFileError(
            f"{path}{_on(sheet)}: more than {MAX_DATA_MERGES:,} cells are merged over rows of data; unmerge them "
            "(in Excel: select them, Home > Merge & Center) and write each value on its row"
        )
    return merges.down


def merges_of_ranges(ranges: Sequence[tuple[tuple[int, int], tuple[int, int]]] | None, top_rows: int) -> SheetMerges:
    """python-calamine's ``merged_cell_ranges`` (0-based ``((row, column), (row, column))``) as ``SheetMerges``."""
    collector = MergeCollector(top_rows)
    for (first_row, first_column), (last_row, last_column) in ranges or ():
        collector.add(MergedRange(first_row + 1, first_column + 1, last_row + 1, last_column + 1))
    return collector.merges


@dataclass(frozen=True)
class TwoRowHeader:
    """A header read over grid rows ``top`` and ``top + 1`` (0-based): ``names``, one per grid column, the
    name a person reads there ("" where both cells are empty)."""

    top: int
    names: list[str]

    @property
    def rows(self) -> str:
        return f"{self.top + 1}-{self.top + 2}"


def merged_down(merges: SheetMerges) -> set[int]:
    """The grid rows (0-based) whose cells are merged down into the row under them: each the upper row of a
    header over two rows, which ``grid._find_header`` looks at with the row under it."""
    return {m.first_row - 1 for m in merges.top if m.down}


def rows_around(grid_rows: Callable[[int, int], list[list[str]]], index: int) -> dict[int, list[str]]:
    """The grid rows ``two_row_header`` looks at around the header at grid row ``index``: from the one above
    to the one under it, by ``grid_rows(start, stop)`` (a slice of the grid as lists of text)."""
    start = max(0, index - 1)
    return dict(enumerate(grid_rows(start, index + 2), start=start))


def two_row_header(path: Path, sheet: str | None, rows: dict[int, list[str]], index: int, merges: SheetMerges,
                   first_column: int = 0) -> TwoRowHeader | None:
    """The header over two rows that the merges make of the header found at grid row ``index`` (the upper
    or the lower of the two), or None when the header is the one row ``index`` (no merge shapes it).

    ``rows`` are the grid rows around it (``rows_around``: grid row -> its cells), its column ``j`` the
    sheet's column ``first_column + j`` (0-based). Raises ``InputFileError`` when merges at the header
    do not form the shape (the module's docstring).
    """
    if not merges:
        return None
    header = index + 1  # the Excel row
    starting = {row: [m for m in merges.top if m.first_row == row] for row in (header - 1, header)}
    upper = next((row for row in (header, header - 1) if any(m.down for m in starting[row])), None)
    if merges.cut and upper is None and any(m.first_row <= header + 1 for m in merges.top):
        raise _unsure(path, sheet, f"{header}-{header + 1}", f"more than {MAX_TOP_MERGES:,} merged ranges at the top")
    if upper is not None:  # a cell merged down into the row under it: a header over two rows, for sure
        return _shaped(path, sheet, rows, upper, merges, first_column, sure=True)
    for row in (header, header - 1):
        if row >= 1 and any(m.across for m in starting[row]) and _holds_two(rows, row - 1):
            return _shaped(path, sheet, rows, row, merges, first_column, sure=False)
    return None  # merges above the header (a title, even saved as covering the sheet) shape no header


def _holds_two(rows: dict[int, list[str]], at: int) -> bool:
    """Whether grid row ``at`` holds two cells or more: one alone (a title merged across) shapes no header."""
    return sum(1 for cell in rows.get(at, ()) if str(cell).strip()) >= 2


def _shaped(path: Path, sheet: str | None, rows: dict[int, list[str]], upper: int, merges: SheetMerges,
            first_column: int, sure: bool) -> TwoRowHeader | None:
    """The header over Excel rows ``upper`` and ``upper + 1``. ``sure``: a cell is merged down over both,
    so anything else than the shape is refused; otherwise (group labels merged across only) a row under
    them holding values where labels stand alone is data under a one-row header: None, read as before."""
    span = f"{upper}-{upper + 1}"
    lower_row = upper + 1
    top = [str(c).strip() for c in rows.get(upper - 1, ())]
    below = [str(c).strip() for c in rows.get(upper, ())]
    width = max(len(top), len(below))
    top += [""] * (width - len(top))
    below += [""] * (width - len(below))
    down: dict[int, MergedRange] = {}  # grid column -> its merge over both rows
    group: dict[int, MergedRange] = {}  # grid column -> the group label merged across over it
    odd: list[str] = []
    for m in merges.top:
        if m.last_row < upper or m.first_row > lower_row:
            continue  # a title above, or a merge in the data (below)
        columns = range(m.first_column - 1 - first_column, m.last_column - first_column)
        if m.first_row == upper and m.last_row == lower_row and not m.across:
            down[columns[0]] = m
        elif m.first_row == upper == m.last_row:
            group.update(dict.fromkeys(columns, m))
        elif m.first_row < upper:
            odd.append(f"{m.ref} is merged from above into the header")
        elif m.down and m.last_row > lower_row:
            odd.append(f"{m.ref} is merged over {m.last_row - m.first_row + 1} rows")
        elif m.down:
            odd.append(f"{m.ref} is merged over both rows and several columns")
        else:
            odd.append(f"{m.ref} is a label merged across columns in the lower row")
    names: list[str] = []
    values_below: list[str] = []  # a labelled column standing alone with a value under it: a data row
    for j in range(width):
        column = f"{_column_letter(first_column + j)}"
        if j in down:
            names.append(top[j])
        elif j in group:
            m = group[j]
            label = below[j]
            if not label:
                odd.append(f"'{shorten(_label_of(top, m, first_column))}' ({m.ref}) has no label under it in "
                           f"{column}{lower_row}")
            elif not _looks_like_a_label(label):
                odd.append(f"{column}{lower_row} under '{shorten(_label_of(top, m, first_column))}' holds "
                           f"'{shorten(label)}', not a label")
            names.append(label)
        elif top[j] and below[j]:
            values_below.append(f"{column}{upper} '{shorten(top[j])}' over {column}{lower_row} '{shorten(below[j])}'")
            names.append(top[j])
        else:
            names.append(top[j] or below[j])
    if values_below and not sure:
        return None  # a header cell merged over columns of values: the row under the header is data
    odd += [f"{cells}, two labels in one column without a merge" for cells in values_below]
    if odd:
        raise _unsure(path, sheet, span, "; ".join(odd[:3]) + (f" (and {len(odd) - 3} more)" if len(odd) > 3 else ""))
    return TwoRowHeader(upper - 1, _joined(names, group, top, first_column))


def _label_of(top: Sequence[str], merged: MergedRange, first_column: int) -> str:
    at = merged.first_column - 1 - first_column
    return top[at] if 0 <= at < len(top) else ""


def _joined(names: list[str], group: dict[int, MergedRange], top: Sequence[str], first_column: int) -> list[str]:
    """``names`` where a label under a group that is in the header more than once is joined to its group's."""
    counts: dict[str, int] = {}
    for name in names:
        if name:
            counts[normalize_header(name)] = counts.get(normalize_header(name), 0) + 1
    joined = list(names)
    for j, merged in group.items():
        label = _label_of(top, merged, first_column)
        if j < len(names) and names[j] and label and counts[normalize_header(names[j])] > 1:
            joined[j] = f"{label}{JOINER}{names[j]}"
    return joined


def _on(sheet: str | None) -> str:
    return f" (sheet '{shorten(sheet)}')" if sheet else ""


def _unsure(path: Path, sheet: str | None, rows: str, what: str) -> InputFileError:
    return InputFileError(
        f"{path}{_on(sheet)}: the header over rows {rows} has merged cells that do not form one header "
        f"hrimport can read ({what}); {FIX}"
    )
