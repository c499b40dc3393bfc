"""Record how the mapper changed each field's values, step by step, as ``ValueChange``s (issue 15, part 4).

``ValueTrail.compare`` is given a step's values before and after: the values that differ are grouped by
distinct value in a few vectorised passes (a compare, a factorize of what changed, a count per distinct
value), so a step that changes nothing costs one comparison, and one that rewrites all 100,000 dates of a
column costs a few milliseconds; only the distinct values changed meet Python, to name their kind. The
cells the reader read in a way worth telling (``SourceTable.cells_read``: date cells, number formats,
formulas) are recorded by ``cells``. The rows that repeat the header row (``skip``: two exports joined into
one file) are left out: nothing is said of their cells but that (README, "Layout and refusals").

Example::

    trail = ValueTrail([2, 3, 4])
    trail.compare("country", "Country", before, after, "country-name", "country name")
    trail.changes()  # [ValueChange(field="country", ..., rows=2, examples=[ValueExample(row=2, ...)])]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hrimport.outcomes import RowOutcome
from hrimport.provenance import EXAMPLES, KINDS, ValueChange, ValueExample, is_masked
from hrimport.reader.grid import CellsRead

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable

#: Names the kind of each distinct value changed, from (values before, values after): a step that changes
#: values in more than one way (a date column: day/month dates, serial numbers, date-times).
Classify = Callable[[list[str], list[str]], Sequence[str]]


class ValueTrail:
    """The changes of one mapping, merged per (field, column, kind, rule), in the order they are met."""

    def __init__(self, row_numbers: Sequence[int]) -> None:
        self.row_numbers = row_numbers
        self._skipped = np.empty(0, dtype=np.int64)
        self._changes: dict[tuple[str, str, str, str], ValueChange] = {}

    def skip(self, row_numbers: Sequence[int], rows: Iterable[int]) -> None:
        """The rows of the table to come (Excel rows ``row_numbers``, one per position) and those of them
        (``rows``, Excel rows) whose cells are not told of: they repeat the header row."""
        self.row_numbers = row_numbers
        skipped = set(rows)
        self._skipped = np.array([pos for pos, row in enumerate(row_numbers) if row in skipped], dtype=np.int64)

    def compare(
        self,
        field: str,
        column: str,
        before: pd.Series,
        after: pd.Series,
        kind: str | Classify,
        rule: str | Callable[[str], str] = "",
    ) -> None:
        """Record the values ``after`` holds differently from ``before`` (same index, text, no NA) as
        changes of ``kind``, or of the kind ``kind(read, sent)`` names for each distinct value changed;
        ``rule`` (or ``rule(kind)``) says what decided them."""
        changed = (before != after).to_numpy(dtype=bool, na_value=True)
        if len(self._skipped):
            changed = changed.copy()  # pandas may hand out its own buffer
            changed[self._skipped] = False
        if not changed.any():
            return
        positions = np.flatnonzero(changed)
        read = before.iloc[positions]
        codes, uniques = pd.factorize(read)
        counts = np.bincount(codes)
        first = np.empty(len(uniques), dtype=np.int64)
        first[codes[::-1]] = positions[::-1]  # reversed: the earliest position of each value is written last
        values: list[str] = uniques.tolist()
        if isinstance(kind, str):
            self._add(field, column, kind, rule if isinstance(rule, str) else rule(kind), values, counts, first,
                      after)
            return
        sent = after.iloc[first].tolist()
        kinds = np.asarray(kind(values, sent), dtype=object)
        for name in dict.fromkeys(kinds.tolist()):
            chosen = np.flatnonzero(kinds == name)
            self._add(field, column, name, rule if isinstance(rule, str) else rule(name),
                      [values[i] for i in chosen], counts[chosen], first[chosen], after)

    def cells(self, field: str, column: str, values: pd.Series, read: CellsRead) -> None:
        """Record the cells of ``values`` (a column as read) that the reader read in a particular way
        (``read``: date cells, a number format, formulas); empty cells are left out."""
        positions = read.positions[(values.iloc[read.positions] != "").to_numpy()]
        positions = positions[~np.isin(positions, self._skipped)]
        if not len(positions):
            return
        text = values.iloc[positions]
        codes, uniques = pd.factorize(text)
        counts = np.bincount(codes)
        first = np.empty(len(uniques), dtype=np.int64)
        first[codes[::-1]] = positions[::-1]
        examples = []
        for j, p in enumerate(first[:EXAMPLES].tolist()):
            value = str(uniques[j])
            held = read.held[int(np.searchsorted(read.positions, p))] if read.held is not None else value
            examples.append(ValueExample(self.row_numbers[p], held, value, int(counts[j])))
        self._merge(ValueChange(field, column, read.kind, read.rule, len(positions), examples),
                    _counter(uniques.tolist(), counts), by_sent=True)

    def constant(self, field: str, column: str, kind: str, rule: str, value: str, rows: int) -> None:
        """Record a value the config gives every one of ``rows`` rows (those repeating the header aside)."""
        rows -= len(self._skipped)
        if rows > 0:
            skipped = set(self._skipped.tolist())
            first = next(row for pos, row in enumerate(self.row_numbers) if pos not in skipped)
            self._merge(ValueChange(field, column, kind, rule, rows,
                                    [ValueExample(first, "", value, rows)]),
                        lambda sent: rows if sent == value else 0, by_sent=True)

    def changes(self, field_order: Sequence[str] = ()) -> list[ValueChange]:
        """Every change, by field (``field_order`` first, then as met), then in the order of ``KINDS``."""
        order = {name: i for i, name in enumerate(field_order)}
        kinds = {kind: i for i, kind in enumerate(KINDS)}
        met = {key[:2]: i for i, key in reversed(list(enumerate(self._changes)))}

        def place(c: ValueChange) -> tuple[int, int, int]:
            return order.get(c.field, len(order)), met[(c.field, c.column)], kinds.get(c.kind, len(kinds))

        return sorted(self._changes.values(), key=place)

    def _add(self, field: str, column: str, kind: str, rule: str, values: list[str], counts: np.ndarray,
             first: np.ndarray, after: pd.Series) -> None:
        shown = first[:EXAMPLES]
        sent = after.iloc[shown].tolist()
        examples = [ValueExample(self.row_numbers[int(p)], values[i], str(sent[i]), int(counts[i]))
                    for i, p in enumerate(shown.tolist())]
        self._merge(ValueChange(field, column, kind, rule, int(counts.sum()), examples), _counter(values, counts))

    def _merge(self, change: ValueChange, count_of: Callable[[str], int], by_sent: bool = False) -> None:
        """Add ``change`` to the change of the same key met before (an earlier chunk of the file, or other
        cells of this one): rows added up, and each example value shown counted in full, as one whole-file
        pass counts it (``count_of``: how many of the rows ``change`` covers hold a value; a value is the
        example's ``sent`` with ``by_sent``, else its ``read``)."""
        key = (change.field, change.column, change.kind, change.rule)
        known = self._changes.get(key)
        if known is None:
            self._changes[key] = change
            return
        known.rows += change.rows

        def value(e: ValueExample) -> str:
            return e.sent if by_sent else e.read

        shown = {value(e) for e in known.examples}
        for e in known.examples:
            e.rows += count_of(value(e))
        fresh = [e for e in change.examples if value(e) not in shown]
        known.examples = sorted([*known.examples, *fresh], key=lambda e: e.row)[:EXAMPLES]


def _counter(values: list[str], counts: np.ndarray) -> Callable[[str], int]:
    """How many rows hold a value, from a step's distinct values and their counts (looked up lazily: only a
    change met before asks)."""
    index: dict[str, int] = {}

    def count_of(value: str) -> int:
        if not index:
            index.update(zip(map(str, values), range(len(values))))
        i = index.get(value)
        return int(counts[i]) if i is not None else 0

    return count_of


def changed_cells(
    read: dict[str, pd.Series], sent: pd.DataFrame, sources: dict[str, str], count: int
) -> list[dict[str, list[str]]]:
    """For each of the first ``count`` rows, field -> [column, value read, value sent] for the fields whose
    value sent differs from the cell: the row's detail in ``report.html``. Vectorised per field; only the
    cells that differ meet Python."""
    rows: list[dict[str, list[str]]] = [{} for _ in range(min(count, len(sent)))]
    if not rows:
        return rows
    for name, cells in read.items():
        if name not in sent:
            continue
        before, after = cells.iloc[: len(rows)], sent[name].iloc[: len(rows)]
        differ = np.flatnonzero((before != after).to_numpy(dtype=bool, na_value=True))
        column = sources.get(name, name)
        for pos, old, new in zip(differ.tolist(), before.iloc[differ].tolist(), after.iloc[differ].tolist()):
            rows[pos][name] = [column, str(old), str(new)]
    return rows


def keep_changed_values(rows: list[RowOutcome], mapped: MappedTable, mask: Iterable[str], count: int) -> None:
    """Give each of the first ``count`` rows (``rows`` in source order, one per row of ``mapped``) its
    ``changed_values``: what report.html lists under the row. Masked fields are left out."""
    mask = tuple(mask)
    changed = changed_cells(mapped.read, mapped.frame, mapped.field_sources, count)
    for position, cells in enumerate(changed):
        row = rows[position] if position < len(rows) else None
        if cells and row is not None and row.row == mapped.row_numbers[position]:
            row.changed_values = {name: cell for name, cell in cells.items()
                                  if not is_masked(mask, name, cell[0])}
