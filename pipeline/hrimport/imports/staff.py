"""The staff import: read -> map -> validate -> (skip unchanged) -> submit, composed into one ``RunResult``.

This module only composes the stages; each stage lives in its own module and returns plain data.
Every source row ends with exactly one outcome, whatever happens (``RunResult.check_accounted``).
"""

from __future__ import annotations

import bisect
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hrimport.changes.guards import check_drift
from hrimport.changes.plan import Plan, PlanInput, PlannedRow, PlanRows, make_plan_by_chunks
from hrimport.config import ImportConfig
from hrimport.errors import ConfigError
from hrimport.gc_pause import paused_gc
from hrimport.imports.records import PendingRecords, RowHeads, SentRows, batches_of
from hrimport.imports.repeats import RepeatedRows, shared_message
from hrimport.imports.runs import (
    CHUNK_ROWS,
    ChunkKeep,
    StagedFile,
    attach_chunk,
    close_run,
    held_back,
    read_map_validate,
)
from hrimport.listing import sentences
from hrimport.mapper import MappedTable, MappingRestart
from hrimport.outcomes import (
    Outcome,
    OutcomeRows,
    OutcomesByRow,
    OutcomesDone,
    PlainRows,
    Problem,
    Progress,
    RowOutcome,
    RunResult,
    as_list,
)
from hrimport.reader import SourceTable, StreamBroken
from hrimport.reader.repeated_header import holds_no_record
from hrimport.service.connection import Target
from hrimport.service.readback import ReadBack
from hrimport.service.staff import (
    FirstSends,
    StaffRecord,
    build_elements,
    build_payloads,
    bulk_bodies,
    payload_keys,
    submit_staff,
)
from hrimport.stages import announce
from hrimport.stores import TextColumn
from hrimport.to_fix_format import FIX_COLUMN
from hrimport.validate import RepeatedRow

if TYPE_CHECKING:
    from hrimport.imports.stopped_runs import StoppedSends, ToldRows
    from hrimport.state.store import AcceptedRecord


class AcceptedPayloads(Protocol):
    """What the staff import needs of the state store (``hrimport.state.store``): what the service last
    accepted, for the plan (``before``, a chunk of rows at a time, so that an unchanged row is not sent
    again; ``job_people`` and ``filled_shares``, for the missing people and the drift guard; ``left_job``, once a
    file is imported, for the people it left out). ``remember``
    is called after each batch the service answers, so a run killed half way loses at most the batch in
    flight; ``sending`` before each batch, so a record created by a send whose answer was lost is reported
    ``added``."""

    def remember(self, customer_id: str, records: list[StaffRecord]) -> None: ...

    def sending(self, customer_id: str, records: list[StaffRecord]) -> FirstSends: ...

    def before(self, customer_id: str, external_ids: Sequence[str]) -> Mapping[str, AcceptedRecord]: ...

    def job_people(self, customer_id: str, job: str) -> Iterable[tuple[str, str, str]]: ...

    def filled_shares(self, customer_id: str, job: str) -> dict[str, float]: ...

    def left_job(self, customer_id: str, job: str, external_ids: Sequence[str]) -> None: ...

    def back_in_job(self, customer_id: str, job: str, external_ids: Sequence[str]) -> None: ...


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
    chunk_rows: int = CHUNK_ROWS,
    stopped: StoppedSends | None = None,
) -> RunResult:
    """Import one staff export; returns one outcome per source row (never raises for a bad row).

    With a ``state`` (what the platform last accepted), the run has a plan (``hrimport.changes.plan``) and
    the drift guard: a file that trips it is held (nothing sent, exit 5) unless ``accept_drift``.
    ``on_outcomes`` gets the rows sent as the service answers them, batch by batch. ``stopped``: what the job's
    runs that stopped before their report sent (``hrimport.imports.stopped_runs``): a row the plan finds unchanged
    because one of them sent it is reported as that run's service answered it (a dry run says how many in a note).
    ``validate_only`` checks the rows and nothing more: no plan, no request bodies (``hrimport staff
    validate``), and only the rows with something to say are kept as objects, so memory stays flat
    whatever the number of rows. The file is read, mapped and validated ``chunk_rows`` rows at a time.
    """
    mapping = config.staff
    if mapping is None:
        raise ConfigError(f"{config.path.name} has no [staff] section: it describes a time-off import")
    dry_run = dry_run or validate_only
    started = datetime.now().astimezone()
    t0 = time.perf_counter()
    stream, h_and_m = True, set[str]()
    while True:  # at most three times: each retry knows something the first read did not
        try:
            staged, gathered = _gather(StagedFile(config, path, mapping, chunk_rows, stream=stream,
                                                  h_and_m=h_and_m), config, validate_only)
            break
        except StreamBroken:
            # a big text file that turned out to need the whole read (a ragged row, another encoding):
            # again, from the start, read whole; nothing has been sent
            stream = False
        except MappingRestart as restart:
            # H and M in different chunks of the gender column: again, from the start, neither read as a
            # word, as a whole read would leave them; nothing has been sent
            h_and_m.add(restart.field)
    checked, kept, settled, records, people, filled, no_record = (
        gathered.checked, gathered.kept, gathered.settled, gathered.records, gathered.people, gathered.filled,
        gathered.no_record)
    del gathered  # each row's outcome is let go once its chunk's report rows have it (``_by_chunk``)
    facts = staged.finish()
    timings = staged.timings
    if validate_only:
        checked = _with_shared_ids(checked, facts.duplicates, facts.repeats)
        result = close_run("staff", config, target, facts.info, checked, notes=facts.notes,
                           ignored_columns=facts.ignored_columns, values_read=facts.values_read, started=started,
                           t0=t0, timings=timings, dry_run=True, rows_read=facts.rows)
        return result
    outcomes = settled  # every row's outcome known so far, the rows sent's to come
    if facts.duplicates:
        outcomes = OutcomesByRow()
        outcomes += (_add_problem(o, facts.duplicates[o.row]) if o.row in facts.duplicates else o
                     for o in settled.drained())
        outcomes += (RowOutcome(row, external_id, name, Outcome.INVALID, (facts.duplicates[row],),
                                facts.duplicates[row].message)
                     for row, external_id, name in records.heads if row in facts.duplicates)
        records = records.keeping(lambda row, _: row not in facts.duplicates)
    del settled
    # a row repeating an earlier one exactly is neither planned nor sent: it shares that row's outcome
    repeats = facts.repeats
    repeated: RepeatedRows | None = None
    if repeats:
        repeated = RepeatedRows(repeats, ((row, external_id, name) for row, external_id, name in records.heads
                                          if row in repeats))
        records = records.keeping(lambda row, _: row not in repeats)

    plan: Plan | None = None
    # the rows alike (unchanged, a dry run's valid rows, the rows the service added...): made ``RowOutcome``s
    # by ``_by_chunk`` only if they have something of their own to show (a warning, a change)
    alike: list[PlainRows] = []
    unchanged_ids: Sequence[str] = ()  # the people not sent again, being as the service last accepted them
    # the rows a run stopped before its report sent, told as its service answered them: row -> (outcome, message)
    told_rows: dict[int, tuple[Outcome, str]] = {}
    told_runs: list[dict[str, object]] = []
    held: list[str] = []
    notes: list[str] = []
    # a dry run without a state folder plans too: everything is new (a real import that could not open its
    # state folder cannot tell, and has no plan)
    if state is not None or dry_run:
        t = time.perf_counter()
        job, customer_id = config.report.job, target.customer_id
        payload_of = records.payload_of_rows()  # each payload read when the plan reaches its row
        # a few small objects a row, none in a cycle: no full collection may walk them all, again and again
        with paused_gc():
            plan = make_plan_by_chunks(
                (PlanInput(row, external_id, name, payload_of(row)) for row, external_id, name in people
                 if row not in repeats),
                (lambda ids: state.before(customer_id, ids)) if state is not None else lambda _: {},
                state.job_people(customer_id, job) if state is not None else (), masked=config.report.mask,
                partial=FIX_COLUMN in facts.info.headers)
        # of the rows holding a record: a report's totals rows are no people whose cells were emptied
        records_read = max(facts.rows - no_record, 1)
        filled_now = {name: count / records_read for name, count in filled.items()}
        filled_before = state.filled_shares(customer_id, job) if state is not None else {}
        tripped = check_drift(plan, filled_now, filled_before, config.guards, facts.field_sources)
        if tripped and accept_drift:
            notes.append("The drift guard tripped and was released with --accept-drift: "
                         + sentences([t.message for t in tripped]))
        elif tripped:
            held = [t.message for t in tripped]
        plan.unchanged_sent = full and not held
        if state is not None and not full and records:
            status_of = plan.rows.status_of
            unchanged = [status_of(row) == "unchanged" for row in records.heads.rows]  # each row's told once
            same = records.heads.taken([i for i, is_same in enumerate(unchanged) if is_same])
            alike.append(PlainRows(same.rows, same.external_ids, same.names, Outcome.UNCHANGED, UNCHANGED_MESSAGE))
            unchanged_ids = same.external_ids
            records = records.taken([i for i, is_same in enumerate(unchanged) if not is_same])
        told = _told_by_stopped_runs(stopped, plan, people, state, customer_id)
        if told is not None and told.rows:
            from hrimport.imports.stopped_runs import told_note

            # a person listed again exactly: one person that run sent, not two
            told.count_repeats(repeat.first for repeat in repeats.values())

            told_runs = told.summary()
            notes.append(told_note(told_runs, dry_run=dry_run))
            if not dry_run:
                told_rows = told.rows
        timings["plan"] = time.perf_counter() - t

    t = time.perf_counter()
    # a dry run's request bodies, made batch by batch as the report writes them (payloads.jsonl)
    bodies = (body for batch in batches_of(records, batch_size or config.batch_size)
              for body in bulk_bodies(target.customer_id, batch, len(batch))) if dry_run else None
    if held:
        why = "; ".join(held)
        outcomes += [RowOutcome(row, external_id, name, Outcome.NOT_SENT,
                                (Problem("held-for-review", f"Row {row}: not sent: the run is held for review "
                                                            f"({why}).", row),),
                                "Not sent: the run is held for review by the drift guard.")
                     for row, external_id, name in records.heads]
    if dry_run and not held:
        heads = records.heads
        alike.append(PlainRows(heads.rows, heads.external_ids, heads.names, Outcome.VALID, VALID_MESSAGE))
    if records and not held and not dry_run:
        if target.client is None:
            raise ConfigError("no service to send to: give a base URL or use the embedded sandbox")
        remember = (lambda accepted: state.remember(target.customer_id, accepted)) if state is not None else None
        total = len(records)
        announce(f"Sending {total:,} rows")
        sent = SentRows(listed=outcomes)  # the outcomes, kept compactly as they come
        submitted = submit_staff(target.client, target.customer_id, records,
                                 batch_size=batch_size or config.batch_size,
                                 progress=(lambda n: progress(n, total)) if progress else None,
                                 on_accepted=remember,
                                 on_sending=(lambda batch: state.sending(target.customer_id, batch))
                                 if state is not None else None, on_outcomes=on_outcomes,
                                 readback=ReadBack(config.report.mask, facts.field_sources),
                                 concurrency=concurrency or config.concurrency, collect=sent.add)
        notes += [f"{note[0].upper()}{note[1:]}." for note in submitted.notes]  # e.g. results for ids not sent
        alike += sent.alike()
    if plan is not None and plan.missing and state is not None and not held and not dry_run:
        # the file was imported (the guard let it through, or a person released it): the next month is
        # compared with it, not with everyone this job ever sent, so leavers do not add up to a held month
        state.left_job(target.customer_id, config.report.job, [m.external_id for m in plan.missing])
    if unchanged_ids and state is not None and not held and not dry_run:
        # one who left and comes back as they were is not sent, which is what makes people the job's again
        state.back_in_job(target.customer_id, config.report.job, unchanged_ids)
    timings["submit"] = time.perf_counter() - t

    rows = _by_chunk(outcomes, kept, plan, alike, repeated, told_rows)
    result = close_run("staff", config, target, facts.info, rows, notes=[*facts.notes, *notes],
                       ignored_columns=facts.ignored_columns, values_read=facts.values_read, started=started, t0=t0,
                       timings=timings, dry_run=dry_run, rows_read=facts.rows)
    result.info.held = held
    result.info.stopped_runs = told_runs
    result.payloads = bodies
    if plan is not None:
        result.info.plan = plan.summary()
    return result


VALID_MESSAGE = "Valid; not sent (dry run)."
UNCHANGED_MESSAGE = "Same as the last import the service accepted; not sent again."
#: Request bodies made at once from a chunk's valid rows, before they go to the records' file as JSON.
PAYLOADS_AT_ONCE = 2_000


@dataclass
class _Gathered:
    """What the chunks of a staff file leave for the rest of the import."""

    checked: OutcomeRows = field(default_factory=OutcomeRows)  # validate only: every row's outcome
    kept: list[ChunkKeep] = field(default_factory=list)  # otherwise: what each chunk knows of its rows
    settled: OutcomesByRow = field(default_factory=OutcomesByRow)  # rows whose outcome is known before sending
    records: PendingRecords = field(default_factory=PendingRecords)  # the valid rows' request bodies
    people: RowHeads = field(default_factory=RowHeads)  # every row: number, external id, name (the plan)
    filled: Counter[str] = field(default_factory=Counter)  # field -> rows holding a value (the drift guard)
    # the rows holding no record (a header row again, a totals row, a footer line): no row whose cells are empty
    no_record: int = 0


def _gather(staged: StagedFile, config: ImportConfig, validate_only: bool) -> tuple[StagedFile, _Gathered]:
    """Read, map and validate ``staged`` chunk by chunk, keeping of each chunk only what the import needs:
    for a validation, the rows with something to say as objects and the others counted (``PlainRows``)."""
    got = _Gathered()
    offset = 0  # rows of the file before the chunk
    for chunk in staged:
        mapped, problems = chunk.mapped, chunk.problems
        ids = mapped.frame["customer_system_id"].tolist() if "customer_system_id" in mapped.frame else [""] * len(mapped)
        names = mapped.frame["name"].tolist() if "name" in mapped.frame else [""] * len(mapped)
        invalid = [held_back(config, mapped.row_numbers[pos], ids[pos], names[pos], found)
                   for pos, found in sorted(problems.items())]
        valid = [pos for pos in range(len(mapped)) if pos not in problems]
        if validate_only:
            # the valid rows with a warning are listed with it; the others are only counted
            warned = [pos for pos in valid if pos in mapped.warnings]
            listed = invalid + [RowOutcome(mapped.row_numbers[pos], ids[pos], names[pos], Outcome.VALID,
                                           message=VALID_MESSAGE) for pos in warned]
            attach_chunk(listed, chunk.table, mapped, config.report.mask, 0, cells=False)
            plain = [pos for pos in valid if pos not in mapped.warnings]
            got.checked.add(listed, _plain_rows(mapped.row_numbers, ids, names, plain, Outcome.VALID, VALID_MESSAGE))
            continue
        keep = ChunkKeep.of(chunk.table, mapped, config.report.mask, config.report.html_row_limit, offset, spill=True)
        offset += len(mapped)
        got.settled += invalid
        keys = payload_keys(mapped)
        # the request bodies: only for rows that a plan compares or that are sent
        # a few thousand at a time: a body as a dict is ~4.7 KB, and it is kept only as its JSON
        for start in range(0, len(valid), PAYLOADS_AT_ONCE):
            part = valid[start:start + PAYLOADS_AT_ONCE]
            heads = ([mapped.row_numbers[pos] for pos in part], [ids[pos] for pos in part],
                     [names[pos] for pos in part])
            elements = build_elements(mapped, part)
            if elements is not None:
                got.records.extend_elements(*heads, elements)
            else:
                got.records.extend(*heads, build_payloads(mapped, part), keys)
        skipped = {o.row for o in invalid if o.outcome is Outcome.SKIPPED}  # no people: not in the plan either
        if skipped:
            kept_at = [pos for pos, row in enumerate(mapped.row_numbers) if row not in skipped]
            got.people.extend([mapped.row_numbers[pos] for pos in kept_at], [ids[pos] for pos in kept_at],
                              [names[pos] for pos in kept_at])
        else:
            got.people.extend(mapped.row_numbers, ids, names)
        no_record = [pos for pos, found in problems.items() if holds_no_record(found)]
        got.no_record += len(no_record)
        frame = mapped.frame.drop(index=mapped.frame.index[no_record]) if no_record else mapped.frame
        for name in frame.columns:
            got.filled[name] += int((frame[name] != "").sum())
        got.kept.append(keep)
    return staged, got


def _by_chunk(outcomes: OutcomesByRow, chunks: list[ChunkKeep], plan: Plan | None,
              alike: Sequence[PlainRows] = (), repeated: RepeatedRows | None = None,
              told: Mapping[int, tuple[Outcome, str]] | None = None) -> OutcomeRows:
    """Every row's outcome, in source order, given what its chunk knows of it (``ChunkKeep``) and its
    line of the plan: ``outcomes``, the rows ``alike`` (each group ascending: a dry run's valid rows,
    the rows the service added...), made ``RowOutcome``s only if they have something of their own, the rows
    ``told`` as a stopped run's (``_tell_stopped``), and the ``repeated`` rows, which share the outcome of the
    rows they repeat."""
    plan_rows = plan.rows if plan is not None else PlanRows()  # in source order, as the file's rows
    planned: dict[int, PlannedRow] = {}  # the chunk's
    shared: dict[str, dict[str, str]] = {}  # plan status -> the details of its rows without changes

    def details_of(row: int) -> dict[str, str] | None:
        entry = planned.get(row)
        if entry is None:
            return None
        changes = entry.describe()
        # most rows share theirs ("new", no changes): one dict for them all, not one each
        return {"plan": entry.status, "changes": changes} if changes else shared.setdefault(
            entry.status, {"plan": entry.status, "changes": ""})

    rows = OutcomeRows()
    planned_at = 0
    alike_at = [0] * len(alike)
    for chunk in chunks:
        last = chunk.table.row_numbers[-1]
        planned_to = bisect.bisect_right(plan_rows.numbers, last, lo=planned_at)
        planned = {r.row: r for r in plan_rows[planned_at:planned_to]}
        planned_at = planned_to
        # taken chunk by chunk: a row attached its cells is held only until the ``OutcomeRows`` has it
        # (which keeps past a few thousand in a file), not to the end of the run
        mine = outcomes.taken(last)
        plain = []
        for k, group in enumerate(alike):
            end = bisect.bisect_right(group.rows, last, lo=alike_at[k])
            listed, rows_alike = _alike_rows(group, alike_at[k], end, chunk, details_of)
            mine += listed
            plain.append(rows_alike)
            alike_at[k] = end
        for o in mine:
            details = details_of(o.row)
            if details is not None:
                o.details = details
        if told:
            mine += _tell_stopped(mine, plain, told, details_of)
        if repeated is not None:
            repeated.note(mine, plain, last=last)
            mine += repeated.taken(last=last)
        chunk.attach(mine)
        rows.add(mine, *plain)
    return rows


def _tell_stopped(listed: list[RowOutcome], plain: list[PlainRows], told: Mapping[int, tuple[Outcome, str]],
                  details_of: Callable[[int], dict[str, str] | None]) -> list[RowOutcome]:
    """A chunk's rows a stopped run sent (``told``), unchanged or updated again by this run, given that run's
    outcome and message (``hrimport.imports.stopped_runs``), in ``listed`` and taken out of the ``plain`` groups
    (changed in place); returns those taken out, to be listed. A row this run could not send again keeps its own
    outcome."""
    again = (Outcome.UNCHANGED, Outcome.UPDATED)
    for o in listed:
        if o.row in told and o.outcome in again:
            o.outcome, o.message = told[o.row]
    taken_out: list[RowOutcome] = []
    for k, group in enumerate(plain):
        if group.outcome not in again:
            continue
        plain[k], taken = group.split(told)
        for o in taken:
            o.outcome, o.message = told[o.row]
            details = details_of(o.row)
            if details is not None:
                o.details = details
        taken_out += taken
    return taken_out


def _told_by_stopped_runs(stopped: StoppedSends | None, plan: Plan, people: RowHeads,
                          state: AcceptedPayloads | None, customer_id: str) -> ToldRows | None:
    """The rows the plan finds unchanged because a run stopped before its report sent them
    (``StoppedSends.told``), asked before anything is sent (sending again makes them accepted now)."""
    if stopped is None or state is None:
        return None
    status_of = plan.rows.status_of
    unchanged = [(row, ext) for row, ext, _ in people if status_of(row) == "unchanged"]
    return stopped.told(unchanged, lambda ids: state.before(customer_id, ids))


def _alike_rows(group: PlainRows, start: int, stop: int, chunk: ChunkKeep,
                details_of: Callable[[int], dict[str, str] | None]) -> tuple[list[RowOutcome], PlainRows]:
    """The rows ``start:stop`` of ``group``, one chunk's: those with something of their own (a warning, a
    changed value kept, details other than most of theirs) as ``RowOutcome``s, the others as ``PlainRows``."""
    numbers = [int(row) for row in group.rows[start:stop]]
    ids, names = as_list(group.external_ids[start:stop]), as_list(group.names[start:stop])
    details = [details_of(row) for row in numbers]
    own = {id(d): d for d in details if d is not None}  # the shared dicts, and each changed row's own
    common = Counter(id(d) for d in details).most_common(1)
    plain_details = own.get(common[0][0]) if common else None
    plain = [i for i, (row, d) in enumerate(zip(numbers, details))
             if d is plain_details and row not in chunk.warnings and row not in chunk.changed]
    taken = set(plain)
    listed = [RowOutcome(numbers[i], ids[i], names[i], group.outcome, message=group.message)
              for i in range(len(numbers)) if i not in taken]
    return listed, _plain_rows(numbers, ids, names, plain, group.outcome, group.message, plain_details)


def _plain_rows(rows: Sequence[int], ids: Sequence[str], names: Sequence[str], positions: list[int],
                outcome: Outcome, message: str, details: dict[str, str] | None = None) -> PlainRows:
    """The rows at ``positions`` as ``PlainRows`` kept to the end of the run: their ids and names as
    ``TextColumn``s (in malloc's pool, not pyarrow's, whose pages the next chunks reuse)."""
    kept_ids, kept_names = TextColumn(), TextColumn()
    kept_ids.extend(ids[i] for i in positions)
    kept_names.extend(names[i] for i in positions)
    return PlainRows(array("q", (rows[i] for i in positions)), kept_ids, kept_names, outcome, message,
                     details if details is not None else {})


def _add_problem(outcome: RowOutcome, problem: Problem) -> RowOutcome:
    """``outcome`` with ``problem`` after its other errors (and before its warnings)."""
    errors = tuple(p for p in outcome.problems if not p.is_warning)
    outcome.problems = (*errors, problem, *(p for p in outcome.problems if p.is_warning))
    outcome.message = " ".join(p.message for p in (*errors, problem))
    return outcome


def _with_shared_ids(rows: OutcomeRows, duplicates: dict[int, Problem], repeats: dict[int, RepeatedRow]) -> OutcomeRows:
    """A validation's ``rows`` with what was found once the whole file was read: a row with a ``duplicate-id``
    problem becomes invalid; a row repeating an earlier one, valid as the row it repeats, carries its
    ``duplicate-row`` warning and says it shares that row's outcome."""
    if not duplicates and not repeats:
        return rows
    out = OutcomeRows()
    for listed, plain in rows.segments():
        for o in listed:
            if o.row in duplicates:
                _add_problem(o, duplicates[o.row])
                if o.outcome.is_success:
                    o.outcome = Outcome.INVALID
            elif o.row in repeats:
                _share(o, repeats[o.row])
        kept = []
        for rows_alike in plain:
            rows_alike, taken = rows_alike.split(duplicates)
            for o in taken:
                o.outcome, o.problems, o.message = Outcome.INVALID, (duplicates[o.row],), duplicates[o.row].message
            rows_alike, alike_taken = rows_alike.split(repeats)
            for o in alike_taken:
                _share(o, repeats[o.row])
            listed = listed + taken + alike_taken
            kept.append(rows_alike)
        out.add(listed, *kept)
    return out


def _share(outcome: RowOutcome, repeat: RepeatedRow) -> None:
    """A valid row of a validation, repeating row ``repeat.first`` (valid too): its warning first, as an
    import gives it (``RepeatedRows``)."""
    outcome.problems = (repeat.warning, *outcome.problems)
    outcome.message = shared_message(repeat.first, outcome.message)
