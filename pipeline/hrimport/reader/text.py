"""Delimited text files (CSV, TSV, .txt) as columns of text: encoding, delimiter, parsing.

Exports come in whatever encoding and delimiter the HR system's locale uses (GBK, Windows-1252,
semicolons); both are detected rather than asked for (see ``encoding``), and the body is parsed by
pyarrow, with Python's csv module for what pyarrow refuses (ragged rows) so that one bad row is flagged
on its own while the other rows go on.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hrimport.errors import InputFileError
from hrimport.outcomes import Problem, SourceInfo
from hrimport.reader.encoding import decode_text, unicode_bom, unicode_without_bom
from hrimport.reader.grid import (
    HEADER_SCAN_ROWS,
    NUL,
    REPLACEMENT_CHARACTER,
    SourceTable,
    _checked_header_index,
    _filled_rows,
    _find_header,
    _header_names,
    _is_blank,
    _no_data,
    _rows_of,
    _table_below_header,
    _trim_trailing,
    normalize_header,
    rows_per_chunk,
)
from hrimport.reader.repeated_header import HeaderRepeats
from hrimport.reader.stray_quotes import (
    LINE_BREAK_BYTES,
    first_swallowing_cell,
    line_breaks,
    refuse_swallowed_rows,
)

if TYPE_CHECKING:
    import pyarrow as pa

_UTF8 = {"utf-8", "utf8", "utf-8-sig", "utf8-sig"}
#: Characters at the top of a text file the delimiter is guessed from.
DELIMITER_SAMPLE = 64 * 1024
DELIMITERS = (",", ";", "\t", "|")
# One physical line with its end, whichever convention it uses: exports mix \r\n, \n and a lone \r.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


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
        if encoding is not None:
            try:
                unicode = codecs.lookup(encoding).name.startswith("utf")
            except LookupError:
                raise InputFileError(
                    f"{path}: unknown encoding '{encoding}'; use e.g. utf-8, cp1252, gb18030 or shift_jis"
                ) from None
            if not unicode and unicode_bom(data) is not None:
                # A byte-order mark says the encoding for certain, and no Windows or ISO code page starts a
                # file with one: the to_fix.csv (UTF-8 with a BOM) of an export the config reads as cp1252
                # is read as UTF-8, not as a header 'ï»¿Employee ID' that the config's columns never match.
                encoding = None
        if encoding is None:
            encoding, text = decode_text(path, data)
        else:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise InputFileError(
                    f"{path} is not valid {encoding} text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                    "check the encoding set for this file"
                ) from None
        strict_utf8 = encoding.replace("_", "-").lower() in _UTF8 and "\ufffd" not in text
        raw = data.removeprefix(codecs.BOM_UTF8) if strict_utf8 else None
        text = text.removeprefix("\ufeff")
        said, skipped = excel_separator_line(text)
        if skipped:  # an ASCII line: as many bytes as characters
            text, raw = text[skipped:], raw[skipped:] if raw is not None else None
        if delimiter is None:
            delimiter = said or _sniff_delimiter(text[:DELIMITER_SAMPLE], "\t" if fmt == "tsv" else ",")
        return cls(text, encoding, delimiter, raw)


# Excel writes, and reads, a first line "sep=;" naming the delimiter; it never shows that line as a row.
_SEPARATOR_LINE = re.compile(r"sep=([^\r\n])(?:\r\n|\r|\n|\Z)", re.IGNORECASE)


def excel_separator_line(text: str) -> tuple[str | None, int]:
    """The delimiter a first line ``sep=;`` names, and that line's length with its end (0 when there is none):
    the line is Excel's instruction, not a row, so the header under it is row 1, as Excel shows it."""
    line = _SEPARATOR_LINE.match(text)
    return (line.group(1), line.end()) if line else (None, 0)


def _sniff_delimiter(sample: str, default: str) -> str:
    """The delimiter under which the most lines make rows of one same field count (more fields breaks a
    tie). Lines, not rows: a quoted cell holding line breaks is one row under the right delimiter and
    several short rows under a wrong one, which must not out-count it."""
    lines = [m.group() for m in _LINE.finditer(sample)]
    if len(lines) > 1 and len(sample) == DELIMITER_SAMPLE:
        lines = lines[:-1]  # the sample may end mid-line
    lines = [line for line in lines[:200] if line.strip()]
    best: tuple[int, int, int] = (0, 0, 0)
    chosen = default
    for rank, delimiter in enumerate(sorted(DELIMITERS, key=lambda d: d != default)):
        counts: dict[int, int] = {}
        try:
            with _long_fields():
                reader = csv.reader(lines, delimiter=delimiter)
                consumed = 0
                for row in reader:
                    counts[len(row)] = counts.get(len(row), 0) + reader.line_num - consumed
                    consumed = reader.line_num
        except csv.Error:
            continue  # a quote left open across the sample: not this delimiter's evidence
        fields, rows = max(
            ((f, n) for f, n in counts.items() if f > 1), key=lambda t: (t[1], t[0]), default=(0, 0)
        )
        score = (rows, fields, -rank)
        if fields > 1 and score > best:
            best, chosen = score, delimiter
    return chosen


@contextlib.contextmanager
def _long_fields() -> Iterator[None]:
    """Let Python's csv module read fields of any length (its default stops at 128 KiB)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(limit)


def _lines(text: str, ends: list[int]) -> Iterator[str]:
    """The physical lines of ``text`` one by one (no copy of the whole text), noting where each ends."""
    for match in _LINE.finditer(text):
        ends.append(match.end())
        yield match.group()


def _build_from_text(
    path: Path, info: SourceInfo, grid: _TextGrid, header_row: int | None, expected: Iterable[str]
) -> SourceTable:
    text = grid.text
    scan = max(HEADER_SCAN_ROWS, header_row or 0)
    # a quote never closed: the rows read so far are the top; the body parser decides the rest
    top, record_ends, _ = _top_records(text, grid.delimiter, scan + 1)
    index, top = _header_of(path, top, scan, header_row, expected)
    if index is None:
        raise InputFileError(f"{path} is empty; export the data again")
    # Parse from the header on: titles above it have other field counts.
    offset = record_ends[index - 1] if index else 0
    if grid.raw is not None:  # UTF-8 already: cut the bytes rather than encode the text again
        body = grid.raw[len(text[:offset].encode("utf-8")) :]
    else:
        body = text[offset:].encode("utf-8")
    # Only a text holding U+FFFD (bytes the decoder could not read, or the character itself) or a NUL has
    # cells to flag.
    not_text = "\ufffd" in text or "\x00" in text
    del grid.text, grid.raw, text
    body = _without_blank_tail(body, grid.delimiter)
    frame, problems = _parse_csv(path, body, grid.delimiter, index + 1, len(top[index]))
    if len(frame) < line_breaks(body) + (not body.endswith((b"\n", b"\r"))):
        # fewer records than lines: a cell holds a line break, maybe a stray quote's swallowed rows
        refuse_swallowed_rows(path, frame, top[index], index + 1, grid.delimiter, body)
    del body
    return _table_below_header(path, info, frame, index, 0, top[:index], row_problems=problems,
                               scan_replacements=not_text)


def _top_records(text: str, delimiter: str, count: int) -> tuple[list[list[str]], list[int], bool]:
    """The first ``count`` records of ``text``, the offset in the text where each ends, and False when the
    csv module stopped at a quote never closed (the records before it are given)."""
    top: list[list[str]] = []
    record_ends: list[int] = []
    line_ends: list[int] = []
    reader = csv.reader(_lines(text, line_ends), delimiter=delimiter)
    with _long_fields():
        try:
            for record in reader:
                top.append(record)
                record_ends.append(line_ends[reader.line_num - 1])
                if len(top) >= count:
                    break
        except csv.Error:
            return top, record_ends, False
    return top, record_ends, True


#: The most columns a table may have: Excel's and LibreOffice's sheets end at column XFD, 16,384. A text file
#: with more is no export of one, and each column costs the reading its own work (100,000 columns of two rows,
#: a 0.9 MB file, took 36 s and 1.6 GB before being refused for its missing columns).
MAX_COLUMNS = 16_384


def _header_of(path: Path, top: list[list[str]], scan: int, header_row: int | None,
               expected: Iterable[str]) -> tuple[int | None, list[list[str]]]:
    """The header's index among the first ``scan`` records of ``top`` (the configured row, checked, else
    the one found), and those records; None when they are all blank. A header of more than ``MAX_COLUMNS``
    columns is refused here, before the body is parsed."""
    more = len(top) > scan
    top = top[:scan]
    index = _checked_header_index(path, header_row, top, len(top) + (1 if more else 0))
    if index is None:
        index = _find_header(top, {normalize_header(h) for h in expected})
    if index is not None and len(top[index]) > MAX_COLUMNS:
        raise InputFileError(
            f"{path.name}: its header (row {index + 1}) has {len(top[index]):,} columns, more than a spreadsheet "
            f"holds ({MAX_COLUMNS:,}, Excel's and LibreOffice's limit), so it is not an export of a table; check "
            "the file")
    return index, top


def _without_blank_tail(body: bytes, delimiter: str) -> bytes:
    """``body`` without the blank lines after its last line holding something (only spaces, tabs and
    delimiters): blank rows are dropped anyway, but parsed they cost ~300 bytes of memory per byte of
    file (2 MB of line ends under a header took 700 MB). The last line holding something is kept whole,
    its empty cells included."""
    blank = b" \t\r\n" + (delimiter.encode("ascii") if delimiter.isascii() else b"")
    end = len(body.rstrip(blank))
    if end == len(body):
        return body
    line_end = LINE_BREAK_BYTES.search(body, end)
    return body[: line_end.end()] if line_end else body


def _parse_csv(
    path: Path, body: bytes, delimiter: str, header_row: int, header_width: int
) -> tuple[pd.DataFrame, dict[int, list[Problem]]]:
    """All records from the header on as text, by pyarrow; Python's csv module for files it refuses.

    pyarrow reads a clean file ten times faster than anything else but refuses the whole file for one
    ragged row. Then every record is read by the csv module: a row shorter than the header is padded with
    empty cells, and a row with values beyond the header is flagged ``extra-cells`` (usually a value
    holding the delimiter without quotes, which shifts the row's values) while the other rows go on.
    """
    import pyarrow as pa
    import pyarrow.csv as pv

    # Every cell as text, as the stream reads it (``_streamed_chunks``). ``newlines_in_values``: a quoted value
    # holding line breaks is read whole, where without it pyarrow cut such a value where its blocks of a
    # megabyte end (a stray quote made the next ~3,300 rows one cell, silently, not the rest of the file)
    read = pv.ReadOptions(autogenerate_column_names=True)
    parse = pv.ParseOptions(delimiter=delimiter, ignore_empty_lines=False, newlines_in_values=True)
    convert = pv.ConvertOptions(column_types={f"f{j}": pa.string() for j in range(header_width)},
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
    try:
        table = pv.read_csv(io.BytesIO(body), read_options=read, parse_options=parse, convert_options=convert)
        if table.num_columns == header_width:
            frame = table.to_pandas()
            frame.columns = pd.RangeIndex(header_width)
            return frame, {}
    except pa.ArrowInvalid:
        pass  # pyarrow refuses rows whose field count differs from the header's, and a value longer than a block
    return _parse_with_csv_module(path, body.decode("utf-8"), delimiter, header_row, header_width)


def _parse_with_csv_module(
    path: Path, text: str, delimiter: str, header_row: int, header_width: int
) -> tuple[pd.DataFrame, dict[int, list[Problem]]]:
    """Every record of ``text`` (the header first) cut or padded to the header's width, extra cells flagged."""
    rows: list[list[str]] = []
    problems: dict[int, list[Problem]] = {}
    shown = "tab" if delimiter == "\t" else f"'{delimiter}'"
    with _long_fields():
        try:
            for number, record in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter),
                                            start=header_row):
                if len(record) > header_width:
                    extra = [cell for cell in record[header_width:] if cell.strip()]
                    if extra:
                        problems[number] = [_extra_cells(path, number, record, header_width, extra, shown)]
                    record = record[:header_width]
                elif len(record) < header_width:
                    record = record + [""] * (header_width - len(record))
                rows.append(record)
        except csv.Error as exc:
            raise InputFileError(f"{path}: cannot be read as delimited text ({exc}); check the file") from None
    return pd.DataFrame(rows, dtype="str"), problems


def _extra_cells(
    path: Path, row: int, record: list[str], header_width: int, extra: list[str], shown: str
) -> Problem:
    if _is_blank(record[:header_width]):
        # nothing left on the row to flag it on: it would vanish as a blank row
        raise InputFileError(
            f"{path}: row {row} has values only beyond the header's last column ({len(record):,} cells, the "
            f"header has {header_width}); put quotes around values that contain {shown}"
        )
    cells = len(record) - next(i for i, cell in enumerate(reversed(record)) if cell.strip())
    values = ", ".join(f"'{cell}'" for cell in extra[:3]) + (", ..." if len(extra) > 3 else "")
    return Problem(
        "extra-cells",
        f"Row {row} has {cells:,} cells but the header row has {header_width:,} ({values} beyond the last "
        f"column): a value holding {shown} without quotes shifts the row's values; put quotes around it.",
        row,
        None,
        None,
        extra[0],
    )


#: Text files larger than this are read in chunks (``stream_text``) when they can be read so exactly.
STREAM_BYTES = 8 * 1024 * 1024
#: The top of a streamed file read at once: its encoding checked, its delimiter and header found.
STREAM_PREFIX = 1024 * 1024
#: pyarrow parses a streamed file this many bytes at a time, and reads several such blocks ahead of the
#: rows asked for, more of them the longer the file: at 1 MB blocks a 64 MB file held 20 MB more than a
#: 16 MB one; at 256 KB, the same.
STREAM_BLOCK = 256 * 1024


class StreamBroken(Exception):
    """A text file being read in chunks turned out to hold what only a whole read handles the way users
    know (a row with more or fewer cells than the header, bytes that are not UTF-8): read it whole."""


def stream_text(
    path: Path, info: SourceInfo, chunk_rows: int, header_row: int | None, expected: Iterable[str],
    encoding: str | None, delimiter: str | None,
) -> Iterator[SourceTable] | None:
    """The table of a UTF-8 text file in chunks of ``chunk_rows`` rows, read by pyarrow's streaming CSV
    reader, so memory holds one chunk whatever the file's size (issue 17); None when the top of the file
    shows it needs the whole read (``_build_from_text``): another encoding, a BOM other than UTF-8's, a
    header with an empty cell, a top the first megabyte does not hold. The chunks are what the whole read
    gives, cut in pieces; a file that turns out to need the whole read after all raises ``StreamBroken``
    while it is iterated (the caller starts again from the whole read)."""
    if encoding is not None and encoding.replace("_", "-").lower() not in _UTF8:
        return None
    with open(path, "rb") as fh:
        head = fh.read(STREAM_PREFIX)
        whole = not fh.read(1)
    bom = codecs.BOM_UTF8 if head.startswith(codecs.BOM_UTF8) else b""
    if (not bom and unicode_bom(head)) or unicode_without_bom(head[:4096]) is not None:
        return None
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head[len(bom):], final=whole)
    except UnicodeDecodeError:
        return None
    if "\ufffd" in text or "\x00" in text or not text.strip():
        return None
    info.encoding = "utf-8-sig" if bom else "utf-8"
    said, skipped = excel_separator_line(text)
    text = text[skipped:]
    delimiter = delimiter or said or _sniff_delimiter(text[:DELIMITER_SAMPLE], "\t" if info.format == "tsv" else ",")
    info.delimiter = delimiter
    if delimiter == "\t" and info.format == "csv":
        info.format = "tsv"
    scan = max(HEADER_SCAN_ROWS, header_row or 0)
    top, record_ends, parsed = _top_records(text, delimiter, scan + 2)
    if not parsed:
        return None
    if not whole and len(top) <= scan + 1:
        return None  # the first megabyte does not hold the top of the table: records of huge cells
    index, top = _header_of(path, top, scan, header_row, expected)
    if index is None or any(not cell.strip() for cell in top[index]):
        return None  # a column without a header is kept only if it holds data somewhere: a whole-file question
    start = len(bom) + skipped + len(text[: record_ends[index - 1] if index else 0].encode("utf-8"))
    width = len(top[index])
    return _streamed_chunks(path, info, start, index, width, top[:index], delimiter,
                            rows_per_chunk(chunk_rows, width))


_NOT_TEXT_BYTES = (REPLACEMENT_CHARACTER.encode("utf-8"), NUL.encode("utf-8"))
_LINE_BREAK_BYTES = (b"\n", b"\r")


def _bytes_held(arrays: Sequence[pa.Array], needles: Sequence[bytes]) -> set[bytes]:
    """Which of ``needles`` the character bytes of ``arrays`` (Arrow text) may hold: one memchr-fast search of
    each array's data buffer, which may take in the bytes of rows on either side of a slice, so a needle found
    is to be checked cell by cell."""
    found: set[bytes] = set()
    for array in arrays:
        data = array.buffers()[2]
        if data is not None and data.size:
            raw = data.to_pybytes()
            found.update(needle for needle in needles if needle not in found and needle in raw)
            if len(found) == len(needles):
                break
    return found


def _streamed_chunks(
    path: Path, info: SourceInfo, start: int, index: int, width: int, preamble: list[list[str]], delimiter: str,
    chunk_rows: int,
) -> Iterator[SourceTable]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pv

    # The options ``pd.read_csv(engine="pyarrow", dtype=str, keep_default_na=False, skip_blank_lines=False)``
    # gives pyarrow in ``_parse_csv``: the same cells, a chunk at a time.
    read = pv.ReadOptions(autogenerate_column_names=True, block_size=STREAM_BLOCK)
    parse = pv.ParseOptions(delimiter=delimiter, ignore_empty_lines=False)
    convert = pv.ConvertOptions(column_types={f"f{j}": pa.string() for j in range(width)},
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
    names: list[str | None] | None = None
    header: HeaderRepeats | None = None
    consumed = 0  # records of the body (the header's included) before the pending ones
    rows = 0
    pending: list[pa.RecordBatch] = []
    with open(path, "rb") as fh:
        fh.seek(start)
        try:
            batches = pv.open_csv(fh, read_options=read, parse_options=parse, convert_options=convert)
            while True:
                batch = next(batches, None)
                if batch is not None:
                    if batch.num_columns != width:
                        raise StreamBroken(f"{path}: a row has more cells than the header")
                    pending.append(batch)
                held = sum(b.num_rows for b in pending)
                while held and (held >= chunk_rows + (names is None) or batch is None):
                    table = pa.Table.from_batches(pending)
                    take = min(held, chunk_rows + (names is None))
                    cut = table.slice(0, take)
                    # bytes that are not text: only a chunk holding U+FFFD or a NUL has cells to flag
                    pieces = [piece for column in cut.columns for piece in column.chunks]
                    bytes_in = _bytes_held(pieces, _NOT_TEXT_BYTES + _LINE_BREAK_BYTES)
                    not_text = not bytes_in.isdisjoint(_NOT_TEXT_BYTES) and any(
                        pc.any(pc.match_substring(pa.chunked_array(pieces, type=pa.string()), char)).as_py()
                        for char in (REPLACEMENT_CHARACTER, NUL))
                    grid = cut.to_pandas()
                    if not bytes_in.isdisjoint(_LINE_BREAK_BYTES) and first_swallowing_cell(grid, width, delimiter):
                        # a stray quote: the whole read (parsed as it reads every file) says where, in one line
                        raise StreamBroken(f"{path}: a cell holds whole rows")
                    rest = table.slice(take)
                    pending = rest.to_batches() if rest.num_rows else []
                    held -= take
                    if names is None:
                        header_cells = [str(c) for c in grid.iloc[0].tolist()]
                        names = _header_names(path, header_cells, index + 1, [True] * width)
                        header = HeaderRepeats(header_cells, names)
                        info.header_row = index + 1
                        info.headers = [n for n in names if n is not None]
                        info.preamble = [_trim_trailing([str(c) for c in r]) for r in preamble]
                        grid, consumed = grid.iloc[1:], 1
                    filled, _ = _filled_rows(grid)
                    numbers = np.flatnonzero(filled) + index + 1 + consumed
                    consumed += len(grid)
                    if len(numbers):
                        assert header is not None  # made with the names
                        rows += len(numbers)
                        info.rows_read = rows
                        yield _rows_of(info, grid[filled], names, numbers, None, not_text, header)
                if batch is None:
                    break
        except pa.ArrowInvalid as exc:  # a ragged row, bytes that are not UTF-8: the whole read handles them
            raise StreamBroken(str(exc)) from None
    if not rows:
        raise _no_data(path, index + 1)
