"""The drift guard: a month that looks like a broken export or a wrong mapping is held, not sent.

Compared with what the platform accepted from this job's earlier imports (the plan, ``hrimport.changes.plan``):

- ``headcount-drop``: the file has fewer people than were accepted, by more than ``max_headcount_drop``;
- ``people-missing``: more than ``max_missing`` of the people accepted are absent from the file;
- ``field-churn``: one field changes for more than ``max_changed_share`` of the people present both times
  (every e-mail rewritten, every country changed);
- ``column-emptied``: a mapped field filled on most rows last time is empty on most rows now;
- ``id-type-changed``: people the platform accepted under one ``customer_system_id_type`` are sent under
  another. The platform knows a person by external id AND that type: each would be added again, a second
  record beside the one it holds, so this one acts from the first such person, however few were accepted.

Shares are of the people accepted before (the first two) or of the people present both times (the third).
No guard acts before ``MIN_PEOPLE`` people were accepted from the job (a first run, a company of eight
whose one leaver would be 12%), and the last two need as many people to compare. A ``to_fix`` file holds
only the rows that needed fixing (``Plan.partial``): nobody is missing from it, its headcount says nothing,
and neither do shares of its own rows, chosen by their problems (12 people whose country moved without a move
date are 100% of their to_fix): a field's changes are counted against the people accepted before, and no
column is judged emptied. The people a file that was imported left out stop being the job's (``StateStore.left_job``): each
month is compared with the last, not with everyone the job ever sent. Thresholds come from the config's
``[guards]`` (``GuardSettings``); ``--accept-drift`` releases a held run after a person has looked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hrimport.changes.plan import Plan, PlannedRow
from hrimport.config import GuardSettings

__all__ = ["MIN_PEOPLE", "Tripped", "check_drift", "filled_shares"]

MIN_PEOPLE = 10
_EXAMPLES = 3


@dataclass(frozen=True)
class Tripped:
    """One guard that tripped: its name and a sentence with the figures and a few examples."""

    guard: str
    message: str


def check_drift(plan: Plan, filled_now: Mapping[str, float], filled_before: Mapping[str, float],
                settings: GuardSettings, sources: Mapping[str, str] | None = None) -> list[Tripped]:
    """The guards ``plan`` trips. ``filled_now`` / ``filled_before``: per field, the share of rows with a value
    in this file / in what was accepted before; ``sources`` names each field's column in the file."""
    tripped = _id_type_changed(plan)
    if plan.accepted_before < MIN_PEOPLE:  # a first run, or too few people for shares to mean anything
        return tripped
    before = plan.accepted_before
    present = plan.rows.distinct_ids()
    drop = (before - present) / before
    if drop > settings.max_headcount_drop and not plan.partial:
        tripped.append(Tripped("headcount-drop", (
            f"headcount down {drop:.0%}: {before:,} people were accepted from this job, this file has {present:,} "
            f"(the guard holds a drop over {settings.max_headcount_drop:.0%})")))
    missing = len(plan.missing) / before
    if missing > settings.max_missing and not plan.partial:
        names = ", ".join(f"{m.external_id} {m.name}".strip() for m in plan.missing[:_EXAMPLES])
        tripped.append(Tripped("people-missing", (
            f"{len(plan.missing):,} of the {before:,} people accepted before ({missing:.0%}) are not in this file, "
            f"e.g. {names} (the guard holds over {settings.max_missing:.0%})")))
    statuses = plan.rows.status_counts()
    # a to_fix's rows are those that needed fixing: its changes are shares of everyone accepted before
    compared = before if plan.partial else statuses["changed"] + statuses["unchanged"]
    if compared >= MIN_PEOPLE:
        for name, count in plan.field_counts().items():
            if name == ID_TYPE:
                continue  # every such change is held by ``id-type-changed``, in its own words
            share = count / compared
            if share > settings.max_changed_share:
                rows = [r for r in plan.rows.changed() if r.changed(name)]
                tripped.append(Tripped("field-churn", (
                    f"{_field(name, sources)} changes for {count:,} of {compared:,} people ({share:.0%}), "
                    f"e.g. {_examples(rows, name)} (the guard holds over {settings.max_changed_share:.0%}): a "
                    "broken export or a wrong mapping?")))
    if len(plan.rows) >= MIN_PEOPLE and not plan.partial:
        for name, was in filled_before.items():
            now = filled_now.get(name)
            if now is not None and was > 0.5 and now < 0.5:
                tripped.append(Tripped("column-emptied", (
                    f"{_field(name, sources)} is empty on {1 - now:.0%} of the rows; {was:.0%} of the people "
                    "accepted before had it: did the export change?")))
    return tripped


#: The field naming the caller's system, which with the external id identifies a person on the platform.
ID_TYPE = "customer_system_id_type"


def _id_type_changed(plan: Plan) -> list[Tripped]:
    """``id-type-changed``: the rows sent under another ``customer_system_id_type`` than the platform accepted
    them under (the config's setting changed: a typo fixed, another HR system's name). Whatever the spec's
    "create or update" suggests, such a row updates nobody: it adds the person a second time."""
    moved = [(r, c) for r in plan.rows.changed() for c in r.changes if c.field == ID_TYPE and c.before and c.after]
    if not moved:
        return []
    before = Counter(c.before for _, c in moved).most_common(1)[0][0]
    after = moved[0][1].after
    shown = "; ".join(f"row {r.row}: {r.external_id} {r.name}".rstrip() for r, _ in moved[:_EXAMPLES])
    return [Tripped("id-type-changed", (
        f"customer_system_id_type is '{after}' where the platform holds {len(moved):,} of these people under "
        f"'{before}' (e.g. {shown}): it knows a person by external id and that type, so each would be added again, "
        f"a second record beside the one it holds; set customer_system_id_type = \"{before}\" in [staff] again, or "
        f"run with --accept-drift to add them under '{after}'"))]


def filled_shares(payloads: list[dict[str, Any] | None]) -> dict[str, float]:
    """Per field, the share of ``payloads`` (None: unknown, left out) holding a value."""
    known = [p for p in payloads if p is not None]
    if not known:
        return {}
    counts: dict[str, int] = {}
    for payload in known:
        for name, value in payload.items():
            if value not in ("", None):
                counts[name] = counts.get(name, 0) + 1
    return {name: n / len(known) for name, n in counts.items()}


def _field(name: str, sources: Mapping[str, str] | None) -> str:
    column = (sources or {}).get(name)
    return f"'{column}' ({name})" if column and column != name else name


def _examples(rows: list[PlannedRow], name: str) -> str:
    shown = []
    for r in rows[:_EXAMPLES]:
        change = next(c for c in r.changes if c.field == name)
        shown.append(f"row {r.row}: {change.describe().split(': ', 1)[1]}")
    return "; ".join(shown)
