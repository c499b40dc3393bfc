"""Read an HRIS export (CSV, TSV, XLSX, XLSM, XLS, ODS) into a table of text cells.

``read_spreadsheet`` is the reader stage (issue 3, "Reader"): every cell comes back as text exactly as a
person reads it in Excel (leading zeros kept, ``123`` not ``123.0``, date cells as ISO dates), the header
row is found below report titles, fully blank rows are dropped, and every data row keeps the row number a
person sees in Excel. A file that cannot be read raises ``InputFileError`` with one line that names the
file and says how to fix it; a file with a header and nothing under it raises ``NoDataRowsError``.

Example::

    table = read_spreadsheet("staff.xlsx", expected_headers=["Employee ID", "Email"])
    table.frame[table.column("employee id")]   # every cell a str
    table.row_numbers[0]                       # e.g. 5 when titles and the header fill rows 1-4
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import gc
import hashlib
import io
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import charset_normalizer
import numpy as np
import pandas as pd
import pyarrow as pa
import python_calamine as calamine

try:  # the fast path for workbooks; python-calamine alone does the same, about twice as slowly
    import fastexcel
except ImportError:  # pragma: no cover - depends on the environment
    fastexcel = None  # type: ignore[assignment]

from pipeline.errors import InputFileError
from pipeline.outcomes import SourceInfo

__all__ = ["NoDataRowsError", "SourceTable", "normalize_header", "read_spreadsheet"]

#: File name extension -> format reported in ``SourceInfo.format`` (".txt" is read as delimited text).
FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "csv",
    ".xlsx": "xlsx",
    ".xlsm": "xlsm",
    ".xls": "xls",
    ".ods": "ods",
}
_TEXT_FORMATS = {"csv", "tsv"}
_UTF8 = {"utf-8", "utf8", "utf-8-sig", "utf8-sig"}
#: How many rows at the top of a sheet may hold titles before the header.
HEADER_SCAN_ROWS = 30
#: Bytes of a text file handed to charset-normalizer (it is slow on whole files and needs no more).
ENCODING_SAMPLE = 64 * 1024
DELIMITERS = (",", ";", "\t", "|")

_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted OOXML workbook is an OLE2 compound file holding these streams (MS-OFFCRYPTO 2.3.4.4).
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
_CHINESE_ENCODINGS = {"gb2312", "gbk", "gb18030", "hz", "cp936"}
_CJK_ENCODINGS = _CHINESE_ENCODINGS | {
    "cp949",
    "euc_kr",
    "johab",
    "shift_jis",
    "cp932",
    "euc_jp",
    "iso2022_jp",
}
_NON_WESTERN_SINGLE_BYTE = {"cp1251", "koi8_r", "koi8_u", "iso8859_5", "mac_cyrillic", "cp1253", "iso8859_7"}
_HAS_LETTER = re.compile(r"[^\W\d_]")
_LOOKS_NUMERIC_OR_DATE = re.compile(r"^[\d\s.,:/\-+%年月日]+$")


class NoDataRowsError(InputFileError):
    """The file has a header row but no data rows under it."""


@dataclass
class SourceTable:
    """A sheet read as text: its facts, one ``str`` column per header, and each row's Excel row number."""

    info: SourceInfo
    frame: pd.DataFrame
    row_numbers: list[int]
    _by_key: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def column(self, wanted: str) -> str | None:
        """The frame column whose header matches ``wanted`` ignoring case and spaces, or None."""
        if not self._by_key:
            self._by_key = {normalize_header(str(c)): str(c) for c in self.frame.columns}
        return self._by_key.get(normalize_header(wanted))


def normalize_header(text: str) -> str:
    """The key headers are matched on: case-folded, trimmed, inner runs of spaces collapsed to one."""
    return " ".join(text.split()).casefold()


def _display_header(text: str) -> str:
    return " ".join(text.split())


def read_spreadsheet(
    path: str | Path,
    *,
    sheet: str | int | None = None,
    header_row: int | None = None,
    expected_headers: Iterable[str] = (),
    encoding: str | None = None,
    delimiter: str | None = None,
) -> SourceTable:
    """Read one sheet of a spreadsheet, or a delimited text file, as text cells.

    ``sheet`` is a name or a 0-based position (first sheet by default; ignored for CSV/TSV).
    ``header_row`` is the header's Excel row number; without it the header is the row among the first
    30 holding most of ``expected_headers``, else the first row that looks like a header.
    ``encoding`` and ``delimiter`` override detection for CSV/TSV.
    """
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"{path}: file not found; check the path and the file name")
    if path.is_dir():
        raise InputFileError(f"{path} is a folder, not a file; give the path of the spreadsheet itself")
    suffix = path.suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise InputFileError(
            f"{path}: unsupported file type '{suffix or path.name}'; save it as "
            ".csv, .tsv, .txt, .xlsx, .xlsm, .xls or .ods"
        )
    data = path.read_bytes()
    if not data or data.isspace():  # isspace stops at the first visible byte: no copy of a big file
        raise InputFileError(f"{path} is empty; export the data again")
    info = SourceInfo(
        path=str(path),
        name=path.name,
        format=fmt,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    _check_content(path, fmt, data)
    if fmt in _TEXT_FORMATS:
        grid = _TextGrid.load(path, fmt, data, encoding, delimiter)
        del data  # the decoded copy is all that is needed from here on
        info.encoding, info.delimiter = grid.encoding, grid.delimiter
        if fmt == "csv" and grid.delimiter == "\t":
            info.format = "tsv"
        return _build_from_text(path, info, grid, header_row, expected_headers)
    del data
    return _build_from_workbook(path, info, sheet, header_row, expected_headers)


# --- what the file really is ---------------------------------------------------------------------------


def _check_content(path: Path, fmt: str, data: bytes) -> None:
    """Raise when the bytes are not the format the extension says, or the workbook is encrypted."""
    head = data[:8]
    if head.startswith(_OLE2_MAGIC) and data.find(_ENCRYPTED_STREAM) >= 0:
        raise InputFileError(
            f"{path} is password-protected; remove the password in Excel "
            "(File > Info > Protect Workbook > Encrypt with Password) and save it again"
        )
    actual = _sniff_kind(data)
    wanted = {"csv": "text", "tsv": "text", "xls": "ole2"}.get(fmt, "zip")
    if actual == wanted:
        if actual == "zip":
            _check_zip_members(path, fmt, data)
        return
    described = {
        "zip": ("an XLSX workbook", "rename it to .xlsx"),
        "ole2": ("an Excel 97-2003 workbook", "rename it to .xls"),
        "html": ("a web page (HTML)", "open it in Excel and save it as .xlsx, or export CSV from the system"),
        "xml": ("an XML Spreadsheet 2003 file", "open it in Excel and save it as .xlsx"),
        "xml-other": ("an XML file", "export the data as CSV or Excel instead"),
        "text": ("a text (CSV) file", "rename it to .csv"),
        "pdf": ("a PDF document", "export the data as CSV or Excel instead"),
        "binary": ("a binary file that is not a spreadsheet", "export the data as CSV or Excel again"),
    }
    looks_like, fix = described[actual]
    if actual == "zip" and fmt in _TEXT_FORMATS:
        looks_like, fix = "an Excel or OpenDocument workbook (ZIP)", "rename it to .xlsx (or .ods)"
    if wanted == "zip" and actual == "binary" and head[:2] == b"PK":
        # A ZIP signature with a broken body: a truncated download rather than the wrong format.
        raise InputFileError(f"{path} is damaged or incomplete; download or export it again")
    raise InputFileError(f"{path} is not really {_FORMAT_NAMES[fmt]}: it looks like {looks_like}; {fix}")


_FORMAT_NAMES = {
    "csv": "a CSV file",
    "tsv": "a TSV file",
    "xlsx": "an XLSX workbook",
    "xlsm": "an XLSM workbook",
    "xls": "an Excel 97-2003 (.xls) workbook",
    "ods": "an OpenDocument spreadsheet",
}


def _sniff_kind(data: bytes) -> str:
    """Classify bytes as zip | ole2 | html | xml | xml-other | pdf | text | binary by their first bytes."""
    if data.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)):
        return "zip"
    if data.startswith(_OLE2_MAGIC):
        return "ole2"
    if data.startswith(b"%PDF"):
        return "pdf"
    start = data[:4096]
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if start.startswith(bom):
            start = start[len(bom) :].decode(codec, errors="ignore").encode("utf-8")
            break
    else:
        if _utf16_without_bom(start):
            start = start.replace(b"\x00", b"")
    lowered = start.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<table" in lowered[:1024]:
        return "html"
    if lowered.startswith(b"<?xml") and b"urn:schemas-microsoft-com:office:spreadsheet" in start:
        return "xml"
    if lowered.startswith(b"<?xml"):
        return "xml-other"
    if lowered.startswith(b"<") and (b"<td" in lowered or b"<tr" in lowered):
        return "html"
    if b"\x00" in start:
        return "binary"
    return "text"


def _check_zip_members(path: Path, fmt: str, data: bytes) -> None:
    """A ZIP must be complete and hold the workbook its extension promises."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            mimetype = archive.read("mimetype")[:100] if "mimetype" in names else b""
    except (zipfile.BadZipFile, EOFError, ValueError):
        raise InputFileError(f"{path} is damaged or incomplete; download or export it again") from None
    is_ods = b"opendocument.spreadsheet" in mimetype
    is_ooxml = "xl/workbook.xml" in names or "xl/workbook.bin" in names
    if fmt == "ods" and not is_ods:
        what = "an XLSX workbook; rename it to .xlsx" if is_ooxml else "a ZIP archive without a spreadsheet"
        raise InputFileError(f"{path} is not really an OpenDocument spreadsheet: it looks like {what}")
    if fmt in ("xlsx", "xlsm") and not is_ooxml:
        what = (
            "an OpenDocument spreadsheet; rename it to .ods"
            if is_ods
            else "a ZIP archive without a workbook (a Word document or a zipped folder?); export the data again"
        )
        raise InputFileError(f"{path} is not really {_FORMAT_NAMES[fmt]}: it looks like {what}")


# --- header row and cell grid ---------------------------------------------------------------------------


def _is_blank(row: Sequence[str]) -> bool:
    return not any(c.strip() for c in row)


def _find_header(rows: list[list[str]], expected: set[str]) -> int | None:
    """0-based index of the header among ``rows`` (the top of the sheet), or None if all are blank.

    A title and a run date above the header are common, so the header is the row holding most of the
    expected headers; failing that, the widest row of mostly distinct labels.
    """
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
    path: Path, cells: Sequence[str], header_row: int, has_data: Sequence[bool], first_column: int = 0
) -> list[str | None]:
    """Display names of the header cells; None for a column with neither a header nor data (dropped).

    A column with data but no header is kept as "Column D" so it is listed (never silently dropped).
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
        listed = "; ".join(
            f"'{names[cols[0]]}' (columns {', '.join(_column_letter(first_column + j) for j in cols[:-1])}"
            f" and {_column_letter(first_column + cols[-1])})"
            for cols in duplicates
        )
        raise InputFileError(
            f"{path}: the header row (row {header_row}) has duplicate column names: {listed}; "
            "rename them so each is unique"
        )
    return names


def _no_data(path: Path, header_row: int) -> NoDataRowsError:
    return NoDataRowsError(f"{path} has a header row (row {header_row}) but no data rows under it")


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


# --- Excel and OpenDocument ------------------------------------------------------------------------------


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


def _password(path: Path) -> InputFileError:
    return InputFileError(
        f"{path} is password-protected; remove the password in Excel "
        "(File > Info > Protect Workbook > Encrypt with Password) and save it again"
    )


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
            raise _password(path) from None
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
        raise _password(path) from None
    except (calamine.CalamineError, OSError, ValueError) as exc:
        raise _damaged(path, exc) from None
    with workbook:
        index = _pick_sheet(path, workbook.sheet_names, sheet)
        try:
            # skip_empty_area=False keeps A1 as the first cell, so list positions are Excel row numbers.
            rows = workbook.get_sheet_by_index(index).to_python(skip_empty_area=False)
        except calamine.PasswordError:
            raise _password(path) from None
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


def _table_below_header(
    path: Path, info: SourceInfo, grid: pd.DataFrame, index: int, first_column: int, preamble: list[list[str]]
) -> SourceTable:
    """The table under the header: ``grid`` starts with the header, which is Excel row ``index + 1``.

    Fully blank rows are dropped, but their row numbers are still counted.
    """
    header_cells = [str(c) for c in grid.iloc[0].tolist()]
    body = grid.iloc[1:]
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
    numbers = np.flatnonzero(filled) + index + 2
    has_data = [bool((has_text & filled).any()) for has_text in nonempty]
    body = body[filled]
    names = _header_names(path, header_cells, index + 1, has_data, first_column)
    data = {
        name: body[col].reset_index(drop=True) for name, col in zip(names, body.columns) if name is not None
    }
    headers = [n for n in names if n is not None]
    info.header_row = index + 1
    info.headers = headers
    info.preamble = [_trim_trailing([str(c) for c in r]) for r in preamble]
    info.rows_read = len(numbers)
    if not len(numbers):
        raise _no_data(path, index + 1)
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(numbers)), columns=headers)
    return SourceTable(info=info, frame=frame, row_numbers=numbers.tolist())


def _trim_trailing(row: list[str]) -> list[str]:
    end = len(row)
    while end and not row[end - 1].strip():
        end -= 1
    return row[:end]


# --- CSV and TSV ----------------------------------------------------------------------------------------


@dataclass
class _TextGrid:
    """A delimited text file decoded: its text, encoding and delimiter."""

    text: str
    encoding: str
    delimiter: str
    raw: bytes | None = None  # the file's own bytes when they already are UTF-8: pyarrow reads them as is

    @classmethod
    def load(
        cls, path: Path, fmt: str, data: bytes, encoding: str | None, delimiter: str | None
    ) -> _TextGrid:
        if encoding is None:
            encoding, text = _detect_and_decode(data)
        else:
            try:
                text = data.decode(encoding)
            except LookupError:
                raise InputFileError(
                    f"{path}: unknown encoding '{encoding}'; use e.g. utf-8, gb18030 or cp1252"
                ) from None
            except UnicodeDecodeError as exc:
                raise InputFileError(
                    f"{path} is not valid {encoding} text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                    "check the encoding set for this file"
                ) from None
        raw = data.removeprefix(codecs.BOM_UTF8) if encoding.replace("_", "-").lower() in _UTF8 else None
        text = text.removeprefix("\ufeff")
        if "\n" not in text[:ENCODING_SAMPLE] and "\r" in text[:ENCODING_SAMPLE]:
            text = text.replace("\r", "\n")  # classic Mac line ends: one newline convention downstream
            raw = None
        if delimiter is None:
            delimiter = _sniff_delimiter(text[:ENCODING_SAMPLE], "\t" if fmt == "tsv" else ",")
        return cls(text, encoding, delimiter, raw)


def _utf16_without_bom(sample: bytes) -> bool:
    """UTF-16 text without a BOM: mostly ASCII, so every other byte is NUL."""
    if len(sample) < 4:
        return False
    return sample[1::2].count(0) > len(sample) // 4 or sample[0::2].count(0) > len(sample) // 4


def _detect_and_decode(data: bytes) -> tuple[str, str]:
    """The encoding of a text file and its decoded text (BOM first, then UTF-8, then charset-normalizer)."""
    for bom, name in (
        (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: the UTF-32-LE BOM starts with the UTF-16-LE one
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return name, data.decode(name, errors="replace")
    sample = data[:ENCODING_SAMPLE]
    if _utf16_without_bom(sample):
        name = "utf-16-le" if sample[1::2].count(0) > sample[0::2].count(0) else "utf-16-be"
        return name, data.decode(name, errors="replace")
    try:
        return "utf-8", data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    # The first non-UTF-8 byte is what matters: sample around it (a long ASCII head says nothing).
    start = max(0, first_bad - ENCODING_SAMPLE // 2)
    window = data[start : start + ENCODING_SAMPLE]
    best = charset_normalizer.from_bytes(window).best()
    guess = best.encoding if best is not None else ""
    for name in _encoding_preferences(guess):
        try:
            return name, data.decode(name)
        except UnicodeDecodeError:
            continue
    return "latin-1", data.decode("latin-1")  # every byte is a Latin-1 character: never fails


def _encoding_preferences(guess: str) -> list[str]:
    """Encodings to try, best first, given charset-normalizer's guess.

    charset-normalizer often names an exotic cousin on short samples (cp775 for Windows-1252 text, cp949
    for a few GBK characters), so guesses are folded onto the encodings HR exports really use.
    """
    if guess in _CJK_ENCODINGS or guess.startswith("gb"):
        return ["gb18030", guess, "cp1252"] if guess not in _CHINESE_ENCODINGS else ["gb18030", "cp1252"]
    if guess in ("big5", "big5hkscs", "cp950"):
        return ["big5hkscs", "gb18030", "cp1252"]
    if guess in _NON_WESTERN_SINGLE_BYTE:
        return [guess, "cp1252"]
    return ["cp1252"]


def _sniff_delimiter(sample: str, default: str) -> str:
    """The delimiter giving the most rows with the same field count (more fields breaks a tie)."""
    lines = sample.split("\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the sample may end mid-line
    lines = [line for line in lines[:200] if line.strip()]
    best: tuple[int, int, int] = (0, 0, 0)
    chosen = default
    for rank, delimiter in enumerate(sorted(DELIMITERS, key=lambda d: d != default)):
        counts: dict[int, int] = {}
        for row in csv.reader(lines, delimiter=delimiter):
            counts[len(row)] = counts.get(len(row), 0) + 1
        fields, rows = max(
            ((f, n) for f, n in counts.items() if f > 1), key=lambda t: (t[1], t[0]), default=(0, 0)
        )
        score = (rows, fields, -rank)
        if fields > 1 and score > best:
            best, chosen = score, delimiter
    return chosen


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one, without copying the whole text (as ``io.StringIO`` would)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def _build_from_text(
    path: Path, info: SourceInfo, grid: _TextGrid, header_row: int | None, expected: Iterable[str]
) -> SourceTable:
    text = grid.text
    # The top of the file, parsed record by record, with the physical line each record ends on.
    top: list[list[str]] = []
    line_ends: list[int] = []
    reader = csv.reader(_lines(text), delimiter=grid.delimiter)
    scan = max(HEADER_SCAN_ROWS, header_row or 0)
    try:
        for record in reader:
            top.append(record)
            line_ends.append(reader.line_num)
            if len(top) > scan:
                break
    except csv.Error as exc:
        raise InputFileError(f"{path}: cannot be read as delimited text ({exc}); check the file") from None
    more = len(top) > scan
    top = top[:scan]
    index = _checked_header_index(path, header_row, top, len(top) + (1 if more else 0))
    if index is None:
        index = _find_header(top, {normalize_header(h) for h in expected})
    if index is None:
        raise InputFileError(f"{path} is empty; export the data again")
    # Hand pandas the text from the header on: titles above it have other field counts.
    lines_before = line_ends[index - 1] if index else 0
    offset = 0
    for _ in range(lines_before):
        offset = text.index("\n", offset) + 1
    if grid.raw is not None:  # UTF-8 already: cut the bytes rather than encode the text again
        body = grid.raw[len(text[:offset].encode("utf-8")) :]
    else:
        body = text[offset:].encode("utf-8")
    del grid.text, grid.raw, text
    frame = _parse_csv(path, body, grid.delimiter, index + 1, len(top[index]))
    del body
    return _table_below_header(path, info, frame, index, 0, top[:index])


def _parse_csv(path: Path, body: bytes, delimiter: str, header_row: int, header_width: int) -> pd.DataFrame:
    """All records from the header on as text, pyarrow first, the C engine for ragged rows.

    Rows shorter than the header are padded with empty cells. Rows longer than the header are fine while
    the extra cells are empty (a trailing delimiter); a value beyond the header is an error, since it
    usually means an unquoted delimiter shifted the row's values into the wrong columns.
    """
    options = {
        "sep": delimiter,
        "header": None,
        "dtype": str,
        "keep_default_na": False,
        "skip_blank_lines": False,
    }
    try:
        return pd.read_csv(io.BytesIO(body), engine="pyarrow", **options).fillna("")  # type: ignore[call-overload]
    except (pd.errors.ParserError, ValueError):
        pass  # pyarrow refuses rows whose field count differs from the header's
    width: int | None = None
    for _ in range(20):  # each retry widens to the longest row seen so far
        try:
            names = list(range(width)) if width else None
            frame = pd.read_csv(io.BytesIO(body), engine="c", names=names, **options)  # type: ignore[call-overload]
            break
        except pd.errors.ParserError as exc:
            match = re.search(r"Expected \d+ fields in line \d+, saw (\d+)", str(exc))
            if not match:
                raise InputFileError(
                    f"{path}: cannot be read as delimited text ({exc}); check the file"
                ) from None
            width = int(match.group(1))
    else:
        raise InputFileError(
            f"{path}: rows have too many different lengths to be read as a table; check the file"
        )
    frame = frame.fillna("")
    for extra in frame.columns[header_width:]:
        filled = np.flatnonzero((frame[extra] != "").to_numpy())
        if len(filled):
            row = int(filled[0])
            cells = len(_trim_trailing([str(c) for c in frame.iloc[row].tolist()]))
            shown = "tab" if delimiter == "\t" else f"'{delimiter}'"
            raise InputFileError(
                f"{path}: row {header_row + row} has {cells} cells but the header row has {header_width}; "
                f"put quotes around values that contain {shown}"
            )
    return frame[frame.columns[:header_width]]
