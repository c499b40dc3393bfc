"""What may be written into a report cell: masking of personal fields.

Formula injection (issue 4, Safety): a cell starting with one of ``hrimport.to_fix_format.FORMULA_TRIGGERS``
may be run as a formula by a spreadsheet program. We defend in two ways, by file kind:

* xlsx (``report.xlsx``, ``to_fix.xlsx``): every value is written as a string cell (xlsxwriter
  ``write_string``, never ``write``), and such cells also get Excel's *quote prefix* style, the stored form
  of typing ``'`` before a value: Excel and LibreOffice keep the cell text even when someone edits it, yet
  the cell's value stays exactly the original text, so re-importing ``to_fix.xlsx`` reads what was there.
  A ``to_fix.xlsx`` made from the source workbook keeps its cells' own types, and its text cells that start
  with a trigger get the quote prefix too (``fix_workbook``).
* CSV (``to_fix.csv``): a leading ``'`` (``hrimport.to_fix_format.csv_safe``), which the mapper drops
  when the file is imported again.

Masking: the fields named by ``RunInfo.mask_fields`` (default ``passport_number``) show only their last four
characters in ``report.html`` and ``report.xlsx`` (``•••••1234``); ``to_fix`` keeps full values for re-import.
"""

from __future__ import annotations

from collections.abc import Iterable

MASK = "•••••"


def mask_value(value: str) -> str:
    """Hide all but the last four characters: ``X1234567`` -> ``•••••4567``; short values fully."""
    value = value.strip()
    if not value:
        return value
    return MASK + (value[-4:] if len(value) > 6 else "")


class Masker:
    """Masks the values of the configured fields wherever a report shows them.

    A value also hides inside messages ("passport_number 'X1234567' is not valid"), so messages of a row
    are masked by replacing that row's sensitive values with their masked form.
    """

    def __init__(self, fields: Iterable[str]) -> None:
        self.fields = frozenset(f.strip().casefold() for f in fields if f.strip())

    def __bool__(self) -> bool:
        return bool(self.fields)

    def applies(self, *names: str | None) -> bool:
        """True when any of ``names`` (a field name or source column) is a masked field."""
        return any(n is not None and n.strip().casefold() in self.fields for n in names)

    def value(self, value: str | None, *names: str | None) -> str:
        """``value`` as shown: masked when one of ``names`` is a masked field."""
        if value is None:
            return ""
        return mask_value(value) if self.applies(*names) else value

    def text(self, text: str, secrets: Iterable[str]) -> str:
        """``text`` with every one of ``secrets`` (raw sensitive values) replaced by its masked form."""
        for secret in sorted({s for s in secrets if s and len(s.strip()) > 0}, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, mask_value(secret))
        return text
