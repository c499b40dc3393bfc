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

import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any, Literal

from hrimport.state.store import AcceptedRecord, fingerprint

__all__ = ["HIGHLIGHTS", "FieldChange", "MissingPerson", "Plan", "PlanInput", "PlannedRow", "make_plan",
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


@dataclass
class Plan:
    """The plan of one file. ``accepted_before``: people this job's earlier imports sent; ``first_run``: none
    yet."""

    rows: list[PlannedRow]
    missing: list[MissingPerson] = field(default_factory=list)
    accepted_before: int = 0
    partial: bool = False  # a to_fix file: only the rows that needed fixing, so nobody is missing

    @property
    def first_run(self) -> bool:
        return self.accepted_before == 0

    def counts(self) -> dict[str, int]:
        found = Counter(r.status for r in self.rows)
        return {**{s: found.get(s, 0) for s in STATUSES}, "missing": len(self.missing)}

    def field_counts(self) -> dict[str, int]:
        """People per changed field, most first."""
        return dict(Counter(c.field for r in self.rows for c in r.changes).most_common())

    def highlights(self) -> dict[str, list[PlannedRow]]:
        """The rows payroll looks at first, per ``HIGHLIGHTS`` key."""
        changed = [r for r in self.rows if r.status == "changed"]
        return {
            "new_hires": [r for r in self.rows if r.status == "new"],
            "leavers": [r for r in changed if any(c.field == "last_working_day" and not c.before and c.after
                                                  for c in r.changes)],
            "country_changes": [r for r in changed if r.changed("country")],
            "email_changes": [r for r in changed if any("email" in c.field for c in r.changes)],
            "job_changes": [r for r in changed if r.changed("job_title")],
        }

    def summary(self) -> dict[str, Any]:
        """The plan as JSON-ready data: counts, fields, highlights with examples, the missing people."""
        return {
            "first_run": self.first_run,
            "partial": self.partial,
            "accepted_before": self.accepted_before,
            "counts": self.counts(),
            "fields": self.field_counts(),
            "highlights": {
                key: {"title": _TITLES[key], "count": len(rows),
                      "examples": [{"row": r.row, "external_id": r.external_id, "name": r.name,
                                    "changes": r.describe()} for r in rows[:_SHOWN]]}
                for key, rows in self.highlights().items()
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
    rows: list[PlannedRow] = []
    present: set[str] = set()
    people = iter(people)
    while chunk := list(islice(people, chunk_rows)):
        accepted = before([p.external_id for p in chunk if p.payload is not None])
        for p in chunk:
            present.add(p.external_id)
            if p.payload is None:
                rows.append(PlannedRow(p.row, p.external_id, p.name, "invalid"))
                continue
            was = accepted.get(p.external_id)
            if was is None:
                rows.append(PlannedRow(p.row, p.external_id, p.name, "new"))
            elif was.fingerprint == fingerprint(p.external_id, p.payload):
                rows.append(PlannedRow(p.row, p.external_id, p.name, "unchanged"))
            elif was.payload is None:
                rows.append(PlannedRow(p.row, p.external_id, p.name, "changed", before_unknown=True))
            else:
                rows.append(PlannedRow(p.row, p.external_id, p.name, "changed",
                                       _changes(was.payload, p.payload, masked)))
    accepted_before = 0
    missing = []
    for external_id, name, accepted_at in ours:
        accepted_before += 1
        if not partial and external_id not in present:
            missing.append(MissingPerson(external_id, name, accepted_at))
    return Plan(rows, sorted(missing, key=lambda m: m.external_id), accepted_before, partial)


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
