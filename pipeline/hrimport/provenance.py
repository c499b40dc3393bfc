"""Provenance: how each value sent was read from its cell, counted per column (issue 15, part 4).

On its way from the cell to the platform a value may be read through Excel's cell type (a date cell, a
number shown through ``000000``, a formula's last calculated value) and changed by the mapper (trimmed, a
value map, a country name made a code, ``01/06/2020`` read in its column's order). Each of these is a
``ValueChange``: one field, one kind of change, one rule, how many rows it touched and a few examples.
The mapper records them (``hrimport.normalize.trail``), the run carries them (``RunInfo.values_read``),
and every report shows them. Plain data only: no pandas here, since ``hrimport.outcomes`` uses it.

Example, as ``report.xlsx``'s ``Values`` sheet shows one::

    ValueChange(field="country", column="Country", kind="country-name",
                rule="the name's ISO code (schemas/countries.toml)", rows=120,
                examples=[ValueExample(row=4, read="Malaysia", sent="MY", rows=80)])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

#: Each kind of change, in the order a value meets them, -> how the report names it. Codes are stable
#: (tests and scripts use them); names may change.
KINDS: dict[str, str] = {
    # how the reader read the cell
    "excel-date-cell": "Excel date cell",
    "number-format": "Number format applied",
    "number-as-stored": "Number sent as stored, shown through a format",
    "formula-value": "Formula's last calculated value",
    "merged-cell": "Merged cell's value, on each row it covers",
    # what the mapper did
    "apostrophe-removed": "Leading apostrophe removed",
    "excel-text-formula": "Excel's =\"...\": the text shown",
    "trimmed": "Spaces trimmed",
    "value-map": "Value map in the config",
    "default": "Default in the config (empty cell)",
    "constant": "Constant in the config",
    "intern-not-employee": "An intern sent as not an employee",
    "date-day-month": "Day/month date read in the column's order",
    "date-serial": "Excel serial number read as a date",
    "date-time-dropped": "Date-time: the time left out",
    "date-written": "Date written another way",
    "country-name": "Country name",
    "country-code": "Country code",
    "region-code": "Region code (ISO 3166-2)",
    "lower-cased": "E-mail lower-cased",
    "yes-no-word": "Yes/no word",
    "gender-word": "Gender word",
    "enum-spelling": "The platform's spelling",
    "number-written": "Number written plainly",
    "decimal-comma": "Decimal comma read as a point",
    "formula-text-stripped": "Formula characters stripped",
}

#: Examples kept per change: the first distinct values, in the order of their first row.
EXAMPLES = 3


@dataclass
class ValueExample:
    """One distinct value a change met: its first row, the value before and after, and how many rows hold it."""

    row: int
    read: str
    sent: str
    rows: int = 1


@dataclass
class ValueChange:
    """One kind of change applied to one field's values, with its rule (what decided it) and examples."""

    field: str  # the platform field, or the company data type of custom data
    column: str  # where the values came from, as a person names it ("Hire Date", "First + Last")
    kind: str  # a key of ``KINDS``
    rule: str  # "month-first, proven by 07/15/2015 on row 12", "number format 000000"...
    rows: int  # rows whose value this change read or changed
    examples: list[ValueExample]

    @property
    def label(self) -> str:
        return KINDS.get(self.kind, self.kind)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ValueChange:
        """A change as ``write_outcomes`` saved it (``dataclasses.asdict``)."""
        examples = [ValueExample(**e) for e in data.get("examples", [])]
        return cls(**{**data, "examples": examples})


def is_masked(mask: Iterable[str], *names: str) -> bool:
    """True when one of ``names`` (a field, a data type or a column) is named in ``[report] mask``, ignoring
    case: as ``hrimport.report.cells.Masker`` decides."""
    masked = {m.strip().casefold() for m in mask}
    return any(name.strip().casefold() in masked for name in names)


# The one value a rule quotes: the date that proves a column's order (``ColumnDateOrder.rule``).
_QUOTED_PROOF = re.compile(r"proven by .+?(?= on row \d|,|$)")


def without_masked(changes: Iterable[ValueChange], mask: Iterable[str]) -> list[ValueChange]:
    """``changes`` with no value of a masked field: no example, and no date quoted in the rule ("proven by
    the value on row 3"); the counts and rules stay."""
    mask = tuple(mask)
    return [
        replace(c, examples=[], rule=_QUOTED_PROOF.sub("proven by the value", c.rule))
        if is_masked(mask, c.field, c.column) else c
        for c in changes
    ]
