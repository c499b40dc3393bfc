"""The rows a workbook hides: filtered out by an AutoFilter ("Status = Active") or hidden by Hide.

A person checks the monthly workbook in Excel through a filter, or hides the rows they are done with, and
saves it so. Every hidden row is still in the file, and a library reads it as any other: people nobody saw on
screen (leavers, last month's rows kept below, a test person) would be sent to payroll without a word
(principle 1). The reader marks them; the mapper gives each row of the table among them a ``hidden-row``
warning, or holds it back when ``strict_checks`` lists the code (``hidden_row_problem``).

They are found in the pass that already reads the sheet's XML (``extent``): an XLSX ``<row ... hidden="1">``,
whether a filter or Hide hid it, or a row of height zero (``ht="0" customHeight="1"``: Excel itself saves a row
dragged to zero as hidden, other writers so); an ODS ``table:table-row`` whose ``table:visibility`` is
``collapse`` (Hide, a folded group: LibreOffice's spelling, and ``collapsed``) or ``filter``, or whose style
makes its height zero (repeated rows counted, never expanded); an XLS's are xlrd's ``rowinfo_map`` (hidden, or a
height of zero set on the row), from the book the reader opens with its formatting. A sheet's default of
zero-height rows (XLSX ``<sheetFormatPr zeroHeight="1">``, XLS's DEFAULTROWHEIGHT) hides only its empty rows,
which Excel writes no row element for, and hides no row of a table. They are kept as runs of row numbers (``HiddenRows``): a sheet hiding
500,000 rows, or a repeated row hidden down to row 1,048,576, holds a few arrays of integers. Excel also
writes ``hidden="1"`` on empty rows below the table: only the rows read as rows of the table are told.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence

import numpy as np

from hrimport.listing import quoted
from hrimport.outcomes import Problem

HIDDEN_ROW = "hidden-row"

# an XLSX row element marked hidden (``hidden="1"``, or ``"true"``, XML's other spelling of a boolean), or whose
# height may be zero (``_zero_height``)
_HIDDEN_ROW_TAG = re.compile(rb'<row\s[^>]*?(?:\bhidden="(?:1|true)"|\sht="[0.]|\bcustomHeight="(?:1|true)")[^>]*>')
_HIDDEN = re.compile(rb'\shidden="(?:1|true)"')
_HEIGHT = re.compile(rb'\sht="([^"]*)"')
_CUSTOM_HEIGHT = re.compile(rb'\scustomHeight="(?:1|true)"')
#: What a piece holding such a row holds somewhere: looked for at once (``extent.holds_match``, in RE2, each a
#: twentieth of the time of one ``in``: RE2 keeps to its fast search with these two, not with one joining them);
#: most pieces hold none. A workbook whose rows have heights of their own (``ht="20" customHeight="1"``) has each
#: row element looked at: 0.2 s more for 100,000 rows.
XLSX_ROW_MARKS = (rb'hidden="|ht="[0.]', rb'Height="')
_ROW_NUMBER = re.compile(rb'\sr="([0-9]+)"')
_ROW_TAG_NUMBER = re.compile(rb'<row\s[^>]*?\br="([0-9]+)"')


class HiddenRows:
    """Row numbers (counted from 1) hidden in a sheet, as runs of consecutive rows in two arrays of integers,
    and whether each run is hidden by its height alone (of height zero, not marked hidden: nobody hid it with
    Hide or a filter, someone set its height to 0), which its message says."""

    def __init__(self) -> None:
        self.firsts = array("q")
        self.lasts = array("q")
        self.zero_height = array("b")

    def __bool__(self) -> bool:
        return bool(self.firsts)

    def add(self, first: int, count: int = 1, *, zero_height: bool = False) -> None:
        """Rows ``first`` to ``first + count - 1`` are hidden (``zero_height``: by a height of zero alone); added
        next to the run before, hidden alike, they extend it."""
        last = first + count - 1
        if self.lasts and self.lasts[-1] + 1 == first and self.zero_height[-1] == zero_height:
            self.lasts[-1] = last
        else:
            self.firsts.append(first)
            self.lasts.append(last)
            self.zero_height.append(zero_height)

    def among(self, numbers: np.ndarray, *, of_zero_height: bool = False) -> np.ndarray:
        """The numbers among ``numbers`` (ascending row numbers: a table's rows) that are hidden, ascending;
        ``of_zero_height``: those hidden by a height of zero alone."""
        numbers = np.asarray(numbers, dtype=np.int64)
        if not self or not len(numbers):
            return np.zeros(0, dtype=np.int64)
        firsts = np.frombuffer(self.firsts, dtype=np.int64)
        lasts = np.frombuffer(self.lasts, dtype=np.int64)
        zero_height = np.frombuffer(self.zero_height, dtype=np.int8)
        if of_zero_height:
            if not zero_height.any():
                return np.zeros(0, dtype=np.int64)
            firsts, lasts = firsts[zero_height == 1], lasts[zero_height == 1]
        if len(firsts) > 1 and (np.diff(firsts) < 0).any():  # rows out of order: only a damaged file
            order = np.argsort(firsts, kind="stable")
            firsts, lasts = firsts[order], lasts[order]
            lasts = np.maximum.accumulate(lasts)
        run = np.searchsorted(firsts, numbers, side="right") - 1
        inside = (run >= 0) & (numbers <= lasts[np.maximum(run, 0)])
        return numbers[inside]


NO_HIDDEN_ROWS = HiddenRows()


def add_xlsx_hidden_rows(piece: bytes, row_before: int, into: HiddenRows, *, marked: bool = True) -> int:
    """Add the rows of ``piece`` (an XLSX sheet's XML, cut after a ``</row>``) marked hidden to ``into``, and
    return the number of its last row element. ``row_before``: the number of the last row before the piece,
    for the row elements without their ``r`` number (a rare writer's, which numbers them by their order).
    ``marked``: whether ``piece`` may hold such rows (one of ``XLSX_ROW_MARKS``); False, it is not looked through."""
    if marked:
        before, at = row_before, 0
        for tag in _HIDDEN_ROW_TAG.finditer(piece):
            marked_hidden = _HIDDEN.search(tag.group()) is not None
            if not marked_hidden and not _zero_height(tag.group()):
                continue
            number = _ROW_NUMBER.search(tag.group())
            if number is not None:
                row = int(number.group(1))
            else:
                row = before + piece.count(b"<row", at, tag.start()) + 1
            into.add(row, zero_height=not marked_hidden)
            before, at = row, tag.end()
    last = piece.rfind(b"<row")  # (a ``<rowBreaks>`` after the last row: the number is needed no more)
    if last < 0:
        return row_before
    number = _ROW_TAG_NUMBER.match(piece, last)
    return int(number.group(1)) if number is not None else row_before + piece.count(b"<row")


def _zero_height(tag: bytes) -> bool:
    """Whether the row element ``tag`` is given a height of its own (``customHeight="1"``) of zero (``ht="0"``,
    ``"0.0000000000000000E+00"``, or no ``ht``, as openpyxl saves ``height = 0``): Excel shows nothing of it. A
    ``ht="0"`` without ``customHeight`` is not: Excel sizes such a row itself (SAP's abap2xlsx writes it on every
    row, and the rows show)."""
    if not _CUSTOM_HEIGHT.search(tag):
        return False
    height = _HEIGHT.search(tag)
    if height is None:
        return True
    try:
        return float(height.group(1)) == 0
    except ValueError:
        return False


def hidden_header_note(hidden: HiddenRows, header_row: int, header_rows: int, headers: Sequence[str]) -> str | None:
    """The note saying that the header the columns were read by (Excel row ``header_row``, over ``header_rows``
    rows) is hidden in the workbook, or None when it shows. A person looking at the sheet sees other headers
    above the values (a row of labels under a hidden row of a system's field names, or none), and checks the
    mapping by those: the import goes on (nothing is wrong in the values), and says which names it went by."""
    rows = np.arange(header_row, header_row + header_rows, dtype=np.int64)
    shut = hidden.among(rows).tolist()
    if not shut:
        return None
    zero_height = len(hidden.among(rows, of_zero_height=True)) == len(shut)
    how = "its height is set to 0" if zero_height else "by a filter or Hide"
    where = f"row {shut[0]}" if len(shut) == 1 else f"rows {shut[0]}-{shut[-1]}"
    part = "" if header_rows == 1 else f"of the header over rows {header_row}-{header_row + header_rows - 1} "
    return (f"The header {part}({where}) is hidden in the workbook ({how}): the columns were read by the names it "
            f"holds ({quoted(headers, shown=4)}), which nobody sees in Excel; unhide it and check that they name the "
            "values under them (or set header_row to the header shown).")


def hidden_row_problem(row: int, *, strict: bool, zero_height: bool = False) -> Problem:
    """The ``hidden-row`` problem of table row ``row``: a warning (the row is sent: it is our doubt, not the
    user's error), or an error holding it back when ``strict_checks`` lists the code. ``zero_height``: the row
    is hidden by a height of zero alone (set so, or dragged shut), which no filter or Hide did."""
    if zero_height:
        said = f"Row {row} is hidden in the workbook (its height is set to 0)"
        unhide = "give it a height again (Row Height) in Excel"
    else:
        said = f"Row {row} is hidden in the workbook (by a filter or Hide)"
        unhide = "unhide it in Excel"
    if strict:
        return Problem(HIDDEN_ROW, f"{said}: not sent (strict_checks lists hidden-row); {unhide} and check it, "
                                   "then import it, or delete it if it is not to be imported.", row)
    return Problem(HIDDEN_ROW, f"{said}: it is sent all the same, though nobody sees it in Excel; "
                               f"{unhide.removesuffix(' in Excel')} and check it, or delete it if it is not to be "
                               "imported.", row, severity="warning")


__all__ = ["HIDDEN_ROW", "NO_HIDDEN_ROWS", "XLSX_ROW_MARKS", "HiddenRows", "add_xlsx_hidden_rows", "hidden_header_note",
           "hidden_row_problem"]
