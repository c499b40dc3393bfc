"""Date cells showing a day that never was: 0 January 1900 and 29 February 1900.

Excel's 1900 date system numbers the days from 1 January 1900 (1), and counts 1900 as a leap year, as Lotus
1-2-3 did, whose files it was made to read: serial 60 is 29 February 1900, a day that never existed, and a 0
in a date cell (an HR system's "no date") shows as 00/01/1900, 0 January 1900. The reading libraries put a
real day or a time of day in their place (60 reads as 1900-02-28, 0 as the time 00:00:00), so a value
sent would not be the one a person sees, and no real date is. Here such a cell is read as what Excel shows,
in the reader's ``YYYY-MM-DD`` (``1900-02-29``, ``1900-01-00``; a time after it when the serial has one), and
marked (``NO_SUCH_DATE``, with the number the cell stores): the mapper makes it a ``not-a-date`` problem of
its row wherever its column is sent, in words saying what the person sees and what to do.

A cell is one when its number format shows a date (days, months or years: not a time of day alone) and it
stores a number from 0 to below 1, or from 60 to below 61. A workbook of the 1904 date system (Mac Excel's)
has no such day: its 0 is 1 January 1904 and its 60 is 1 March 1904.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pyarrow as pa

from hrimport.reader.display_formats import code_sections
from hrimport.reader.grid import CellsRead

#: The ``CellsRead`` kind of the date cells showing a day that never was; ``held``: the number each stores.
NO_SUCH_DATE = "no-such-date"
#: What decided it, in the report's words.
NO_SUCH_DATE_RULE = "a date cell showing a day that does not exist (Excel's 1900 calendar): nothing to send"

#: The built-in number formats (ECMA-376 Part 1, 18.8.30; ids below 164, used without being written out) that
#: show a date: m-d-yy, d-mmm-yy, d-mmm, mmm-yy, m/d/yy h:mm, and the East Asian date formats.
BUILT_IN_DATE_FORMATS = frozenset({14, 15, 16, 17, 22, 27, 28, 29, 30, 31, 36, 50, 51, 54, 57, 58})

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
# What a format code shows as itself, not as part of the date: quoted text, an escaped or padding character
# (\x, _x, *x), a [bracket] (a colour, a condition, a locale, or [h] [m] [s] of elapsed time), AM/PM
_LITERAL = re.compile(r'"[^"]*"|\\.|_.|\*.|\[[^\]]*\]|am/pm|a/p', re.IGNORECASE)


def shows_a_date(code: str) -> bool:
    """Whether a number format ``code`` shows a date (a day, a month or a year), not only a time of day or a
    number: ``dd/mm/yyyy`` and ``d-mmm`` do, ``hh:mm`` and ``[h]:mm`` do not. An ``m`` next to an hour or
    before seconds is minutes, as Excel reads it."""
    letters = _LITERAL.sub("", code_sections(code)[0]).lower()
    if "general" in letters:
        return False
    if "y" in letters or "d" in letters or "e" in letters.replace("e+", "").replace("e-", ""):
        return True  # e: the era's year (East Asian calendars); E+ E- are scientific notation
    for month in re.finditer(r"m+", letters):
        before = letters[: month.start()].rstrip(" :.,")
        after = letters[month.end():].lstrip(" :.,")
        if not before.endswith("h") and not after.startswith("s"):
            return True
    return False


def xlsx_date_styles(archive: zipfile.ZipFile) -> frozenset[int]:
    """The cell style indexes (``s="N"`` on a cell) whose number format shows a date."""
    try:
        root = ElementTree.fromstring(archive.read("xl/styles.xml"))
    except KeyError:
        return frozenset()
    written = {fmt.get("numFmtId", ""): fmt.get("formatCode", "") for fmt in root.iterfind(f"{_MAIN}numFmts/{_MAIN}numFmt")}
    dates = {str(key) for key in BUILT_IN_DATE_FORMATS} | {key for key, code in written.items() if shows_a_date(code)}
    dates -= {key for key, code in written.items() if not shows_a_date(code)}  # a built-in id written otherwise
    return frozenset(index for index, xf in enumerate(root.iterfind(f"{_MAIN}cellXfs/{_MAIN}xf"))
                     if xf.get("numFmtId", "0") in dates)


def day_that_never_was(stored: float) -> str | None:
    """The day a date cell storing ``stored`` shows in Excel's 1900 calendar when it never was (``1900-01-00``
    or ``1900-02-29``), or None for a real day."""
    if 0 <= stored < 1:
        return "1900-01-00"
    if 60 <= stored < 61:
        return "1900-02-29"
    return None


def stored_number(stored: str) -> str:
    """The number a cell stores, as a person writes it (``0``, ``60``, ``60.5``)."""
    value = float(stored)
    return str(int(value)) if value.is_integer() else f"{value:.15g}"


def mark_no_such_dates(columns: dict[int, pd.Series], cells_read: dict[int, list[CellsRead]],
                       found: Iterable[tuple[int, int, str]], first_column: int = 0) -> None:
    """Read the cells ``found`` (row, column, number stored; 0-based, the grid's first column ``first_column``)
    as the day Excel shows (the time the library read kept after it), and mark them ``NO_SUCH_DATE`` in
    ``cells_read``, not as date cells: each column of ``columns`` is replaced, not changed in place."""
    by_column: dict[int, list[tuple[int, str]]] = {}
    for row, column, stored in found:
        by_column.setdefault(column - first_column, []).append((row, stored))
    for j, cells in by_column.items():
        if j not in columns:
            continue
        cells = sorted(c for c in cells if c[0] < len(columns[j]))
        if not cells:
            continue
        values = columns[j].to_numpy(dtype=object)
        for row, stored in cells:
            day = day_that_never_was(float(stored))
            if day is not None:
                values[row] = f"{day} {time}" if (time := _time_of(str(values[row]))) else day
        columns[j] = pd.Series(pa.array(values, type=pa.string()), dtype="str")
        rows = np.array([row for row, _ in cells], dtype=np.int64)
        reads = [kept for read in cells_read.get(j, []) if (kept := _without(read, rows)) is not None]
        reads.append(CellsRead(NO_SUCH_DATE, NO_SUCH_DATE_RULE, rows, tuple(stored_number(s) for _, s in cells)))
        cells_read[j] = reads


def _time_of(text: str) -> str:
    """The time of day the library read for a cell (``12:00:00`` of ``1900-02-28 12:00:00`` or of ``12:00:00``),
    or "" at midnight."""
    time = text.rpartition(" ")[2] if " " in text else text
    return "" if time == "00:00:00" or ":" not in time else time


def _without(read: CellsRead, rows: np.ndarray) -> CellsRead | None:
    """``read`` without the cells at ``rows`` (a date cell is no longer one), or None when none is left."""
    keep = ~np.isin(read.positions, rows)
    if keep.all():
        return read
    if not keep.any():
        return None
    held = tuple(h for h, kept in zip(read.held, keep) if kept) if read.held is not None else None
    return CellsRead(read.kind, read.rule, read.positions[keep], held)


def day_candidates(columns: dict[int, pd.Series]) -> list[tuple[int, int]]:
    """(row, column) of the cells python-calamine may have read from a day that never was: a time of day
    (what it makes of a date cell storing 0 to below 1) or 28 February 1900 (of one storing 60). A few cells
    at most, or none: the XLS itself is looked at only for them (``xls_no_such_dates``)."""
    found: list[tuple[int, int]] = []
    for j, values in columns.items():
        hits = values.str.startswith("1900-02-28") | values.str.fullmatch(r"\d\d:\d\d:\d\d(?:\.\d+)?")
        found.extend((row, j) for row in np.flatnonzero(hits.to_numpy(dtype=bool)).tolist())
    return found


def xls_no_such_dates(path: str, sheet: str, candidates: Iterable[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(row, column, number stored) of the ``candidates`` (``day_candidates``) of an XLS sheet that are date
    cells showing a day that never was; none in a workbook of the 1904 date system."""
    import xlrd  # only for XLS files holding such a candidate: it is slow, and needed nowhere else

    from hrimport.reader.xls_book import open_xls

    book = open_xls(path, formatting_info=True, on_demand=True)
    try:
        if book.datemode:
            return []
        date_formats = {key for key, fmt in book.format_map.items() if shows_a_date(fmt.format_str or "")}
        cells = book.sheet_by_name(sheet)
        found = []
        for row, column in candidates:
            if row >= cells.nrows or column >= cells.row_len(row):
                continue
            if cells.cell_type(row, column) not in (xlrd.XL_CELL_DATE, xlrd.XL_CELL_NUMBER):
                continue
            if book.xf_list[cells.cell_xf_index(row, column)].format_key not in date_formats:
                continue
            value = float(cells.cell_value(row, column))
            if day_that_never_was(value) is not None:
                found.append((row, column, repr(value)))
        return found
    finally:
        book.release_resources()
