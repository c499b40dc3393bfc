"""The staff import: read -> map -> validate -> (skip unchanged) -> submit, composed into one ``RunResult``.

This module only composes the stages; each stage lives in its own module and returns plain data.
Every source row ends with exactly one outcome, whatever happens (``RunResult.check_accounted``).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hrimport.changes.guards import check_drift, filled_shares
from hrimport.changes.plan import Plan, PlanInput, make_plan
from hrimport.config import ImportConfig
from hrimport.errors import ConfigError
from hrimport.imports.runs import finish_run, read_map_validate
from hrimport.mapper import MappedTable
from hrimport.outcomes import Outcome, OutcomesDone, Problem, Progress, RowOutcome, RunResult
from hrimport.reader import SourceTable
from hrimport.service.connection import Target
from hrimport.service.readback import ReadBack
from hrimport.service.staff import FirstSends, StaffRecord, build_payloads, bulk_bodies, submit_staff
from hrimport.stages import announce
from hrimport.to_fix_format import FIX_COLUMN

if TYPE_CHECKING:
    from hrimport.state.store import AcceptedRecord


class AcceptedPayloads(Protocol):
    """What the staff import needs of the state store (``hrimport.state.store``): what the service last
    accepted (``records``: the plan's "before", so an unchanged row is not sent again). ``remember`` is
    called after each batch the service answers, so a run killed half way loses at most the batch in
    flight; ``sending`` before each batch, so a record created by a send whose answer was lost is reported
    ``added``."""

    def remember(self, customer_id: str, records: list[StaffRecord]) -> None: ...

    def sending(self, customer_id: str, records: list[StaffRecord]) -> FirstSends: ...

    def records(self, customer_id: str) -> dict[str, AcceptedRecord]: ...


def prepare_staff(config: ImportConfig, path: Path) -> tuple[SourceTable, MappedTable, dict[int, list[Problem]], dict[str, float]]:
    """Read, map and validate a staff export: no network. Returns the stages' data and their timings."""
    mapping = config.staff
    if mapping is None:
        raise ConfigError(f"{config.path.name} has no [staff] section: it describes a time-off import")
    return read_map_validate(config, path, mapping)


def import_staff(
    config: ImportConfig,
    path: Path,
    target: Target,
    *,
    dry_run: bool = False,
    validate_only: bool = False,
    batch_size: int | None = None,
    state: AcceptedPayloads | None = None,
    full: bool = False,
    accept_drift: bool = False,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_outcomes: OutcomesDone | None = None,
) -> RunResult:
    """Import one staff export; returns one outcome per source row (never raises for a bad row).

    With a ``state`` (what the platform last accepted), the run has a plan (``hrimport.changes.plan``) and
    the drift guard: a file that trips it is held (nothing sent, exit 5) unless ``accept_drift``.
    ``on_outcomes`` gets the rows sent as the service answers them, batch by batch.
    ``validate_only`` checks the rows and nothing more: no plan, no request bodies (``hrimport staff
    validate``).
    """
    dry_run = dry_run or validate_only
    started = datetime.now().astimezone()
    t0 = time.perf_counter()
    table, mapped, problems, timings = prepare_staff(config, path)

    ids = mapped.frame["customer_system_id"].tolist() if "customer_system_id" in mapped.frame else [""] * len(mapped)
    names = mapped.frame["name"].tolist() if "name" in mapped.frame else [""] * len(mapped)
    outcomes: list[RowOutcome] = []
    valid: list[int] = []
    for pos, row in enumerate(mapped.row_numbers):
        if pos in problems:
            found = problems[pos]
            outcomes.append(RowOutcome(row, ids[pos], names[pos], Outcome.INVALID, tuple(found),
                                       " ".join(p.message for p in found)))
        else:
            valid.append(pos)
    # the request bodies: only for rows that a plan compares or that are sent
    payloads = build_payloads(mapped, valid) if not validate_only else [{}] * len(valid)
    records = [StaffRecord(mapped.row_numbers[pos], ids[pos], names[pos], payload)
               for pos, payload in zip(valid, payloads)]

    plan: Plan | None = None
    held: list[str] = []
    notes: list[str] = []
    # a dry run without a state folder plans too: everything is new (a real import that could not open its
    # state folder cannot tell, and has no plan)
    accepted = (state.records(target.customer_id) if state is not None else
                {} if dry_run and not validate_only else None)
    if accepted is not None:
        t = time.perf_counter()
        payload_of = {r.row: r.payload for r in records}
        plan = make_plan((PlanInput(row, ids[pos], names[pos], payload_of.get(row))
                          for pos, row in enumerate(mapped.row_numbers)), accepted, config.report.job,
                         masked=config.report.mask, partial=FIX_COLUMN in table.info.headers)
        ours = [r.payload for r in accepted.values() if r.job == config.report.job]
        filled_now = {name: float((mapped.frame[name] != "").mean()) for name in mapped.frame.columns}
        tripped = check_drift(plan, filled_now, filled_shares(ours), config.guards, mapped.field_sources)
        if tripped and accept_drift:
            notes.append("The drift guard tripped and was released with --accept-drift: "
                         + " ".join(f"{t.message}." for t in tripped))
        elif tripped:
            held = [t.message for t in tripped]
        if state is not None and not full and records:
            same = {r.external_id for r in plan.rows if r.status == "unchanged"}
            outcomes += [RowOutcome(r.row, r.external_id, r.name, Outcome.UNCHANGED,
                                    message="Same as the last import the service accepted; not sent again.")
                         for r in records if r.external_id in same]
            records = [r for r in records if r.external_id not in same]
        timings["plan"] = time.perf_counter() - t

    t = time.perf_counter()
    bodies = (bulk_bodies(target.customer_id, records, batch_size or config.batch_size)
              if dry_run and not validate_only else None)
    if held:
        why = "; ".join(held)
        outcomes += [RowOutcome(r.row, r.external_id, r.name, Outcome.NOT_SENT,
                                (Problem("held-for-review", f"Row {r.row}: not sent: the run is held for review "
                                                            f"({why}).", r.row),),
                                "Not sent: the run is held for review by the drift guard.")
                     for r in records]
    elif dry_run:
        outcomes += [RowOutcome(r.row, r.external_id, r.name, Outcome.VALID, message="Valid; not sent (dry run).")
                     for r in records]
    if records and not held and not dry_run:
        if target.client is None:
            raise ConfigError("no service to send to: give a base URL or use the embedded sandbox")
        remember = (lambda accepted: state.remember(target.customer_id, accepted)) if state is not None else None
        total = len(records)
        announce(f"Sending {total:,} rows")
        submitted = submit_staff(target.client, target.customer_id, records,
                                 batch_size=batch_size or config.batch_size,
                                 progress=(lambda n: progress(n, total)) if progress else None,
                                 on_accepted=remember,
                                 on_sending=(lambda batch: state.sending(target.customer_id, batch))
                                 if state is not None else None, on_outcomes=on_outcomes,
                                 readback=ReadBack(config.report.mask, mapped.field_sources),
                                 concurrency=concurrency or config.concurrency)
        outcomes += submitted.outcomes
    timings["submit"] = time.perf_counter() - t

    result = finish_run("staff", config, target, table, mapped, outcomes, started=started, t0=t0,
                        timings=timings, dry_run=dry_run, notes=notes)
    result.info.held = held
    result.payloads = bodies
    if plan is not None:
        result.info.plan = plan.summary()
        planned = {r.row: r for r in plan.rows}
        for o in result.rows:
            entry = planned[o.row]
            o.details = {"plan": entry.status, "changes": entry.describe()}
    return result
