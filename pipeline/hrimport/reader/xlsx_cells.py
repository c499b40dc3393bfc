"""What an XLSX sheet's own XML says about the cells fastexcel's text flattens.

fastexcel, the fast XLSX path, hands every cell over as text and loses on the way what a person sees in
Excel in two ways:

- numbers: it writes at most nine decimals (``1.0000000001`` becomes ``1``) and knows no number format
  (an id shown as ``000123`` through ``000000`` becomes ``123``);
- types: a TRUE boolean and a cell holding the text ``true`` both come out as ``true``, a date cell and
  the text ``2020-01-01 00:00:00`` both as ``2020-01-01 00:00:00``, a time cell and the text
  ``1899-12-30 08:00:00`` alike.

``scan_xlsx_sheet`` streams the sheet part once, as bytes (no XML tree), in a thread while fastexcel
parses: it returns the numeric cells whose text must change (zero-padded styles, numbers a nine-decimal
rendering changes), those whose format shows them otherwise than they are read (``DisplayFormat``: 80%
for 0.8, which the report tells) and the text cells whose text looks like fastexcel's rendering of a
boolean, date or time, which the reader then leaves exactly as they are. Literal ``bytes.find`` calls do the looking
wherever they can: they run at memory speed, a regular expression at a tenth of it.

Cells without an ``r="A1"`` reference (rare writers) cannot be placed and are left as read.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from html import unescape
from pathlib import Path
from typing import IO

from hrimport.reader.display_formats import DisplayFormat
from hrimport.reader.no_such_dates import DATE, shown_date_time
from hrimport.reader.number_formats import (
    ERROR_MARK,
    NumberStyle,
    SheetNumber,
    ShownNumber,
    ZeroPadded,
    number_text,
)

# A stored number whose text a 9-decimal rendering would change: an exponent, more than nine decimals,
# more than sixteen digits, below 1e-4 (General shows an exponent there), or a negative zero. The
# lookahead changes no match: it passes over the usual value (up to sixteen digits: a count, a date's
# serial, a shared string's index) at once, where the alternatives would each try it (2-4x faster).
_LOSSY = re.compile(
    rb"<v>(?![0-9]{1,16}</v>)([^<]*(?:[eE]|\.\d{10}|\d{16}\.|\d{17})[^<]*|-?0\.0000[^<]*|-0(?:\.0*)?)</v>")
_CHUNK = 1 << 22

# Texts fastexcel also writes for a typed cell: a boolean, a date at midnight, a time (day 0 of Excel's
# calendar). ``LOOK_ALIKE_ANCHORS`` are literal pieces of the XML around such a text, found fast; each
# find is then checked against the whole pattern.
LOOK_ALIKE = re.compile(r"true|false|\d{4}-\d\d-\d\d 00:00:00|1899-12-3[01] \d\d:\d\d:\d\d")
LOOK_ALIKE_ANCHORS = (b">true<", b">false<", b" 00:00:00<", b">1899-12-3")


@dataclass
class SheetScan:
    """What the sheet's XML says that fastexcel's text does not."""

    numbers: list[SheetNumber] = field(default_factory=list)
    # (row, column), 0-based: text cells whose text is one fastexcel also writes for a typed cell
    look_alike_text: set[tuple[int, int]] = field(default_factory=set)
    # (row, column, formula), 0-based: the cells holding a formula (their value is its last result); the
    # formula as Excel shows it, or "" for a cell sharing another cell's formula
    formulas: list[tuple[int, int, str]] = field(default_factory=list)
    # the same for the formula cells saved without a result (``_formula_cells``): the libraries read them as
    # empty cells, where Excel shows what the formula calculates
    uncalculated: list[tuple[int, int, str]] = field(default_factory=list)
    # (row, column, text read, text shown, format), 0-based: the numbers a ``DisplayFormat`` shows otherwise
    # than they are read (0.8 through 0% as 80%); plain tuples: a column of them is 100,000 cells
    shown: list[ShownNumber] = field(default_factory=list)
    # the same as ``formulas`` for the formula cells saved with a value in a workbook that asks to be
    # calculated again when opened (``xlsx_workbook_settings``): the value is a stand-in, not a result
    to_recalculate: list[tuple[int, int, str]] = field(default_factory=list)
    # (row, column, number stored, text Excel shows), 0-based: the date cells showing a day that never was, or
    # that Excel cannot show (``no_such_dates.shown_date_time``)
    no_such_dates: list[tuple[int, int, str, str]] = field(default_factory=list)
    # (row, column, text Excel shows), 0-based: the cells of a date or time format that the libraries read
    # otherwise than Excel shows them (``no_such_dates.shown_date_time``: 1.5 as hh:mm is 12:00:00)
    dates_and_times: list[tuple[int, int, str]] = field(default_factory=list)


def scan_xlsx_sheet(
    archive_path: str,
    part: str,
    styles: dict[int, NumberStyle],
    *,
    lossy: bool,
    shared_strings: str | None = None,
    formulas: bool = False,
    asks_recalculation: bool = False,
    date_styles: dict[int, str] | None = None,
    date_system: int = 1900,
) -> SheetScan:
    """One pass over a sheet part: the numeric cells with a zero-padded style or one a ``DisplayFormat``
    shows otherwise (``styles``), with ``lossy`` also every number a 9-decimal rendering would change, and
    the text cells that look like a typed cell's rendering (inline and formula strings, and entries of the
    ``shared_strings`` part); with ``formulas``, the cells holding a formula (for the report's provenance),
    those saved with a value as ``to_recalculate`` where the workbook ``asks_recalculation`` on opening; the
    cells of ``date_styles`` (``no_such_dates.xlsx_date_styles``) that the libraries read otherwise than Excel
    shows them in the workbook's ``date_system`` (``no_such_dates.shown_date_time``).

    About 0.5 s of CPU for a 100k x 40 sheet, most of it inflating the archive member and the one
    regular expression for lossy numbers.
    """
    look_alike = look_alike_shared_strings(archive_path, shared_strings) if lossy and shared_strings else set()
    scanner = SheetScanner(styles, lossy=lossy, look_alike_strings=look_alike, formulas=formulas,
                           asks_recalculation=asks_recalculation, date_styles=date_styles,
                           date_system=date_system)
    with zipfile.ZipFile(archive_path) as archive, archive.open(part) as stream:
        for piece in _pieces(stream, b"<c "):
            scanner.add(piece)
    return scanner.result()


class SheetScanner:
    """``scan_xlsx_sheet``'s pass, fed the sheet's XML a piece at a time (pieces that cut no cell in two):
    the chunked read (``xlsx_stream``) scans each piece fastexcel has read. ``look_alike_strings``: the
    positions of the shared strings that look like a typed cell's rendering (``look_alike_shared_strings``);
    ``anchors``: those of ``LOOK_ALIKE_ANCHORS`` to look for (the renderings fastexcel's text holds: a
    text cell can only look like one that is there); ``asks_recalculation``: the workbook asks to be
    calculated again when opened, so that no value saved with a formula is its result; ``date_styles``: the
    styles whose cells show a date or a time (``no_such_dates.xlsx_date_styles``), in ``date_system``."""

    def __init__(self, styles: dict[int, NumberStyle], *, lossy: bool, look_alike_strings: set[int],
                 formulas: bool, anchors: tuple[bytes, ...] = LOOK_ALIKE_ANCHORS,
                 asks_recalculation: bool = False, date_styles: dict[int, str] | None = None,
                 date_system: int = 1900) -> None:
        date_styles = date_styles or {}
        self.padded = {s: f for s, f in styles.items() if isinstance(f, ZeroPadded)}
        self.displayed = {s: f for s, f in styles.items() if isinstance(f, DisplayFormat)}
        self.lossy, self.formulas, self.asks_recalculation = lossy, formulas, asks_recalculation
        self.anchors = anchors
        # a style's index, and the value when it follows at once (<c r="B2" s="3"><v>0.8</v>: most writers);
        # any other cell of the style (more attributes after it, a formula before its value) is left to
        # _numeric_cell
        self.style_hit = (
            re.compile(rb' s="(' + b"|".join(str(s).encode() for s in sorted(styles))
                       + rb')"(?:(?: t="n")?>(?:<v>([^<]*)</v>)?)?')
            if styles else None
        )
        self.shared_hit = None
        if lossy and look_alike_strings and anchors:
            indexes = b"|".join(str(i).encode() for i in sorted(look_alike_strings))
            self.shared_hit = re.compile(rb"<v>(" + indexes + rb")</v>")
        # a cell of a date style holding 0 or 60 (or a time on that day), a negative number or one of seven digits
        # (past Excel's calendar), in whatever order its attributes come and after its formula: one regular
        # expression, which passes over every other cell at once (0.1 s of a 100k x 40 sheet); such cells are
        # few, and each is looked at again (``_numeric_cell``). Every cell of a time style or of a built-in
        # format whose date libraries do not all read (``time_styles``) is looked at: they are rare in HR exports
        self.date_system, self.date_styles = date_system, date_styles
        dates = sorted(s for s, shape in date_styles.items() if shape == DATE)
        times = sorted(s for s, shape in date_styles.items() if shape != DATE)
        self.day_hit = (
            re.compile(rb' s="(' + b"|".join(str(s).encode() for s in dates)
                       + rb')"(?: [\w:]+="[^"]*")*>(?:<f\b[^>]*/>|<f\b[^>]*>[^<]*</f>)?'
                       + rb'<v>(?:0|60|-[^<]*|[0-9]{7,}|[0-9.]+[eE][^<]*)(?:\.[0-9]+)?</v>')
            if dates else None
        )
        self.time_hit = (
            re.compile(rb' s="(' + b"|".join(str(s).encode() for s in times)
                       + rb')"(?: [\w:]+="[^"]*")*>(?:<f\b[^>]*/>|<f\b[^>]*>[^<]*</f>)?<v>')
            if times else None
        )
        self.days: list[tuple[bytes, bytes, int]] = []  # (reference, stored value, style) of the cells found
        self.cells: dict[bytes, tuple[bytes, int | None]] = {}  # cell reference -> (stored value, padded style)
        self.shown: list[ShownNumber] = []  # the cells of a displayed style shown otherwise than read
        self.texts: list[bytes] = []  # references of look-alike text cells
        self.formula_cells: list[tuple[bytes, str, bool]] = []

    def add(self, piece: bytes) -> None:
        cells = self.cells
        if self.formulas:
            self.formula_cells.extend(_formula_cells(piece))
        for error_ref, error in _error_cells(piece):
            cells[error_ref] = (error, None)
        for hit in (self.day_hit, self.time_hit):
            if hit is not None:
                for m in hit.finditer(piece):
                    day = _numeric_cell(piece, piece.rfind(b"<c ", 0, m.start()))
                    if day is not None:
                        self.days.append((*day, int(m.group(1))))
        if self.style_hit is not None:
            padded = self.padded
            displayed: list[tuple[bytes, bytes, int]] = []  # (reference, stored value, style)
            for m in self.style_hit.finditer(piece):
                start = piece.rfind(b"<", 0, m.start())
                if m.group(2) is not None and piece.startswith(b'<c r="', start):  # without the finds of _numeric_cell
                    cell: tuple[bytes, bytes] | None = (piece[start + 6 : piece.find(b'"', start + 6)], m.group(2))
                else:
                    cell = _numeric_cell(piece, start)
                if cell is not None:
                    style = int(m.group(1))
                    if style in padded:
                        cells[cell[0]] = (cell[1], style)
                    else:
                        displayed.append((*cell, style))
            if displayed:  # rendered a piece at a time: the piece's cells, not the sheet's, wait in memory
                self.shown.extend(_shown(displayed, self.displayed))
        if not self.lossy:
            return
        for m in _LOSSY.finditer(piece):
            cell = _numeric_cell(piece, piece.rfind(b"<c ", 0, m.start()))
            if cell is not None and cell[0] not in cells and cell[1] == m.group(1):
                cells[cell[0]] = (cell[1], None)
        self.texts.extend(_look_alike_cells(piece, self.anchors))
        if self.shared_hit is not None:
            for m in self.shared_hit.finditer(piece):
                ref = _cell_reference(piece, piece.rfind(b"<c ", 0, m.start()), (b"s",))
                if ref is not None:
                    self.texts.append(ref)

    def result(self) -> SheetScan:
        placed = [(*p, f, calculated) for ref, f, calculated in self.formula_cells if (p := _position(ref)) is not None]
        with_value = sorted((row, column, f) for row, column, f, calculated in placed if calculated)
        days = sorted((*at, stored.decode(), style) for ref, stored, style in self.days
                      if (at := _position(ref)) is not None)
        if self.asks_recalculation and days:  # a formula's saved value is a stand-in (xlsxwriter's 0): no day at all
            stand_ins = {(row, column) for row, column, _ in with_value}
            days = [day for day in days if day[:2] not in stand_ins]
        held: list[tuple[int, int, str, str]] = []
        shown: list[tuple[int, int, str]] = []
        for row, column, stored, style in days:
            try:
                seen = shown_date_time(float(stored), self.date_styles[style], self.date_system)
            except ValueError:
                continue
            if seen is not None:
                if seen[0]:
                    held.append((row, column, stored, seen[1]))
                else:
                    shown.append((row, column, seen[1]))
        return SheetScan(_placed(self.cells, self.padded), {p for p in map(_position, self.texts) if p is not None},
                         [] if self.asks_recalculation else with_value,
                         sorted((row, column, f) for row, column, f, calculated in placed if not calculated),
                         self.shown, with_value if self.asks_recalculation else [], held, shown)


def _formula_cells(piece: bytes) -> Iterator[tuple[bytes, str, bool]]:
    """(reference, formula, saved with a result) of the cells in ``piece`` holding a formula (``<f>A2*2</f>``;
    "" for a cell sharing another's, ``<f t="shared" si="0"/>``). Literal finds: a sheet without formulas
    costs one."""
    at = piece.find(b"<f")
    while at >= 0:
        if piece[at + 2 : at + 3] in (b">", b" "):
            end = piece.find(b">", at)
            text = ""
            after = end + 1  # where the formula element ends
            if end > 0 and piece[end - 1 : end] != b"/":
                close = piece.find(b"</f>", end)
                if close > 0:
                    text = "=" + unescape(piece[end + 1 : close].decode("utf-8", "replace"))
                    after = close + 4
            start = piece.rfind(b"<c ", 0, at)
            if start >= 0:
                tag_end = piece.find(b">", start)
                ref = piece.find(b' r="', start, tag_end)
                if ref >= 0:
                    yield piece[ref + 4 : piece.find(b'"', ref + 4)], text, _has_result(piece, start, tag_end, after)
        at = piece.find(b"<f", at + 1)


def _has_result(piece: bytes, start: int, tag_end: int, after: int) -> bool:
    """Whether the formula cell whose tag spans ``start``-``tag_end`` was saved with its result: a ``<v>``
    after its formula (ending at ``after``) holding a value, or empty in a cell of type ``str``, where Excel
    saves a formula whose result is empty text. openpyxl and other programs that do not calculate write
    ``<v/>`` or no ``<v>`` at all."""
    cell_end = piece.find(b"</c>", after)
    value = piece.find(b"<v", after, len(piece) if cell_end < 0 else cell_end)
    if value < 0:
        return False
    if piece.startswith(b"<v>", value) and not piece.startswith(b"<v></v>", value):
        return True
    return b' t="str"' in piece[start:tag_end]


def _error_cells(piece: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(reference, error) of the cells in ``piece`` holding an error value (``t="e"``: ``#N/A``, ``#DIV/0!``,
    a formula's last result or a pasted one). fastexcel and python-calamine read them as empty cells, where
    Excel shows the error. Literal finds: a sheet without errors costs one."""
    at = piece.find(b' t="e"')
    while at >= 0:
        start = piece.rfind(b"<c ", 0, at)
        ref = _cell_reference(piece, start, (b"e",))
        if ref is not None and (value := _stored_value(piece, piece.find(b">", start))) is not None:
            yield ref, value
        at = piece.find(b' t="e"', at + 1)


def _look_alike_cells(piece: bytes, anchors: Iterable[bytes] = LOOK_ALIKE_ANCHORS) -> Iterator[bytes]:
    """References of the inline- and formula-string cells in ``piece`` whose text looks typed, found
    around ``anchors`` (``LOOK_ALIKE_ANCHORS``: all of them)."""
    for anchor in anchors:
        at = piece.find(anchor)
        while at >= 0:
            start = piece.rfind(b">", 0, at + 1) + 1
            end = piece.find(b"<", at + 1)
            if LOOK_ALIKE.fullmatch(piece[start:end].decode("ascii", "replace")):
                ref = _cell_reference(piece, piece.rfind(b"<c ", 0, at), (b"inlineStr", b"str"))
                if ref is not None:
                    yield ref
            at = piece.find(anchor, at + 1)


def shared_string_positions(archive_path: str | Path, part: str,
                            starts: Callable[[bytes], Iterable[int]]) -> set[int]:
    """Positions of the shared strings that ``starts`` picks: the table is streamed in pieces cut before an
    ``<si>`` element, ``starts(piece)`` gives the offsets in the piece of the entries it picks, and an
    entry's position is the number of ``<si>`` elements before it. Empty when the archive has no ``part``."""
    found: set[int] = set()
    with zipfile.ZipFile(archive_path) as archive:
        if part not in archive.namelist():
            return found
        with archive.open(part) as stream:
            before = 0
            for piece in _pieces(stream, b"<si"):
                found.update(before + _count_entries(piece, 0, start) for start in starts(piece))
                before += _count_entries(piece, 0, len(piece))
    return found


def look_alike_shared_strings(archive_path: str, part: str) -> set[int]:
    """Positions of the shared strings whose whole text looks like a typed cell's rendering. Phonetic
    guides (``<rPh>``) are not part of the text a cell shows."""
    return shared_string_positions(archive_path, part, _look_alike_starts)


def _look_alike_starts(piece: bytes) -> Iterator[int]:
    for anchor in LOOK_ALIKE_ANCHORS:
        at = piece.find(anchor)
        while at >= 0:
            start = piece.rfind(b"<si", 0, at)
            end = piece.find(b"</si>", at)
            if start >= 0 and end >= 0:
                text = re.sub(rb"<rPh\b.*?</rPh>|<[^>]*>", b"", piece[start:end], flags=re.DOTALL)
                if LOOK_ALIKE.fullmatch(text.decode("utf-8", "replace")):
                    yield start
            at = piece.find(anchor, at + 1)


def _count_entries(piece: bytes, start: int, end: int) -> int:
    return piece.count(b"<si>", start, end) + piece.count(b"<si ", start, end)


def _pieces(stream: IO[bytes], tag: bytes) -> Iterator[bytes]:
    """The XML in pieces that each end before a ``tag`` (``<c ``: a cell), so no element is cut in two."""
    carry = b""
    while chunk := stream.read(_CHUNK):
        buffer = carry + chunk
        cut = buffer.rfind(tag)
        if cut <= 0:
            carry = buffer
            continue
        yield buffer[:cut]
        carry = buffer[cut:]
    if carry:
        yield carry


def _cell_reference(piece: bytes, start: int, kinds: tuple[bytes, ...]) -> bytes | None:
    """The ``r="A1"`` reference of the cell whose tag starts at ``start`` if its ``t`` is one of ``kinds``."""
    if start < 0 or not piece.startswith(b"<c ", start):
        return None
    tag = piece[start : piece.find(b">", start)]
    kind = tag.find(b' t="')
    if kind < 0 or tag[kind + 4 : tag.find(b'"', kind + 4)] not in kinds:
        return None
    ref = tag.find(b' r="')
    return None if ref < 0 else tag[ref + 4 : tag.find(b'"', ref + 4)]


def _numeric_cell(piece: bytes, start: int) -> tuple[bytes, bytes] | None:
    """(reference, stored value) of the numeric cell whose tag starts at ``start``, or None.

    Plain ``find`` calls rather than a regular expression: this runs once per formatted cell.
    """
    if start < 0 or not piece.startswith(b"<c ", start):
        return None
    end = piece.find(b">", start)
    tag = piece[start:end]
    if end < 0 or tag.endswith(b"/"):
        return None  # an empty cell
    kind = tag.find(b' t="')
    if kind >= 0 and not tag.startswith(b'n"', kind + 4):
        return None  # text, boolean, error or ISO date: not shown through a number format
    ref = tag.find(b' r="')
    value = _stored_value(piece, end) if ref >= 0 else None
    return None if value is None else (tag[ref + 4 : tag.find(b'"', ref + 4)], value)


def _stored_value(piece: bytes, end: int) -> bytes | None:
    """The ``<v>`` of the cell whose opening tag ends at ``end`` (its ``>``); None for a cell without one
    (``<c .../>``)."""
    if end < 0 or piece[end - 1 : end] == b"/":
        return None
    close = piece.find(b"</c>", end)
    value = piece.find(b"<v>", end, close)
    return None if value < 0 else piece[value + 3 : piece.find(b"</v>", value)]


def _placed(cells: dict[bytes, tuple[bytes, int | None]], padded: dict[int, ZeroPadded]) -> list[SheetNumber]:
    """The cells found, with their 0-based positions and the text Excel shows."""
    found = []
    for ref, (stored_bytes, style) in cells.items():
        position = _position(ref)
        if position is None:
            continue
        stored = stored_bytes.decode()
        text: str | None
        if stored.startswith(ERROR_MARK):  # an error value (``_error_cells``): shown as it is
            found.append(SheetNumber(position[0], position[1], stored, stored))
            continue
        if style is not None and stored.isdigit():  # an id: no float round trip
            text = padded[style].show_whole(int(stored))
        else:
            try:
                value = float(stored)
            except ValueError:
                continue
            text = number_text(value) if style is None else padded[style].show(value)
        if text is not None:
            code = padded[style].code if style is not None else ""
            found.append(SheetNumber(position[0], position[1], stored, text, code))
    return found


def _shown(cells: list[tuple[bytes, bytes, int]], formats: dict[int, DisplayFormat]) -> list[ShownNumber]:
    """The cells found of a displayed style whose text shown differs from the number read (``SheetScan.shown``):
    each value is rendered once per format and piece (a column of percentages holds a few values many times)."""
    found = []
    texts: dict[tuple[int, bytes], tuple[str, str] | None] = {}
    position = _position
    for ref, stored, style in cells:
        key = (style, stored)
        both = texts.get(key, _UNSEEN)
        if both is _UNSEEN:
            both = texts[key] = _read_and_shown(stored, formats[style])
        if both is not None and (at := position(ref)) is not None:
            found.append((at[0], at[1], both[0], both[1], formats[style].code))
    return found


_UNSEEN = ("", "")


def _read_and_shown(stored: bytes, display: DisplayFormat) -> tuple[str, str] | None:
    """The text a stored number is read as and the text Excel shows, or None when they are the same."""
    try:
        value = float(stored)
    except ValueError:
        return None
    read, shown = number_text(value), display.show(value)
    return None if shown is None or shown == read else (read, shown)


def _position(ref: bytes) -> tuple[int, int] | None:
    """``b"B3"`` as (row 2, column 1), 0-based; None for a reference that is not one."""
    letters = ref.rstrip(b"0123456789")
    digits = ref[len(letters) :]
    if not letters or not digits or not letters.isalpha():
        return None
    return int(digits) - 1, _column_index(letters)


@cache
def _column_index(letters: bytes) -> int:
    index = 0
    for letter in letters.upper():
        index = index * 26 + letter - 64
    return index - 1


def nine_decimals(value: float) -> str:
    """A number as fastexcel writes it as text: nine decimals, trailing zeros trimmed."""
    return f"{value:.9f}".rstrip("0").rstrip(".")
