"""Numbers as Excel shows them: the general rule, and zero-padded number formats (``000000``).

Many HR systems store employee numbers as numeric cells with a display format such as ``000000`` or
``"EMP"0000``: the person sees ``000123`` while the cell holds 123. Every fast reader returns ``123``.
Here a format code is recognised as zero-padded (``zero_padded_format``) and a number shown through it
(``ZeroPadded.show``); the formats a workbook's styles use are read once from its small style parts
(``xlsx_padded_styles``), and only when some style pads are the sheet's cells looked at
(``xlsx_cells.scan_xlsx_sheet``); in an ODS the same is done for ``number:min-integer-digits`` number styles
(``ods_sheet_numbers``), and in an XLS for its FORMAT records (``xls_sheet_numbers``, which also finds the
error cells of an XLS). Other formats (dates, decimals, currency...) are left to the reader's own
rendering: only zero padding changes the characters an id is made of.
"""

from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import IO
from xml.etree import ElementTree

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
_COLOUR = re.compile(r"\[(?:black|blue|cyan|green|magenta|red|white|yellow|color\s*\d+)\]", re.IGNORECASE)


def zero_padded_format(code: str) -> ZeroPadded | None:
    """The zero padding a number format code asks for (``000000``, ``"EMP"0000``), or None.

    Only codes made of literals around one run of two or more zeros qualify: a decimal point, a
    thousands separator, ``#``, a percent sign, an exponent or a condition make it some other format.
    """
    sections = _sections(code)
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
            if _COLOUR.fullmatch(token):
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


def _sections(code: str) -> list[str]:
    """A format code's ``;``-separated sections, ignoring ``;`` inside quotes."""
    sections: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in code:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            sections.append("".join(current))
            current = []
        else:
            current.append(ch)
    sections.append("".join(current))
    return sections


def xlsx_padded_styles(archive: zipfile.ZipFile) -> dict[int, ZeroPadded]:
    """The cell style indexes (``s="N"`` on a cell) whose number format is zero-padded.

    ``xl/styles.xml`` is small (kilobytes) whatever the size of the sheets; it holds the custom number
    formats (``numFmts``) and the cell formats (``cellXfs``) cells point to by position. Built-in formats
    (ids below 164) are never zero-padded.
    """
    try:
        data = archive.read("xl/styles.xml")
    except KeyError:
        return {}
    root = ElementTree.fromstring(data)
    padded_formats: dict[str, ZeroPadded] = {}
    for fmt in root.iterfind(f"{_MAIN}numFmts/{_MAIN}numFmt"):
        pad = zero_padded_format(fmt.get("formatCode", ""))
        if pad is not None:
            padded_formats[fmt.get("numFmtId", "")] = pad
    if not padded_formats:
        return {}
    return {
        index: padded_formats[xf.get("numFmtId", "0")]
        for index, xf in enumerate(root.iterfind(f"{_MAIN}cellXfs/{_MAIN}xf"))
        if xf.get("numFmtId", "0") in padded_formats
    }


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


def ods_sheet_numbers(archive_path: str, sheet: str) -> list[SheetNumber]:
    """The float cells of one ODS sheet whose cell style pads with zeros, and the text they show.

    ``content.xml`` is streamed: its styles come before the sheets, so a file without a zero-padded
    style is left after the styles. Repeated rows and columns are counted, not expanded.
    """
    number_styles: dict[str, ZeroPadded] = {}
    cell_styles: dict[str, ZeroPadded] = {}
    found: list[SheetNumber] = []
    with zipfile.ZipFile(archive_path) as archive:
        members = [m for m in ("styles.xml", "content.xml") if m in archive.namelist()]
        for member in members:
            with archive.open(member) as stream:
                if _ods_scan(stream, member == "content.xml", sheet, number_styles, cell_styles, found):
                    break
    return found


def _ods_scan(
    stream: IO[bytes],
    has_sheets: bool,
    sheet: str,
    number_styles: dict[str, ZeroPadded],
    cell_styles: dict[str, ZeroPadded],
    found: list[SheetNumber],
) -> bool:
    """Collect the padded styles of one part, and in ``content.xml`` the padded cells of ``sheet``.
    True when the scan is over."""
    in_sheet = False
    row = col = 0
    column_styles: list[tuple[int, str | None]] = []  # (columns repeated, default cell style)
    for event, element in ElementTree.iterparse(stream, events=("start", "end")):
        tag = element.tag
        if event == "end" and tag == _q("number", "number-style"):
            pad = _ods_number_style(element)
            if pad is not None:
                number_styles[element.get(_q("style", "name"), "")] = pad
            element.clear()
        elif event == "end" and tag == _q("style", "style"):
            data_style = element.get(_q("style", "data-style-name"))
            if data_style in number_styles:
                cell_styles[element.get(_q("style", "name"), "")] = number_styles[data_style]
        elif event == "start" and tag == _q("office", "body"):
            if not cell_styles:
                return True  # no zero-padded style: nothing in the sheets to look at
        elif event == "start" and tag == _q("table", "table") and has_sheets:
            in_sheet = element.get(_q("table", "name")) == sheet
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
            style = element.get(_q("table", "style-name")) or _column_style(column_styles, col)
            value = element.get(_q("office", "value"))
            pad = cell_styles.get(style or "")
            if pad is not None and value is not None and element.get(_q("office", "value-type")) == "float":
                text = pad.show(float(value))
                if text is not None:
                    found.extend(SheetNumber(row, col + k, value, text, pad.code) for k in range(min(repeat, 1024)))
            col += repeat
        elif event == "end" and tag == _q("table", "table-row"):
            row += int(element.get(_q("table", "number-rows-repeated"), "1"))
            element.clear()
        elif event == "end" and tag == _q("table", "table"):
            return True
    return False


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


def xls_sheet_numbers(path: str, sheet: str) -> list[SheetNumber]:
    """The number cells of one XLS sheet whose format pads with zeros, and the text they show; and its
    cells showing an error value (``#N/A``), which python-calamine reads as empty cells.

    xlrd reads the workbook's FORMAT and XF records first (``on_demand``: no sheet yet); only when some
    cell format pads, or the workbook's records hold an error value, is the sheet itself read, in Python,
    and only its number and error cells looked at.
    """
    import xlrd  # only for XLS files with formats or errors: it is slow, and needed nowhere else

    book = xlrd.open_workbook(path, formatting_info=True, on_demand=True)
    try:
        formats = {key: zero_padded_format(fmt.format_str or "") for key, fmt in book.format_map.items()}
        padded = {i: formats[xf.format_key] for i, xf in enumerate(book.xf_list) if formats.get(xf.format_key)}
        errors = any(record.search(book.mem) for record in _XLS_ERROR_RECORDS)
        if not padded and not errors:
            return []
        cells = book.sheet_by_name(sheet)
        found = []
        for row in range(cells.nrows):
            for col, kind in enumerate(cells.row_types(row)):
                if kind == xlrd.XL_CELL_ERROR:
                    code = cells.cell_value(row, col)
                    found.append(SheetNumber(row, col, ERROR_MARK, xlrd.error_text_from_code.get(code, "(error)")))
                if kind != xlrd.XL_CELL_NUMBER:
                    continue
                pad = padded.get(cells.cell_xf_index(row, col))
                if pad is None:
                    continue
                value = cells.cell_value(row, col)
                text = pad.show(value)
                if text is not None:
                    found.append(SheetNumber(row, col, repr(value), text, pad.code))
        return found
    finally:
        book.release_resources()
