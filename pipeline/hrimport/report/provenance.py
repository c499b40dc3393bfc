"""How the values were read, shaped for the reports: the ``Values`` sheet of ``report.xlsx``, the "How values
were read" section of ``report.html`` and each listed row's values that changed (issue 15, part 4).

Only formatting: the mapper recorded the changes (``RunInfo.values_read``, ``RowOutcome.changed_values``).
A masked field (``[report] mask``) never shows a value here: its lines keep their counts and rules only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hrimport.outcomes import RowOutcome, RunResult
from hrimport.provenance import ValueExample, without_masked
from hrimport.report.view import RowMasking

ARROW = " → "


@dataclass
class ChangeLine:
    """One kind of change of one column, as the reports list it."""

    column: str
    field: str
    kind: str
    label: str
    rule: str
    rows: int
    examples: list[str]  # "Malaysia → MY (row 4, 80 rows)"; none for a masked field

    @property
    def examples_text(self) -> str:
        return "; ".join(self.examples) if self.examples else ("values masked" if self.rows else "")


@dataclass
class ProvenanceView:
    """What report.html shows of the values read: the changes per column, and each listed row's fields
    whose value sent differs from its cell, as (column, value in the file, value sent)."""

    lines: list[ChangeLine] = field(default_factory=list)
    rows: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)


def shown_value(value: str) -> str:
    """A value as the report quotes it: as it is, but quoted when spaces around it matter, and ``(empty)``."""
    if not value:
        return "(empty)"
    return f"'{value}'" if value != value.strip() else value


def example_text(example: ValueExample) -> str:
    """``Malaysia → MY (row 4, 80 rows)``; a value read as it is (a date cell) is shown once."""
    if example.read == example.sent:
        shown = shown_value(example.sent)
    else:
        shown = f"{shown_value(example.read)}{ARROW}{shown_value(example.sent)}"
    where = f"row {example.row}" + (f", {example.rows:,} rows" if example.rows > 1 else "")
    return f"{shown} ({where})"


def change_lines(result: RunResult) -> list[ChangeLine]:
    """Every change the run recorded, in the mapper's order (by field, then in the order values meet them);
    a masked field's without its values (``without_masked``)."""
    return [
        ChangeLine(c.column, c.field, c.kind, c.label, c.rule, c.rows, [example_text(e) for e in c.examples])
        for c in without_masked(result.info.values_read, result.info.mask_fields)
    ]


def provenance_view(result: RunResult, masking: RowMasking, listed: Iterable[RowOutcome]) -> ProvenanceView:
    """The changes per column, and the changed values of ``listed``, the rows report.html lists."""
    masker = masking.masker
    masked: dict[tuple[str, str], bool] = {}  # (field, column) -> a masked field: decided once each, not per row
    rows: dict[int, list[tuple[str, str, str]]] = {}
    for o in listed:
        cells = []
        for name, (column, read, sent) in o.changed_values.items():
            hidden = masked.get((name, column))
            if hidden is None:
                hidden = masked[name, column] = masker.applies(name, column)
            if not hidden:
                cells.append((column, shown_value(read), shown_value(sent)))
        if cells:
            rows[o.row] = cells
    return ProvenanceView(change_lines(result), rows)
