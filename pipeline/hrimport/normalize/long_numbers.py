"""Long ids and phone numbers a spreadsheet stored as numbers: shown in scientific notation, digits lost.

A spreadsheet keeps 15 digits of a number. A Chinese ID card number (18 digits) or a bank account typed into
a cell formatted as a number keeps its first 15 digits and zeros; Excel shows it as ``4.40301E+17``, saves a
CSV with that text, and a workbook's cell reads as ``4.40301198501011e+17`` (two people's numbers can then read
alike). A 13-digit phone number in a narrow column is saved to CSV as ``8.6138E+12``. Nothing in the file
holds the digits any more, so no reading can give them back; sent without a word, they would reach the
platform as a number no one wrote.

``flag_scientific_numbers`` gives each such value of a text field (an id, a name, a phone or passport number)
or of custom data a ``scientific-notation`` warning on its row, naming the column and the value: the value is
kept as written (the platform takes any text there, principle 2), and the person knows to export the column
as text; ``strict_checks = ["scientific-notation"]`` holds such a row back instead. A date, a country, an e-mail
or a number field has its own check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.outcomes import Problem

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable

SCIENTIFIC_NOTATION = "scientific-notation"

# A number as a spreadsheet shows or reads one too long for its cell: one digit, decimals, an exponent of
# at least 5 (a shorter number is shown in full: 12345 is no 1.2345E+04) written with its plus sign, as Excel
# and LibreOffice write it and as a number cell reads (4.40301198501011e+17); a decimal comma in some
# languages. Without the sign it is an id of letters and digits ('3E4700001'), never a spreadsheet's number.
_SCIENTIFIC = r"^[-+]?[0-9]([.,][0-9]+)?[eE]\+0*([5-9]|[1-9][0-9]+)$"


def flag_scientific_numbers(mapped: MappedTable, *, strict: bool = False) -> None:
    """A ``scientific-notation`` warning on each row whose text field or custom data holds a number in
    scientific notation (module docstring); an error (the row held back) with ``strict``."""
    for text in mapped.text_columns():
        cells = pa.array(text.cells.array, type=pa.large_string())
        hits = pc.match_substring_regex(cells, _SCIENTIFIC).fill_null(False)
        if not pc.any(hits).as_py():
            continue
        for position in np.flatnonzero(hits.to_numpy(zero_copy_only=False)).tolist():
            value = text.cells.iat[position]
            row = mapped.row_numbers[position]
            said = (f"Row {row}, column '{text.column}': '{value}' is a number in scientific notation, as a "
                    "spreadsheet shows a number longer than it keeps (15 digits): an id or a phone number "
                    "written so has lost its last digits")
            done = ("; not sent (strict_checks lists scientific-notation). Export the column as text, or type "
                    "the number in full." if strict else
                    "; kept as written. Export the column as text, or type the number in full.")
            mapped.add_problem(position, Problem(SCIENTIFIC_NOTATION, said + done, row, text.column, text.field, value,
                                                 severity="error" if strict else "warning"))


__all__ = ["SCIENTIFIC_NOTATION", "flag_scientific_numbers"]

