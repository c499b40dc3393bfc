"""Excel and OpenDocument sheets (XLSX, XLSM, XLS, ODS) as columns of text, via fastexcel or python-calamine.

Workbook cells are typed (floats, dates, booleans); they become the text a person sees in Excel here,
so the header and table code only ever handles strings. fastexcel is the fast path; python-calamine
alone gives the same text, about twice as slowly, when fastexcel is not installed.
"""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import python_calamine as calamine

try:  # the fast path for workbooks; python-calamine alone does the same, about twice as slowly
    import fastexcel
except ImportError:  # pragma: no cover - depends on the environment
    fastexcel = None  # type: ignore[assignment]

from pipeline.errors import InputFileError
from pipeline.outcomes import SourceInfo
from pipeline.reader.grid import (
    HEADER_SCAN_ROWS,
    SourceTable,
    _checked_header_index,
    _find_header,
    _table_below_header,
    normalize_header,
)
from pipeline.reader.sniff import password_protected


def _cell_text(value: object) -> str:
    """A non-text calamine cell as the text a person sees in Excel."""
    kind = type(value)
    if kind is float:
        assert isinstance(value, float)
        # Integers come back as floats (123.0); ids of up to 16 digits are written in full, never 1.2E+10.
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return f"{value:.15g}"  # Excel shows at most 15 significant digits: 0.1 + 0.2 reads as 0.3
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
    if kind is dt.date or kind is dt.time:
        return value.isoformat()  # type: ignore[attr-defined]
    if value is None:
        return ""
    return str(value)


def _row_text(row: Sequence[object]) -> list[str]:
    return [c if c.__class__ is str else _cell_text(c) for c in row]


def _pick_sheet(path: Path, names: list[str], sheet: str | int | None) -> int:
    """The 0-based position of the wanted sheet, by name (exact, then ignoring case) or position."""
    listed = ", ".join(f"'{n}'" for n in names)
    if not names:
        raise InputFileError(f"{path} is empty (it has no sheets); export the data again")
    if sheet is None:
        return 0
    if isinstance(sheet, int):
        if not 0 <= sheet < len(names):
            raise InputFileError(
                f"{path} has no sheet number {sheet} (counting from 0); its sheets are: {listed}"
            )
        return sheet
    matches = [i for i, n in enumerate(names) if n == sheet] or [
        i for i, n in enumerate(names) if normalize_header(n) == normalize_header(sheet)
    ]
    if not matches:
        raise InputFileError(f"{path} has no sheet '{sheet}'; its sheets are: {listed}")
    return matches[0]


def _damaged(path: Path, exc: Exception) -> InputFileError:
    detail = " ".join(str(exc).split("Context:")[0].split())[:120] or type(exc).__name__
    return InputFileError(f"{path} is damaged or incomplete ({detail}); download or export it again")


def _fastexcel_grid(path: Path, sheet: str | int | None) -> tuple[str, pd.DataFrame, int]:
    """The sheet's name, its cells from row 1 as text columns, and the index of its first column.

    fastexcel (python-calamine's engine, with the cells turned to Arrow strings in Rust) reads a
    100k x 40 sheet in about half the time python-calamine's Python objects take.
    """
    assert fastexcel is not None
    try:
        reader = fastexcel.read_excel(path)
        index = _pick_sheet(path, list(reader.sheet_names), sheet)
        # header_row=None and skip_rows=0: every row from row 1, blank ones included, so that a frame
        # position is an Excel row number.
        loaded = reader.load_sheet(index, header_row=None, skip_rows=0, dtypes="string")
        table = loaded.to_arrow()
        first_column = min((c.absolute_index for c in loaded.available_columns()), default=0)
    except fastexcel.FastExcelError as exc:
        if "password" in str(exc).lower():
            raise password_protected(path) from None
        raise _damaged(path, exc) from None
    columns = {}
    for j, column in enumerate(table.columns):
        values = pd.Series(column, dtype="str").fillna("")
        columns[j] = _fastexcel_text(values)
    return reader.sheet_names[index], pd.DataFrame(columns), first_column


def _fastexcel_text(values: pd.Series) -> pd.Series:
    """fastexcel's text for dates, times and booleans rewritten as python-calamine's path writes them.

    Patterns are given as strings so that pyarrow evaluates them; a compiled pattern would make pandas
    loop in Python.
    """
    if values.str.endswith(" 00:00:00").any():  # a date cell: the ISO date alone
        values = values.where(~values.str.fullmatch(r"\d{4}-\d\d-\d\d 00:00:00"), values.str.slice(0, 10))
    if values.str.startswith("1899-12-3").any():  # a time-only cell: day 0 of Excel's calendar
        values = values.where(~values.str.fullmatch(r"1899-12-3[01] \d\d:\d\d:\d\d"), values.str.slice(11))
    if values.isin(("true", "false")).any():
        values = values.replace({"true": "TRUE", "false": "FALSE"})  # Excel's spelling of booleans
    return values


def _calamine_grid(path: Path, sheet: str | int | None) -> tuple[str, pd.DataFrame, int]:
    """Like ``_fastexcel_grid``, through python-calamine's Python objects (when fastexcel is missing)."""
    try:
        workbook = calamine.CalamineWorkbook.from_path(str(path))
    except calamine.PasswordError:
        raise password_protected(path) from None
    except (calamine.CalamineError, OSError, ValueError) as exc:
        raise _damaged(path, exc) from None
    with workbook:
        index = _pick_sheet(path, workbook.sheet_names, sheet)
        try:
            # skip_empty_area=False keeps A1 as the first cell, so list positions are Excel row numbers.
            rows = workbook.get_sheet_by_index(index).to_python(skip_empty_area=False)
        except calamine.PasswordError:
            raise password_protected(path) from None
        except calamine.CalamineError as exc:
            raise _damaged(path, exc) from None
        name = workbook.sheet_names[index]
    columns = list(zip(*rows))
    del rows
    data = {}
    for j in range(len(columns)):
        # pyarrow builds the string column from the list in C: three times faster than pandas' own.
        data[j] = pd.Series(pa.array(_row_text(columns[j]), type=pa.string()), dtype="str")
        columns[j] = ()  # free each column once converted
    return name, pd.DataFrame(data), 0


def _build_from_workbook(
    path: Path, info: SourceInfo, sheet: str | int | None, header_row: int | None, expected: Iterable[str]
) -> SourceTable:
    # Millions of cell objects trigger the cyclic garbage collector over and over for nothing (none of
    # them form cycles): pausing it saves seconds on a 100k x 40 sheet.
    collecting = gc.isenabled()
    gc.disable()
    try:
        load = _fastexcel_grid if fastexcel is not None else _calamine_grid
        info.sheet, grid, first_column = load(path, sheet)
    finally:
        if collecting:
            gc.enable()
    top = grid.iloc[:HEADER_SCAN_ROWS].to_numpy().tolist()
    index = _checked_header_index(path, header_row, top, len(grid))
    if index is None:
        index = _find_header(top, {normalize_header(h) for h in expected})
    if index is None:
        raise InputFileError(f"{path} is empty (sheet '{info.sheet}' has no cells); export the data again")
    preamble = grid.iloc[:index].to_numpy().tolist()
    return _table_below_header(path, info, grid.iloc[index:], index, first_column, preamble)
