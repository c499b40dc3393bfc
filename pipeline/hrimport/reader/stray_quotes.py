"""A stray quote in a text export: a cell that swallowed the rows below it.

A quote at the start of a cell opens a quoted value, which only the next quote closes: a value typed with a
leading quote (``"Anna``, a job title ``"Acting" Head``) or cut by an export in the middle of a quoted value
makes every line after it, up to the next quote in the file or its end, the text of that one cell. Those lines
are people: read so, they would have no row and no outcome, and the file would seem to hold fewer rows than it
does (a whole read and Excel both read it so). When the next quote is on the next line (``O"Brien``), that
person's cells after it fill the rest of the first person's row, and would be sent under the first person's id.
A cell whose lines after its first read as rows of the table (whole rows, as many cells as the header; or the
last one starting a row that the record's cells after the cell end, while its first line ends the row the value
opened in) is such a cell: the file is refused in one line naming it, never read with its rows lost. A value
whose line breaks are the data's own (an address on two lines) has no such line in a table three or more
columns wide.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from hrimport.errors import InputFileError

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A table narrower than this has no row unlike a line of a value's own text ("12 Main St, Springfield").
NARROWEST = 3


def line_breaks(body: bytes) -> int:
    """The line breaks of ``body`` (``\\r\\n``, ``\\n`` or a lone ``\\r``), counted at memchr speed."""
    return body.count(b"\n") + body.count(b"\r") - body.count(b"\r\n")


def rows_inside(cell: str, delimiter: str, width: int, column: int) -> list[str]:
    """The lines of ``cell`` (in column ``column`` of a ``width``-column table, 0-based) after its first that
    read as rows of the table: whole rows, and the last line when it starts a row that the record's cells after
    the cell end (a second stray quote closed the value there: that person's cells then fill the row the first
    opened in, under its id) while the first line ends the row the value opened in."""
    if width < NARROWEST:
        return []
    lines = _LINE_BREAK.split(cell)
    if len(lines) < 2:
        return []
    found = [line for line in lines[1:] if line and _cells_of(line, delimiter) == width]
    last = lines[-1]
    if (last and last not in found[-1:] and _cells_of(last, delimiter) == column + 1
            and _cells_of(lines[0], delimiter) == width - column):
        found.append(last)
    return found


def _cells_of(line: str, delimiter: str) -> int:
    try:
        return len(next(csv.reader([line], delimiter=delimiter), []))
    except csv.Error:
        return 0


def first_swallowing_cell(grid: pd.DataFrame, width: int, delimiter: str) -> tuple[int, int, list[str]] | None:
    """The first cell of ``grid`` (text, one column per header cell) holding lines that read as rows of a
    ``width``-column table, as (its row's position, its column's, those lines); None when no cell does. Only the
    cells holding a line break are looked at."""
    if width < NARROWEST:
        return None
    found: tuple[int, int, list[str]] | None = None
    for position, column in enumerate(grid.columns[:width]):
        values = grid[column]
        broken = values.str.contains(_LINE_BREAK.pattern, regex=True).to_numpy(dtype=bool)
        for at in broken.nonzero()[0]:
            if found is not None and at >= found[0]:
                break
            swallowed = rows_inside(values.iat[at], delimiter, width, position)
            if swallowed:
                found = (int(at), position, swallowed)
                break
    return found


def refuse_swallowed_rows(path: Path, grid: pd.DataFrame, header: Sequence[str], first_row: int,
                          delimiter: str) -> None:
    """Raise ``InputFileError`` for the first cell of ``grid`` (its first row is the file's row ``first_row``)
    holding lines that read as rows (``first_swallowing_cell``); nothing when none does."""
    found = first_swallowing_cell(grid, len(header), delimiter)
    if found is None:
        return
    at, position, swallowed = found
    cell = grid.iat[at, position]
    # a quote never closed takes the file's last line break in too: no line of the file
    lines = len(_LINE_BREAK.findall(cell.rstrip("\r\n"))) + 1
    to_end = ", to its end," if at == len(grid) - 1 else ""
    first = swallowed[0] if len(swallowed[0]) <= 40 else swallowed[0][:40] + "…"
    rows = (f"one of them reads as a row of the table ('{first}')" if len(swallowed) == 1 else
            f"{len(swallowed):,} of them read as rows of the table (the first: '{first}')")
    raise InputFileError(
        f"{path.name}: row {first_row + at:,}, column '{header[position]}': a value opening with a quote (\") "
        f"runs over {lines:,} lines of the file{to_end} and {rows}, which would be lost inside that one cell: a stray quote in the export; remove it, or "
        "write it as two quotes (\"\") if it belongs to the value, and export again")
