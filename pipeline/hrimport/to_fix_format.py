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
"""

from __future__ import annotations

import re

__all__ = ["ESCAPED_FORMULA", "EXCEL_TEXT_FORMULA", "FIX_COLUMN", "FORMULA_TRIGGERS", "csv_safe", "restore_csv_cell",
           "text_cell_as_read"]

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
