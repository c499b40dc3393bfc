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

A number Excel cannot show as a date at all (below 0, or after 31 December 9999: it shows ``########``) is held
back the same way, read as ``########``. The 1904 date system shows a number below 0 as the number above 0
with a minus sign (Microsoft KB 182247: its reason to exist): a time as such (``-12:00:00``), a date held back
as no date, read as ``-1904-01-02``. The other cells of a date or time format whose number the libraries
read otherwise than Excel shows it are read as Excel shows them (``shown_date_time``): a time of day's format
(``hh:mm``) on a number of 1 or more shows the time alone, never 1900-01-01; an elapsed time (``[h]:mm``) shows
its hours in full (``36:30:00``, never ``1 day, 12:30:00``); a date cell's 0 in the 1904 date system is
1904-01-01. The built-in formats of East Asian workbooks (ECMA-376 Part 1, 18.8.30: ids 27-36 and 50-58, used
without being written out) depend on the language of the computer showing them: those that show a date in every
language (``EAST_ASIAN_DATE_FORMATS``) are read as the date, the others, a time in Chinese and a date in
Japanese, are held back (``EAST_ASIAN_DATE_OR_TIME_FORMATS``).
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pyarrow as pa

from hrimport.reader.display_formats import code_sections
from hrimport.reader.grid import CellsRead

if TYPE_CHECKING:
    import xlrd

#: The ``CellsRead`` kind of the date cells showing a day that never was; ``held``: the number each stores.
NO_SUCH_DATE = "no-such-date"
#: What decided it, in the report's words.
NO_SUCH_DATE_RULE = "a date cell showing a day that does not exist (Excel's 1900 calendar): nothing to send"
#: What decided how a date cell was read, in the report's words.
DATE_CELL_RULE = "a date cell: read as YYYY-MM-DD, whatever the day/month order"

#: The East Asian built-in number formats (ECMA-376 Part 1, 18.8.30: not written out, shown as the computer's
#: language says) that show a date in each of zh-TW, zh-CN, ja-JP and ko-KR, and in en-US (as m/d/yyyy, format 14):
#: the day is certain, only its spelling (an era's year, 年月日) is not.
EAST_ASIAN_DATE_FORMATS = frozenset({27, 28, 29, 30, 31, 36, 50, 51, 54, 57, 58})
#: The East Asian built-in formats that show a time in one language and a date in another: 32 and 33 (h"時"mm"分"
#: in Chinese and Japanese and Korean, h:mm:ss in en-US), 34 and 35 (上午/下午h"时"mm"分" in Chinese, yyyy"年"m"月"
#: and m"月"d"日" in Japanese), 52 and 53 (a time in zh-TW, a date elsewhere), 55 and 56 (a time in Chinese, a
#: date in Japanese and Korean). What the person sees cannot be known from the file: held back.
EAST_ASIAN_DATE_OR_TIME_FORMATS = frozenset({32, 33, 34, 35, 52, 53, 55, 56})
#: The built-in number formats (ECMA-376 Part 1, 18.8.30; ids below 164, used without being written out) that
#: show a date: m-d-yy, d-mmm-yy, d-mmm, mmm-yy, m/d/yy h:mm, and the East Asian date formats.
BUILT_IN_DATE_FORMATS = frozenset({14, 15, 16, 17, 22}) | EAST_ASIAN_DATE_FORMATS
#: The built-in formats that show a time of day (h:mm AM/PM, h:mm:ss AM/PM, h:mm, h:mm:ss, mm:ss, mm:ss.0) and
#: an elapsed time ([h]:mm:ss).
BUILT_IN_TIME_FORMATS = {18: "time", 19: "time", 20: "time", 21: "time", 45: "time", 47: "time", 46: "elapsed"}
#: What a date or time style shows (``date_time_styles``): a date, a time of day, an elapsed time, one of the
#: East Asian built-in date formats, or one that is a date or a time by the language of the computer.
DATE, TIME, ELAPSED, EAST_ASIAN_DATE, DATE_OR_TIME = "date", "time", "elapsed", "east-asian-date", "date-or-time"
#: The text a cell reads as when Excel cannot show its number as a date (below 0, after 31/12/9999).
NOT_SHOWN = "########"
#: The last serial of each date system, 31 December 9999 (up to its last second).
_LAST_SERIAL = {1900: 2958466, 1904: 2957004}

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
# What a format code shows as itself, not as part of the date: quoted text, an escaped or padding character
# (\x, _x, *x), a [bracket] (a colour, a condition, a locale, or [h] [m] [s] of elapsed time), AM/PM
_ELAPSED = re.compile(r"\[(h+|m+|s+)\]", re.IGNORECASE)
_LITERAL = re.compile(r'"[^"]*"|\\.|_.|\*.|\[[^\]]*\]|am/pm|a/p', re.IGNORECASE)


def shows_a_date(code: str) -> bool:
    """Whether a number format ``code`` shows a date (a day, a month or a year), not only a time of day or a
    number: ``dd/mm/yyyy`` and ``d-mmm`` do, ``hh:mm`` and ``[h]:mm`` do not. An ``m`` next to an hour or
    before seconds is minutes, as Excel reads it."""
    # [h] [m] [s] of an elapsed time are its hours, minutes and seconds: an m after [h] is minutes
    letters = _LITERAL.sub("", _ELAPSED.sub(lambda unit: unit.group(1), code_sections(code)[0])).lower()
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


def time_shape(code: str) -> str | None:
    """``TIME`` for a format showing a time of day alone (``hh:mm``, ``h:mm AM/PM``, ``mm:ss``), ``ELAPSED`` for
    an elapsed time (``[h]:mm``), None otherwise (a date, with or without its time, a number, text)."""
    if shows_a_date(code):
        return None
    first = code_sections(code)[0]
    if _ELAPSED.search(first):
        return ELAPSED
    return TIME if re.search(r"[hs]", _LITERAL.sub("", first).lower().replace("general", "")) else None


def format_shape(code: str) -> str | None:
    """What a number format shows: ``DATE``, ``TIME``, ``ELAPSED``, or None."""
    return DATE if shows_a_date(code) else time_shape(code)


def date_time_styles(formats: dict[str, str], styles: Iterable[str]) -> dict[int, str]:
    """The cell style indexes whose number format shows a date or a time, -> what it shows (``DATE``, ``TIME``,
    ``ELAPSED``, ``EAST_ASIAN_DATE``, ``DATE_OR_TIME``). ``formats``: the formats the file writes out, by id;
    ``styles``: each cell style's format id, in order."""
    built_in = {str(key): DATE for key in BUILT_IN_DATE_FORMATS} | {
        str(key): shape for key, shape in BUILT_IN_TIME_FORMATS.items()} | {
        str(key): EAST_ASIAN_DATE for key in EAST_ASIAN_DATE_FORMATS} | {
        str(key): DATE_OR_TIME for key in EAST_ASIAN_DATE_OR_TIME_FORMATS}
    shapes = {key: shape for key, shape in built_in.items() if key not in formats}  # a built-in id written otherwise
    shapes |= {key: shape for key, code in formats.items() if (shape := format_shape(code)) is not None}
    return {index: shapes[key] for index, key in enumerate(styles) if key in shapes}


def xlsx_date_styles(archive: zipfile.ZipFile) -> dict[int, str]:
    """The cell style indexes (``s="N"`` on a cell) whose number format shows a date or a time, -> what it
    shows (``date_time_styles``)."""
    try:
        root = ElementTree.fromstring(archive.read("xl/styles.xml"))
    except KeyError:
        return {}
    written = {fmt.get("numFmtId", ""): fmt.get("formatCode", "") for fmt in root.iterfind(f"{_MAIN}numFmts/{_MAIN}numFmt")}
    return date_time_styles(written, [xf.get("numFmtId", "0") for xf in root.iterfind(f"{_MAIN}cellXfs/{_MAIN}xf")])


def shown_date_time(stored: float, shape: str, date_system: int) -> tuple[bool, str] | None:
    """What Excel shows for a cell of a date or time format (``shape``) storing ``stored`` where the libraries
    read something else: (True, text) for a cell held back (``1900-01-00``, ``1900-02-29``, ``########``,
    or the number itself for a format that is a date or a time by the computer's language), (False, text) for
    a cell read as ``text``; None where the libraries read what Excel shows (a real date: both read it)."""
    if shape == DATE_OR_TIME:
        return True, stored_number(repr(stored))
    if date_system == 1904 and -_LAST_SERIAL[1904] < stored < 0:  # shown with a minus sign (KB 182247)
        held, text = shown_date_time(-stored, shape, 1904) or (False, _shown_day(-stored, 1904))
        return shape not in (TIME, ELAPSED) or held, f"-{text}"
    if stored < 0 or stored >= _LAST_SERIAL[date_system]:
        return True, NOT_SHOWN
    if shape in (DATE, EAST_ASIAN_DATE):
        if date_system == 1900 and (day := day_that_never_was(stored)) is not None:
            return True, day
        if shape == EAST_ASIAN_DATE or (date_system == 1904 and stored < 1):
            return False, _shown_day(stored, date_system)
        return None
    seconds = round(stored * 86400)
    if shape == ELAPSED:
        return False, clock(seconds)
    if date_system == 1900 and stored < 1:
        return None  # a time of day of day 0: read as such
    seconds %= 86400
    return False, clock(seconds)


def clock(seconds: int) -> str:
    """``HH:MM:SS`` of a whole number of seconds, its hours in full past a day (``36:30:00``): how the reader
    writes a time cell, whatever the library read it as."""
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


_EPOCHS = {1900: dt.datetime(1899, 12, 30), 1904: dt.datetime(1904, 1, 1)}


def _shown_day(stored: float, date_system: int) -> str:
    """The day (and time, if not midnight) serial ``stored`` is, as ``YYYY-MM-DD[ HH:MM:SS]``."""
    day_and_time = _EPOCHS[date_system] + dt.timedelta(seconds=round(stored * 86400))
    return day_and_time.date().isoformat() if day_and_time.time() == dt.time(0) else day_and_time.isoformat(sep=" ")


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
                       found: Iterable[tuple[int, int, str, str]], first_column: int = 0) -> None:
    """Read the cells ``found`` (row, column, number stored, text Excel shows: ``shown_date_time``; 0-based, the
    grid's first column ``first_column``) as Excel shows them (a day that never was keeps the time the library
    read after it), and mark them ``NO_SUCH_DATE`` in ``cells_read``, not as date cells: each column of
    ``columns`` is replaced, not changed in place."""
    for j, cells in _by_column(columns, [(row, column, (stored, day)) for row, column, stored, day in found],
                               first_column).items():
        values = columns[j].to_numpy(dtype=object)
        for row, (_, day) in cells:
            time = _time_of(str(values[row])) if day.startswith("1900-") else ""
            values[row] = f"{day} {time}" if time else day
        columns[j] = pd.Series(pa.array(values, type=pa.string()), dtype="str")
        rows = np.array([row for row, _ in cells], dtype=np.int64)
        reads = [kept for read in cells_read.get(j, []) if (kept := _without(read, rows)) is not None]
        reads.append(CellsRead(NO_SUCH_DATE, NO_SUCH_DATE_RULE, rows, tuple(stored_number(s) for _, (s, _) in cells)))
        cells_read[j] = reads


def show_dates_and_times(columns: dict[int, pd.Series], cells_read: dict[int, list[CellsRead]],
                         found: Iterable[tuple[int, int, str]], first_column: int = 0) -> None:
    """Write in the cells ``found`` (row, column, text Excel shows: ``shown_date_time``) the text Excel shows for
    them; a cell showing a date alone is a date cell (``excel-date-cell``), any other is not: each column of
    ``columns`` is replaced, not changed in place."""
    for j, cells in _by_column(columns, found, first_column).items():
        values = columns[j].to_numpy(dtype=object)
        for row, shown in cells:
            values[row] = shown
        columns[j] = pd.Series(pa.array(values, type=pa.string()), dtype="str")
        dates = np.array([row for row, shown in cells if len(shown) == 10], dtype=np.int64)
        others = np.array([row for row, shown in cells if len(shown) != 10], dtype=np.int64)
        reads = cells_read.get(j, [])
        if len(others):
            reads = [kept for read in reads
                     if (kept := read if read.kind != "excel-date-cell" else _without(read, others)) is not None]
        if len(dates):
            known = [read for read in reads if read.kind == "excel-date-cell"]
            rows = np.union1d(dates, known[0].positions) if known else dates
            reads = [read for read in reads if read.kind != "excel-date-cell"]
            reads.append(CellsRead("excel-date-cell", DATE_CELL_RULE, rows))
        cells_read[j] = reads


_Cell = TypeVar("_Cell")


def _by_column(columns: dict[int, pd.Series], found: Iterable[tuple[int, int, _Cell]], first_column: int
               ) -> dict[int, list[tuple[int, _Cell]]]:
    """The cells ``found`` (row, column of the sheet, what of it) by column of ``columns``, in row order: those
    outside ``columns`` left out."""
    by_column: dict[int, list[tuple[int, _Cell]]] = {}
    for row, column, what in found:
        j = column - first_column
        if j in columns and row < len(columns[j]):
            by_column.setdefault(j, []).append((row, what))
    return {j: sorted(cells, key=lambda cell: cell[0]) for j, cells in by_column.items()}


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


def day_candidates(columns: dict[int, pd.Series], dates: bool = False, past_9999: bool = False
                   ) -> list[tuple[int, int]]:
    """(row, column) of the cells python-calamine may have read otherwise than Excel shows them
    (``shown_date_time``): a time of day (what it makes of a date cell storing 0 to below 1, or below 0), 28
    February 1900 (of one storing 60), a date with a time of day (a time format on a number of 1 or more, which
    may also be a date-time format), an elapsed time (``1 day, 12:30:00``). With ``dates`` (the workbook gives
    a cell a time format) a date at midnight too: a time format on a whole number is read as its day. With
    ``past_9999`` (the workbook gives a cell a date format) a number of seven digits or more: a date past
    31/12/9999 is read as the number. A few cells at most, or none, where the workbook has no such format: the
    XLS itself is looked at only for them (``xls_no_such_dates``)."""
    found: list[tuple[int, int]] = []
    pattern = r"(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d+)?|-?\d+ days?, .*"
    if dates:
        pattern += r"|\d{4}-\d\d-\d\d"
    if past_9999:
        pattern += r"|\d{7,}(?:\.\d+)?"
    for j, values in columns.items():
        hits = (values.str.startswith(("1900-02-28", "1900-01-0", "1899-12-3", "1904-01-0"))
                | values.str.fullmatch(pattern))
        found.extend((row, j) for row in np.flatnonzero(hits.to_numpy(dtype=bool)).tolist())
    return found


def xls_date_time_cells(book: xlrd.Book, sheet: str, columns: dict[int, pd.Series]
                        ) -> tuple[list[tuple[int, int, str, str]], list[tuple[int, int, str]]]:
    """The cells of the XLS sheet ``sheet`` of ``book`` (``open_xls``, with its formatting; read by python-calamine
    as ``columns``) of a date or time format read
    otherwise than Excel shows them (``xls_no_such_dates``). The workbook's formats are read first (``on_demand``:
    no sheet yet): the cells read as dates at midnight are looked at only when a cell has a time format, and
    numbers of seven digits only when one has a date format; the sheet is read then."""
    shapes = {key: shape for key, fmt in book.format_map.items()
              if (shape := format_shape(fmt.format_str or "")) is not None}
    used = {shapes[xf.format_key] for xf in book.xf_list if not xf.is_style and xf.format_key in shapes}
    candidates = day_candidates(columns, dates=bool(used & {TIME, ELAPSED}), past_9999=DATE in used)
    return xls_no_such_dates(book, shapes, sheet, candidates) if candidates else ([], [])


def xls_no_such_dates(book: xlrd.Book, shapes: dict[int, str], sheet: str, candidates: Iterable[tuple[int, int]]
                      ) -> tuple[list[tuple[int, int, str, str]], list[tuple[int, int, str]]]:
    """The ``candidates`` (``day_candidates``) of the XLS sheet ``sheet`` of ``book`` (opened with its
    formatting; ``shapes``: what each of its number formats shows) that are cells of a date or time format read
    otherwise than Excel shows them (``shown_date_time``): those held back (row, column, number stored, text
    shown), and those read as Excel shows them (row, column, text shown)."""
    import xlrd  # only for XLS files holding such a candidate: it is slow, and needed nowhere else

    date_system = 1904 if book.datemode else 1900
    cells = book.sheet_by_name(sheet)
    held: list[tuple[int, int, str, str]] = []
    shown: list[tuple[int, int, str]] = []
    for row, column in candidates:
        if row >= cells.nrows or column >= cells.row_len(row):
            continue
        if cells.cell_type(row, column) not in (xlrd.XL_CELL_DATE, xlrd.XL_CELL_NUMBER):
            continue
        shape = shapes.get(book.xf_list[cells.cell_xf_index(row, column)].format_key)
        if shape is None:
            continue
        value = float(cells.cell_value(row, column))
        seen = shown_date_time(value, shape, date_system)
        if seen is not None:
            if seen[0]:
                held.append((row, column, repr(value), seen[1]))
            else:
                shown.append((row, column, seen[1]))
    return held, shown
