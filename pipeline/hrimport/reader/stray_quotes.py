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
columns wide, mostly: a line of an e-mail pasted in a Reason may hold as many commas as a narrow table has
cells. So the whole read looks at how such a cell's record is quoted in the file: a value a quote opened by
mistake is closed by none (the file's end) or by a quote with more text after it (``O"Brien``), which CSV's
rules do not allow; a value closed where CSV closes one (a delimiter or the line's end after the quote) is the
exporter's own quoting, refused only when every line of it reads as the rows a stray quote would have swallowed
(its first line ends a row, its last starts one, and each between is a whole row: ``"Person 9`` ... ``Person
10"``).
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from hrimport.errors import InputFileError

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A line break in a CSV's bytes, as every reader of them splits lines (``text`` too: it imports this one).
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
#: A table narrower than this has no row unlike a line of a value's own text ("12 Main St, Springfield").
NARROWEST = 3


def line_breaks(body: bytes) -> int:
    """The line breaks of ``body`` (``\\r\\n``, ``\\n`` or a lone ``\\r``), counted at memchr speed."""
    return body.count(b"\n") + body.count(b"\r") - body.count(b"\r\n")


def rows_inside(cell: str, delimiter: str, width: int, column: int, closed_as_csv: bool = False) -> list[str]:
    """The lines of ``cell`` (in column ``column`` of a ``width``-column table, 0-based) after its first that
    read as rows of the table: whole rows, and the last line when it starts a row that the record's cells after
    the cell end (a second stray quote closed the value there: that person's cells then fill the row the first
    opened in, under its id) while the first line ends the row the value opened in.

    ``closed_as_csv``: the value's quotes close where CSV closes one, as an exporter quotes a value of several
    lines; its lines count only when all of them read so (the first ends a row, the last starts one, at least
    one between and each there a whole row), where a line of text may hold as many delimiters as a row by
    chance."""
    if width < NARROWEST:
        return []
    lines = _LINE_BREAK.split(cell)
    if len(lines) < 2:
        return []
    found = [line for line in lines[1:] if line and _cells_of(line, delimiter) == width]
    last = lines[-1]
    seam = (bool(last) and _cells_of(last, delimiter) == column + 1
            and _cells_of(lines[0], delimiter) == width - column)
    if closed_as_csv:
        between = [line for line in lines[1:-1] if line]
        return found + [last] if seam and between and len(found) == len(between) else []
    if seam and last not in found[-1:]:
        found.append(last)
    return found


def _cells_of(line: str, delimiter: str) -> int:
    try:
        return len(next(csv.reader([line], delimiter=delimiter), []))
    except csv.Error:
        return 0


def first_swallowing_cell(grid: pd.DataFrame, width: int, delimiter: str,
                          body: bytes | None = None) -> tuple[int, int, list[str]] | None:
    """The first cell of ``grid`` (text, one column per header cell) holding lines that read as rows of a
    ``width``-column table, as (its row's position, its column's, those lines); None when no cell does. Only the
    cells holding a line break are looked at. ``body``: the UTF-8 bytes ``grid`` was parsed from, one record a
    row, where a cell's record is looked at for how it is quoted (``closed_as_csv``); without it (a streamed
    chunk, which hands such a cell to the whole read) every cell counts as opened by mistake."""
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
            if swallowed and body is not None and closed_as_csv(body, grid, int(at), delimiter):
                swallowed = rows_inside(values.iat[at], delimiter, width, position, closed_as_csv=True)
            if swallowed:
                found = (int(at), position, swallowed)
                break
    return found


def closed_as_csv(body: bytes, grid: pd.DataFrame, at: int, delimiter: str) -> bool:
    """Whether the record of ``grid``'s row ``at`` is quoted in ``body`` as CSV's rules have it (RFC 4180): each
    quoted value closed, by a quote followed by a delimiter or the line's end. A quote opened by mistake is closed
    by the file's end or by the next quote in it, mostly amid a value (``O"Brien``)."""
    breaks = grid.iloc[: at + 1].apply(lambda column: column.str.count(_LINE_BREAK.pattern)).to_numpy().sum(axis=1)
    first_line = at + int(breaks[:at].sum())
    starts = itertools.chain([0], (match.end() for match in LINE_BREAK_BYTES.finditer(body)))
    start = next(itertools.islice(starts, first_line, None), len(body))
    # the record's lines: the last may end the file without a line break
    ends = [match.end() for match in itertools.islice(LINE_BREAK_BYTES.finditer(body, start), int(breaks[at]) + 1)]
    end = ends[-1] if len(ends) == int(breaks[at]) + 1 else len(body)
    record = body[start:end].decode("utf-8", errors="replace")
    try:
        return len(list(csv.reader(io.StringIO(record, newline=""), delimiter=delimiter, strict=True))) == 1
    except csv.Error:
        return False


def refuse_swallowed_rows(path: Path, grid: pd.DataFrame, header: Sequence[str], first_row: int,
                          delimiter: str, body: bytes) -> None:
    """Raise ``InputFileError`` for the first cell of ``grid`` (its first row is the file's row ``first_row``,
    parsed from ``body``) holding lines that read as rows (``first_swallowing_cell``); nothing when none does."""
    found = first_swallowing_cell(grid, len(header), delimiter, body)
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
