"""The staff import: read -> map -> validate -> (skip unchanged) -> submit, composed into one ``RunResult``.

This module only composes the stages; each stage lives in its own module and returns plain data.
Every source row ends with exactly one outcome, whatever happens (``RunResult.check_accounted``).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Protocol

from hrimport.config import ImportConfig
from hrimport.errors import ConfigError
from hrimport.imports.runs import finish_run, read_map_validate
from hrimport.mapper import MappedTable
from hrimport.outcomes import Outcome, Problem, Progress, RowOutcome, RunResult
from hrimport.reader import SourceTable
from hrimport.service.connection import Target
from hrimport.service.staff import FirstSends, StaffRecord, build_payloads, submit_staff


class AcceptedPayloads(Protocol):
    """What the staff import needs of the state store (``hrimport.state.store``): fingerprints of what the
    service last accepted, so an unchanged row is not sent again. ``remember`` is called after each
    batch the service answers, so a run killed half way loses at most the batch in flight; ``sending``
    before each batch, so a record created by a send whose answer was lost is reported ``added``."""

    def unchanged(self, customer_id: str, records: list[StaffRecord]) -> set[str]: ...

    def remember(self, customer_id: str, records: list[StaffRecord]) -> None: ...

    def sending(self, customer_id: str, records: list[StaffRecord]) -> FirstSends: ...


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
    batch_size: int | None = None,
    state: AcceptedPayloads | None = None,
    full: bool = False,
    progress: Progress | None = None,
) -> RunResult:
    """Import one staff export; returns one outcome per source row (never raises for a bad row)."""
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
    records = [
        StaffRecord(mapped.row_numbers[pos], ids[pos], names[pos], payload)
        for pos, payload in zip(valid, build_payloads(mapped, valid))
    ]

    if state is not None and not full and records:
        same = state.unchanged(target.customer_id, records)
        outcomes += [RowOutcome(r.row, r.external_id, r.name, Outcome.UNCHANGED,
                                message="Same as the last import the service accepted; not sent again.")
                     for r in records if r.external_id in same]
        records = [r for r in records if r.external_id not in same]

    t = time.perf_counter()
    if dry_run:
        outcomes += [RowOutcome(r.row, r.external_id, r.name, Outcome.VALID, message="Valid; not sent (dry run).")
                     for r in records]
    elif records:
        if target.client is None:
            raise ConfigError("no service to send to: give a base URL or use the embedded sandbox")
        remember = (lambda accepted: state.remember(target.customer_id, accepted)) if state is not None else None
        total = len(records)
        submitted = submit_staff(target.client, target.customer_id, records,
                                 batch_size=batch_size or config.batch_size,
                                 progress=(lambda n: progress(n, total)) if progress else None,
                                 on_accepted=remember,
                                 on_sending=(lambda batch: state.sending(target.customer_id, batch))
                                 if state is not None else None)
        outcomes += submitted.outcomes
    timings["submit"] = time.perf_counter() - t

    return finish_run("staff", config, target, table, mapped, outcomes, started=started, t0=t0, timings=timings,
                      dry_run=dry_run)
