"""How far a sheet's cells really reach, found before a workbook library lays them out as a grid.

calamine (under fastexcel and python-calamine) lays a sheet out as one dense grid from its first to its
farthest cell holding a value, blank text included. So a small file can ask for any amount of memory: one
stray cell at XFD1048576 asks for 17 billion cells (the process aborted), cells of empty text down to row
1,000,000 under a two-row table took 850 MB, an ODS row of 40 one-space cells repeated a million times
5.8 GB. Here each sheet's XML is streamed once, as bytes, to find:

- the last row holding a value that is not blank, and the farthest column holding any value up to it;
- how many cells hold a value there;
- the rows and columns the sheet hides (``hidden_rows``: a filter's, or Hide's; ``hidden_columns``), which
  nobody sees in Excel;
- in an ODS, the cells showing an error value (``#N/A``) and the formulas saved without a result, which
  python-calamine reads as empty cells: this pass is the one that looks at every cell of the file.

A blank tail (rows below the table whose cells hold only empty text or spaces) is cut off an XLSX before
it is read (``trimmed_xlsx``): those rows would be dropped as blank anyway. A grid still bigger than
``MAX_SPARSE_CELLS`` and mostly empty (a stray value far from the table) is refused in one line naming
the cell, since laying it out would take gigabytes for a few values. A big grid that is full of values is
read: its memory follows the file's real content, which ``max_unpacked_mb`` bounds.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from xml.etree import ElementTree

import pyarrow as pa
import pyarrow.compute as pc

from hrimport.errors import InputFileError
from hrimport.reader.grid import HEADER_SCAN_ROWS, _column_letter
from hrimport.reader.hidden_columns import HiddenColumns, add_xlsx_hidden_columns
from hrimport.reader.hidden_rows import XLSX_ROW_MARKS, HiddenRows, add_xlsx_hidden_rows
from hrimport.reader.merged_header import MergeCollector, MergedRange, SheetMerges, add_xlsx_merges
from hrimport.reader.xlsx_cells import _column_index, shared_string_positions

#: A grid of more cells than this that is mostly empty is refused. A real 100,000 x 40 export is 4,000,000
#: cells, all of them filled; a grid four times bigger than its values is a stray cell, not a table.
MAX_SPARSE_CELLS = 5_000_000
#: How much bigger than its values a grid must be to count as mostly empty.
SPARSE_FACTOR = 4
#: A blank tail is cut off before reading when the grid with it is at least this many cells.
TAIL_CELLS = 1_000_000

_CHUNK = 1 << 22  # bytes read at a time: the sheet part is streamed, never held whole
_ROW_END = b"</row>"
_ROWS_END = b"</sheetData>"
_TAGS = re.compile(rb"<[^>]*>")
# Text a person sees as blank, in UTF-8: spaces, tabs and line ends, and the Unicode spaces (no-break,
# ideographic...) that the reader's blank-row test strips too.
_SPACES = rb"(?:\s|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)*"
_BLANK_SHARED_STRING = re.compile(rb"<si>\s*(?:<t[^>]*/>|<t[^>]*>" + _SPACES + rb"</t>)\s*</si>")


@dataclass
class SheetExtent:
    """Where a sheet's values end. Rows and columns count from 1; 0 when there is none."""

    last_row: int = 0  # the last row holding a value that is not blank
    last_column: int = 0  # the farthest column holding a value, in rows up to last_row
    values: int = 0  # cells holding a value (blank text included), in rows up to last_row
    far_cell: str = ""  # a cell in last_column
    last_cell: str = ""  # a cell in last_row
    written: int = 0  # ODS: the cells holding a value as the file writes them, each repeated one once
    grid_rows: int = 0  # the rows and columns the library would lay out: the blank tail included
    grid_columns: int = 0
    tail_start: int | None = None  # XLSX: where the rows after last_row begin in the sheet part
    rows_end: int | None = None  # XLSX: where ``</sheetData>`` begins
    # ODS: (row, column, the error shown), 0-based, of the cells showing an error value (``ods_sheet_extents``)
    errors: list[tuple[int, int, str]] = field(default_factory=list)
    # ODS: (row, column, formula), 0-based, of the formula cells saved without a result
    uncalculated: list[tuple[int, int, str]] = field(default_factory=list)
    # the merged cells that may shape the header (``merged_header``): XLSX's ``<mergeCells>``, ODS's spans
    merges: SheetMerges = field(default_factory=lambda: SheetMerges([]))
    # the rows the sheet hides, by a filter or Hide (``hidden_rows``)
    hidden: HiddenRows = field(default_factory=HiddenRows)
    # the columns the sheet hides (``hidden_columns``)
    hidden_columns: HiddenColumns = field(default_factory=HiddenColumns)

    @property
    def cells(self) -> int:
        return self.last_row * self.last_column

    @property
    def has_blank_tail(self) -> bool:
        """Whether a tail of blank values makes the library's grid much bigger than the table's."""
        grid = self.grid_rows * self.grid_columns
        return grid >= TAIL_CELLS and grid > 2 * self.cells


def check_extent(path: Path, sheet: str, extent: SheetExtent) -> None:
    """Refuse a sheet whose grid would be big and mostly empty: a value far outside the table."""
    if extent.cells <= MAX_SPARSE_CELLS or extent.cells <= SPARSE_FACTOR * extent.values:
        return
    where = extent.far_cell if extent.far_cell == extent.last_cell else f"{extent.far_cell} and {extent.last_cell}"
    raise InputFileError(
        f"{path}: sheet '{sheet}' has cells far outside its table (at {where}): read, they would make a grid of "
        f"{extent.last_row:,} rows x {extent.last_column:,} columns; delete everything outside the table in the "
        "spreadsheet program (or copy the table alone into a new file) and save it again"
    )


def check_repeats(path: Path, sheet: str, extent: SheetExtent) -> None:
    """Refuse an ODS sheet whose repeated rows or cells make many more values than the file writes: a row
    of 16 values repeated 1,048,576 times (``number-rows-repeated``) is 16 million cells from a file of 3 KB,
    which the library made into Python objects until the memory was gone. A real export writes each row."""
    if extent.values <= MAX_SPARSE_CELLS or extent.values <= SPARSE_FACTOR * extent.written:
        return
    raise InputFileError(
        f"{path}: sheet '{sheet}' repeats rows or cells holding values into {extent.values:,} cells, from "
        f"{extent.written:,} written in the file: read, they would take gigabytes; delete the repeated rows "
        "(or copy the table alone into a new file) and save it again"
    )


def check_blank_tail(path: Path, sheet: str, extent: SheetExtent) -> None:
    """Refuse a blank tail that cannot be cut off before reading (ODS: the library reads every sheet)."""
    if not extent.has_blank_tail:
        return
    raise InputFileError(
        f"{path}: sheet '{sheet}' has cells holding only spaces or empty text down to row {extent.grid_rows:,}, "
        f"far below its last value (row {extent.last_row:,}): read, they would make a grid of "
        f"{extent.grid_rows:,} rows x {extent.grid_columns:,} columns; delete the rows under the table and save it again"
    )


# -------------------------------------------------------------------------------------------------- XLSX


def xlsx_sheet_extent(archive_path: Path, part: str, shared_strings: str | None,
                      merge_rows: int = HEADER_SCAN_ROWS + 1) -> SheetExtent:
    """The extent of the sheet in archive member ``part``, streamed in pieces that each end with a row.

    The sheet's merged cells (``<mergeCells>``, after ``</sheetData>``: in the last piece) are collected on
    the way, those starting in rows up to ``merge_rows`` and the first covering several rows below
    (``merged_header.MergeCollector``): a header over two rows is read from them at no other pass. So are the
    rows marked hidden (``hidden_rows``), by a look for ``hidden="`` and ``customHeight="`` in each piece, and
    the columns hidden (``hidden_columns``), in the ``<cols>`` of the first piece, before the cells.

    Per piece, the last cell showing something is found from the end back (at once, unless the piece is
    a blank tail); per row of the table, its last value's column letters, with a few ``bytes`` calls;
    the pieces of a blank tail by regular expressions. About 0.7 s for a 100,000 x 40 sheet, 0.5 s for a
    tail of a million blank rows.
    """
    blank_strings = _blank_shared_strings(archive_path, shared_strings) if shared_strings else set()
    blank_cells = _blank_cells(blank_strings)
    extent = SheetExtent()
    table: dict[bytes, bytes] = {}  # column letters of a row's last value -> its cell, rows up to last_row
    tail: dict[bytes, bytes] = {}  # the same for the rows below
    values = rows = 0  # value cells and rows before the piece
    out_of_order: list[bytes] = []
    merges = MergeCollector(merge_rows)
    row_before = 0  # the number of the last row element before the piece (``add_xlsx_hidden_rows``)
    with zipfile.ZipFile(archive_path) as archive, archive.open(part) as stream:
        for offset, piece in _row_pieces(stream):
            if not offset:
                add_xlsx_hidden_columns(piece, extent.hidden_columns)
            row_before = add_xlsx_hidden_rows(piece, row_before, extent.hidden,
                                              marked=any(holds_match(mark, piece) for mark in XLSX_ROW_MARKS))
            inline = b"</is>" in piece  # inline strings are rare: most pieces need only look for </v>
            in_piece = piece.count(b"</v>") + (piece.count(b"</is>") if inline else 0)
            shown = _last_shown(piece, blank_cells, blank_strings)
            if shown >= 0:
                end = piece.find(_ROW_END, shown)
                end = len(piece) if end < 0 else end + len(_ROW_END)
                table.update(tail)
                tail = {}
                _last_value_columns(piece, 0, end, table, inline)
                _last_value_columns(piece, end, len(piece), tail, inline)
                extent.last_row, ref = _row_and_cell(piece, shown, rows)
                extent.last_cell = ref.decode("ascii", "replace")
                below = piece.count(b"</v>", end) + (piece.count(b"</is>", end) if inline else 0)
                extent.values = values + in_piece - below
                extent.tail_start = offset + end
            elif rows:  # cells without references: only their order places them
                _last_value_columns(piece, 0, len(piece), tail, inline)
            else:
                _value_columns(piece, tail)
            last_value = max(piece.rfind(b"</v>"), piece.rfind(b"</is>") if inline else -1)
            if last_value >= 0:
                extent.grid_rows, _ = _row_and_cell(piece, piece.rfind(b"<c ", 0, last_value), rows)
            values += in_piece
            out_of_order += _cells_out_of_order(piece, [*table, *tail])
            if rows or _without_references(piece):  # rows are counted only where cells have no reference
                rows += piece.count(b"<row")
            rows_end = piece.find(_ROWS_END) if extent.rows_end is None else 0
            if rows_end >= 0:
                if extent.rows_end is None:
                    extent.rows_end = offset + rows_end
                if b"mergeCell" in piece:
                    add_xlsx_merges(piece[rows_end:], merges)
    extent.merges = merges.merges
    _add_cells(extent, table, out_of_order)
    extent.last_column, extent.far_cell = _farthest(table)
    extent.grid_columns = max(extent.last_column, _farthest(tail)[0])
    return extent


def _cells_out_of_order(piece: bytes, columns: Iterable[bytes]) -> list[bytes]:
    """The references of the value cells of ``piece`` that lie beyond the row of its last cell, or beyond the
    farthest of ``columns`` (the letters any row so far ends with): cells out of order (``<c r="XFD5">`` amid
    row 5, ``A1048576`` amid row 3), which only a damaged or hostile file holds. The library lays them out all
    the same, while the look above sees only each row's last cell: one such cell asked for a grid of 90 GB,
    and the process aborted. One regular expression finds them: first whether any, in RE2 (none in a file in
    order), then which, in ``re``.
    """
    last = piece.rfind(b"<c ")
    ref_at = piece.find(b' r="', last, piece.find(b">", last)) if last >= 0 else -1
    if ref_at < 0:  # no cell, or cells without references: only their order places them
        return []
    ref = piece[ref_at + 4 : piece.find(b'"', ref_at + 4)]
    row = ref[len(ref.rstrip(b"0123456789")) :]
    farthest = max(columns, key=lambda c: (len(c), c.upper()), default=b"").upper()
    if not row.isdigit() or not farthest.isalpha():
        return []
    beyond = re.compile(rb'<c r="((?:' + greater_pattern(farthest, b"A-Z") + rb')[0-9]+|[A-Za-z]+(?:'
                        + greater_pattern(row, b"0-9") + rb'))"')
    below = rb'<row r="(' + greater_pattern(row, b"0-9") + rb')"'
    if not holds_match(beyond.pattern + b"|" + below, piece):  # a piece in order: one look, in RE2
        return []
    found = []
    for cell in beyond.finditer(piece):
        end = piece.find(b">", cell.end())
        if piece[end - 1 : end] != b"/" and not piece.startswith(b"</c>", end + 1):  # a formatted empty cell
            found.append(cell.group(1))  # is not laid out
    # a row element numbered below the piece's last cell, whose cells have no reference: the library lays
    # them out in that row from column A (``<row r="1048576"><c t="s"><v>0</v></c></row>`` amid row 3)
    for element in re.finditer(below, piece):
        end = piece.find(b"</row>", element.end())
        if _holds_a_value(piece[element.end() : end if end >= 0 else len(piece)]):
            found.append(b"A" + element.group(1))
    return found


def _holds_a_value(xml: bytes) -> bool:
    return b"</v>" in xml or b"</is>" in xml


def _add_cells(extent: SheetExtent, table: dict[bytes, bytes], refs: list[bytes]) -> None:
    """Count the value cells at ``refs`` (``_cells_out_of_order``) in the extent, as holding something."""
    for ref in refs:
        letters = ref.rstrip(b"0123456789")
        table.setdefault(letters.upper(), ref)
        number = int(ref[len(letters) :])
        if number > extent.last_row:
            extent.last_row, extent.last_cell = number, ref.decode("ascii", "replace")
        extent.grid_rows = max(extent.grid_rows, number)


def greater_pattern(text: bytes, symbols: bytes) -> bytes:
    """A regular expression matching the strings of ``symbols`` (``A-Z`` or ``0-9``) that come after ``text``
    in the order of column letters or row numbers: longer ones, or as long and greater from a position on."""
    last = symbols[-1]
    leading = b"1-9" if symbols == b"0-9" else symbols  # a row number has no leading zero
    forms = [b"[%s][%s]{%d,}" % (leading, symbols, len(text))]
    for i, symbol in enumerate(text):
        if symbol < last:
            forms.append(re.escape(text[:i]) + b"[%s-%s][%s]{%d}" % (bytes([symbol + 1]), bytes([last]), symbols,
                                                                        len(text) - i - 1))
    return b"|".join(forms)


def holds_match(pattern: bytes, data: bytes) -> bool:
    """Whether the regular expression ``pattern`` (ASCII; RE2's syntax, which these patterns share with
    ``re``) matches somewhere in ``data``. In RE2, through pyarrow: linear in the bytes and twice as fast as
    ``re`` on a sheet's XML, which the checks for cells out of order scan whole (200 MB for 100,000 rows x 40
    columns: 1.3 s of CPU in ``re``). ``data`` is not copied."""
    offsets = pa.array([0, len(data)], type=pa.int64()).buffers()[1]
    whole = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    return bool(pc.any(pc.match_substring_regex(whole, pattern.decode("ascii"))).as_py())


def _without_references(piece: bytes) -> bool:
    """Whether the first cell of ``piece`` has no ``r="A1"`` reference (a rare writer's sheet)."""
    start = piece.find(b"<c ")
    return start >= 0 and piece.find(b' r="', start, piece.find(b">", start)) < 0


def _row_pieces(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """The part in pieces of about ``_CHUNK`` bytes that each end with ``</row>`` (the last: the rest),
    with the offset in the part where each begins. The chunks of a row longer than one (a cell of 100 MB) are
    joined once, where each was added to all before it (a 100 MB row: 1.2 GB copied, 0.4 GB held)."""
    offset, pending = 0, list[bytes]()  # the chunks read after the last row end
    keep = len(_ROW_END) - 1  # the end of the chunk before, where a row end may begin
    while chunk := stream.read(_CHUNK):
        tail = pending[-1][-keep:] if pending else b""
        cut = (tail + chunk).rfind(_ROW_END)
        if cut < 0:
            pending.append(chunk)
            continue
        cut += len(_ROW_END) - len(tail)  # where the row end ends, in ``chunk``
        piece = b"".join([*pending, chunk[:cut]]) if pending else chunk[:cut]
        yield offset, piece
        offset += len(piece)
        pending = [chunk[cut:]] if cut < len(chunk) else []
    if pending:
        yield offset, b"".join(pending)


def _last_value_columns(piece: bytes, start: int, end: int, into: dict[bytes, bytes], inline: bool) -> None:
    """Add the column letters of each row's last value cell in ``piece[start:end]`` (the first cell seen
    for each); ``inline``: whether ``piece`` holds inline strings. Positions, not slices: no copy."""
    while start < end:
        row_end = piece.find(_ROW_END, start, end)
        if row_end < 0:
            row_end = end
        value_end = piece.rfind(b"</v>", start, row_end)
        if inline:
            value_end = max(value_end, piece.rfind(b"</is>", start, row_end))
        if value_end >= 0:
            cell = piece.rfind(b"<c ", start, value_end)
            ref_at = piece.find(b' r="', cell, piece.find(b">", cell))
            if ref_at >= 0:
                ref = piece[ref_at + 4 : piece.find(b'"', ref_at + 4)]
                into.setdefault(ref.rstrip(b"0123456789"), ref)
            else:  # a writer that leaves out references: cells follow one another from column A
                letters = column_letters(piece.count(b"<c ", piece.rfind(b"<row", start, cell), cell + 3)).encode()
                into.setdefault(letters, letters)
        start = row_end + len(_ROW_END)


def _farthest(columns: dict[bytes, bytes]) -> tuple[int, str]:
    """The farthest column among ``columns`` (letters -> a cell in it), as a number, and that cell."""
    if not columns:
        return 0, ""
    letters = max(columns, key=lambda c: (len(c), c.upper()))
    return _column_index(letters) + 1, columns[letters].decode("ascii", "replace")


def _row_and_cell(piece: bytes, start: int, rows_before: int) -> tuple[int, bytes]:
    """The row number and the reference of the cell whose tag starts at ``start``."""
    ref_at = piece.find(b' r="', start, piece.find(b">", start))
    if ref_at >= 0:
        ref = piece[ref_at + 4 : piece.find(b'"', ref_at + 4)]
        digits = ref[len(ref.rstrip(b"0123456789")) :]
        if digits:
            return int(digits), ref
    # No reference: the row is counted among the row elements, the column among the row's cells.
    row_start = piece.rfind(b"<row", 0, start)
    number = rows_before + piece.count(b"<row", 0, start)
    column = piece.count(b"<c ", row_start, start + 3)
    return number, f"{column_letters(column)}{number}".encode()


def column_letters(number: int) -> str:
    """Excel's letters for a column number counted from 1 (1 -> A, 27 -> AA)."""
    return _column_letter(number - 1)


def _last_shown(piece: bytes, blank_cells: re.Pattern[bytes], blank_strings: set[int]) -> int:
    """Where the last cell of ``piece`` showing something (not blank text) starts, or -1.

    Usually the last value of the piece shows something. Else the piece's blank cells are removed at
    once (``blank_cells``) to see whether any value is left: none in a blank tail. Only the piece where
    the table ends is walked back, value by value; each closing tag is searched for once on the way.
    """
    end = len(piece)
    number_end, inline_end = piece.rfind(b"</v>"), piece.rfind(b"</is>")
    first = True
    while end > 0:
        if number_end >= end:
            number_end = piece.rfind(b"</v>", 0, end)
        if inline_end >= end:
            inline_end = piece.rfind(b"</is>", 0, end)
        value_end = max(number_end, inline_end)
        if value_end < 0:
            return -1
        start = piece.rfind(b"<c ", 0, value_end)
        if start < 0:
            return -1
        if _holds_text(piece, start, value_end, blank_strings):
            return start
        if first:
            left = blank_cells.sub(b"", piece)
            if b"</v>" not in left and b"</is>" not in left:
                return -1
            first = False
        end = start
    return -1


def _blank_cells(blank_strings: set[int]) -> re.Pattern[bytes]:
    """Cells whose value is blank text: empty or spaces, inline or a blank shared string."""
    forms = [rb"<c [^>]*><v>" + _SPACES + rb"</v></c>",
             rb'<c [^>]*t="inlineStr"[^>]*><is>(?:<t[^>]*/>|<t[^>]*>' + _SPACES + rb"</t>)</is></c>"]
    if blank_strings:
        indexes = b"|".join(str(i).encode() for i in sorted(blank_strings))
        forms.append(rb'<c [^>]*t="s"[^>]*><v>(?:' + indexes + rb")</v></c>")
    return re.compile(b"|".join(forms))


# A cell holding a value (maybe after its formula): its column letters.
_VALUE_CELL_COLUMN = re.compile(rb'<c r="([A-Za-z]+)[0-9]+"[^>]*>(?:<f[^>]*/>|<f[^>]*>[^<]*</f>)?<(?:v|is)>')


def _value_columns(piece: bytes, into: dict[bytes, bytes]) -> None:
    """Add the column letters of every value cell in ``piece`` (a blank tail: a regular expression does in
    C what the per-row loop would do in Python for a million short rows)."""
    for letters in set(_VALUE_CELL_COLUMN.findall(piece)):
        if letters not in into:
            cell = re.search(rb'<c r="(' + letters + rb'[0-9]+)"', piece)
            into[letters] = cell.group(1) if cell else letters


def _holds_text(row: bytes, start: int, value_end: int, blank_strings: set[int]) -> bool:
    """Whether the cell from ``start`` to its value's end shows something other than blank text."""
    tag_end = row.find(b">", start)
    tag = row[start:tag_end]
    kind_at = tag.find(b' t="')
    kind = tag[kind_at + 4 : tag.find(b'"', kind_at + 4)] if kind_at >= 0 else b"n"
    if row.startswith(b"</is>", value_end):
        value = _TAGS.sub(b"", row[tag_end + 1 : value_end])
    else:
        value = row[row.rfind(b">", 0, value_end) + 1 : value_end]
        if kind == b"s":
            return value.strip().isdigit() and int(value) not in blank_strings
    return bool(value.decode("utf-8", "replace").strip())


def _blank_shared_strings(archive_path: Path, part: str) -> set[int]:
    """Positions of the shared strings that are empty or only spaces (usually none, or one)."""
    return shared_string_positions(archive_path, part,
                                   lambda piece: (m.start() for m in _BLANK_SHARED_STRING.finditer(piece)))


def trimmed_xlsx(source: Path, part: str, extent: SheetExtent, target: Path) -> Path:
    """A copy of the workbook whose sheet ``part`` ends with row ``extent.last_row``: the blank tail cut."""
    assert extent.tail_start is not None and extent.rows_end is not None
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED,
                                                                compresslevel=1) as copy:
        for info in original.infolist():
            if info.filename != part:
                with original.open(info) as read, copy.open(info.filename, "w", force_zip64=True) as write:
                    shutil.copyfileobj(read, write, _CHUNK)
                continue
            with original.open(info) as read, copy.open(part, "w", force_zip64=True) as write:
                _copy_range(read, write, extent.tail_start)
                write.write(_ROWS_END)
                _skip(read, extent.rows_end + len(_ROWS_END) - extent.tail_start)
                shutil.copyfileobj(read, write, _CHUNK)
    return target


def _copy_range(read: IO[bytes], write: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = read.read(min(size, _CHUNK))
        if not chunk:
            return
        write.write(chunk)
        size -= len(chunk)


def _skip(read: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = read.read(min(size, _CHUNK))
        if not chunk:
            return
        size -= len(chunk)


# --------------------------------------------------------------------------------------------------- ODS

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
#: LibreOffice's own attribute for the type of a formula's result (its extension of ODF, written by default)
_CALC_VALUE_TYPE = "{urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0}value-type"
_PARAGRAPH = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}p"
#: ODF's run of spaces in a text (``<text:s text:c="3"/>``), and how many it holds.
_SPACES_RUN, _SPACES_COUNT = ("{urn:oasis:names:tc:opendocument:xmlns:text:1.0}" + name for name in ("s", "c"))
#: The most spaces the runs of an ODS may add up to: the library makes each run a string of them at once, and
#: one run of 2,147,483,647 spaces in a file of 3 KB aborted the process.
MAX_SPACES = 10_000_000
#: A row's or column's ``table:visibility`` when it is hidden: folded away by Hide or a group (``collapse``, as
#: ODF and LibreOffice spell it; ``collapsed`` too), or filtered out.
_HIDDEN = ("collapse", "collapsed", "filter")
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
#: The sizes a row's or column's automatic style gives it (``style:row-height="0in"``: a row of height zero).
_SIZES = {f"{{{_STYLE}}}table-row-properties": f"{{{_STYLE}}}row-height",
          f"{{{_STYLE}}}table-column-properties": f"{{{_STYLE}}}column-width"}
_ZERO_LENGTH = re.compile(r"\s*(?:0+\.?0*|\.0+)\s*[a-z]*\s*")  # 0in, 0.000cm, 0
#: Cells of a repeated row or column listed at most: an error repeated over a formatted area is one mistake.
_REPEATS_LISTED = 1024


def ods_sheet_extents(archive_path: Path, merge_rows: int = HEADER_SCAN_ROWS + 1) -> dict[str, SheetExtent]:
    """The extent of every sheet of an ODS (the library reads them all when it opens the file), and its
    cells showing an error value.

    Repeated rows and cells (``number-rows-repeated``, ``number-columns-repeated``) are counted, never
    expanded: LibreOffice writes a formatted area down to row 1,048,576 as one repeated row.

    LibreOffice saves a formula whose result is an error as a string cell of empty value, marked
    ``calcext:value-type="error"``, the error (``#N/A``, ``Err:502``) as its text: python-calamine reads
    the empty value. A program that does not calculate (odfpy) saves a formula without a value type: there
    is no result, and python-calamine reads an empty cell.

    A merged cell is a cell spanning others (``number-columns-spanned``, ``number-rows-spanned``): those
    starting in rows up to ``merge_rows`` are kept, and the first covering several rows below
    (``merged_header.MergeCollector``), which python-calamine does not give for an ODS. A row whose
    ``table:visibility`` is ``collapse`` or ``filter``, or whose style makes it of height zero, is hidden
    (``hidden_rows``); so is a column (``table:table-column``) alike, or of width zero (``hidden_columns``).
    """
    extents: dict[str, SheetExtent] = {}
    table, row, cells = _t("table"), _t("table-row"), (_t("table-cell"), _t("covered-table-cell"))
    rows_repeated, columns_repeated = _t("number-rows-repeated"), _t("number-columns-repeated")
    rows_spanned, columns_spanned = _t("number-rows-spanned"), _t("number-columns-spanned")
    value_type = f"{{{_OFFICE}}}value-type"
    visibility, style_name, column = _t("visibility"), _t("style-name"), _t("table-column")
    style, style_named = f"{{{_STYLE}}}style", f"{{{_STYLE}}}name"
    zero_sized: set[str] = set()  # the automatic styles of rows of height zero, of columns of width zero
    spaces = 0
    with zipfile.ZipFile(archive_path) as archive, archive.open("content.xml") as stream:
        sheet = _OdsSheet(merge_rows)
        for event, element in ElementTree.iterparse(stream, events=("start", "end")):
            tag = element.tag
            if event == "start":
                if tag == table:
                    sheet = _OdsSheet(merge_rows)
                elif tag == row:
                    sheet.start_row()
            elif tag in cells:
                kind = element.get(value_type)
                if element.get(rows_spanned) is not None or element.get(columns_spanned) is not None:
                    sheet.add_merge(int(element.get(rows_spanned, "1")), int(element.get(columns_spanned, "1")))
                if kind is None and (formula := element.get(_t("formula"))) is not None:
                    sheet.add_uncalculated(int(element.get(columns_repeated, "1")), formula)
                if kind is not None or len(element):
                    repeat = int(element.get(columns_repeated, "1"))
                    if kind == "string" and element.get(_CALC_VALUE_TYPE) == "error":
                        paragraph = element.find(_PARAGRAPH)  # not a comment's text
                        sheet.add_error(repeat, "" if paragraph is None else "".join(paragraph.itertext()).strip())
                    shown = (kind is not None and kind != "string") or bool("".join(element.itertext()).strip())
                    sheet.add_value(repeat, shown)
                else:
                    sheet.column += int(element.get(columns_repeated, "1"))
                element.clear()
            elif tag == row:
                repeat = int(element.get(rows_repeated, "1"))
                if element.get(visibility) in _HIDDEN:  # by a filter or Hide
                    sheet.extent.hidden.add(sheet.rows + 1, repeat)
                elif element.get(style_name) in zero_sized:  # of height 0
                    sheet.extent.hidden.add(sheet.rows + 1, repeat, zero_height=True)
                sheet.end_row(repeat)
                element.clear()
            elif tag == _SPACES_RUN:
                spaces += int(element.get(_SPACES_COUNT, "1"))
                if spaces > MAX_SPACES:
                    raise InputFileError(
                        f"{archive_path}: its cells' text holds runs of spaces adding up to more than {MAX_SPACES:,} "
                        "(a damaged or hostile file?); export the data again"
                    )
            elif tag == table:
                extents[element.get(_t("name"), "")] = sheet.extent
                element.clear()
            elif tag == column:
                repeat = int(element.get(columns_repeated, "1"))
                if element.get(visibility) in _HIDDEN or element.get(style_name) in zero_sized:
                    sheet.extent.hidden_columns.add(sheet.columns + 1, repeat)  # ``hidden_columns``
                sheet.columns += repeat
            elif tag == style and _zero_sized(element):
                zero_sized.add(element.get(style_named, ""))
    return extents


def _t(name: str) -> str:
    return f"{{{_TABLE}}}{name}"


def _zero_sized(style: ElementTree.Element) -> bool:
    """Whether the automatic style ``style`` makes its rows of height zero or its columns of width zero."""
    for properties in style:
        size = properties.get(_SIZES.get(properties.tag, ""))
        if size is not None and _ZERO_LENGTH.fullmatch(size):
            return True
    return False


class _OdsSheet:
    """The extent of one ODS sheet, row by row."""

    def __init__(self, merge_rows: int) -> None:
        self.extent = SheetExtent()
        self.merges = MergeCollector(merge_rows)
        self.extent.merges = self.merges.merges
        self.rows = 0  # rows before the current one
        self.columns = 0  # columns declared before the current one (``table:table-column``)
        self.column = 0  # columns before the current cell
        self.row_values = self.row_last_value = self.row_last_shown = 0
        self.pending_values = self.pending_column = 0  # since the last row showing something
        self.pending_cell = ""
        self.row_errors: list[tuple[int, str]] = []  # (column, error shown) of the current row's error cells
        self.row_formulas: list[tuple[int, str]] = []  # (column, formula) of its formulas saved without a result

    def start_row(self) -> None:
        self.column = self.row_values = self.row_last_value = self.row_last_shown = 0
        self.row_errors = []
        self.row_formulas = []

    def add_error(self, repeat: int, shown: str) -> None:
        """``repeat`` cells showing the error ``shown`` ("(error)" when written without its text), from the
        current column on; ``add_value`` follows."""
        self.row_errors.extend((self.column + k, shown or "(error)") for k in range(min(repeat, _REPEATS_LISTED)))

    def add_uncalculated(self, repeat: int, formula: str) -> None:
        """``repeat`` cells holding ``formula`` (``of:=A1*2`` as ODF writes it: ``=A1*2``) without a result,
        from the current column on."""
        shown = formula.split(":", 1)[1] if formula[:1] != "=" and ":" in formula else formula
        self.row_formulas.extend((self.column + k, shown) for k in range(min(repeat, _REPEATS_LISTED)))

    def add_merge(self, rows: int, columns: int) -> None:
        """The cell at the current column spans ``rows`` rows and ``columns`` columns (a merged cell)."""
        row, column = self.rows + 1, self.column + 1
        self.merges.add(MergedRange(row, column, row + max(rows, 1) - 1, column + max(columns, 1) - 1))

    def add_value(self, repeat: int, shown: bool) -> None:
        self.extent.written += 1
        self.column += repeat
        self.row_values += repeat
        self.row_last_value = self.column
        if shown:
            self.row_last_shown = self.column

    def end_row(self, repeat: int) -> None:
        extent = self.extent
        for found, marked in ((extent.errors, self.row_errors), (extent.uncalculated, self.row_formulas)):
            found.extend((self.rows + k, column, text) for k in range(min(repeat, _REPEATS_LISTED))
                         for column, text in marked)
        self.rows += repeat
        if not self.row_values:
            return
        extent.grid_rows = self.rows
        extent.grid_columns = max(extent.grid_columns, self.row_last_value)
        self.pending_values += self.row_values * repeat
        if self.row_last_value > self.pending_column:
            self.pending_column = self.row_last_value
            self.pending_cell = f"{column_letters(self.row_last_value)}{self.rows}"
        if self.row_last_shown:
            extent.last_row, extent.last_cell = self.rows, f"{column_letters(self.row_last_shown)}{self.rows}"
            extent.values += self.pending_values
            if self.pending_column > extent.last_column:
                extent.last_column, extent.far_cell = self.pending_column, self.pending_cell
            self.pending_values = self.pending_column = 0
