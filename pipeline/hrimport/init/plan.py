"""The plan of a config: every column of the export decided (a field, part of the name, a setting, a custom
field to choose, or left out with its reason), plus the constants, value maps and date order it needs.

``plan_config`` composes ``match`` (what the header says) and ``evidence`` (what the values say). Rules,
in the order they apply (issue 14):

- A header the packs name is mapped unless its values contradict it; then it is left out, with why.
- Two columns for one field: an exact synonym beats a token match, else the left-most wins; the other takes
  the field's sibling (a second e-mail column becomes ``work_email``) or is left out, saying which won.
- A column no header names but whose values are all e-mail addresses takes ``system_email`` (or its sibling)
  when that is free: "values only" in the preview.
- First + last name columns are joined into ``name`` in their pack's order (姓 + 名) unless a column gives the
  whole name. Columns no pack names become custom fields, commented out, for the user to choose.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Literal

import pandas as pd

from hrimport.fields import Field, by_name, leave_types, staff_fields, timeoff_fields
from hrimport.init.evidence import Evidence, check_column, distinct_values, looks_like_emails
from hrimport.init.match import HeaderMatch, How, match_header
from hrimport.init.synonyms import FIRST_PART, LAST_PART, SETTING, Kind, header_key, vocabulary
from hrimport.normalize import normalize_for_field
from hrimport.normalize.dates import DateOrder, either_way
from hrimport.reader import SourceTable
from hrimport.reader.summary_rows import summary_rows
from hrimport.timeoff.leave_types import closest_names
from hrimport.to_fix_format import FIX_COLUMN

Role = Literal["field", "name part", "setting", "custom field", "left out"]

#: The field a second column for the same field takes (work and personal e-mail: the header decides).
SIBLINGS = {"system_email": "work_email"}
_RANK: dict[How, int] = {"exact synonym": 0, "token match": 1, "values only": 2}
# Required fields the time-off stage fills itself (config.py: lang from the leave type, total_days from the
# calculation endpoint).
_FILLED_BY_TIMEOFF = {"lang", "total_days"}
EXAMPLES = 3


@dataclass(frozen=True)
class ColumnPlan:
    """One source column and what the config does with it."""

    column: str
    role: Role
    target: str | None = None  # a field, "name" for a name part, a [timeoff] setting key, a custom data type
    how: How | None = None
    note: str = ""  # what the values showed, or why the column is left out
    examples: tuple[str, ...] = ()  # up to three values as they would be sent
    hidden: bool = False  # a column the workbook hides (Workday's ID columns): one a person may never have seen


@dataclass
class ConfigPlan:
    """Everything ``write_config_text`` needs."""

    kind: Kind
    columns: list[ColumnPlan]
    joins: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    constants: dict[str, tuple[str, str]] = field(default_factory=dict)  # field -> (value, comment)
    settings: dict[str, tuple[str, str]] = field(default_factory=dict)  # [timeoff] key -> (value, comment)
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # field -> {value in file: TODO text}
    missing: list[str] = field(default_factory=list)  # required fields no column gives (to name in the file)
    date_order: DateOrder | None = None
    date_unknown: bool = False  # dates read either way and no order proven: date_order is a TODO
    date_note: str = ""
    summary_rows: list[int] = field(default_factory=list)  # the totals rows and footer lines, never sent
    summary_cells: list[str] = field(default_factory=list)  # the first cell each of them holds ('Grand Total')
    hidden_rows: list[int] = field(default_factory=list)  # the rows the workbook hides (a filter, Hide): sent, warned

    @property
    def mapped(self) -> dict[str, str]:
        """Source column -> field, for the columns mapped to a field."""
        return {c.column: c.target for c in self.columns if c.role == "field" and c.target}

    @property
    def todos(self) -> list[str]:
        """Where the user must write something: ``[table] key`` of every TODO line."""
        out = ["[service] customer_id"]
        if self.date_unknown:
            out.append("[source] date_order")
        out += [f"[{self.kind}] {k}" if k == "customer_system_id_type" else f"[{self.kind}.constants] {k}"
               for k in self.constants]
        out += [f"[{self.kind}] {k}" for k, (v, _) in self.settings.items() if v.startswith("TODO")]
        out += [f"[{self.kind}.values.{f}] {v!r}" for f, table in self.values.items() for v in table]
        return out


def fields_of(kind: Kind) -> dict[str, Field]:
    return by_name(staff_fields() if kind == "staff" else timeoff_fields())


def guess_kind(headers: list[str]) -> Kind:
    """Time off when the headers name a leave type and a period, else staff."""
    targets = {match_header(h, "timeoff").target for h in headers}
    return "timeoff" if "leave_type" in targets and targets & {"start_date", "end_date"} else "staff"


def plan_config(table: SourceTable, kind: Kind, hidden: Collection[str] = ()) -> ConfigPlan:
    """Decide every column of ``table`` for an import of ``kind``; ``hidden``: the headers of the columns the
    workbook hides (``hrimport.reader.hidden_columns``), marked so."""
    specs = fields_of(kind)
    headers = [h for h in table.info.headers if header_key(h) != header_key(FIX_COLUMN)]
    matches = {h: match_header(h, kind) for h in headers}
    totals = _summary_rows(table, headers, matches, specs, kind)
    frame = table.frame.drop(index=table.frame.index[totals]) if totals else table.frame
    decided: dict[str, ColumnPlan] = {}
    evidence: dict[str, Evidence] = {}

    # 1. headers the packs name, checked against their values; the better claim to a field wins
    claims: dict[str, list[HeaderMatch]] = {}
    for h, m in matches.items():
        if m.target is None:
            if m.candidates:
                decided[h] = ColumnPlan(h, "left out", note="its header could be " + " or ".join(m.candidates)
                                        + "; map it by hand if it is one of them")
            continue
        if m.target in specs:
            found = check_column(frame[h], specs[m.target], kind=kind)
            if found.contradicts:
                decided[h] = ColumnPlan(h, "left out", note=f"headed like {m.target}, but {found.contradicts}")
                continue
            evidence[h] = found
        claims.setdefault(m.target, []).append(m)
    for target, group in claims.items():
        group.sort(key=lambda m: (_RANK[m.how or "values only"], headers.index(m.column)))
        winner, *others = group
        decided[winner.column] = ColumnPlan(winner.column, "field", target, winner.how,
                                            note=evidence.get(winner.column, Evidence()).confirms)
        for other in others:
            sibling = SIBLINGS.get(target)
            if sibling and sibling in specs and sibling not in claims and not _taken(decided, sibling):
                decided[other.column] = ColumnPlan(other.column, "field", sibling, other.how,
                                                   note=f"'{winner.column}' gives {target}")
            else:
                decided[other.column] = ColumnPlan(other.column, "left out",
                                                   note=f"'{winner.column}' already gives {target}")

    # 2. columns no header names but whose values are all e-mail addresses
    for h in headers:
        if h in decided or matches[h].candidates:
            continue
        if "system_email" in specs and looks_like_emails(distinct_values(frame[h])):
            free = next((f for f in ("system_email", SIBLINGS["system_email"]) if not _taken(decided, f)), None)
            if free:
                evidence[h] = Evidence(confirms="e-mail addresses")
                decided[h] = ColumnPlan(h, "field", free, "values only")

    plan = ConfigPlan(kind=kind, columns=[], summary_rows=[table.row_numbers[pos] for pos in totals],
                      hidden_rows=table.hidden_rows.tolist(),
                      summary_cells=[_first_cell(table.frame.iloc[pos]) for pos in totals])
    _name_parts(decided, plan, headers)
    for h, c in list(decided.items()):
        if c.role == "field" and c.target and c.target.startswith(SETTING):
            key = c.target[len(SETTING):]
            decided[h] = ColumnPlan(h, "setting", key, c.how)
            plan.settings[key] = (h, "")

    # 3. the rest: custom fields to choose (staff), or left out (time off has no custom data)
    for h in headers:
        if h in decided:
            continue
        if kind == "timeoff":
            if match_header(h, "staff").target == "name":
                note = "the person's name: shown in the report, never sent with time off"
            else:
                note = "no time-off field has this meaning"
            decided[h] = ColumnPlan(h, "left out", note=note)
        else:
            decided[h] = ColumnPlan(h, "custom field", h, note="no field has this meaning; send it as company "
                                                             "data by uncommenting its line")

    _dates(plan, decided, evidence)
    _value_maps(plan, decided, evidence, specs)
    _required(plan, decided, specs, frame)
    plan.columns = [_with_examples(replace(decided[h], hidden=h in hidden), frame[h], specs, plan,
                                   table.info.date_system) for h in headers]
    return plan


def _taken(decided: dict[str, ColumnPlan], target: str) -> bool:
    return any(c.role == "field" and c.target == target for c in decided.values())


def _name_parts(decided: dict[str, ColumnPlan], plan: ConfigPlan, headers: list[str]) -> None:
    """First + last name columns: joined into ``name`` unless a column gives the whole name."""
    parts = {c.target: h for h, c in decided.items() if c.role == "field" and c.target in (FIRST_PART, LAST_PART)}
    whole = next((h for h, c in decided.items() if c.role == "field" and c.target == "name"), None)
    for part, h in parts.items():
        which = "first" if part == FIRST_PART else "last"
        if whole:
            decided[h] = ColumnPlan(h, "left out", note=f"the {which} part of the name; '{whole}' gives it whole")
        elif len(parts) < 2:
            decided[h] = ColumnPlan(h, "left out", note=f"the {which} part of a name, but no column gives the "
                                                        "other part; join them by hand under [staff.join]")
        else:
            decided[h] = ColumnPlan(h, "name part", "name", decided[h].how, note=f"{which} part of the name")
    if not whole and len(parts) == 2:
        first, last = parts[FIRST_PART], parts[LAST_PART]
        separator = vocabulary("staff").separators.get(header_key(first), " ")
        plan.joins["name"] = ((first, last), separator)


def _dates(plan: ConfigPlan, decided: dict[str, ColumnPlan], evidence: dict[str, Evidence]) -> None:
    proofs = {h: e for h, e in evidence.items() if e.date_order and decided[h].role == "field"}
    orders = {e.date_order for e in proofs.values()}
    if len(orders) == 1:
        h, e = next(iter(proofs.items()))
        plan.date_order = e.date_order
        plan.date_note = f"'{h}' holds '{e.date_example}'"
    elif len(orders) > 1:
        shown = ", ".join(f"'{h}' {e.date_order} ('{e.date_example}')" for h, e in proofs.items())
        plan.date_note = f"the date columns disagree: {shown}; write the order most of them use"
        plan.date_unknown = True
    else:  # no column proves an order: where a date reads either way, the import needs the setting
        either = next(((h, e.date_either) for h, e in evidence.items() if e.date_either and
                       decided[h].role == "field"), None)
        both = next(((h, e.date_both) for h, e in evidence.items() if e.date_both and decided[h].role == "field"),
                    None)
        if both is not None:  # the import stops on such a column without the setting: it is asked for here
            plan.date_note = (f"'{both[0]}' holds dates in both orders ({both[1]}): write the order your HR "
                              "system writes; a date that order cannot read is held back on its row")
            plan.date_unknown = True
        elif either is not None:
            plan.date_note = f"no date shows the order ({either_way(either[1])}, in '{either[0]}'): write the " \
                             "order your HR system writes"
            plan.date_unknown = True


def _value_maps(plan: ConfigPlan, decided: dict[str, ColumnPlan], evidence: dict[str, Evidence],
                specs: dict[str, Field]) -> None:
    for h, e in evidence.items():
        c = decided[h]
        if c.role != "field" or not e.unknown or c.target is None:
            continue
        spec = specs[c.target]
        table = plan.values.setdefault(c.target, {})
        for value in e.unknown:
            table.setdefault(value, _todo_for(spec, value))


def _todo_for(spec: Field, value: str) -> str:
    """The TODO a value map entry starts as: the values the field takes."""
    if spec.kind == "leave_type":
        close = closest_names(value)
        close = close or [lt.en for lt in leave_types()[:3]]
        return f"TODO: the platform's leave type, such as {' | '.join(close)}"
    choices = " | ".join(spec.choices)
    if spec.name == "decision":
        choices += " | empty for undecided"
    elif not spec.is_required:
        # a value the platform has no choice for ('divers' where it takes Female or Male) is not to be forced
        # into one: left empty, the field is not sent for that row
        choices += " | empty to send none"
    return f"TODO: {choices}"


def _first_cell(row: pd.Series) -> str:
    """The first cell a row holds, trimmed: what names a totals row or a footer line to a person ('Grand Total')."""
    return next((text for text in (str(v).strip() for v in row.tolist() if v is not None and not pd.isna(v)) if text),
                "")


def _summary_rows(table: SourceTable, headers: list[str], matches: dict[str, HeaderMatch], specs: dict[str, Field],
                  kind: Kind) -> list[int]:
    """The positions of the table's totals rows and footer lines (``hrimport.reader.summary_rows``), judged by
    the columns the headers name as the id, the name and the required fields, as the import will judge them:
    such a row is held back, so its cells are no evidence of what a column holds ('Total' under each
    department is no repeated id) and no example of it."""
    targets = {h: m.target for h, m in matches.items() if m.target}
    key = next((f.name for f in specs.values() if f.key), None)
    ids = [h for h, target in targets.items() if target == key]
    if kind == "timeoff":  # its name column is read for the report
        names = [h for h in headers if match_header(h, "staff").target == "name"][:1]
    else:
        names = [h for h, target in targets.items() if target in ("name", FIRST_PART, LAST_PART)]
    required = [h for h, target in targets.items() if target in specs and specs[target].is_required]
    required += [h for h in names if h not in required and kind == "staff"]
    return sorted(summary_rows(table.frame, table.row_numbers, ids, names, required))


def _country_constant_note(spec: Field, decided: dict[str, ColumnPlan], frame: pd.DataFrame) -> str:
    """The comment of a country constant to fill in: the value every row is sent with, and, when a column no
    header names as the country holds countries ('Site country': Singapore, Malaysia), that column, so that
    people of several countries are not all sent as the one country written there."""
    for h, c in decided.items():
        if c.role not in ("custom field", "left out") or h not in frame:
            continue
        found = check_column(frame[h], spec, kind="staff")
        if not found.contradicts and found.confirms and len(set(distinct_values(frame[h]))) > 1:
            return (f"no column is headed as {spec.name}, but '{h}' holds countries ("
                    f"{', '.join(distinct_values(frame[h])[:3])}): if it gives each person's {spec.name}, map it "
                    f"under [staff.columns] and delete this line; else the one value every row is sent with")
    return f"no column gives {spec.name}: the value every row is sent with"


def _required(plan: ConfigPlan, decided: dict[str, ColumnPlan], specs: dict[str, Field],
              frame: pd.DataFrame) -> None:
    given = {c.target for c in decided.values() if c.role == "field"} | set(plan.joins)
    if plan.kind == "staff":
        plan.constants["customer_system_id_type"] = (
            "TODO", "the name of your HR system, sent with every row (e.g. BambooHR)")
    for spec in specs.values():
        if not spec.is_required or spec.envelope or spec.name in given or spec.name in plan.constants:
            continue
        if plan.kind == "timeoff" and spec.name in _FILLED_BY_TIMEOFF:
            continue
        if plan.kind == "timeoff" and spec.name == "country":
            plan.settings["default_country"] = ("TODO: a two-letter country code, such as SG",
                                                "no column gives the country where the leave is taken")
        elif spec.choices:
            plan.constants[spec.name] = (f"TODO: {' | '.join(spec.choices)}",
                                         f"no column gives {spec.name}: the value every row is sent with")
        elif spec.kind == "country":
            plan.constants[spec.name] = ("TODO: a two-letter country code, such as SG",
                                         _country_constant_note(spec, decided, frame))
        else:
            plan.missing.append(spec.name)


def _with_examples(c: ColumnPlan, values: pd.Series, specs: dict[str, Field], plan: ConfigPlan,
                   date_system: int = 1900) -> ColumnPlan:
    """``c`` with up to three of its values as they would be sent (normalised, value maps applied; a serial
    number as the workbook's ``date_system`` counts it, as the import will)."""
    shown = distinct_values(values.head(1000))[:EXAMPLES]
    if c.role == "field" and c.target in specs:
        spec = specs[c.target]
        series = pd.Series(shown, dtype="str")
        day_first = plan.date_order != "month-first"
        shown = normalize_for_field(series, spec, day_first=day_first, date_system=date_system).tolist()
    return ColumnPlan(c.column, c.role, c.target, c.how, c.note, tuple(shown), c.hidden)
