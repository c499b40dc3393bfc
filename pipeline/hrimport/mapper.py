"""Mapper: source columns -> platform fields, values normalised, extra columns packed as custom data.

``map_records`` takes what the reader read and the config's ``FieldMapping`` and returns a
``MappedTable``: one text column per field (``""`` = no value), in the canonical form the validator
expects wherever a value was recognised, and left as written where it was not (the validator then
says what is wrong with it; nothing is guessed). The JSON bodies the service takes are built from it by
``hrimport.service.staff.build_payloads``: their shape is the platform's business, not the mapper's.
Every change a value meets on the way (the reader's date cells and number formats, trimming, value maps,
normalising) is recorded per column, for the report's "How values were read" (``hrimport.provenance``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import NamedTuple

import numpy as np
import pandas as pd

from hrimport.config import DEFAULT_FORMULA_TEXT, FieldMapping
from hrimport.errors import InputFileError
from hrimport.fields import Field, by_name
from hrimport.listing import quoted
from hrimport.normalize import TRIM_RULE, change_kinds, change_rules, normalize_for_field
from hrimport.normalize.countries import flag_ambiguous_countries
from hrimport.normalize.dates import (
    DEFAULT_DATE_ORDER,
    ColumnDateReading,
    DateOrder,
    DateOrderConflict,
    DateOrderUnknown,
    either_way,
)
from hrimport.normalize.formulas import guard_formula_text
from hrimport.normalize.invisible import INVISIBLE_CHARACTER, flag_invisible_characters
from hrimport.normalize.long_numbers import flag_scientific_numbers
from hrimport.normalize.trail import ValueTrail
from hrimport.normalize.values import ValueMemo
from hrimport.normalize.words import H_AND_M, gender_letters
from hrimport.outcomes import Problem, SourceInfo
from hrimport.provenance import ValueChange, is_masked
from hrimport.reader import SourceTable, normalize_header
from hrimport.reader.grid import ERROR_VALUE, FORMULA_NOT_CALCULATED, FORMULA_TO_RECALCULATE, SHEET_HINT
from hrimport.reader.hidden_columns import HIDDEN_COLUMN, hidden_column_problem
from hrimport.reader.hidden_rows import HIDDEN_ROW, hidden_row_problem
from hrimport.reader.no_such_dates import NO_SUCH_DATE, NOT_SHOWN
from hrimport.reader.repeated_header import holds_no_record, keep_alone
from hrimport.reader.summary_rows import summary_rows
from hrimport.to_fix_format import ESCAPED_FORMULA, EXCEL_TEXT_FORMULA, FIX_COLUMN


class TextColumn(NamedTuple):
    """A column sent as any text (``MappedTable.text_columns``)."""

    name: str  # the field, or the custom data type
    cells: pd.Series
    column: str  # the file's column
    field: str | None  # the field (None: custom data), as a ``Problem`` names it
    key: bool  # the person's external id


@dataclass
class MappedTable:
    """The records of one file as platform fields (one row per source row, same order)."""

    frame: pd.DataFrame  # field name -> text ("" = empty)
    row_numbers: list[int]
    field_sources: dict[str, str]  # field -> the source column(s) a person would look at
    custom: pd.DataFrame  # company data type name -> text, for customer_data_type
    custom_sources: dict[str, str] = field(default_factory=dict)  # data type name -> source column
    ignored_columns: list[str] = field(default_factory=list)
    fields: tuple[Field, ...] = ()
    # Found before validation, by row position: the reader's row problems and the mapper's own (a date
    # against its column's order, formula-like text...). ``problems`` stop a row; ``warnings`` travel
    # with it to the report.
    problems: dict[int, list[Problem]] = field(default_factory=dict)
    warnings: dict[int, list[Problem]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the run's summary and report should say
    # the mapping's carried columns (``FieldMapping.carried``): key -> each row's cell, stripped
    carried: dict[str, list[str]] = field(default_factory=dict)
    carried_sources: dict[str, str] = field(default_factory=dict)  # key -> the column's header in the file
    # how the values were read and changed on their way (``hrimport.provenance``), per field and kind
    values_read: list[ValueChange] = field(default_factory=list)
    # field -> each row's value as the file gave it (before trimming, value maps, normalising), for the
    # fields read from columns: what ``hrimport.normalize.trail.changed_cells`` compares with ``frame``
    read: dict[str, pd.Series] = field(default_factory=dict)

    def add_problem(self, position: int, problem: Problem) -> None:
        target = self.warnings if problem.is_warning else self.problems
        target.setdefault(position, []).append(problem)

    def text_columns(self) -> Iterator[TextColumn]:
        """The columns sent as any text the platform takes: each text field (an id, a name, a phone number) and
        each custom data type, with the column a person would look at (the checks of such text: a long number
        in scientific notation, a character nobody sees)."""
        specs = by_name(self.fields)
        for name in self.frame.columns:
            spec = specs.get(name)
            if spec is not None and spec.kind == "text":
                yield TextColumn(name, self.frame[name], self.field_sources.get(name, name), name, spec.key)
        for name in self.custom.columns:
            yield TextColumn(name, self.custom[name], self.custom_sources.get(name, name), None, False)

    def __len__(self) -> int:
        return len(self.frame)


class MappingState:
    """What mapping a file chunk by chunk (issue 17) carries from one chunk to the next, so the chunks
    together say what one whole-file mapping says: how the values were read (one ``ValueTrail``), each
    date column's order (``ColumnDateReading``: decided from all its values, whatever chunk they are in),
    whether a gender column holds both H and M; and each field's values normalised so far, so that the
    values every chunk repeats (dates, countries, yes/no words) are converted once.
    ``finish`` closes the file: its notes, its record of values read, or the ``InputFileError`` of a date
    column that proves the other order."""

    def __init__(self, date_order: DateOrder | None = None, h_and_m: Iterable[str] = ()) -> None:
        self.date_order = date_order
        self.trail = ValueTrail([])
        self.dates: dict[str, ColumnDateReading] = {}  # field -> its column's reading so far
        self.info: SourceInfo | None = None
        # gender fields whose whole column holds both H and M (Hombre/Mujer: neither is read as a word),
        # known from the start (``MappingRestart``) or from a chunk holding both
        self.h_and_m = set(h_and_m)
        self._letters: dict[str, frozenset[str]] = {}  # gender field -> the letter H or M its chunks held so far
        self.memos: dict[str, ValueMemo] = {}  # field -> its values normalised so far (``per_value``)
        self.change_memos: dict[str, dict[str, str]] = {}  # field -> how they changed (``change_kinds``)

    def date_reading(self, name: str, column: str) -> ColumnDateReading:
        if name not in self.dates:
            self.dates[name] = ColumnDateReading(column, self.date_order)
        return self.dates[name]

    def holds_h_and_m(self, name: str, values: pd.Series) -> bool:
        """Whether the gender field ``name`` holds both H and M in the whole file, as far as the chunks so far
        (``values`` the latest) show. A chunk holding both settles it; a letter alone is read as a word
        (M for Male), so when the other letter turns up in a later chunk, the earlier ones were read on a
        guess: ``MappingRestart``."""
        if name in self.h_and_m:
            return True
        letters = gender_letters(values)
        met = self._letters.get(name, frozenset())
        if letters == H_AND_M and not met:
            self.h_and_m.add(name)
            return True
        self._letters[name] = met | letters
        if self._letters[name] == H_AND_M:
            raise MappingRestart(name)
        return False

    def finish(self, mapping: FieldMapping) -> tuple[list[str], list[ValueChange]]:
        """The file's notes and how its values were read, once every chunk is mapped."""
        assert self.info is not None, "finish() after the first chunk"
        try:
            orders = {name: reading.order() for name, reading in self.dates.items()}
        except DateOrderUnknown as exc:
            told = _unknown_in_to_fix(exc, self.info.headers, text_file=self.info.format in ("csv", "tsv"))
            raise InputFileError(f"{self.info.name}: {told or exc}") from None
        except DateOrderConflict as exc:
            raise InputFileError(f"{self.info.name}: {exc}") from None
        rules = {_date_rule_key(name): order.rule(self.dates[name].proof_row if order.proof else None)
                 for name, order in orders.items()}
        changes = [replace(c, rule=rules.get(c.rule, c.rule)) for c in
                   self.trail.changes([f.name for f in mapping.fields])]
        notes = _export_change_notes(self.info.headers, mapping.expected_columns)
        return notes, changes


class MappingRestart(Exception):
    """A chunk showed that the chunks before it were mapped on a guess the whole file contradicts: the
    gender field ``field`` holds H in one chunk and M in another (Hombre and Mujer). Map the file again from
    the start with ``MappingState(h_and_m=...)`` naming it; nothing has been sent."""

    def __init__(self, field: str) -> None:
        super().__init__(f"the gender field {field} holds both H and M")
        self.field = field


def _unknown_in_to_fix(unknown: DateOrderUnknown, headers: Iterable[str], *, text_file: bool) -> str:
    """What to say when a to_fix file (it has the ``Problem`` column) imported with no date_order holds only dates
    that read either way (01/02/2020), "" for any other file: the run that wrote it read them day-first, the one
    order read without the setting (its export proved it: 25/03/2020 on a row imported), and to_fix.xlsx holds
    them as date cells; to_fix.csv cannot (``hrimport.to_fix_format.day_month_date``). A to_fix.xlsx refused so
    holds such a date as text (typed in a cell formatted as Text): it is not told to correct to_fix.xlsx."""
    fix_key = normalize_header(FIX_COLUMN)
    if not unknown.either or not any(normalize_header(h) == fix_key for h in headers):
        return ""
    instead = ", or correct to_fix.xlsx instead, which holds them as dates" if text_file else ""
    return (f"column '{unknown.column}' has no date that shows whether it is day-first or month-first "
            f"({either_way(unknown.either)}); this is a to_fix file (it has the {FIX_COLUMN} column), and the import "
            f"that wrote it with this config read such dates {DEFAULT_DATE_ORDER}, the one order dates are read in without "
            f"date_order: "
            f'set date_order = "{DEFAULT_DATE_ORDER}" in [source] to import them so{instead}')


def _date_rule_key(name: str) -> str:
    """What the trail records as the rule of a date field's day/month dates until the column's order is
    known (``MappingState.finish`` writes the rule in its place)."""
    return f"\x00date order of {name}"


def map_records(
    table: SourceTable,
    mapping: FieldMapping,
    *,
    date_order: DateOrder | None = None,
    formula_text: str = DEFAULT_FORMULA_TEXT,
    state: MappingState | None = None,
    mask: Iterable[str] = (),
) -> MappedTable:
    """Rename, join, fill and normalise the source columns into platform fields.

    ``date_order`` is the config's setting (None: not set). Each date column is read in one order,
    decided from all its values (``decide_date_order``); a column whose values prove the other order
    stops the import with an ``InputFileError``. ``formula_text`` ("warn", "reject" or "strip", the config's
    ``[source] formula_text``) says what becomes of values a spreadsheet would run as formulas
    (``hrimport.normalize.formulas``).

    ``state``: the file is mapped chunk by chunk (``table`` is one chunk of it); the caller calls
    ``state.finish`` after the last chunk for the notes and ``values_read`` (else the table is the whole
    file, and the returned table holds them).

    Two columns mapped to one field fill it in the config's order: each row sends the first of them that is
    not empty. Where a later one holds another value (once normalised as the value sent is), the row gets a
    ``columns-disagree`` warning naming both; ``mask`` (the config's ``[report] mask``) names the fields and
    columns whose values such a warning shows masked, as the report shows them.
    """
    whole = state is None
    if state is None:
        state = MappingState(date_order)
    state.info = table.info
    source = table.frame
    carried_columns = set(mapping.carried.values())  # a missing one is named with its setting, below
    missing = [c for c in mapping.source_columns if c not in carried_columns and table.column(c) is None]
    if missing:
        headers = quoted(table.info.headers)
        raise InputFileError(
            f"{table.info.name}: column(s) {quoted(missing)} named in the config are "
            f"not in the file ({_where(table.info)}{table.info.header_place} has {headers})"
            f"{_changed_export(table, mapping, missing) or _other_sheets(table.info, mapping, missing)}"
        )
    used: set[str] = set()
    sent_from: set[str] = set()  # the columns whose values are sent: fields, joins, custom fields

    def resolve(column: str) -> str:
        """The file's own header for a column the config names (present: checked above)."""
        actual = table.column(column)
        assert actual is not None
        used.add(actual)
        sent_from.add(actual)
        return actual

    text_file = table.info.format in ("csv", "tsv")  # cells without types: Excel's ="000123" is text
    carried: dict[str, list[str]] = {}
    carried_sources: dict[str, str] = {}
    for key, column in mapping.carried.items():
        actual = table.column(column)
        if actual is None:
            headers = quoted(table.info.headers)
            raise InputFileError(f"{table.info.name}: the config's {key} names column {column!r}, which is not "
                                 f"in the file (its {table.info.header_place} has {headers})")
        used.add(actual)
        carried[key] = _clean(source[actual], text_file=text_file).tolist()
        carried_sources[key] = actual

    trail = state.trail
    # a totals row or a footer line under the table, a row repeating the header: nothing is said of its cells
    # but that (``keep_alone``)
    totals = _summary_rows(table, mapping, mask)
    no_record = [row for row, found in table.row_problems.items() if holds_no_record(found)]
    trail.skip(table.row_numbers, [*no_record, *(table.row_numbers[pos] for pos in totals)])

    # the cells of a column sent that hold no value to send: an error value, a formula saved without its result
    # or with a stand-in for it, a date cell showing a day that never was
    no_value: dict[tuple[int, str], Problem] = {}

    def cells_of(name: str, actual: str, label: str, field: str | None = None) -> pd.Series:
        """The cells of column ``actual``, cleaned, with what the reader and the cleaning did recorded for
        the field ``name`` under ``label`` (the column as the config names it). ``field``: the platform
        field they go to (None for custom data), for the problem of a cell holding no value to send."""
        for how in table.cells_read.get(actual, ()):
            if how.kind == ERROR_VALUE:
                for pos in how.positions.tolist():
                    problem = _error_value(table.row_numbers[pos], actual, field, source[actual].iat[pos])
                    no_value.setdefault((pos, actual), problem)
            elif how.kind == FORMULA_NOT_CALCULATED:
                for pos, formula in zip(how.positions.tolist(), how.held or ()):
                    problem = _formula_not_calculated(table.row_numbers[pos], actual, field, formula)
                    no_value.setdefault((pos, actual), problem)
            elif how.kind == FORMULA_TO_RECALCULATE:
                for pos, formula in zip(how.positions.tolist(), how.held or ()):
                    problem = _formula_to_recalculate(table.row_numbers[pos], actual, field, formula,
                                                      source[actual].iat[pos])
                    no_value.setdefault((pos, actual), problem)
            elif how.kind == NO_SUCH_DATE:
                for pos, stored in zip(how.positions.tolist(), how.held or ()):
                    problem = _no_such_date(table.row_numbers[pos], actual, field, source[actual].iat[pos], stored)
                    no_value.setdefault((pos, actual), problem)
            else:
                trail.cells(name, label, source[actual], how)
        return _clean(source[actual], trail, name, label, text_file=text_file)

    n = len(source)
    empty = pd.Series([""] * n, dtype="str")
    columns: dict[str, pd.Series] = {}
    read: dict[str, pd.Series] = {}
    # field -> each column mapped to it (the file's header) and its cells, in the config's order
    filled_from: dict[str, list[tuple[str, pd.Series]]] = {}
    for column, name in mapping.columns.items():
        actual = resolve(column)
        values = cells_of(name, actual, column, name)
        filled_from.setdefault(name, []).append((actual, values))
        if name not in columns:
            columns[name], read[name] = values, source[actual]
        else:  # two columns mapped to one field: the first non-empty value wins, left to right
            taken = columns[name] != ""
            columns[name] = columns[name].where(taken, values)
            read[name] = read[name].where(taken, source[actual])
    for name, (join_cols, separator) in mapping.joins.items():
        parts = [cells_of(name, resolve(c), c, name) for c in join_cols]
        columns[name] = read[name] = _join(parts, separator)

    specs = by_name(mapping.fields)
    sources = mapping.field_sources()
    # a default fills an empty cell, never one the value map emptied ("divers" = "": send none; "Pending" = "":
    # no decision), which would send the default for a value the sheet shows and the config chose not to send
    cells_given = {name: columns[name] for name in mapping.defaults if name in columns}
    for name, value_map in mapping.values.items():
        if name in columns:
            mapped_values = _apply_value_map(columns[name], value_map)
            trail.compare(name, sources.get(name, name), columns[name], mapped_values, "value-map",
                          f"the config's value map for {name}, matched ignoring case")
            columns[name] = mapped_values
    for name, value in mapping.defaults.items():
        given = columns.get(name, empty)
        columns[name] = given.mask(cells_given.get(name, given) == "", value)
        if name in read:
            trail.compare(name, sources.get(name, name), given, columns[name], "default",
                          f"the config's default for {name}: the cell is empty")
        else:
            trail.constant(name, sources.get(name, name), "default", f"the config's default for {name}", value,
                           n)
    for name, value in mapping.constants.items():
        columns[name] = pd.Series([value] * n, dtype="str")
        read.pop(name, None)  # not from the file: no row's detail shows it
        trail.constant(name, sources.get(name, name), "constant", f"the config's constant for {name}", value, n)
    cell_problems: list[tuple[str, pd.Series, dict[str, str], ColumnDateReading]] = []
    normalisers: dict[str, Callable[[pd.Series], pd.Series]] = {}  # field -> what its values went through
    for name, values in columns.items():
        dates: dict[str, str] = {}
        date_rule = ""
        reading = None
        if specs[name].kind == "date":
            reading = state.date_reading(name, sources.get(name, name))
            codes, dates = reading.read(values, table.row_numbers)
            date_rule = _date_rule_key(name)
            if codes:
                cell_problems.append((name, values, codes, reading))
        h_and_m = state.holds_h_and_m(name, values) if specs[name].kind == "enum" and name == "gender" else None
        normalise = partial(normalize_for_field, field=specs[name], day_first=reading.day_first if reading else True,
                            dates=dates, h_and_m=h_and_m, memo=state.memos.setdefault(name, {}),
                            date_system=table.info.date_system)
        normalisers[name] = normalise
        columns[name] = normalise(values)
        trail.compare(name, sources.get(name, name), values, columns[name],
                      change_kinds(specs[name], dates, state.change_memos.setdefault(name, {})),
                      change_rules(specs[name], date_rule, table.info.date_system))

    if "is_intern" in columns and "is_employee" in specs:
        # the platform defaults is_employee to true, which an intern cannot be (spec: is_intern rule): an
        # intern's empty is_employee is sent false, and the report says so as of any value not in the sheet
        given = columns.get("is_employee", empty)
        filled = given.mask((columns["is_intern"] == "true") & (given == ""), "false")
        trail.compare("is_employee", sources.get("is_intern", "is_intern"), given, filled, "intern-not-employee",
                      "is_intern is true, and the platform's default for is_employee (true) would contradict it")
        columns["is_employee"] = filled
        read.setdefault("is_employee", given)

    custom_cols: dict[str, pd.Series] = {}
    custom_sources: dict[str, str] = {}
    for column, type_name in mapping.custom_fields.items():
        actual = resolve(column)
        custom_cols[type_name] = cells_of(type_name, actual, actual)
        custom_sources[type_name] = actual
    fix_key = normalize_header(FIX_COLUMN)
    unmapped = [c for c in source.columns if c not in used and normalize_header(c) != fix_key]
    if mapping.pack_unmapped:
        for column in unmapped:
            custom_cols[column] = cells_of(column, column, column)
            custom_sources[column] = column
        unmapped = []

    frame = pd.DataFrame(columns, index=source.index) if columns else pd.DataFrame(index=source.index)
    custom = pd.DataFrame(custom_cols, index=source.index) if custom_cols else pd.DataFrame(index=source.index)
    mapped = MappedTable(
        frame=frame,
        row_numbers=list(table.row_numbers),
        field_sources=mapping.field_sources(),
        custom=custom,
        custom_sources=custom_sources,
        ignored_columns=unmapped,
        fields=mapping.fields,
        carried=carried,
        carried_sources=carried_sources,
        read=read,
    )
    for name, values, codes, reading in cell_problems:
        for pos in values.isin(list(codes)).to_numpy().nonzero()[0].tolist():
            mapped.add_problem(pos, _date_problem(codes[values.iat[pos]], mapped.row_numbers[pos],
                                                  reading, name, values.iat[pos]))
    for (pos, _), problem in no_value.items():
        mapped.add_problem(pos, problem)
    for name, filled in filled_from.items():
        if len(filled) > 1 and name not in mapping.constants:
            for pos, disagreeing in columns_disagree(name, filled, columns[name], normalisers[name],
                                                     mapping.values.get(name, {}), mapped.row_numbers,
                                                     {pos for pos, _ in no_value}, mask,
                                                     strict="columns-disagree" in mapping.strict_checks):
                mapped.add_problem(pos, disagreeing)
    if table.row_problems:
        sent = used | set(custom_sources.values())
        position = {row: pos for pos, row in enumerate(table.row_numbers)}
        for row, found in table.row_problems.items():
            for problem in found:
                if problem.column is not None and problem.column not in sent:
                    # a broken cell in a column nothing is sent from: worth knowing, no reason to hold the row
                    problem = replace(problem, severity="warning")
                mapped.add_problem(position[row], problem)
    if len(table.hidden_rows):  # rows nobody sees in Excel, sent all the same unless strict (``hidden_rows``)
        strict = HIDDEN_ROW in mapping.strict_checks
        at = np.searchsorted(np.asarray(table.row_numbers), table.hidden_rows)
        zero_height = set(table.zero_height_rows.tolist())
        for pos, row in zip(at.tolist(), table.hidden_rows.tolist()):
            mapped.add_problem(pos, hidden_row_problem(row, strict=strict, zero_height=row in zero_height))
    _flag_hidden_columns(mapped, table, sent_from | set(custom_sources.values()),
                         strict=HIDDEN_COLUMN in mapping.strict_checks)
    for pos, problem in totals.items():
        if not holds_no_record(mapped.problems.get(pos, ())):  # a header row again is told as such
            mapped.add_problem(pos, problem)
    # values normalisation could not make certain (row problems), and values a spreadsheet would run as a
    # formula (a warning, or as the config's formula_text says)
    flag_ambiguous_countries(mapped)
    flag_scientific_numbers(mapped, strict="scientific-notation" in mapping.strict_checks)
    flag_invisible_characters(mapped, strict=INVISIBLE_CHARACTER in mapping.strict_checks)
    guard_formula_text(mapped, formula_text, trail)
    keep_alone(mapped.problems, mapped.warnings)
    if whole:
        mapped.notes, mapped.values_read = state.finish(mapping)
    return mapped


def _flag_hidden_columns(mapped: MappedTable, table: SourceTable, sent_from: set[str], *, strict: bool) -> None:
    """A ``hidden-column`` problem on each row holding a value in a column the workbook hides that the config
    sends (``sent_from``): nobody saw it in Excel (``hidden_columns``). One problem a row, naming each such column
    holding a value there (an export hiding two ID columns gives 100,000 problems, not 200,000). A hidden column
    nothing is sent from says nothing: it is not read into any record."""
    hidden = [c for c in table.info.hidden_columns if c in sent_from]
    if not hidden:
        return
    held = np.array([(table.frame[c].str.strip() != "").to_numpy(dtype=bool) for c in hidden])
    for pos in np.flatnonzero(held.any(axis=0)).tolist():
        columns = hidden if len(hidden) == 1 else [c for c, filled in zip(hidden, held[:, pos].tolist()) if filled]
        mapped.add_problem(pos, hidden_column_problem(mapped.row_numbers[pos], columns, strict=strict))


def _summary_rows(table: SourceTable, mapping: FieldMapping, mask: Iterable[str]) -> dict[int, Problem]:
    """``hrimport.reader.summary_rows`` of the table: the totals rows and footer lines under it, by position,
    judged by the columns of the external id and of the name (time off: the name column carried for the report)
    and those of the required fields the config maps from columns."""
    fields = by_name(mapping.fields)
    key = next((f.name for f in mapping.fields if f.key), None)
    sources = [(column, name) for column, name in mapping.columns.items()]
    sources += [(column, name) for name, (join_cols, _) in mapping.joins.items() for column in join_cols]
    ids = [column for column, name in sources if name == key]
    names = [column for column, name in sources if name == "name"]
    names += [mapping.carried["name"]] if "name" in mapping.carried else []
    required = [column for column, name in sources
                if name in fields and fields[name].is_required and name not in mapping.constants]
    ids, names, required = ([c for c in map(table.column, columns) if c] for columns in (ids, names, required))
    mask = tuple(mask)
    # a cell is quoted as the report shows it: masked when its column, or the field it is sent as, is masked
    sent_as = {table.column(column): name for column, name in [*sources, *mapping.custom_fields.items()]}

    def shown(value: str, column: str) -> str:
        return _as_reported(value, mask, column, *([sent_as[column]] if column in sent_as else []))

    fix_key = normalize_header(FIX_COLUMN)  # a to_fix file's Problem column: what we wrote, not the export
    return summary_rows(table.frame, table.row_numbers, ids, names, required, shown,
                        skip=[c for c in table.frame.columns if normalize_header(c) == fix_key])


def columns_disagree(
    name: str, filled: list[tuple[str, pd.Series]], sent: pd.Series, normalise: Callable[[pd.Series], pd.Series],
    value_map: dict[str, str], row_numbers: list[int], skipped: set[int], mask: Iterable[str] = (),
    *, strict: bool = False,
) -> Iterator[tuple[int, Problem]]:
    """A ``columns-disagree`` warning (with its row's position) for each row where a column mapped to the field
    ``name`` after the one it is sent from holds another value: ``filled`` is each such column (its header)
    and its cells, in the config's order; ``sent``, the field's values as sent, made of the cells by the
    config's ``value_map`` then ``normalise``. The value sent is the config's choice, so it is kept, but the
    other is not dropped without a word (principle 1). Rows at ``skipped`` positions (a cell holding no
    value: an error, a formula without its result) have a problem of their own. ``strict`` (``strict_checks``
    names ``columns-disagree``): the row is held back instead, an error."""
    mask = tuple(mask)
    chosen = np.full(len(sent), -1)  # per row: the column its value is sent from (-1: none)
    for k, (_, cells) in enumerate(filled):
        chosen[(chosen < 0) & (cells != "").to_numpy()] = k
    for k, (column, cells) in enumerate(filled):
        after = np.flatnonzero((chosen >= 0) & (chosen < k) & (cells != "").to_numpy())
        after = after[[pos not in skipped for pos in after.tolist()]] if skipped else after
        if not len(after):
            continue
        others = cells.iloc[after]
        others = normalise(_apply_value_map(others, value_map) if value_map else others)
        differ = after[others.to_numpy() != sent.iloc[after].to_numpy()]
        for pos in differ.tolist():
            first_column, first_cells = filled[chosen[pos]]
            shown = [_as_reported(v, mask, name, c) for v, c in ((first_cells.iat[pos], first_column),
                                                                  (cells.iat[pos], column))]
            said = (f"Row {row_numbers[pos]}: columns '{first_column}' and '{column}' both give {name}, with "
                    f"different values: '{shown[0]}' (from '{first_column}', the first in the config's order with a "
                    "value)")
            if strict:
                yield pos, Problem(
                    "columns-disagree",
                    f"{said} and '{shown[1]}' (from '{column}'); not sent (strict_checks lists columns-disagree): "
                    "make the two columns agree, or take columns-disagree out of strict_checks to send the first.",
                    row_numbers[pos], column, name, shown[1])
                continue
            yield pos, Problem(
                "columns-disagree", f"{said} is the one used, '{shown[1]}' (from '{column}') is not.",
                row_numbers[pos], column, name, shown[1], severity="warning")


def _as_reported(value: str, mask: tuple[str, ...], *names: str) -> str:
    """``value`` as a report may quote it: masked (``•••••1234``) when the field or column is in ``mask``."""
    if not is_masked(mask, *names):
        return value
    # the report's own form, imported here only: mapping a file needs nothing else of the reporter's package
    from hrimport.report.cells import mask_value

    return mask_value(value)


def _where(info: SourceInfo) -> str:
    """"sheet 'Cover', " for a workbook of more than one sheet, whose sheet read may not be the table."""
    return f"sheet '{info.sheet}', " if len(info.sheets) > 1 else ""


def _other_sheets(info: SourceInfo, mapping: FieldMapping, missing: list[str]) -> str:
    """"; the workbook's other sheets are 'Staff': ..." when the sheet read holds none of the config's columns
    (a cover sheet in front of the table); "" when it holds some of them, or is the workbook's only sheet."""
    others = [name for name in info.sheets if name != info.sheet]
    if not others or len(missing) < len(set(mapping.source_columns) - set(mapping.carried.values())):
        return ""
    return f"; the workbook's other sheets are {quoted(others)}: {SHEET_HINT}"


def _changed_export(table: SourceTable, mapping: FieldMapping, missing: list[str]) -> str:
    """"; the file has 'Hire date (original)': did the export change?" for the first missing column that
    a new header (one the config names nowhere) resembles; "" when none does."""
    named = {normalize_header(c) for c in (*mapping.source_columns, *mapping.expected_columns)}
    new = [h for h in table.info.headers if normalize_header(h) not in named]
    folded = {normalize_header(h): h for h in new}
    for column in missing:
        key = normalize_header(column)
        close = [h for k, h in folded.items() if key in k or k in key]
        close = close or [folded[k] for k in difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)]
        if close:
            return f"; {quoted([column])} is missing and the file has {quoted([close[0]])}: did the export change?"
    return ""


def _export_change_notes(headers: list[str], expected: tuple[str, ...]) -> list[str]:
    """A note when the file's headers differ from the config's ``[source] expected_columns``."""
    if not expected:
        return []
    have = {normalize_header(h) for h in headers}
    want = {normalize_header(h) for h in expected}
    gone = [h for h in expected if normalize_header(h) not in have]
    # the Problem column a to_fix file adds is no column of the export (and never to be expected)
    fix_key = normalize_header(FIX_COLUMN)
    new = [h for h in headers if normalize_header(h) not in want and normalize_header(h) != fix_key]
    if not gone and not new:
        return []
    parts = []
    if gone:
        parts.append(f"no longer has {', '.join(repr(h) for h in gone)}")
    if new:
        parts.append(f"has new column(s) {', '.join(repr(h) for h in new)}")
    return [(f"The export changed since the config was written: it {' and '.join(parts)} (compared with "
            "[source] expected_columns); check the mapping and update expected_columns.")]


def _error_value(row: int, column: str, field_name: str | None, value: str) -> Problem:
    """The problem of a cell holding an error value (``#N/A``) in a column sent: the cell has no value to send,
    and sending nothing (or the config's default) would hide that the sheet shows an error there."""
    return Problem("error-value",
                   f"Row {row}, column '{column}': the cell shows the error {value}, not a value (a formula "
                   "that found nothing, or an error pasted as a value); correct it or type the value.",
                   row, column, field_name, value)


def _formula_not_calculated(row: int, column: str, field_name: str | None, formula: str) -> Problem:
    """The problem of a formula cell saved without its result in a column sent: Excel would show what the
    formula calculates, the file holds nothing to send. ``formula``: "" for a cell sharing another's."""
    what = f"the formula {formula}" if formula else "a formula"
    return Problem("formula-not-calculated",
                   f"Row {row}, column '{column}': the cell holds {what}, saved without its result by a program "
                   "that does not calculate; open the file in Excel or LibreOffice and save it.",
                   row, column, field_name, formula)


def _formula_to_recalculate(row: int, column: str, field_name: str | None, formula: str, saved: str) -> Problem:
    """The problem of a formula cell in a column sent of a workbook that asks to be calculated again when opened
    (xlsxwriter saves 0 with every formula, and asks): Excel would show what the formula calculates, the file
    holds a stand-in (``saved``, as read). LibreOffice keeps such stand-ins unless told to recalculate."""
    what = f"the formula {formula}" if formula else "a formula"
    value = f"the value {saved}" if saved else "an empty value"
    return Problem("formula-not-calculated",
                   f"Row {row}, column '{column}': the cell holds {what}, saved with {value} in a workbook that asks "
                   "to be calculated again when opened, so that value is not a result to send; open the file in "
                   "Excel and save it, or in LibreOffice choose Data > Calculate > Recalculate Hard and save it.",
                   row, column, field_name, formula)


def _no_such_date(row: int, column: str, field_name: str | None, value: str, stored: str) -> Problem:
    """The problem of a cell held back by ``hrimport.reader.no_such_dates`` in a column sent, by what it shows
    (``value``): 0 January 1900 (how Excel shows a 0 in a date cell: an HR system's "no date"), 29 February 1900,
    ``########`` (a number no date or time shows), a 1904-system date with a minus sign, or, for an East Asian
    format that is a date or a time by the computer's language, the number stored itself (``stored``, with a
    minus sign too when below zero). Sending the day the library reads in its place (a time of day, 28
    February) would send what no one sees, and no real date is the one shown."""
    where = f"Row {row}, column '{column}'"
    if value == stored:  # before the minus sign's test: an East Asian format's -1 is no 1904 date
        message = (f"{where}: the cell holds {stored} in one of Excel's East Asian built-in formats, which shows "
                   "it as a date or as a time depending on the language of the computer opening the file, so "
                   "what is seen cannot be known from the file; give the column a date format such as "
                   "yyyy-mm-dd (or a time format), or enter the value as text.")
    elif value == NOT_SHOWN:
        message = (f"{where}: the cell holds {stored}, a number Excel cannot show as a date or a time (it shows "
                   f"{NOT_SHOWN}: before 1900 or after 9999, or below zero), so no date can be sent for it; "
                   "enter the date, or leave the cell empty if there is none.")
    elif value.startswith("-"):
        message = (f"{where}: the cell holds {stored}, a number below zero, which Excel shows in this workbook's "
                   f"1904 date system as a date with a minus sign ({value}), not a real date, so no date can be "
                   "sent for it; enter the date, or leave the cell empty if there is none.")
    elif value.startswith("1900-01-00"):
        message = (f"{where}: the cell holds {stored}, which Excel shows as the date 0 January 1900 (00/01/1900), "
                   "a day that does not exist; leave the cell empty if there is no date, or enter the date.")
    else:
        message = (f"{where}: the cell holds {stored}, which Excel shows as the date 29/02/1900, a day that never "
                   "existed (1900 was no leap year; Excel counts it as one, as Lotus 1-2-3 did), so no date can "
                   "be sent for it; enter the real date.")
    return Problem("not-a-date", message, row, column, field_name, value)


def _date_problem(code: str, row: int, reading: ColumnDateReading, field_name: str, value: str) -> Problem:
    where = f"Row {row}, column '{reading.column}'"
    if code == "two-digit-year":
        message = (f"{where}: '{value}' has a two-digit year, so its century is not known; "
                   "write the year in full (such as 2020).")
    else:
        # A cell that does not fit the order is itself evidence of the other order, so the column's values
        # never prove the order it is read in: the config's (without one, such a column stops the import).
        order = "day-first" if reading.day_first else "month-first"
        message = (f"{where}: '{value}' cannot be a date read {order}, the order of this column's dates "
                   "(as the config's date_order says); correct it, or write it as YYYY-MM-DD.")
    return Problem(code, message, row, reading.column, field_name, value)


# Excel's way to keep a CSV cell's zeros (="000123", ``EXCEL_TEXT_FORMULA``): sent as written, it would be an
# external id no one has ever seen.
EXCEL_TEXT_RULE = 'Excel\'s ="..." in a text file: the text between the quotes, which is what Excel shows'

# A text file's guard before a formula-like value (``ESCAPED_FORMULA``): true of every CSV it is read from, which
# may be an HR system's export as well as a to_fix.csv.
APOSTROPHE_RULE = ("in a text file, the ' a program writing it puts before a value a spreadsheet would run as a "
                   "formula (=, +, -, @), so that none runs it: the guard, not part of the value")


def _clean(values: pd.Series, trail: ValueTrail | None = None, name: str = "", column: str = "", *,
           text_file: bool = False) -> pd.Series:
    """Text with surrounding spaces trimmed, missing cells as "", and in a ``text_file`` (CSV) a formula guard
    undone and Excel's ``="000123"`` read as the text it shows; each change recorded in ``trail`` for the field
    ``name``."""
    values = values.fillna("").astype("str")
    # A ' before =, +, - or @ in a CSV is the guard of the program that wrote it (OWASP's, against a spreadsheet
    # running the cell; to_fix.csv's too), not part of the value. A workbook's cell needs none (Excel's quote
    # prefix is a style, never read as a character): a ' in its text is one Excel shows, so it is sent.
    if text_file and values.str.startswith("'").any():  # rare: skip the regex on the 100k-row hot path
        unguarded = values.str.replace(ESCAPED_FORMULA, "", regex=True)
        if trail is not None:
            trail.compare(name, column, values, unguarded, "apostrophe-removed", APOSTROPHE_RULE)
        values = unguarded
    # in a workbook, such a cell is a formula and read as its result; as text there, it is what Excel shows
    if text_file and values.str.startswith('="').any():
        shown = values.str.replace(EXCEL_TEXT_FORMULA, r"\1", regex=True)
        if trail is not None:
            trail.compare(name, column, values, shown, "excel-text-formula", EXCEL_TEXT_RULE)
        values = shown
    stripped = values.str.strip()
    if trail is not None:
        trail.compare(name, column, values, stripped, "trimmed", TRIM_RULE)
    return stripped


def _first_row(values: pd.Series, value: str, row_numbers: list[int]) -> int | None:
    """The row number of the first cell holding ``value`` (None when none does, or ``value`` is "")."""
    if not value:
        return None
    found = np.flatnonzero((values == value).to_numpy())
    return row_numbers[int(found[0])] if len(found) else None


def _join(parts: list[pd.Series], separator: str) -> pd.Series:
    """Join the non-empty parts of each row (``First Name`` + ``Last Name``)."""
    out = parts[0]
    for part in parts[1:]:
        gap = pd.Series(separator, index=out.index, dtype="str").where((out != "") & (part != ""), "")
        out = out + gap + part
    return out


def _apply_value_map(values: pd.Series, value_map: dict[str, str]) -> pd.Series:
    """Replace values per the config's map, matching keys ignoring case and repeated spaces."""
    folded = {" ".join(k.split()).casefold(): v for k, v in value_map.items()}
    uniques = values.unique()
    replace = {u: folded[key] for u in uniques if (key := " ".join(str(u).split()).casefold()) in folded}
    return values.replace(replace) if replace else values
