"""The to_fix round trip: what the reporter writes into ``to_fix`` files and the mapper must read back.

HR staff correct the rows of ``to_fix.xlsx`` / ``to_fix.csv`` in place and import the file again with the
same config (issue 4), so its writer (``hrimport.report.fix_file``) and its reader (``hrimport.mapper``)
share a contract, kept here so that neither side can change it alone:

* ``FIX_COLUMN``: the column the reporter appends to say what is wrong with each row. The mapper ignores a
  column of that name (compared as a header) when reading the file back, so it is never sent nor packed
  into custom data.
* ``FORMULA_TRIGGERS``: the first characters that make a spreadsheet program run a cell as a formula
  (OWASP's list: ``=``, ``+``, ``-``, ``@``, tab, carriage return). The reporter guards such cells
  (string cells with Excel's quote prefix in xlsx; a leading ``'`` in CSV, see ``csv_safe``), since the
  sending guard (``hrimport.normalize.formulas``) by default sends values that start with one as written,
  with a warning (the config may make it refuse or strip them).
* ``csv_safe`` / ``restore_csv_cell``: the CSV guard and its undo. A CSV cell has no type, so a
  formula-like value gets a leading ``'``; plain numbers (``-12``, ``+3.5``) are left alone because no
  program runs them. Reading the file back drops that ``'`` (the mapper does the same per column).
* ``EXCEL_TEXT_FORMULA`` / ``text_cell_as_read``: a CSV or TSV cell as the import reads it (the mapper, per
  column): Excel's ``="000123"`` is the text it shows, ``000123``, and the ``'`` of ``csv_safe`` is dropped.
  ``to_fix.xlsx`` of a CSV source holds each cell so, since in a workbook ``="000123"`` is text and would be
  sent as written.
* ``day_month_date`` / ``date_orders_read``: a day/month date (``01/02/2020``) the run read in its column's order
  is written to ``to_fix.xlsx`` as a date cell shown through a format that writes it as the export did
  (``dd\\/mm\\/yyyy``): the person sees ``01/02/2020``, and the cell holds 1 February 2020 itself, so the import
  reads it whatever the order. Its ``to_fix`` rows alone may hold no date proving the order the run read (the
  export's ``25/03/2020`` did), and the import never guesses one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Protocol

__all__ = ["ESCAPED_FORMULA", "EXCEL_TEXT_FORMULA", "FIX_COLUMN", "FORMULA_TRIGGERS", "csv_safe", "date_orders_read",
           "day_month_date", "restore_csv_cell", "text_cell_as_read"]

#: Name of the column appended to ``to_fix`` files; the mapper ignores it on re-import.
FIX_COLUMN = "Problem"

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
#: ``restore_csv_cell`` as a regular expression, for a whole column at once (``str.replace``): the ``'``
#: that ``csv_safe`` put before a formula-like value.
ESCAPED_FORMULA = "^'(?=[" + re.escape("".join(FORMULA_TRIGGERS)) + "])"
_PLAIN_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
#: Excel's way to keep a CSV cell's zeros (``="000123"``): a formula whose result is the text between the quotes,
#: which is all Excel shows (group 1). A regular expression for a whole column at once (``str.replace``).
EXCEL_TEXT_FORMULA = r'^="([^"]*)"$'
_EXCEL_TEXT = re.compile(EXCEL_TEXT_FORMULA)


def csv_safe(value: str) -> str:
    """Prefix ``value`` with ``'`` when a spreadsheet opening the CSV could evaluate it (OWASP)."""
    if value.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def restore_csv_cell(value: str) -> str:
    """Undo ``csv_safe``: the original value of a cell read back from ``to_fix.csv``.

    >>> restore_csv_cell(csv_safe('=HYPERLINK("http://x")'))
    '=HYPERLINK("http://x")'
    """
    if value.startswith("'") and value[1:].startswith(FORMULA_TRIGGERS):
        return value[1:]
    return value


def text_cell_as_read(value: str) -> str:
    """A CSV or TSV cell as the import reads it, before trimming: ``csv_safe`` undone, Excel's ``="000123"`` as
    the ``000123`` Excel shows.

    >>> text_cell_as_read('="000123"'), text_cell_as_read("'+65 8123 4567")
    ('000123', '+65 8123 4567')
    """
    value = restore_csv_cell(value)
    shown = _EXCEL_TEXT.match(value)
    return shown[1] if shown else value


# A day/month date in ASCII digits, as ``hrimport.normalize.dates`` reads one in its column's order (the same
# separator twice, a four-digit year); one in other digits stays text: a format would show it in ASCII digits.
_DAY_MONTH_YEAR = re.compile(r"([0-9]{1,2})([/.\-])([0-9]{1,2})\2([0-9]{4})")
# Excel's first day after its 1900 leap-year bug (serial 61): before it, serial numbers are a day off
_FIRST_DATE_CELL = dt.date(1900, 3, 1)
#: Day 0 of each of Excel's date systems (``hrimport.normalize.dates.EXCEL_EPOCHS``, which needs pandas).
EXCEL_DAY_ZERO = {1900: dt.date(1899, 12, 30), 1904: dt.date(1904, 1, 1)}
# The date rule ``hrimport.normalize.dates.ColumnDateOrder.rule`` writes starts with the order the column was read in
_ORDER_OF_RULE = re.compile(r"(day-first|month-first)\b")


def day_month_date(text: str, order: str) -> tuple[dt.date, str] | None:
    """The day ``text`` is in ``order`` ("day-first" or "month-first") and the Excel number format that shows it
    as ``text`` writes it (digits, zeros and separator), or None when it is no such date (or one Excel's date
    cells do not hold exactly: before March 1900).

    >>> day_month_date("01/02/2020", "day-first")
    (datetime.date(2020, 2, 1), 'dd\\\\/mm\\\\/yyyy')
    >>> day_month_date("2.13.2020", "month-first")
    (datetime.date(2020, 2, 13), 'm\\\\.dd\\\\.yyyy')
    """
    found = _DAY_MONTH_YEAR.fullmatch(text.strip())
    if found is None:
        return None
    first, separator, second, year = found.groups()
    day, month = (first, second) if order == "day-first" else (second, first)
    try:
        date = dt.date(int(year), int(month), int(day))
    except ValueError:
        return None
    if date < _FIRST_DATE_CELL:
        return None
    # a separator escaped: Excel shows an unescaped / as the date separator of the computer's language (01.02.2020
    # in Germany)
    codes = {"day": "dd" if len(day) == 2 else "d", "month": "mm" if len(month) == 2 else "m"}
    parts = (codes["day"], codes["month"]) if order == "day-first" else (codes["month"], codes["day"])
    return date, f"{parts[0]}\\{separator}{parts[1]}\\{separator}yyyy"


class _DateChange(Protocol):
    kind: str
    column: str
    rule: str


def date_orders_read(values_read: Iterable[_DateChange]) -> dict[str, str]:
    """The columns whose day/month dates a run read in a known order (``date-day-month`` in its "How values
    were read", ``hrimport.provenance``) -> that order: the columns whose such dates ``to_fix.xlsx`` writes as
    date cells (``day_month_date``). A column read "the same day in either order" needs none."""
    orders = {}
    for change in values_read:
        if change.kind == "date-day-month" and (order := _ORDER_OF_RULE.match(change.rule)):
            orders[change.column] = order[1]
    return orders
