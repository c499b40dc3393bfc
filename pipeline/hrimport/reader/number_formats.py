"""Numbers as Excel shows them: the general rule, zero-padded number formats (``000000``), and the other
formats a number is shown through (``0%``, ``#,##0.00``).

Many HR systems store employee numbers as numeric cells with a display format such as ``000000`` or
``"EMP"0000``: the person sees ``000123`` while the cell holds 123. Every fast reader returns ``123``.
Here a format code is recognised as zero-padded (``zero_padded_format``) and a number shown through it
(``ZeroPadded.show``): only zero padding changes the characters an id is made of, so only it is applied.
A format showing decimals, thousands separators, a percentage or a currency (``display_format``) is not:
the number stored is read and sent, and ``DisplayFormat.show`` gives the text Excel shows for the report.

The formats a workbook's styles use are read once from its small style parts (``xlsx_number_styles``), and
only when some style pads or displays numbers are the sheet's cells looked at (``xlsx_cells.scan_xlsx_sheet``);
in an ODS the same is done for its number, percentage and currency styles (``ods_sheet_numbers``), and in
an XLS for its FORMAT records (``xls_sheet_numbers``, which also finds the error cells of an XLS). Dates
are left to the reader's own rendering.
"""

from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import IO, TYPE_CHECKING, NamedTuple
from xml.etree import ElementTree

from hrimport.reader.display_formats import (
    BUILT_IN_FORMATS,
    COLOUR,
    LOCAL_BUILT_IN_FORMATS,
    DisplayFormat,
    code_sections,
    display_format,
)

if TYPE_CHECKING:
    import xlrd

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def number_text(value: float) -> str:
    """A number as Excel's General format shows it: whole numbers of up to 16 digits in full (ids are
    never ``1.2E+10``), anything else with at most 15 significant digits (``0.1 + 0.2`` reads as 0.3,
    ``1e-10`` stays ``1e-10``)."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.15g}"


@dataclass(frozen=True)
class ZeroPadded:
    """A number format that shows a whole number with at least ``digits`` digits, between literals."""

    digits: int
    prefix: str = ""
    suffix: str = ""
    sections: int = 1  # a format with a section for negatives or zero is only applied to positives

    def show(self, value: float) -> str | None:
        """The text Excel shows for ``value``, or None when this format does not decide it alone."""
        if not math.isfinite(value) or (self.sections > 1 and value <= 0):
            return None
        if value.is_integer():
            whole = int(value)
        else:  # Excel rounds half away from zero to the digits the format shows
            whole = int(Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        return self.show_whole(whole)

    @property
    def code(self) -> str:
        """The format as Excel writes it: ``000000``, ``"EMP"0000`` (for the report)."""
        prefix, suffix = (f'"{t}"' if t else "" for t in (self.prefix, self.suffix))
        return f"{prefix}{'0' * self.digits}{suffix}"

    def show_whole(self, whole: int) -> str:
        """The text Excel shows for a whole number (one section: the minus goes first)."""
        sign = "-" if whole < 0 else ""
        return f"{sign}{self.prefix}{abs(whole):0{self.digits}d}{self.suffix}"


# One token of a format code's section: a quoted literal, an escaped character, a [bracket] (colour or
# condition), a run of zeros, or any other single character.
_TOKEN = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|0+|.', re.DOTALL)
# Characters Excel shows as themselves without quotes (ECMA-376 Part 1, 18.8.31 numFmts).
_PLAIN_LITERALS = set("$-+/():!^&'~{}<>= ")


def zero_padded_format(code: str) -> ZeroPadded | None:
    """The zero padding a number format code asks for (``000000``, ``"EMP"0000``), or None.

    Only codes made of literals around one run of two or more zeros qualify: a decimal point, a
    thousands separator, ``#``, a percent sign, an exponent or a condition make it some other format.
    """
    sections = code_sections(code)
    first = sections[0]
    prefix: list[str] = []
    suffix: list[str] = []
    digits = 0
    for token in _TOKEN.findall(first):
        if token.startswith("0"):
            if digits:
                return None
            digits = len(token)
            continue
        if token.startswith('"'):
            literal = token[1:-1]
        elif token.startswith("\\"):
            literal = token[1:]
        elif token.startswith("["):
            if COLOUR.fullmatch(token):
                continue  # a colour does not change the characters
            return None
        elif token in _PLAIN_LITERALS:
            literal = token
        else:
            return None
        (suffix if digits else prefix).append(literal)
    if digits < 2:
        return None
    return ZeroPadded(digits, "".join(prefix), "".join(suffix), len(sections))


#: How a number format changes what a person sees: applied (zero padding), or told (a ``DisplayFormat``).
NumberStyle = ZeroPadded | DisplayFormat


def number_style(code: str) -> NumberStyle | None:
    """The zero padding a format code asks for, or else how it displays numbers, or None (General, text,
    dates, times, and formats not rendered)."""
    return zero_padded_format(code) or display_format(code)


def xlsx_number_styles(archive: zipfile.ZipFile) -> dict[int, NumberStyle]:
    """The cell style indexes (``s="N"`` on a cell) whose number format is zero-padded or displays numbers
    otherwise than they are read (``DisplayFormat``).

    ``xl/styles.xml`` is small (kilobytes) whatever the size of the sheets; it holds the custom number
    formats (``numFmts``) and the cell formats (``cellXfs``) cells point to by position. Built-in formats
    (ids below 164) are used by id, without being written out (``BUILT_IN_FORMATS``); none is zero-padded.
    """
    try:
        data = archive.read("xl/styles.xml")
    except KeyError:
        return {}
    root = ElementTree.fromstring(data)
    written = {fmt.get("numFmtId", ""): fmt.get("formatCode", "") for fmt in root.iterfind(f"{_MAIN}numFmts/{_MAIN}numFmt")}
    codes = {str(key): code for key, code in BUILT_IN_FORMATS.items()} | written
    formats = {key: style for key, code in codes.items() if (style := _cached_style(code)) is not None}
    return {
        index: formats[xf.get("numFmtId", "0")]
        for index, xf in enumerate(root.iterfind(f"{_MAIN}cellXfs/{_MAIN}xf"))
        if xf.get("numFmtId", "0") in formats
    }


@cache
def _cached_style(code: str) -> NumberStyle | None:
    return number_style(code)


#: How every error value Excel shows starts (``#N/A``, ``#DIV/0!``, ``#REF!``...); no number does.
ERROR_MARK = "#"


@dataclass(frozen=True)
class SheetNumber:
    """A numeric cell the reader must show differently from its library: where, its stored value, and the
    text Excel shows. An error value is one too (``stored`` starts with ``ERROR_MARK``: ``#N/A`` as an XLSX
    stores it, or the mark alone; ``text`` the error shown): the libraries read it as an empty cell."""

    row: int  # 0-based: Excel row number - 1
    column: int  # 0-based: A is 0
    stored: str  # the value as written in the file (``<v>1E-10</v>``)
    text: str
    format: str = ""  # the zero-padded number format that made ``text`` (``ZeroPadded.code``), if one did


_ODS = {
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "number": "urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0",
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
}


def _q(prefix: str, name: str) -> str:
    return f"{{{_ODS[prefix]}}}{name}"


def _ods_number_style(element: ElementTree.Element) -> ZeroPadded | None:
    """A ``number:number-style`` that shows whole numbers with leading zeros (``number:min-integer-digits``,
    no decimals, no grouping), with its ``number:text`` literals around the number."""
    prefix: list[str] = []
    suffix: list[str] = []
    digits = 0
    for child in element:
        if child.tag == _q("number", "number"):
            if digits or int(child.get(_q("number", "decimal-places"), "0") or 0) or child.get(
                _q("number", "grouping")
            ) == "true":
                return None
            digits = int(child.get(_q("number", "min-integer-digits"), "1") or 1)
        elif child.tag == _q("number", "text"):
            (suffix if digits else prefix).append(child.text or "")
        elif child.tag != _q("style", "map") and child.tag != _q("style", "text-properties"):
            return None  # scientific, fraction...: not plain zero padding
    if digits < 2:
        return None
    return ZeroPadded(digits, "".join(prefix), "".join(suffix))


#: A number shown otherwise than it is read (``DisplayFormat``): (row, column, text read, text shown, format),
#: 0-based; plain tuples, as a column of them may be 100,000 cells.
ShownNumber = tuple[int, int, str, str, str]


class SheetNumbers(NamedTuple):
    """What an ODS or XLS sheet's own styles say of its numbers: the cells the reader shows otherwise than
    its library (zero padding, errors), and those a ``DisplayFormat`` shows otherwise than they are read."""

    numbers: list[SheetNumber]
    shown: list[ShownNumber]


_ODS_NUMBER_STYLES = {_q("number", name) for name in ("number-style", "percentage-style", "currency-style")}


def _ods_display_code(element: ElementTree.Element, codes: dict[str, str]) -> str | None:
    """The format code (Excel's notation) of an ODS number, percentage or currency style: its number's
    digits and decimals, its texts, its currency symbol, and the sections LibreOffice writes as styles
    applied to positive values (``style:map``, from ``codes``: the styles before it). None for General
    (no ``number:decimal-places``) and what a ``DisplayFormat`` does not render."""
    percentage = element.tag == _q("number", "percentage-style")
    parts: list[str] = []
    maps: dict[str, str] = {}
    numbers = 0
    for child in element:
        tag = child.tag
        if tag == _q("number", "number"):
            places = child.get(_q("number", "decimal-places"))
            numbers += 1
            if places is None or numbers > 1 or len(child):
                return None  # General, a second number, text inside the number
            decimals = int(places or 0)
            minimum = min(int(child.get(_q("number", "min-decimal-places"), places) or 0), decimals)
            digits = int(child.get(_q("number", "min-integer-digits"), "1") or 0)
            integer = "0" * digits or "#"
            if child.get(_q("number", "grouping")) == "true":
                integer = "#" * max(4 - digits, 0) + "0" * digits
                integer = f"{integer[0]},{integer[1:]}"
            parts.append(integer + (f".{'0' * minimum}{'#' * (decimals - minimum)}" if decimals else ""))
        elif tag == _q("number", "text"):
            text = child.text or ""
            # a percentage style's % scales the number as Excel's does
            parts.append("%".join(_quoted(t) for t in text.split("%")) if percentage else _quoted(text))
        elif tag == _q("number", "currency-symbol"):
            parts.append(_quoted(child.text or ""))
        elif tag == _q("style", "map"):
            maps["".join((child.get(_q("style", "condition")) or "").split())] = child.get(
                _q("style", "apply-style-name"), "")
        elif tag not in (_q("style", "text-properties"), _q("number", "fill-character")):
            return None  # scientific, fraction, a date's parts
    own = "".join(parts)
    if not numbers or not maps:
        return own if numbers else None
    if set(maps) == {"value()>=0"}:  # own: the negatives
        before = [codes.get(maps["value()>=0"])]
    elif set(maps) == {"value()>0", "value()<0"}:  # own: zero
        before = [codes.get(maps["value()>0"]), codes.get(maps["value()<0"])]
    else:
        return None
    sections = [code for code in before if code is not None]
    return ";".join([*sections, own]) if len(sections) == len(before) else None


def _quoted(text: str) -> str:
    return f'"{text.replace(chr(34), "")}"' if text else ""


def ods_sheet_numbers(archive_path: str, sheet: str) -> SheetNumbers:
    """The number cells of one ODS sheet whose cell style pads with zeros, and the text they show; and those
    whose style shows them otherwise than they are read (decimals, percentages, currencies), with the text
    the file holds for them (LibreOffice saves the text it shows, in its language) or else the text the
    style shows.

    ``content.xml`` is streamed: its styles come before the sheets, so a file without such a style is left
    after the styles. Repeated rows and columns are counted, not expanded.
    """
    scan = _OdsScan(sheet)
    with zipfile.ZipFile(archive_path) as archive:
        members = [m for m in ("styles.xml", "content.xml") if m in archive.namelist()]
        for member in members:
            with archive.open(member) as stream:
                if scan.part(stream, member == "content.xml"):
                    break
    return SheetNumbers(scan.found, scan.shown)


class _OdsScan:
    """``ods_sheet_numbers``' pass: the number styles of ``styles.xml`` then ``content.xml``, then the cells
    of ``sheet``."""

    def __init__(self, sheet: str) -> None:
        self.sheet = sheet
        self.codes: dict[str, str] = {}  # number style -> its format code, for the styles mapping to it
        self.number_styles: dict[str, NumberStyle] = {}
        self.cell_styles: dict[str, NumberStyle] = {}
        self.found: list[SheetNumber] = []
        self.shown: list[ShownNumber] = []

    def part(self, stream: IO[bytes], has_sheets: bool) -> bool:
        """Collect the number styles of one part, and in ``content.xml`` the cells of ``sheet`` they show
        otherwise. True when the scan is over."""
        number_styles, cell_styles = self.number_styles, self.cell_styles
        in_sheet = False
        row = col = 0
        column_styles: list[tuple[int, str | None]] = []  # (columns repeated, default cell style)
        for event, element in ElementTree.iterparse(stream, events=("start", "end")):
            tag = element.tag
            if event == "end" and tag in _ODS_NUMBER_STYLES:
                name = element.get(_q("style", "name"), "")
                code = _ods_display_code(element, self.codes)
                if code is not None:
                    self.codes[name] = code
                style = (_ods_number_style(element) if tag == _q("number", "number-style") else None) or (
                    display_format(code) if code is not None else None)
                if style is not None:
                    number_styles[name] = style
                element.clear()
            elif event == "end" and tag == _q("style", "style"):
                data_style = element.get(_q("style", "data-style-name"))
                if data_style in number_styles:
                    cell_styles[element.get(_q("style", "name"), "")] = number_styles[data_style]
            elif event == "start" and tag == _q("office", "body"):
                if not cell_styles:
                    return True  # no such style: nothing in the sheets to look at
            elif event == "start" and tag == _q("table", "table") and has_sheets:
                in_sheet = element.get(_q("table", "name")) == self.sheet
                row, column_styles = 0, []
            elif not in_sheet:
                if event == "end" and tag == _q("table", "table-row"):
                    element.clear()
                continue
            elif event == "end" and tag == _q("table", "table-column"):
                repeat = int(element.get(_q("table", "number-columns-repeated"), "1"))
                column_styles.append((repeat, element.get(_q("table", "default-cell-style-name"))))
            elif event == "start" and tag == _q("table", "table-row"):
                col = 0
            elif event == "end" and tag in (_q("table", "table-cell"), _q("table", "covered-table-cell")):
                repeat = int(element.get(_q("table", "number-columns-repeated"), "1"))
                style = cell_styles.get(element.get(_q("table", "style-name")) or _column_style(column_styles, col) or "")
                value = element.get(_q("office", "value"))
                if style is not None and value is not None:
                    self._cell(element, style, value, row, col, min(repeat, 1024))
                col += repeat
            elif event == "end" and tag == _q("table", "table-row"):
                row += int(element.get(_q("table", "number-rows-repeated"), "1"))
                element.clear()
            elif event == "end" and tag == _q("table", "table"):
                return True
        return False

    def _cell(self, element: ElementTree.Element, style: NumberStyle, value: str, row: int, col: int,
              repeat: int) -> None:
        kind = element.get(_q("office", "value-type"))
        if isinstance(style, ZeroPadded):
            text = style.show(float(value)) if kind == "float" else None
            if text is not None:
                self.found.extend(SheetNumber(row, col + k, value, text, style.code) for k in range(repeat))
        elif kind in ("float", "percentage", "currency"):
            number = float(value)
            paragraph = element.find(_q("text", "p"))
            shown = "".join(paragraph.itertext()).strip() if paragraph is not None else ""
            shown = shown or style.show(number) or ""
            read = number_text(number)
            if shown and shown != read:
                self.shown.extend((row, col + k, read, shown, style.code) for k in range(repeat))


def _column_style(column_styles: list[tuple[int, str | None]], col: int) -> str | None:
    start = 0
    for repeat, style in column_styles:
        if col < start + repeat:
            return style
        start += repeat
    return None


#: The bytes of a BIFF record only an error value is written with: a BOOLERR record (id 0x0205, 8 bytes)
#: whose flag says error, or a FORMULA record's cached result of type error (2), an error code, and the
#: 0xFFFF that marks a result that is not a number. A file without either holds no error cell; a file with
#: one is read cell by cell.
_XLS_ERROR_RECORDS = (re.compile(rb"\x05\x02\x08\x00.{7}\x01", re.DOTALL),
                      re.compile(rb"\x02.[\x00\x07\x0f\x17\x1d\x24\x2a]...\xff\xff", re.DOTALL))


def xls_sheet_numbers(book: xlrd.Book, sheet: str) -> SheetNumbers:
    """The number cells of the XLS sheet ``sheet`` of ``book`` (``open_xls``, with its formatting) whose format
    pads with zeros, and the text they show; those a ``DisplayFormat`` shows otherwise than they are read; and
    its cells showing an error value (``#N/A``), which python-calamine reads as empty cells.

    xlrd reads the workbook's FORMAT and XF records first (``on_demand``: no sheet yet); only when some
    cell format pads or displays numbers, or the workbook's records hold an error value, is the sheet itself
    read, in Python, and only its number and error cells looked at. Built-in formats whose text depends on
    the computer showing them (currencies) are left as read, as in an XLSX (``BUILT_IN_FORMATS``).
    """
    import xlrd  # only for XLS files with formats or errors: it is slow, and needed nowhere else

    styles = {key: style for key, fmt in book.format_map.items()
              if key not in LOCAL_BUILT_IN_FORMATS and (style := number_style(fmt.format_str or "")) is not None}
    # cell formats only: Excel writes formats its cell styles (Currency, Percent...) use whether or not a cell does
    by_xf = {i: styles[xf.format_key] for i, xf in enumerate(book.xf_list) if xf.format_key in styles and not xf.is_style}
    errors = any(record.search(book.mem) for record in _XLS_ERROR_RECORDS)
    found: list[SheetNumber] = []
    shown: list[ShownNumber] = []
    if not by_xf and not errors:
        return SheetNumbers(found, shown)
    cells = book.sheet_by_name(sheet)
    for row in range(cells.nrows):
        for col, kind in enumerate(cells.row_types(row)):
            if kind == xlrd.XL_CELL_ERROR:
                code = cells.cell_value(row, col)
                found.append(SheetNumber(row, col, ERROR_MARK, xlrd.error_text_from_code.get(code, "(error)")))
            if kind != xlrd.XL_CELL_NUMBER:
                continue
            style = by_xf.get(cells.cell_xf_index(row, col))
            if style is None:
                continue
            value = cells.cell_value(row, col)
            if isinstance(style, ZeroPadded):
                text = style.show(value)
                if text is not None:
                    found.append(SheetNumber(row, col, repr(value), text, style.code))
            elif (displayed := style.show(value)) is not None and displayed != (read := number_text(value)):
                shown.append((row, col, read, displayed, style.code))
    return SheetNumbers(found, shown)
