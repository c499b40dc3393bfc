"""A workbook whose other visible sheets hold the table the reader chose: refused, never read in part.

Companies that keep their own workbooks put one table on several sheets: a sheet per country or legal entity,
per pay group, a year per sheet of leave. With no ``sheet`` setting the reader reads the first visible sheet
of cells (``sheets.choose_sheet``), and the people on the others would have no outcome and no mention: the
report says "sheet 'Singapore'" and its counts look plausible. Reading one such sheet and leaving the others
unsaid is a guess (principle 1), so ``check_other_sheets`` refuses the file in one line naming the sheets, and
``hrimport init`` (``tell``) writes the sheet it read into the config, naming the others.

Another sheet holds the same table when its header row, found among its first rows as the reader finds one
(``grid._find_header``), holds every column of the config the sheet read holds (``expected``); with no
config (init), when it holds the same header cells as the sheet read. A sheet of another table (lists,
instructions, a pivot) never counts, nor one with nothing under its header (a template, a sheet of this
month's joiners empty this month): it holds no one left unread. Hidden sheets do not count either: nobody sees them in Excel, the reader
passes over them when it chooses, and workbooks keep hidden copies of their table (last month's, a template)
that hold no one to import; a person who means one names it with ``sheet``.

Only the top of each other sheet is read, whatever its size (a sheet of 100,000 rows costs what its first
rows do): an XLSX/XLSM sheet's part is inflated as a stream and parsed until its ``HEADER_SCAN_ROWS``-th row,
and its shared strings table is streamed only as far as the strings those rows use, the entries counted in
C and only those strings parsed. An ODS or XLS workbook is opened with python-calamine after the reader's read
(whose checks have looked through every sheet first), and each sheet's first rows are taken from it.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, cast
from xml.etree import ElementTree

from hrimport.errors import HrimportError, InputFileError
from hrimport.listing import SHOWN, quoted, shorten, some
from hrimport.outcomes import SourceInfo
from hrimport.reader.grid import HEADER_SCAN_ROWS, _find_header, normalize_header
from hrimport.reader.number_formats import number_text
from hrimport.reader.sheets import Sheet, choose_sheet, xlsx_shared_strings, xlsx_sheets

log = logging.getLogger(__name__)

#: The most of a sheet part inflated to find its first rows: far more than any header and a few rows take
#: (a row of 16,384 cells is ~500 KB), so a sheet whose top is bigger is not looked at further.
MAX_TOP_BYTES = 16 << 20
#: The most of a shared strings table held at once while looking for an entry's end.
MAX_ENTRY_BYTES = 16 << 20
_CHUNK = 1 << 20
_HEADER_SHOWN = 2  # header cells the refusal names before "..."

Top = list[list[str]]  # a sheet's first rows, each cell as text


class SameTableError(InputFileError):
    """Other visible sheets of the workbook hold the table of the sheet read, and no ``sheet`` is set."""


def check_other_sheets(path: Path, info: SourceInfo, sheet: str | int | None, header_row: int | None,
                       expected: Iterable[str], *, tell: bool = False) -> None:
    """Refuse the workbook at ``path`` (``SameTableError``, exit 2) when no ``sheet`` is set and other visible
    sheets of it hold the table of the sheet the reader reads; with ``tell``, name them in
    ``info.same_table_sheets`` instead (``hrimport init``).

    For an XLSX/XLSM it is called before the sheet is read, for an ODS or XLS after (``info.sheets`` then
    says whether there are other sheets). Anything the workbook's parts say that this cannot read leaves it
    to the reader to say (logged for ``--debug``)."""
    if sheet is not None or info.format not in ("xlsx", "xlsm", "ods", "xls"):
        return
    if info.format in ("ods", "xls") and len(info.sheets) < 2:
        return
    rows = max(HEADER_SCAN_ROWS, header_row or 0) + 1  # a row under a header found on the last row scanned
    try:
        tops = _xlsx_tops(path, rows) if info.format in ("xlsx", "xlsm") else _calamine_tops(path, rows)
    except HrimportError:
        return  # the reader refuses the workbook in its own words
    except Exception:
        log.debug("the other sheets of %s were not looked at", path, exc_info=True)
        return
    if len(tops) < 2:
        return
    chosen, *_ = tops
    found = same_table_sheets(tops, header_row, expected)
    if found is None:
        return
    others, header = found
    if tell:
        info.same_table_sheets = others
        return
    raise SameTableError(same_table_line(path, [chosen, *others], header))


def same_table_sheets(tops: dict[str, Top], header_row: int | None, expected: Iterable[str]
                      ) -> tuple[list[str], list[str]] | None:
    """The other sheets of ``tops`` (the sheet read first, then the other visible sheets of cells, in the
    workbook's order) holding the table of the sheet read, and its header cells; None when none does.

    With ``expected`` (the config's columns) the table is the expected headers the sheet read holds, at least
    as many as the reader needs to take a row for the header; without (``hrimport init``), the header
    cells of the sheet read, at least two."""
    (_, top), *others = tops.items()
    wanted = {normalize_header(h) for h in expected if h.strip()}
    header = _header(top, header_row, wanted)
    if header is None:
        return None
    cells = {normalize_header(c) for c in header if c.strip()}
    if wanted:
        table = wanted & cells
        if len(table) < max(1, (len(wanted) + 1) // 2):
            return None  # not the config's table: the mapper names the columns missing
    else:
        table = cells
        if len(table) < 2:
            return None  # a title, not a table
    holding = []
    for name, rows in others:
        at = _header_index(rows, header_row, table)
        if at is None or not any(c.strip() for row in rows[at + 1:] for c in row):
            continue  # no header, or nobody under it (a template, this month's empty sheet): no one left unread
        found = rows[at]
        theirs = {normalize_header(c) for c in found if c.strip()}
        if (theirs >= table) if wanted else (theirs == table):
            holding.append(name)
    if not holding:
        return None
    return holding, [" ".join(c.split()) for c in header if c.strip()]


def same_table_line(path: Path, names: list[str], header: list[str]) -> str:
    """The one line refusing the workbook: the sheets holding the table (the sheet read first), its header,
    and the setting that chooses one."""
    both = "both" if len(names) == 2 else "all"
    shown = quoted(header[:_HEADER_SHOWN], quote=lambda h: f"'{h}'") + (", ..." if len(header) > _HEADER_SHOWN else "")
    return (f"{path}: sheets {sheet_names(names)} {both} hold this table (header: {shown}): name the one to "
            f"import with sheet = {json.dumps(names[0], ensure_ascii=False)} in [source] (a config per sheet imports each)")


def sheet_names(names: list[str]) -> str:
    """``'A' and 'B'``, ``'A', 'B' and 'C'``, or the first few and how many more."""
    listed = [f"'{shorten(n)}'" for n in names]
    if len(listed) > SHOWN:
        return some(listed[:SHOWN], len(listed))
    return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} and {listed[-1]}"


def _header(top: Top, header_row: int | None, expected: set[str]) -> list[str] | None:
    """The header row's cells among ``top``, found as the reader finds it, or None."""
    index = _header_index(top, header_row, expected)
    return None if index is None else top[index]


def _header_index(top: Top, header_row: int | None, expected: set[str]) -> int | None:
    """The position of the header row among ``top``, found as the reader finds it, or None."""
    if header_row is not None:
        return header_row - 1 if header_row <= len(top) else None
    rows = top[:HEADER_SCAN_ROWS]
    width = max((len(r) for r in rows), default=0)
    return _find_header([r + [""] * (width - len(r)) for r in rows], expected)


def _others(sheets: list[Sheet], chosen: int) -> list[Sheet]:
    """The sheets that may hold the table besides the one read: visible sheets of cells."""
    return [s for i, s in enumerate(sheets) if i != chosen and s.visible and s.kind == "worksheet"]


# --- ODS and XLS: python-calamine ---------------------------------------------------------------------------

def _calamine_tops(path: Path, rows: int) -> dict[str, Top]:
    """The first ``rows`` rows of the sheet the reader reads and of the workbook's other visible sheets of cells,
    as text. calamine lays out every sheet of an ODS or XLS on opening; the reader's checks have looked through
    each of them before (``extent``, ``xls_book``)."""
    import python_calamine as calamine

    from hrimport.reader.workbook import _calamine_sheets, _row_text

    with calamine.CalamineWorkbook.from_path(str(path)) as workbook:
        sheets = _calamine_sheets(workbook)
        chosen = choose_sheet(path, sheets, None).index
        others = _others(sheets, chosen)
        if not others:
            return {}
        return {s.name: [_row_text(row) for row in
                         workbook.get_sheet_by_name(s.name).to_python(skip_empty_area=False, nrows=rows)]
                for s in [sheets[chosen], *others]}


# --- XLSX and XLSM: the top of each sheet's part ---------------------------------------------------------------

def _xlsx_tops(path: Path, rows: int) -> dict[str, Top]:
    """The first ``rows`` rows of the sheet the reader reads and of the workbook's other visible sheets of cells,
    as text, each read from the top of its part."""
    with zipfile.ZipFile(path) as archive:
        sheets = xlsx_sheets(archive)
        chosen = choose_sheet(path, sheets, None).index
        others = [s for s in _others(sheets, chosen) if s.part]
        if not others or not sheets[chosen].part:
            return {}
        read = {s.name: _top_cells(archive, str(s.part), rows) for s in [sheets[chosen], *others]}
        wanted = sorted({int(value) for cells in read.values() for _, _, kind, value in cells if kind == "s"})
        strings = _shared_strings(archive, xlsx_shared_strings(archive), wanted) if wanted else {}
    return {name: _laid_out(cells, strings, rows) for name, cells in read.items()}


_Cell = tuple[int, int, str, str]  # row (0-based), column (0-based), kind ("s": a shared string's index), text


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


_LETTERS = re.compile(r"[A-Za-z]+")


def _column(reference: str | None, previous: int) -> int:
    """The 0-based column of a cell reference (``AB12``), or the one after ``previous`` without one."""
    letters = _LETTERS.match(reference or "")
    if letters is None:
        return previous + 1
    number = 0
    for letter in letters.group().upper():
        number = number * 26 + ord(letter) - 64
    return number - 1


def _top_cells(archive: zipfile.ZipFile, part: str, rows: int) -> list[_Cell]:
    """The cells of the first ``rows`` rows of a sheet part, inflated and parsed only as far as those rows."""
    cells: list[_Cell] = []
    parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(events=("end",))
    row = -1
    inflated = 0
    with archive.open(part) as stream:
        for chunk in _chunks(stream):
            inflated += len(chunk)
            if b"<!DOCTYPE" in chunk or b"<!ENTITY" in chunk:
                return cells  # no spreadsheet program writes one; the reader says what it makes of it
            parser.feed(chunk)
            for element in _ended(parser):
                tag = _local(element.tag)
                if tag == "sheetData":
                    return cells
                if tag != "row":
                    continue
                number = element.get("r")
                row = int(number) - 1 if number and number.isdigit() else row + 1
                if row >= rows:
                    return cells
                column = -1
                for cell in list(element):
                    if _local(cell.tag) != "c":
                        continue
                    column = _column(cell.get("r"), column)
                    kind, text = _cell_value(cell)
                    if text:
                        cells.append((row, column, kind, text))
                element.clear()
            if inflated > MAX_TOP_BYTES:
                break
    return cells


def _ended(parser: ElementTree.XMLPullParser[ElementTree.Element]) -> Iterator[ElementTree.Element]:
    """The elements ``parser`` has seen end since it was last asked."""
    for _, element in cast("Iterator[tuple[str, object]]", parser.read_events()):
        if isinstance(element, ElementTree.Element):
            yield element


def _cell_value(cell: ElementTree.Element) -> tuple[str, str]:
    """A ``<c>`` element's kind and text: a shared string's index (kind "s"), else its text as shown
    closely enough to tell a header (numbers in Excel's General format)."""
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        return "t", "".join(_texts(next((e for e in cell if _local(e.tag) == "is"), None)))
    value = next((e.text or "" for e in cell if _local(e.tag) == "v"), "")
    if kind == "s":
        return ("s", value.strip()) if value.strip().isdigit() else ("t", "")
    if kind == "b":
        return "t", "TRUE" if value.strip() == "1" else "FALSE" if value.strip() == "0" else value
    if kind == "n" and value:
        try:
            return "t", number_text(float(value))
        except ValueError:
            return "t", value
    return "t", value


def _texts(element: ElementTree.Element | None) -> Iterator[str]:
    """The text of a string item (``<si>``, ``<is>``): its ``<t>`` elements' and its runs', not its phonetic
    guide's (``<rPh>``)."""
    if element is None:
        return
    for child in element:
        tag = _local(child.tag)
        if tag == "t":
            yield child.text or ""
        elif tag == "r":
            yield from (t.text or "" for t in child if _local(t.tag) == "t")


def _laid_out(cells: list[_Cell], strings: dict[int, str], rows: int) -> Top:
    """The cells as rows of text, from row 1, each row as wide as its last cell."""
    top: Top = [[] for _ in range(min(rows, max((r for r, _, _, _ in cells), default=-1) + 1))]
    for row, column, kind, text in cells:
        line = top[row]
        if column >= len(line):
            line.extend([""] * (column + 1 - len(line)))
        line[column] = strings.get(int(text), "") if kind == "s" else text
    return top


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_CHUNK):
        yield chunk


_ENTRY = re.compile(rb"<si>.*?</si>", re.DOTALL)


def _shared_strings(archive: zipfile.ZipFile, part: str | None, wanted: list[int]) -> dict[int, str]:
    """The entries ``wanted`` (sorted indices) of the shared strings table, streamed only as far as the last
    of them: entries are counted by their closing tags (in C), and only the pieces holding a wanted one are
    parsed. A table written otherwise than ``<si>...</si>`` (a namespace prefix, empty ``<si/>`` entries)
    is parsed as a stream instead, as far."""
    if part is None:
        return {}
    found: dict[int, str] = {}
    keep = set(wanted)
    with archive.open(part) as stream:
        head = stream.read(_CHUNK)
        if b"<si/>" in head or b":si>" in head or b"<!" in head.split(b"?>", 1)[-1]:
            return _parsed_strings(head, stream, wanted)
        index, pending = 0, b""
        for chunk in itertools.chain([head], _chunks(stream)):  # a chunk at a time
            pending += chunk
            end = pending.rfind(b"</si>")
            if end < 0:
                if len(pending) > MAX_ENTRY_BYTES:
                    break
                continue
            end += len(b"</si>")
            piece, pending = pending[:end], pending[end:]
            if b"<si/>" in piece or b":si>" in piece:
                raise ValueError("a shared strings table in another form")  # rare: left to the reader
            count = piece.count(b"</si>")
            first = bisect.bisect_left(wanted, index)
            if first < len(wanted) and wanted[first] < index + count:
                for k, entry in enumerate(_ENTRY.findall(piece)):
                    if index + k in keep:
                        found[index + k] = "".join(_texts(ElementTree.fromstring(entry)))
            index += count
            if index > wanted[-1]:
                break
    return found


def _parsed_strings(head: bytes, stream: IO[bytes], wanted: list[int]) -> dict[int, str]:
    """``_shared_strings`` for a table in any form: parsed as a stream up to its last wanted entry."""
    found: dict[int, str] = {}
    keep = set(wanted)
    parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(events=("end",))
    index = 0
    for chunk in itertools.chain([head], _chunks(stream)):
        parser.feed(chunk)
        for element in _ended(parser):
            if _local(element.tag) != "si":
                continue
            if index in keep:
                found[index] = "".join(_texts(element))
            element.clear()
            index += 1
            if index > wanted[-1]:
                return found
    return found
