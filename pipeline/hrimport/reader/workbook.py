"""Excel and OpenDocument sheets (XLSX, XLSM, XLS, ODS) as columns of text, via fastexcel or python-calamine.

Workbook cells are typed (floats, dates, booleans); they become the text a person sees in Excel here,
so the header and table code only ever handles strings: numbers with Excel's General rule (15 significant
digits, whole numbers in full) or their zero-padded format (``000123``), dates as ``YYYY-MM-DD``, times
as ``HH:MM:SS``, booleans as ``TRUE``/``FALSE``. fastexcel is the fast path for XLSX; python-calamine
reads XLS and ODS (whose times and exact numbers fastexcel loses), and XLSX too when ``FAST_XLSX`` is off
(the tests do, to hold both paths to the same text for every cell).

Before a library lays a sheet out as a grid, ``extent`` looks through it (XLSX, ODS) or through the grid
(XLS): a blank tail under the table is cut off an XLSX, and a value far outside the table is refused in
one line rather than laid out in gigabytes.

Library errors are not caught here: ``read_spreadsheet`` turns them into one line.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import zipfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import fastexcel
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import python_calamine as calamine

from hrimport.errors import InputFileError
from hrimport.gc_pause import paused_gc
from hrimport.listing import quoted
from hrimport.outcomes import SourceInfo
from hrimport.private_files import ScratchFiles
from hrimport.reader.extent import (
    MAX_SPARSE_CELLS,
    SheetExtent,
    check_blank_tail,
    check_extent,
    check_repeats,
    column_letters,
    ods_sheet_extents,
    trimmed_xlsx,
    xlsx_sheet_extent,
)
from hrimport.reader.grid import (
    ERROR_VALUE,
    FORMULA_NOT_CALCULATED,
    FORMULA_TO_RECALCULATE,
    HEADER_SCAN_ROWS,
    CellsRead,
    SourceTable,
    _checked_header_index,
    _find_header,
    _table_below_header,
    normalize_header,
)
from hrimport.reader.hidden_columns import NO_HIDDEN_COLUMNS, HiddenColumns
from hrimport.reader.hidden_rows import NO_HIDDEN_ROWS, HiddenRows
from hrimport.reader.merged_header import (
    NO_MERGES,
    SheetMerges,
    data_merges,
    merged_down,
    merges_of_ranges,
    rows_around,
    two_row_header,
)
from hrimport.reader.no_such_dates import (
    DATE_CELL_RULE,
    clock,
    mark_no_such_dates,
    show_dates_and_times,
    xls_date_time_cells,
    xlsx_date_styles,
)
from hrimport.reader.number_formats import (
    ERROR_MARK,
    NumberStyle,
    SheetNumber,
    ShownNumber,
    number_text,
    ods_sheet_numbers,
    xls_sheet_numbers,
    xlsx_number_styles,
)
from hrimport.reader.ods_times import DURATION_TEXT, ods_durations
from hrimport.reader.sheets import (
    Sheet,
    SheetChoice,
    choose_sheet,
    xlsx_shared_strings,
    xlsx_sheets,
    xlsx_workbook_settings,
)
from hrimport.reader.sniff import check_sheet_text, password_protected
from hrimport.reader.xls_book import check_xls, open_xls, xls_hidden_columns, xls_hidden_rows
from hrimport.reader.xlsx_cells import SheetScan, nine_decimals, scan_xlsx_sheet
from hrimport.reader.xlsx_prefixes import odd_parts, readable_xlsx

if TYPE_CHECKING:
    import xlrd

#: XLSX through fastexcel (the fast path); False reads them with python-calamine's objects, about twice as
#: slowly, as XLS and ODS are: the tests read every workbook both ways and compare every cell.
FAST_XLSX = True


def _cell_text(value: object) -> str:
    """A non-text calamine cell as the text a person sees in Excel."""
    kind = type(value)
    if kind is float:
        assert isinstance(value, float)
        return number_text(value)
    if kind is bool:
        return "TRUE" if value else "FALSE"
    if kind is int:
        return str(value)
    if kind is dt.datetime:
        assert isinstance(value, dt.datetime)
        # Stored date-times are day fractions: round off the float noise to whole seconds.
        value = (value + dt.timedelta(microseconds=500_000)).replace(microsecond=0)
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if kind is dt.date:
        assert isinstance(value, dt.date)
        return value.isoformat()
    if kind is dt.time:
        assert isinstance(value, dt.time)
        # HH:MM:SS, as an ODS or Excel time cell shows it: to the nearest second, as LibreOffice and Excel
        # round a time format's last unit (12:30:15.5 shows 12:30:16; 23:59:59.6 the next midnight, 00:00:00)
        return clock(_nearest_second_of_day(value))
    if value is None:
        return ""
    return str(value)


def _row_text(row: Sequence[object]) -> list[str]:
    return [c if c.__class__ is str else _cell_text(c) for c in row]


class _Grid(NamedTuple):
    """A sheet's cells from row 1 as text columns; ``first_column`` is the index of its first column;
    ``cells_read``: by column, the cells read in a way the report tells (date cells, number formats,
    formulas)."""

    frame: pd.DataFrame
    first_column: int
    sheet_names: list[str]
    cells_read: dict[int, list[CellsRead]]
    merges: SheetMerges = NO_MERGES  # the merged cells that may shape the header (``merged_header``)
    hidden: HiddenRows = NO_HIDDEN_ROWS  # the rows the sheet hides, by a filter or Hide (``hidden_rows``)
    hidden_columns: HiddenColumns = NO_HIDDEN_COLUMNS  # the columns the sheet hides (``hidden_columns``)


#: What decided how the cells ``CellsRead`` names were read, in the report's words.
AS_STORED_RULE = "number format {}: the number the cell stores is sent"
FORMULA_RULE = "a formula: the value it last calculated, saved with the file"
NOT_CALCULATED_RULE = "a formula saved without its result: nothing to send"
TO_RECALCULATE_RULE = "a formula of a workbook asking to be calculated again when opened: its saved value is no result"


class _Layout(NamedTuple):
    """The small parts of an XLSX archive: its sheets, the one to read, its cell styles whose number format
    is applied or told (``xlsx_number_styles``), its shared strings table, its date system, and whether it
    asks to be calculated again when opened (``xlsx_workbook_settings``: its formulas' saved values are then
    no results)."""

    sheets: list[Sheet]
    choice: SheetChoice
    styles: dict[int, NumberStyle]
    shared_strings: str | None
    date_system: int
    asks_recalculation: bool = False
    date_styles: dict[int, str] = {}  # noqa: RUF012 (a NamedTuple's default: never changed) what each date or time style shows


def _xlsx_layout(path: Path, sheet: str | int | None, source: Path | None = None) -> _Layout:
    """The layout of the workbook ``source`` (by default ``path``, the file messages name)."""
    with zipfile.ZipFile(source or path) as archive:
        sheets = xlsx_sheets(archive)
        date_system, asks_recalculation = xlsx_workbook_settings(archive)
        date_styles = xlsx_date_styles(archive)
        return _Layout(sheets, choose_sheet(path, sheets, sheet), xlsx_number_styles(archive),
                       xlsx_shared_strings(archive), date_system, asks_recalculation, date_styles)


def _fastexcel_grid(path: Path, source: Path, info: SourceInfo, layout: _Layout) -> _Grid:
    """The sheet's cells through fastexcel (python-calamine's engine, with the cells turned to Arrow
    strings in Rust): about half the time python-calamine's Python objects take on a 100k x 40 sheet.

    fastexcel's text loses what ``scan_xlsx_sheet`` finds in the sheet's XML, which a thread reads while
    fastexcel parses (it releases the GIL): numbers it rounds to nine decimals or shows without their
    zero-padded format are rewritten as Excel shows them, and its spelling of booleans, dates and times
    becomes the calamine path's everywhere except in the text cells that merely look like it.

    ``source`` is the file read: ``path`` itself, or a copy without the sheet's blank tail.
    """
    chosen = layout.sheets[layout.choice.index]
    background = ThreadPoolExecutor(max_workers=1)
    scanned = background.submit(
        lambda: scan_xlsx_sheet(str(source), chosen.part, layout.styles, lossy=True,
                                shared_strings=layout.shared_strings, formulas=True,
                                asks_recalculation=layout.asks_recalculation, date_styles=layout.date_styles,
                                date_system=layout.date_system)
        if chosen.part
        else SheetScan()
    )
    background.shutdown(wait=False)
    try:
        # header_row=None and skip_rows=0: every row from row 1, blank ones included, so that a frame
        # position is an Excel row number.
        table, first_column = fastexcel_table(path, source, chosen.name, skip_rows=0)
    finally:
        scan = scanned.result()  # waits for the thread, and raises what it raised
    frame, cells_read = fastexcel_text(table, first_column, scan)
    return _Grid(frame, first_column, [s.name for s in layout.sheets], cells_read)


def fastexcel_table(path: Path, source: Path | bytes, sheet: str | int, skip_rows: int | None
                    ) -> tuple[pa.RecordBatch, int]:
    """The sheet's cells as fastexcel's Arrow strings, and the index of their first column."""
    try:
        loaded = fastexcel.read_excel(source).load_sheet(sheet, header_row=None, skip_rows=skip_rows,
                                                         dtypes="string")
        return loaded.to_arrow(), min((c.absolute_index for c in loaded.available_columns()), default=0)
    except fastexcel.FastExcelError as exc:
        if "password" in str(exc).lower():
            raise password_protected(path) from None
        raise


def fastexcel_text(table: pa.RecordBatch, first_column: int, scan: SheetScan, offset: int = 0
                   ) -> tuple[pd.DataFrame, dict[int, list[CellsRead]]]:
    """fastexcel's cells (``table``, its first column ``first_column``) as the text Excel shows, by what
    ``scan`` found in the sheet's XML, and the cells read in a way the report tells, by column.
    ``offset``: the grid row (Excel row - 1) of the table's first row; the cells read are at grid rows."""
    columns = {j: _text_column(column) for j, column in enumerate(table.columns)}
    read_columns = dict(columns)
    numbers, shown = scan.numbers, scan.shown
    formulas, uncalculated, look_alike = scan.formulas, scan.uncalculated, scan.look_alike_text
    to_recalculate = scan.to_recalculate
    if offset:
        numbers = [dataclasses.replace(n, row=n.row - offset) for n in numbers]
        shown = [(row - offset, column, read, text, code) for row, column, read, text, code in shown]
        formulas = [(row - offset, column, formula) for row, column, formula in formulas]
        uncalculated = [(row - offset, column, formula) for row, column, formula in uncalculated]
        to_recalculate = [(row - offset, column, formula) for row, column, formula in to_recalculate]
        look_alike = {(row - offset, column) for row, column in look_alike}
    cells_read = _rewrite_numbers(columns, numbers, first_column, nine_decimals)
    _add_as_stored(cells_read, columns, shown, first_column)
    _add_formulas(cells_read, formulas, first_column)
    _add_formulas(cells_read, uncalculated, first_column, FORMULA_NOT_CALCULATED, NOT_CALCULATED_RULE)
    _add_formulas(cells_read, to_recalculate, first_column, FORMULA_TO_RECALCULATE, TO_RECALCULATE_RULE)
    text_rows: dict[int, list[int]] = {}
    for row, column in look_alike:
        text_rows.setdefault(column - first_column, []).append(row)
    texts = columns
    rendering = _rendering_columns(table)
    if rendering:
        texts = {}
        for j, values in columns.items():
            if j not in rendering and values is read_columns[j]:  # nothing to rewrite: as read
                texts[j] = values
                continue
            texts[j], dates = _fastexcel_text(values, text_rows.get(j, []))
            if len(dates):
                cells_read.setdefault(j, []).append(CellsRead("excel-date-cell", DATE_CELL_RULE, dates))
    if scan.dates_and_times:
        texts = dict(texts)
        show_dates_and_times(texts, cells_read, [(row - offset, column, shown)
                                                 for row, column, shown in scan.dates_and_times], first_column)
    if scan.no_such_dates:
        texts = dict(texts)
        mark_no_such_dates(texts, cells_read, [(row - offset, column, stored, shown)
                                               for row, column, stored, shown in scan.no_such_dates], first_column)
    if offset:
        cells_read = {j: [dataclasses.replace(read, positions=read.positions + offset) for read in reads]
                      for j, reads in cells_read.items()}
    return pd.DataFrame(texts), cells_read


def _text_column(column: pa.Array) -> pd.Series:
    """A column of fastexcel's cells as text, its empty cells "" (filled by Arrow: a fifth of pandas' cost)."""
    if column.type != pa.string():
        return pd.Series(column, dtype="str").fillna("")
    return pd.Series(pc.fill_null(column, "") if column.null_count else column, dtype="str")


_BOOLEAN_TEXTS = pa.array(["true", "false"])


def _rendering_columns(table: pa.RecordBatch) -> set[int]:
    """The columns where a cell holds a text fastexcel writes for a date, a time or a boolean (what
    ``_fastexcel_text`` rewrites): one look at all the columns at once first, so that a sheet of 10,000
    columns is not looked at 10,000 times for nothing, then, in Arrow, at each column."""
    columns = [column.cast(pa.string()) for column in table.columns]
    cells = pa.chunked_array(columns, type=pa.string())
    if not any(pc.any(hits).as_py() for hits in _renderings(cells)):
        return set()
    return {j for j, column in enumerate(columns) if any(pc.any(hits).as_py() for hits in _renderings(column))}


def _renderings(cells: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | pa.ChunkedArray, ...]:
    return (pc.ends_with(cells, " 00:00:00"), pc.starts_with(cells, "1899-12-3"),
            pc.is_in(cells, value_set=_BOOLEAN_TEXTS))


def _rewrite_numbers(
    columns: dict[int, pd.Series], found: list[SheetNumber], first_column: int, rendered: Callable[[float], str]
) -> dict[int, list[CellsRead]]:
    """Put Excel's text in the cells ``found`` names, where the library still holds its own rendering of
    the stored number (a cell it read as a date or text is left alone). Returns, by column, the cells
    rewritten through a number format, and the error values."""
    by_column: dict[int, list[SheetNumber]] = {}
    for number in found:
        by_column.setdefault(number.column - first_column, []).append(number)
    formatted: dict[int, list[CellsRead]] = {}
    for j, numbers in by_column.items():
        if j not in columns:
            continue
        values = columns[j].to_numpy(dtype=object)
        changed = False
        by_format: dict[str, list[SheetNumber]] = {}
        errors: list[SheetNumber] = []
        for number in numbers:
            if number.row < len(values) and values[number.row] == _library_text(number.stored, rendered):
                values[number.row] = number.text
                changed = True
                if number.format:
                    by_format.setdefault(number.format, []).append(number)
                elif number.stored.startswith(ERROR_MARK):
                    errors.append(number)
        if changed:
            columns[j] = pd.Series(pa.array(values, type=pa.string()), dtype="str")
        for code, cells in by_format.items():
            cells.sort(key=lambda n: n.row)
            formatted.setdefault(j, []).append(CellsRead(
                "number-format", f"number format {code}", np.array([n.row for n in cells], dtype=np.int64),
                tuple(_stored_text(n.stored) for n in cells)))
        if errors:  # the mapper flags them where they would be sent (ERROR_VALUE)
            errors.sort(key=lambda n: n.row)
            formatted.setdefault(j, []).append(CellsRead(
                ERROR_VALUE, "an error value, not a value", np.array([n.row for n in errors], dtype=np.int64)))
    return formatted


def _add_as_stored(cells_read: dict[int, list[CellsRead]], columns: dict[int, pd.Series],
                   shown: list[ShownNumber], first_column: int) -> None:
    """The numbers read as stored where a format shows them otherwise (``SheetScan.shown``), by column and
    format, where the cell reads as that number once ``_rewrite_numbers`` has written Excel's General text
    (a cell the library read as a date or text is left out): compared a column at a time, in C."""
    by_column: dict[int, list[ShownNumber]] = {}
    for cell in shown:
        by_column.setdefault(cell[1] - first_column, []).append(cell)
    for j, cells in by_column.items():
        if j not in columns:
            continue
        cells.sort()
        values = columns[j].to_numpy(dtype=object)
        rows = np.array([row for row, *_ in cells], dtype=np.int64)
        inside = rows < len(values)
        read = np.array([text for _, _, text, _, _ in cells], dtype=object)
        kept = np.flatnonzero(inside)
        kept = kept[values[rows[kept]] == read[kept]]
        by_code: dict[str, list[int]] = {}
        for k in kept.tolist():
            by_code.setdefault(cells[k][4], []).append(k)
        for code, at in by_code.items():
            cells_read.setdefault(j, []).append(CellsRead(
                "number-as-stored", AS_STORED_RULE.format(code), rows[at], tuple(cells[k][3] for k in at)))


def _stored_text(stored: str) -> str:
    """The number a cell stores, as a person writes it (XLS gives ``123.0``)."""
    return stored if stored.isdigit() else number_text(float(stored))


def _add_formulas(
    cells_read: dict[int, list[CellsRead]], formulas: list[tuple[int, int, str]], first_column: int,
    kind: str = "formula-value", rule: str = FORMULA_RULE,
) -> None:
    """The cells holding a formula (``SheetScan.formulas``, or ``uncalculated`` as ``FORMULA_NOT_CALCULATED``,
    ``to_recalculate`` as ``FORMULA_TO_RECALCULATE``), by column."""
    by_column: dict[int, list[tuple[int, str]]] = {}
    for row, column, formula in formulas:
        by_column.setdefault(column - first_column, []).append((row, formula))
    for j, cells in by_column.items():
        cells.sort()
        rows = np.array([row for row, _ in cells], dtype=np.int64)
        held = tuple(formula for _, formula in cells)
        cells_read.setdefault(j, []).append(CellsRead(kind, rule, rows, held))


def _library_text(stored: str, rendered: Callable[[float], str]) -> str:
    """What the reading library wrote for a stored number; an id's digits without the float round trip; an
    error value as an empty cell."""
    if stored.startswith(ERROR_MARK):
        return ""
    if stored.isdigit() and len(stored) < 16:
        return stored.lstrip("0") or "0"
    return rendered(float(stored))


def _nearest_second_of_day(value: dt.time | dt.datetime) -> int:
    """The second of the day ``value`` shows rounded to the nearest, as LibreOffice and Excel round a time
    format's last unit: 12:30:15.5 is 12:30:16, 23:59:59.6 the next midnight (0)."""
    return (value.hour * 3600 + value.minute * 60 + value.second + (value.microsecond >= 500_000)) % 86400


def _whole_seconds(text: str) -> str:
    """fastexcel's text of a date-time with a fraction of a second, to the nearest second: a time of day of
    Excel's day 0 (``1899-12-31 23:59:59.600``) stays on it, as the midnight it shows (``00:00:00``)."""
    moment = dt.datetime.fromisoformat(text)
    if text.startswith("1899-12-3"):
        return f"{text[:10]} {clock(_nearest_second_of_day(moment))}"
    return (moment + dt.timedelta(microseconds=500_000)).replace(microsecond=0).isoformat(sep=" ")


def _fastexcel_text(values: pd.Series, text_rows: list[int]) -> tuple[pd.Series, np.ndarray]:
    """fastexcel's text for dates, times and booleans rewritten as python-calamine's path writes them,
    except in ``text_rows``: text cells that only look like such a rendering keep their text. Also returns
    the rows of the date cells (dates at midnight: a date-time with a time reads as text does).

    Patterns are given as strings so that pyarrow evaluates them; a compiled pattern would make pandas
    loop in Python.
    """
    read = values
    dates = np.zeros(0, dtype=np.int64)
    # a time with a fraction of a second (12:30:15.500): to the nearest second, as python-calamine's path reads it
    fractions = values.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+")
    if fractions.any():
        at = np.flatnonzero(fractions.to_numpy(dtype=bool))
        values = values.copy()
        values.iloc[at] = [_whole_seconds(text) for text in values.iloc[at].tolist()]
    # a time-only cell first: day 0 of Excel's calendar, midnight included (0 in a date cell, which Excel
    # shows as 00/01/1900, is such a cell to python-calamine too: never the date 1899-12-31)
    if values.str.startswith("1899-12-3").any():
        values = values.where(~values.str.fullmatch(r"1899-12-3[01] \d\d:\d\d:\d\d"), values.str.slice(11))
    if values.str.endswith(" 00:00:00").any():  # a date cell: the ISO date alone
        midnight = values.str.fullmatch(r"\d{4}-\d\d-\d\d 00:00:00")
        values = values.where(~midnight, values.str.slice(0, 10))
        dates = np.flatnonzero(midnight.to_numpy())  # sorted, each row once
        if text_rows:
            dates = np.setdiff1d(dates, text_rows)
    if values.isin(("true", "false")).any():
        values = values.replace({"true": "TRUE", "false": "FALSE"})  # Excel's spelling of booleans
    if text_rows and values is not read:
        rows = [r for r in text_rows if r < len(values)]
        values = values.copy()
        values.iloc[rows] = read.iloc[rows].to_numpy()
    return values, dates


_SHEET_KINDS = {"ChartSheet": "chart", "DialogSheet": "dialog", "MacroSheet": "macro", "Vba": "macro"}


def _calamine_sheets(workbook: calamine.CalamineWorkbook) -> list[Sheet]:
    return [
        Sheet(
            name=meta.name,
            visible=str(meta.visible).rsplit(".", 1)[-1] == "Visible",
            kind=_SHEET_KINDS.get(str(meta.typ).rsplit(".", 1)[-1], "worksheet"),
        )
        for meta in workbook.sheets_metadata
    ]


def _calamine_grid(path: Path, source: Path, info: SourceInfo, sheet: str | int | None,
                   layout: _Layout | None, merge_rows: int) -> _Grid:
    """The sheet's cells through python-calamine's Python objects: the path for XLS and ODS (exact
    numbers, ODS times and dates as they show), and for XLSX when fastexcel is not installed
    (``layout`` given; ``source`` may then be a copy without the sheet's blank tail)."""
    if info.format != "xls":
        return _calamine_cells(path, source, info, sheet, layout, None, merge_rows)
    # an .xls is also read by xlrd, for what calamine does not say (damage, formats, dates): one book for the
    # read, with its formatting, where each look opened the file again and two read the sheet again (a
    # 60,000-row .xls: four openings and two readings of its sheet, an eighth of its CPU time)
    book = open_xls(path, formatting_info=True, on_demand=True)
    try:
        info.date_system = 1904 if book.datemode else 1900
        return _calamine_cells(path, source, info, sheet, layout, book, merge_rows)
    finally:
        book.release_resources()


def _calamine_cells(path: Path, source: Path, info: SourceInfo, sheet: str | int | None, layout: _Layout | None,
                    book: xlrd.Book | None, merge_rows: int) -> _Grid:
    """``_calamine_grid`` with the xlrd ``book`` of an .xls (None for the other formats). The merges of an
    .xls are python-calamine's, of an .ods the extent's (``merge_rows``: see ``xlsx_sheet_extent``); an
    .xlsx's are found by ``_bounded_xlsx``."""
    found: list[SheetNumber] = []
    extents: dict[str, SheetExtent] = {}
    hidden, hidden_columns = NO_HIDDEN_ROWS, NO_HIDDEN_COLUMNS
    if info.format == "ods":
        extents = ods_sheet_extents(path, merge_rows)
        for name, extent in extents.items():  # calamine lays out every sheet on opening
            check_extent(path, name, extent)
            check_blank_tail(path, name, extent)
            check_repeats(path, name, extent)
    if book is not None:
        check_xls(path, book)  # a damaged .xls made calamine panic or abort (``xls_book``)
    try:
        workbook = calamine.CalamineWorkbook.from_path(str(source))
    except calamine.PasswordError:
        raise password_protected(path) from None
    with workbook:
        if layout is not None:
            sheets, choice, styles = layout.sheets, layout.choice, layout.styles
        else:
            sheets = _calamine_sheets(workbook)
            choice, styles = choose_sheet(path, sheets, sheet), {}
        chosen = sheets[choice.index]
        info.sheet, info.sheet_note = chosen.name, choice.note
        try:
            cells = workbook.get_sheet_by_name(chosen.name)
            # skip_empty_area=False keeps A1 as the first cell, so list positions are Excel row numbers.
            rows = cells.to_python(skip_empty_area=False,
                                   nrows=_xls_rows_to_read(path, chosen.name, cells) if info.format == "xls" else None)
            merges = merges_of_ranges(cells.merged_cell_ranges, merge_rows) if info.format == "xls" else NO_MERGES
        except calamine.PasswordError:
            raise password_protected(path) from None
    formulas: list[tuple[int, int, str]] = []
    uncalculated: list[tuple[int, int, str]] = []
    to_recalculate: list[tuple[int, int, str]] = []
    shown: list[ShownNumber] = []
    no_such_dates: list[tuple[int, int, str, str]] = []
    dates_and_times: list[tuple[int, int, str]] = []
    if layout is not None and chosen.part:
        scan = scan_xlsx_sheet(str(source), chosen.part, styles, lossy=False, formulas=True,
                               asks_recalculation=layout.asks_recalculation, date_styles=layout.date_styles,
                               date_system=layout.date_system)
        found, formulas, uncalculated, shown = scan.numbers, scan.formulas, scan.uncalculated, scan.shown
        to_recalculate, no_such_dates, dates_and_times = scan.to_recalculate, scan.no_such_dates, scan.dates_and_times
    elif info.format == "ods":
        found, shown = ods_sheet_numbers(str(path), chosen.name)
        extent = extents.get(chosen.name, SheetExtent())
        found.extend(SheetNumber(row, column, ERROR_MARK, text) for row, column, text in extent.errors)
        uncalculated = extent.uncalculated
    elif book is not None:
        found, shown = xls_sheet_numbers(book, chosen.name)
        hidden, hidden_columns = xls_hidden_rows(book, chosen.name), xls_hidden_columns(book, chosen.name)
    columns = list(zip(*rows))
    del rows
    data = {}
    dates: dict[int, np.ndarray] = {}
    for j in range(len(columns)):
        # pyarrow builds the string column from the list in C: three times faster than pandas' own.
        data[j] = pd.Series(pa.array(_row_text(columns[j]), type=pa.string()), dtype="str")
        dates[j] = _date_cells(columns[j], data[j])
        columns[j] = ()  # free each column once converted
    if info.format == "ods":  # durations python-calamine writes in ISO 8601 (PT36H30M00S, -PT1H): few, if any
        durations = [(i, j) for j, values in data.items() if values.str.startswith(("P", "-P")).any()
                     for i in np.flatnonzero(values.str.fullmatch(DURATION_TEXT).to_numpy(dtype=bool)).tolist()]
        dates_and_times = ods_durations(str(path), chosen.name, durations)
    cells_read = _rewrite_numbers(data, found, 0, number_text)
    _add_as_stored(cells_read, data, shown, 0)
    _add_formulas(cells_read, formulas, 0)
    _add_formulas(cells_read, uncalculated, 0, FORMULA_NOT_CALCULATED, NOT_CALCULATED_RULE)
    _add_formulas(cells_read, to_recalculate, 0, FORMULA_TO_RECALCULATE, TO_RECALCULATE_RULE)
    for j, rows_of_dates in dates.items():
        if len(rows_of_dates):
            cells_read.setdefault(j, []).append(CellsRead("excel-date-cell", DATE_CELL_RULE, rows_of_dates))
    if book is not None:
        no_such_dates, dates_and_times = xls_date_time_cells(book, chosen.name, data)
    show_dates_and_times(data, cells_read, dates_and_times)
    mark_no_such_dates(data, cells_read, no_such_dates)
    if info.format == "ods":
        merges = extents.get(chosen.name, SheetExtent()).merges
        hidden = extents.get(chosen.name, SheetExtent()).hidden
        hidden_columns = extents.get(chosen.name, SheetExtent()).hidden_columns
    return _Grid(pd.DataFrame(data), 0, [s.name for s in sheets], cells_read, merges, hidden, hidden_columns)


def _date_cells(cells: Sequence[object], text: pd.Series) -> np.ndarray:
    """The rows of the date cells (dates at midnight, as on fastexcel's path) among a column's cells:
    only the cells whose text reads as a date are looked at."""
    if not text.str.len().eq(10).any():
        return np.zeros(0, dtype=np.int64)
    candidates = np.flatnonzero(text.str.fullmatch(r"\d{4}-\d\d-\d\d").to_numpy())
    kinds = (dt.date, dt.datetime)
    return np.array([i for i in candidates.tolist() if cells[i].__class__ in kinds], dtype=np.int64)


def _xls_rows_to_read(path: Path, name: str, cells: calamine.CalamineSheet) -> int | None:
    """How many rows of a big .xls grid to turn into Python objects: up to the last row holding a value that
    is not blank; a grid mostly empty (a stray value far from the table) is refused. The binary format is
    not looked through before calamine lays it out, as XLSX and ODS are: it bounds the grid at 65,536 x
    256 cells, but as Python objects those would take gigabytes."""
    if cells.height * cells.width <= MAX_SPARSE_CELLS:
        return None
    extent = SheetExtent()
    for number, row in enumerate(cells.iter_rows(), start=1):
        shown = [j for j, value in enumerate(row, start=1) if value is not None and str(value).strip()]
        if shown:
            extent.last_row, extent.last_cell = number, f"{column_letters(shown[-1])}{number}"
            extent.values += len(shown)
            if shown[-1] > extent.last_column:
                extent.last_column, extent.far_cell = shown[-1], f"{column_letters(shown[-1])}{number}"
    check_extent(path, name, extent)
    return extent.last_row


def _readable_xlsx(path: Path, scratch: ExitStack) -> Path:
    """The file to read for an XLSX: ``path``, or a copy whose parts spell SpreadsheetML's elements without a
    namespace prefix and quote their attributes as Excel does (``xlsx_prefixes``), so that the scans of its XML
    see every cell, hidden row and column, and merge."""
    parts = odd_parts(path)
    if not parts:
        return path
    # the copy holds HR data: a file no one else can read, not left behind however the process ends
    return readable_xlsx(path, parts, scratch.enter_context(ScratchFiles([path.name])).paths[0])


def _bounded_xlsx(path: Path, source: Path, layout: _Layout, scratch: ExitStack, merge_rows: int
                  ) -> tuple[Path, SheetExtent]:
    """The file to read for the XLSX ``source`` (``path`` or ``_readable_xlsx``'s copy of it): ``source``, or
    a copy whose sheet ends with its last row holding a value that is not blank. A sheet mostly empty is
    refused (see ``extent``). Also the sheet's extent, whose pass collects its merged cells and hidden rows."""
    chosen = layout.sheets[layout.choice.index]
    if not chosen.part:
        return source, SheetExtent()
    try:
        check_sheet_text(path, source, chosen.part, chosen.name)
        extent = xlsx_sheet_extent(source, chosen.part, layout.shared_strings, merge_rows)
    except KeyError:  # the workbook lists a sheet its archive does not hold: the library says so
        return source, SheetExtent()
    check_extent(path, chosen.name, extent)
    if not extent.has_blank_tail or extent.tail_start is None or extent.rows_end is None:
        return source, extent
    # the copy holds HR data: a file no one else can read, not left behind however the process ends
    copy = scratch.enter_context(ScratchFiles([path.name])).paths[0]
    return trimmed_xlsx(source, chosen.part, extent, copy), extent


def _build_from_workbook(
    path: Path, info: SourceInfo, sheet: str | int | None, header_row: int | None, expected: Iterable[str]
) -> SourceTable:
    # Millions of cell objects trigger the cyclic garbage collector over and over for nothing (none of
    # them form cycles): pausing it saves seconds on a 100k x 40 sheet.
    merge_rows = max(HEADER_SCAN_ROWS, header_row or 0) + 1  # the merges that may shape a header found
    with paused_gc(), ExitStack() as scratch:
        if info.format in ("xlsx", "xlsm"):
            readable = _readable_xlsx(path, scratch)
            layout = _xlsx_layout(path, sheet, readable)
            chosen = layout.sheets[layout.choice.index]
            info.sheet, info.sheet_note, info.date_system = chosen.name, layout.choice.note, layout.date_system
            source, extent = _bounded_xlsx(path, readable, layout, scratch, merge_rows)
            if FAST_XLSX:
                read = _fastexcel_grid(path, source, info, layout)
            else:
                read = _calamine_grid(path, source, info, sheet, layout, merge_rows)
            read = read._replace(merges=extent.merges, hidden=extent.hidden, hidden_columns=extent.hidden_columns)
        else:
            read = _calamine_grid(path, path, info, sheet, None, merge_rows)
    grid, first_column, names, cells_read = read.frame, read.first_column, read.sheet_names, read.cells_read
    info.sheets = names
    top = grid.iloc[:HEADER_SCAN_ROWS].to_numpy().tolist()
    index = _checked_header_index(path, header_row, top, len(grid))
    if index is None:
        index = _find_header(top, {normalize_header(h) for h in expected}, merged_down(read.merges))
    if index is None and len(names) > 1:  # e.g. a chart LibreOffice saved as a sheet holding only the chart
        listed = quoted(names, quote=lambda n: f"'{n}'")
        raise InputFileError(
            f"{path}: sheet '{info.sheet}' has no cells; its sheets are: {listed}; "
            "name the one to read with the 'sheet' setting"
        )
    if index is None:
        raise InputFileError(f"{path} is empty (sheet '{info.sheet}' has no cells); export the data again")
    two_rows = two_row_header(path, info.sheet, rows_around(lambda a, b: grid.iloc[a:b].to_numpy().tolist(), index),
                              index, read.merges, first_column)
    if two_rows is not None:
        index = two_rows.top
    preamble = grid.iloc[:index].to_numpy().tolist()
    return _table_below_header(path, info, grid.iloc[index:], index, first_column, preamble,
                               cells_read=cells_read, two_rows=two_rows.names if two_rows else None,
                               merges=data_merges(path, info.sheet, read.merges), hidden=read.hidden,
                               hidden_columns=read.hidden_columns)

