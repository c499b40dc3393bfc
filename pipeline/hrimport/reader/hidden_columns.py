"""The columns a workbook hides: Workday hides its ID columns (a worker's reference ID, a position ID) in its
report exports, and a person hides the columns they do not need to look at (Hide, or a width dragged to zero).

A config made last year, or an export that started to hide a column, maps such a column all the same: its
values would be sent to payroll though nobody saw them in Excel (principle 1). The reader names the hidden
columns of the table it read (``SourceInfo.hidden_columns``); the mapper gives each row holding a value in one
the config sends (a field, a custom field) a ``hidden-column`` warning naming it, or holds the row back when
``strict_checks`` lists the code (``hidden_column_problem``); ``hrimport init`` marks them. A hidden column no
field maps is not sent, and nothing is said of it at import.

They are found in the pass that already reads the sheet: an XLSX's ``<cols>``, before its cells, in the first
piece of the extent's pass (``add_xlsx_hidden_columns``: ``hidden="1"``, or a width of 0); an ODS's
``table:table-column`` elements whose ``table:visibility`` is not ``visible`` (``collapse`` as LibreOffice
writes it, repeated columns counted) in its extent's pass; an XLS's are xlrd's ``colinfo_map`` (hidden, or a
width of 0) from the book the reader opens with its formatting. A sheet has at most 16,384 columns: kept as
runs of column numbers, a ``<col min="1" max="16384" hidden="1">`` is one run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from hrimport.outcomes import Problem

HIDDEN_COLUMN = "hidden-column"

_COL = re.compile(rb"<(?:\w+:)?col\s([^>]*)>")
_ATTRIBUTE = re.compile(rb'(\w+)\s*=\s*"([^"]*)"')
#: The most columns a sheet holds (XFD): a ``max`` beyond it is a damaged file's.
MAX_COLUMNS = 16_384


class HiddenColumns:
    """Column numbers (counted from 1, A = 1) hidden in a sheet, as runs ``(first, last)``."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, int]] = []

    def __bool__(self) -> bool:
        return bool(self.runs)

    def add(self, first: int, count: int = 1) -> None:
        """Columns ``first`` to ``first + count - 1`` are hidden."""
        if count <= 0 or first <= 0 or first > MAX_COLUMNS:
            return
        last = min(first + count - 1, MAX_COLUMNS)
        if self.runs and self.runs[-1][1] + 1 == first:  # next to the run before (an .xls's, column by column)
            first = self.runs.pop()[0]
        self.runs.append((first, last))

    def __contains__(self, column: object) -> bool:
        return isinstance(column, int) and any(first <= column <= last for first, last in self.runs)


NO_HIDDEN_COLUMNS = HiddenColumns()


def add_xlsx_hidden_columns(piece: bytes, into: HiddenColumns) -> None:
    """Add the columns the ``<cols>`` of an XLSX sheet's XML hides to ``into``: ``piece``, the part's first
    piece, holds the sheet's head (``<cols>`` comes before ``<sheetData>``). A ``<col>`` marked ``hidden="1"``
    (Hide: Workday's ID columns), or of width 0 (a column dragged shut, xlsxwriter's ``set_column(..., 0)``),
    hides its columns ``min`` to ``max``."""
    head = piece.find(b"sheetData")  # ``<sheetData>``, or a prefixed ``<x:sheetData>``: the cells begin
    for match in _COL.finditer(piece, 0, len(piece) if head < 0 else head):
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        if attributes.get(b"hidden") in (b"1", b"true") or _is_zero(attributes.get(b"width")):
            first, last = _number(attributes.get(b"min")), _number(attributes.get(b"max"))
            if first and last >= first:
                into.add(first, last - first + 1)


def _is_zero(text: bytes | None) -> bool:
    try:
        return text is not None and float(text) == 0
    except ValueError:
        return False


def _number(text: bytes | None) -> int:
    return int(text) if text is not None and text.strip().isdigit() else 0


def hidden_headers(names: Sequence[str | None], first_column: int, hidden: HiddenColumns) -> list[str]:
    """The headers among ``names`` (one per grid column, None for a column dropped; the grid's first column is
    column ``first_column``, counted from 0) of the columns ``hidden``."""
    if not hidden:
        return []
    return [name for j, name in enumerate(names) if name is not None and first_column + j + 1 in hidden]


def hidden_column_problem(row: int, columns: Sequence[str], *, strict: bool) -> Problem:
    """The ``hidden-column`` problem of table row ``row``, whose cells in ``columns`` (columns the config sends)
    hold a value: a warning (they are sent: our doubt, not the user's error), or an error holding the row back
    when ``strict_checks`` lists the code. Its ``column`` names them joined by `` + `` (as ``report.fix_marks``
    reads a problem of several columns)."""
    told, joined = _told(tuple(columns), strict)
    return Problem(HIDDEN_COLUMN, f"Row {row}{told}", row, joined, severity="error" if strict else "warning")


@lru_cache(maxsize=256)
def _told(columns: tuple[str, ...], strict: bool) -> tuple[str, str]:
    """What the problem says after its row number, and its column: the same for every row of an export hiding
    a column, made once (100,000 rows hold a value in Workday's hidden ID column)."""
    if len(columns) == 1:
        said, it, values = f", column '{columns[0]}' is hidden in the workbook", "it", "its value is"
    else:
        named = ", ".join(f"'{c}'" for c in columns[:-1]) + f" and '{columns[-1]}'"
        said, it, values = f", columns {named} are hidden in the workbook", "them", "their values are"
    the = "the column" if len(columns) == 1 else "the columns"
    if strict:
        said += (f": not sent (strict_checks lists hidden-column); unhide {the} in Excel and check {it}, then import "
                 f"the row again, or take {it} out of the config.")
    else:
        said += (f": {values} sent all the same, though nobody sees {it} in Excel; unhide {the} and check {it}, or "
                 f"take {it} out of the config.")
    return said, " + ".join(columns)


__all__ = ["HIDDEN_COLUMN", "NO_HIDDEN_COLUMNS", "HiddenColumns", "add_xlsx_hidden_columns", "hidden_column_problem",
           "hidden_headers"]
