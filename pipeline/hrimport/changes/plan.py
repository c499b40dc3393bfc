"""The plan: what a staff file will change on the platform, row by row and field by field.

The "before" is what the platform last accepted for each person (the state folder,
``hrimport.state.store.AcceptedRecord``); the "after" is each valid row's payload. The missing are the
people this job's earlier imports sent who are absent from the file (another job's people are not). A field left empty in the
file is not sent, and the platform keeps its value (updates merge), so such a field is shown as "no longer
sent", not as cleared. Values of masked fields (``[report] mask``) are never shown: only that they changed.

    >>> from hrimport.state.store import AcceptedRecord, fingerprint
    >>> before = {"customer_system_id": "E1", "name": "Ann", "job_title": "Analyst"}
    >>> accepted = {"E1": AcceptedRecord("E1", fingerprint("E1", before), before, "Ann", "2026-10-01", "staff")}
    >>> plan = make_plan([PlanInput(2, "E1", "Ann", {**before, "job_title": "Lead"}),
    ...                   PlanInput(3, "E2", "Bo", {"customer_system_id": "E2", "name": "Bo"})], accepted, "staff")
    >>> plan.counts()
    {'new': 1, 'changed': 1, 'unchanged': 0, 'invalid': 0, 'missing': 0}
    >>> plan.rows[0].describe()
    'job_title: Analyst -> Lead'
"""

from __future__ import annotations

import bisect
import json
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal

from hrimport.state.store import AcceptedRecord, fingerprint
from hrimport.stores import Positional, TextColumn

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["HIGHLIGHTS", "FieldChange", "MissingPerson", "Plan", "PlanInput", "PlanRows", "PlannedRow", "make_plan",
           "make_plan_by_chunks"]

PlanStatus = Literal["new", "changed", "unchanged", "invalid"]
STATUSES: tuple[PlanStatus, ...] = ("new", "changed", "unchanged", "invalid")

#: What payroll looks at first: (key, title, test on a planned row).
HIGHLIGHTS = ("new_hires", "leavers", "country_changes", "email_changes", "job_changes")
_TITLES = {"new_hires": "New hires", "leavers": "Leavers (last working day newly set)",
           "country_changes": "Country changes", "email_changes": "E-mail changes", "job_changes": "Job changes"}
_SHOWN = 20  # examples kept per highlight and of the missing people


@dataclass(frozen=True, slots=True)
class PlanInput:
    """One row of the file: its payload when valid, None when our checks found problems."""

    row: int
    external_id: str
    name: str
    payload: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that will change: ``before`` "" when the platform had none; ``after`` None when the field is
    no longer sent (the platform keeps ``before``)."""

    field: str
    before: str
    after: str | None
    masked: bool = False

    def describe(self) -> str:
        if self.masked:
            return f"{self.field}: changed (masked)"
        if self.after is None:
            return f"{self.field}: {self.before} -> no longer sent (the platform keeps it)"
        return f"{self.field}: {self.before or '(none)'} -> {self.after}"


@dataclass(frozen=True, slots=True)  # slots: a plan has a row for every row of the file
class PlannedRow:
    row: int
    external_id: str
    name: str
    status: PlanStatus
    changes: tuple[FieldChange, ...] = ()
    before_unknown: bool = False  # accepted before payloads were kept: changed, but not known how

    def describe(self) -> str:
        """The changes in one line (``job_title: Analyst -> Lead; country: MY -> SG``)."""
        if self.before_unknown:
            return "changed since the last import (its values were not kept then)"
        return "; ".join(c.describe() for c in self.changes)

    def changed(self, *fields: str) -> bool:
        return any(c.field in fields for c in self.changes)


@dataclass(frozen=True, slots=True)
class MissingPerson:
    """Accepted by an earlier import of this job, absent from this file."""

    external_id: str
    name: str
    accepted_at: str


class PlanRows(Positional[PlannedRow]):
    """A plan's rows in source order, compactly (issue 17: a plan has a row for every row of the file, and a
    file may have a million): each row's number, external id, name and status as arrays, a ``PlannedRow``
    kept only for a changed one. Indexing and iterating make the others as they are read."""

    def __init__(self, rows: Iterable[PlannedRow] = ()) -> None:
        self.numbers = array("q")  # ascending, as the file's rows
        self.external_ids = TextColumn()
        self.names = TextColumn()
        self._statuses = bytearray()  # index in STATUSES
        self._changed: dict[int, PlannedRow] = {}  # by position
        self.extend(rows)

    def extend(self, rows: Iterable[PlannedRow]) -> None:
        rows = list(rows)
        at = len(self)
        for i, r in enumerate(rows):
            if r.status == "changed":
                self._changed[at + i] = r
        self.numbers.extend(r.row for r in rows)
        self.external_ids.extend(r.external_id for r in rows)
        self.names.extend(r.name for r in rows)
        self._statuses.extend(_STATUS_CODES[r.status] for r in rows)

    def __len__(self) -> int:
        return len(self.numbers)

    def _at(self, index: int) -> PlannedRow:
        changed = self._changed.get(index)
        if changed is not None:
            return changed
        return PlannedRow(self.numbers[index], self.external_ids[index], self.names[index],
                          STATUSES[self._statuses[index]])

    def __iter__(self) -> Iterator[PlannedRow]:
        for i, (row, external_id, name) in enumerate(zip(self.numbers, self.external_ids, self.names)):
            yield self._changed.get(i) or PlannedRow(row, external_id, name, STATUSES[self._statuses[i]])

    def status_counts(self) -> Counter[PlanStatus]:
        return Counter({STATUSES[code]: n for code, n in Counter(self._statuses).items()})

    def changed(self) -> Iterator[PlannedRow]:
        """The changed rows, in source order."""
        return iter(self._changed.values())

    def with_status(self, status: PlanStatus) -> Iterator[PlannedRow]:
        """The rows of one status, in source order."""
        if status == "changed":
            yield from self.changed()
            return
        code = _STATUS_CODES[status]
        at = self._statuses.find(code)
        while at >= 0:
            yield self._at(at)
            at = self._statuses.find(code, at + 1)

    def status_of(self, row: int) -> PlanStatus | None:
        """The status of the file's row ``row``; None for a row the plan has not."""
        at = bisect.bisect_left(self.numbers, row)
        return STATUSES[self._statuses[at]] if at < len(self.numbers) and self.numbers[at] == row else None

    def distinct_ids(self) -> int:
        """How many distinct external ids the rows hold, "" not counted."""
        import pyarrow.compute as pc

        ids = self.external_ids.as_arrow()
        return int(pc.count_distinct(ids).as_py()) - int(pc.any(pc.equal(ids, "")).as_py() or 0)


_STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}


@dataclass
class Plan:
    """The plan of one file. ``accepted_before``: people this job's earlier imports sent; ``first_run``: none
    yet."""

    rows: PlanRows
    missing: list[MissingPerson] = field(default_factory=list)
    accepted_before: int = 0
    partial: bool = False  # a to_fix file: only the rows that needed fixing, so nobody is missing
    # the unchanged rows are sent all the same (``staff import``, ``hrimport run --full``): the plan says so
    unchanged_sent: bool = False

    @property
    def first_run(self) -> bool:
        return self.accepted_before == 0

    def counts(self) -> dict[str, int]:
        found = self.rows.status_counts()
        return {**{s: found.get(s, 0) for s in STATUSES}, "missing": len(self.missing)}

    def field_counts(self) -> dict[str, int]:
        """People per changed field, most first."""
        return dict(Counter(c.field for r in self.rows.changed() for c in r.changes).most_common())

    def highlights(self) -> dict[str, tuple[int, list[PlannedRow]]]:
        """The rows payroll looks at first, per ``HIGHLIGHTS`` key: how many, and the first ``_SHOWN``."""
        changed = list(self.rows.changed())
        new_hires = self.rows.status_counts().get("new", 0)
        tests: dict[str, Callable[[PlannedRow], bool]] = {
            "leavers": lambda r: any(c.field == "last_working_day" and not c.before and c.after for c in r.changes),
            "country_changes": lambda r: r.changed("country"),
            "email_changes": lambda r: any("email" in c.field for c in r.changes),
            "job_changes": lambda r: r.changed("job_title"),
        }
        found = {"new_hires": (new_hires, list(islice(self.rows.with_status("new"), _SHOWN)))}
        for key, test in tests.items():
            rows = [r for r in changed if test(r)]
            found[key] = (len(rows), rows[:_SHOWN])
        return found

    def summary(self) -> dict[str, Any]:
        """The plan as JSON-ready data: counts, fields, highlights with examples, the missing people."""
        return {
            "first_run": self.first_run,
            "partial": self.partial,
            "accepted_before": self.accepted_before,
            "unchanged_sent": self.unchanged_sent,
            "counts": self.counts(),
            "fields": self.field_counts(),
            "highlights": {
                key: {"title": _TITLES[key], "count": count,
                      "examples": [{"row": r.row, "external_id": r.external_id, "name": r.name,
                                    "changes": r.describe()} for r in rows]}
                for key, (count, rows) in self.highlights().items()
            },
            "missing": {"count": len(self.missing),
                        "examples": [asdict(m) for m in self.missing[:_SHOWN]]},
        }


def make_plan(people: Iterable[PlanInput], accepted: Mapping[str, AcceptedRecord], job: str,
              masked: Collection[str] = (), *, partial: bool = False) -> Plan:
    """The plan of ``people`` (the file's rows) against ``accepted`` (everyone the platform accepted for the
    company); ``job`` names this import, whose earlier people may be missing (not from a ``partial`` file:
    a ``to_fix``); ``masked`` fields' values are not shown."""
    ours = ((r.external_id, r.name, r.accepted_at) for r in accepted.values() if r.job == job)
    return make_plan_by_chunks(people, lambda _: accepted, ours, masked, partial=partial)


def make_plan_by_chunks(people: Iterable[PlanInput], before: Callable[[list[str]], Mapping[str, AcceptedRecord]],
                        ours: Iterable[tuple[str, str, str]], masked: Collection[str] = (), *,
                        partial: bool = False, chunk_rows: int = 2_000) -> Plan:
    """``make_plan``, with what the platform accepted looked up ``chunk_rows`` rows at a time: ``before``
    gives the accepted records of some external ids (absent ones left out), ``ours`` is (external id, name,
    accepted at) of each person this job's earlier imports sent. A state folder of any size is never held
    whole."""
    rows = PlanRows()
    people = iter(people)
    while chunk := list(islice(people, chunk_rows)):
        accepted = before([p.external_id for p in chunk if p.payload is not None])
        planned: list[PlannedRow] = []
        for p in chunk:
            if p.payload is None:
                planned.append(PlannedRow(p.row, p.external_id, p.name, "invalid"))
                continue
            was = accepted.get(p.external_id)
            if was is None:
                planned.append(PlannedRow(p.row, p.external_id, p.name, "new"))
            elif was.fingerprint == fingerprint(p.external_id, p.payload):
                planned.append(PlannedRow(p.row, p.external_id, p.name, "unchanged"))
            elif was.payload is None:
                planned.append(PlannedRow(p.row, p.external_id, p.name, "changed", before_unknown=True))
            else:
                planned.append(PlannedRow(p.row, p.external_id, p.name, "changed",
                                       _changes(was.payload, p.payload, masked)))
        rows.extend(planned)
    accepted_before = 0
    missing = []
    present = rows.external_ids.as_arrow().combine_chunks()
    ours = iter(ours)
    # each person sent before, looked up among the file's ids a chunk at a time: no set of every id
    while earlier := list(islice(ours, _LOOKED_UP_AT_ONCE)):
        accepted_before += len(earlier)
        if not partial:
            found = _is_in([external_id for external_id, _, _ in earlier], present)
            missing += [MissingPerson(*person) for person, there in zip(earlier, found) if not there]
    return Plan(rows, sorted(missing, key=lambda m: m.external_id), accepted_before, partial)


#: People sent before looked up among the file's external ids at once.
_LOOKED_UP_AT_ONCE = 200_000


def _is_in(ids: list[str], present: pa.Array) -> list[bool]:
    """Whether each of ``ids`` is among ``present``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    found: list[bool] = pc.is_in(pa.array(ids, type=pa.string()), value_set=present).to_pylist()
    return found


def _changes(before: Mapping[str, Any], after: Mapping[str, Any], masked: Collection[str]) -> tuple[FieldChange, ...]:
    found: list[FieldChange] = []
    for name in dict.fromkeys([*after, *before]):
        if name in ("customer_system_id", "customer_id"):
            continue
        old = _text(before.get(name))
        if name not in after:
            if old:
                found.append(FieldChange(name, old, None, name in masked))
            continue
        new = _text(after[name])
        if new != old:
            found.append(FieldChange(name, old, new, name in masked))
    return tuple(found)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
