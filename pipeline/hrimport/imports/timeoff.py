"""The time-off import: read -> map -> validate -> type, lang and halves -> leaves listed twice -> ledger ->
in-file overlaps -> total days -> post, composed into one ``RunResult`` (``kind="timeoff"``).

Like ``hrimport.imports.staff`` this module only composes; each stage lives in its own module and returns
plain data. Every source row ends with exactly one outcome (``RunResult.check_accounted``):

=====================  ==================================================================================
``invalid``            our checks found problems (field checks, overlaps within the file; a half-day
                       marker not read on a row without a figure, or with ``[timeoff] total_days`` other
                       than "file"; with ``total_days = "strict"``, a figure disagreeing with the
                       calculation or none for a period without working days; with ``[timeoff]
                       strict_checks``, a leave type the list lacks, a region's code as the country)
``already_imported``   the ledger holds the record: accepted by this service in an earlier run
``valid``              dry run or ``validate``: would be sent
``added``              the service accepted it (and the ledger now holds it); or an earlier run's send stored it
                       and its answer was lost (the service's 409 names it); or a run of the job that stopped
                       before its report sent it, which this report tells (``hrimport.imports.stopped_runs``)
``overlaps_existing``  the service holds an overlapping record
``rejected``           the service refused it (unknown staff, its own total, ...)
``failed``             the service could not be reached or kept failing
=====================  ==================================================================================

A row that repeats an earlier row exactly (the same leave listed twice: ``LeaveTable.repeats``) is not sent: it
gets the outcome of the row it repeats, with a ``duplicate-row`` warning (``hrimport.imports.repeats``), as a
repeated staff row does.

Example::

    result = import_timeoff(load_config("samples/leave_history.toml"), Path("samples/leave_history.xlsx"),
                            Target(client, "99", "http://127.0.0.1:8765/sandbox"))
"""

from __future__ import annotations

import bisect
import hashlib
import time
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hrimport.config import ImportConfig
from hrimport.errors import ConfigError
from hrimport.imports.ledger_recovery import missing_ledger
from hrimport.imports.repeats import RepeatedRows
from hrimport.imports.runs import (
    CHUNK_ROWS,
    ChunkKeep,
    StagedFile,
    close_run,
    held_back,
    read_map_validate,
    repeats_note,
)
from hrimport.imports.stopped_runs import ToldRows, leave_key, told_note
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
)
from hrimport.reader import SourceTable, StreamBroken
from hrimport.reader.grid import normalize_header
from hrimport.service.connection import Target
from hrimport.service.timeoff import post_time_off
from hrimport.stages import ProgressLog, announce
from hrimport.state.ledger import Ledger, LedgerEntry, LedgerKey, open_ledger
from hrimport.state.store import STATE_FILE, StateStore
from hrimport.stores import TextColumn
from hrimport.timeoff.days import TotalsSettler
from hrimport.timeoff.gone import gone_leave, gone_note
from hrimport.timeoff.halves import HalfDayError, halves_for
from hrimport.timeoff.rows import (
    HALVES_NOT_READ,
    PLATFORM_DOUBTS,
    TimeOffRow,
    changed_since_imported,
    check_row,
    halves_shown,
    overlaps_imported,
    repeat_warning,
    unread_halves,
)
from hrimport.timeoff.settings import HALF_KEYS, TimeOffSettings, name_headers
from hrimport.timeoff.table import HALVES_UNREAD, CodedTexts, Codes, LeaveTable, ValidRows
from hrimport.to_fix_format import FIX_COLUMN
from hrimport.validate import RepeatedRow, sent_digests

if TYPE_CHECKING:
    from hrimport.imports.stopped_runs import StoppedSends

__all__ = ["PreparedTimeOff", "import_timeoff", "prepare_timeoff"]


@dataclass
class PreparedTimeOff:
    """A time-off export read, mapped and validated (no network)."""

    table: SourceTable
    mapped: MappedTable
    settings: TimeOffSettings
    problems: dict[int, list[Problem]]
    timings: dict[str, float]


def prepare_timeoff(config: ImportConfig, path: Path) -> PreparedTimeOff:
    """Read, map and validate a time-off export as the config's ``[timeoff]`` section says, whole."""
    settings = _settings(config)
    mapping = settings.import_mapping(config.timeoff)  # type: ignore[arg-type]  # checked by _settings
    table, mapped, problems, timings = read_map_validate(config, path, mapping)
    return PreparedTimeOff(table, mapped, settings, problems, timings)


def _settings(config: ImportConfig) -> TimeOffSettings:
    if config.timeoff is None:
        raise ConfigError(f"{config.path.name} has no [timeoff] section: it describes a staff import")
    return TimeOffSettings.from_mapping(config.timeoff, config.path.name)


#: The messages of a validation's valid rows (``hrimport timeoff validate``).
VALID_MESSAGE = "Valid; not sent."
VALID_TO_CALCULATE = "Valid; total days to be calculated by the service when imported; not sent."


def import_timeoff(
    config: ImportConfig,
    path: Path,
    target: Target,
    *,
    dry_run: bool = False,
    ledger: Ledger | None = None,
    use_ledger: bool = True,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_outcomes: OutcomesDone | None = None,
    chunk_rows: int = CHUNK_ROWS,
    history: Path | None = None,
    new_ledger: bool = False,
    stopped: StoppedSends | None = None,
) -> RunResult:
    """Import one time-off export; one outcome per source row (never raises for a bad row).

    ``target.client`` None means no network: totals are neither filled nor checked and nothing is sent
    (``hrimport timeoff validate``). ``dry_run`` with a client asks the calculation endpoint (read-only)
    but posts nothing. The ledger is ``config.state_dir``'s unless one is given; ``use_ledger=False``
    skips it. ``on_outcomes`` gets each record posted as the service answers it. ``history``: the job's report
    folder, whose earlier imports show a ledger gone missing (``hrimport.imports.ledger_recovery``), which stops
    the import (exit 2) unless ``new_ledger``. ``stopped``: what the job's time-off runs that stopped before their
    report sent (``hrimport.imports.stopped_runs``): a row the ledger holds because one of them sent it is reported
    ``added``, as that run's service answered it, naming the run (a dry run says how many in a note).

    The file is read, mapped and checked ``chunk_rows`` rows at a time; what needs the whole file (the
    overlaps, the ledger, the total days, the posting) works on its valid rows kept compactly
    (``hrimport.timeoff.table``), a chunk's worth made ``TimeOffRow``s at a time: memory stays flat
    whatever the number of rows (issue 17), and the outcome is the same whatever ``chunk_rows`` is.
    """
    settings = _settings(config)
    mapping = settings.import_mapping(config.timeoff)  # type: ignore[arg-type]  # checked by _settings
    started = datetime.now().astimezone()
    t0 = time.perf_counter()
    customer_id = target.customer_id
    client = target.client  # None: offline (validate), nothing asked or sent
    offline = client is None
    stream, h_and_m = True, set[str]()
    with ExitStack() as names_stack:
        names = _Names(config.state_dir, None if offline else target.service_key, customer_id, names_stack)
        while True:  # at most three times, as a staff import: each retry knows what the first read did not
            try:
                staged = StagedFile(config, path, mapping, chunk_rows, stream=stream, h_and_m=h_and_m)
                parts, table, checked, held_people = _gather(staged, config, settings, names,
                                                        keep_notes=not offline and not dry_run)
                break
            except StreamBroken:
                stream = False  # a text file that needs the whole read after all: again, read whole
            except MappingRestart as restart:
                h_and_m.add(restart.field)  # H and M in different chunks: again, neither read as a word
    facts = staged.finish()
    timings = staged.timings
    table.close()

    if not offline and not customer_id.isdigit():
        raise ConfigError(f"customer id {customer_id!r} is not a number: set [service] customer_id in "
                          f"{config.path.name} or HRIMPORT_CUSTOMER_ID")

    # -- leaves listed twice: the first row is sent, each later one shares its outcome --------------------
    t = time.perf_counter()
    notes: list[str] = []
    repeated = _repeated_rows(table, facts.field_sources.get("customer_system_id", "customer_system_id"))
    if repeated is not None:
        notes.append(repeats_note(len(repeated.repeats), "timeoff"))
    unrepeated = ~table.repeated

    # -- ledger: records this service accepted before are not sent again -------------------------------
    service = target.keyed_as

    def ledger_key(r: TimeOffRow) -> LedgerKey:
        return LedgerKey(service, customer_id, r.external_id, r.match.leave_type.en, r.start, r.end)

    with ExitStack() as stack:
        if ledger is None and use_ledger and not offline:
            ledger = stack.enter_context(open_ledger(config.state_dir))
        if ledger is not None and history is not None and not ledger.knows(service, customer_id):
            missing = missing_ledger(ledger, config.state_dir, history, target.service_url, customer_id)
            if missing and not new_ledger:
                raise ConfigError(missing)
            if missing:
                if not dry_run:  # a dry run remembers nothing: the import still asks
                    ledger.start_anew(service, customer_id)
                notes.append("The time-off ledger is started anew (--new-ledger): it knows nothing of the time off "
                             "earlier imports sent, so no row of this file is taken for one already imported; a "
                             "leave already on the platform is refused as overlapping (overlaps_existing) or, by a "
                             "platform that does not check, booked twice.")
        unanswered: dict[LedgerKey, LedgerEntry] = {}  # sent by an earlier run whose answer was lost
        told = ToldRows()  # the rows runs stopped before their report sent, told as they were answered: counted
        lost_found = set[int]()  # the rows whose record an earlier run's send stored, its answer lost: added by it
        # the leave this export lists, to tell the records imported before that it no longer lists (not of a
        # to_fix file, which lists only the rows that needed fixing)
        listing = (stack.enter_context(ledger.listing(service, customer_id))
                   if ledger is not None and settings.tells_missing_leave and FIX_COLUMN not in facts.info.headers
                   else None)
        if listing is not None:
            listing.unread(held_people)
        if ledger is not None:
            for part in parts:
                at = part.positions(unrepeated)
                keys = table.ledger_keys(at, service, customer_id)
                if listing is not None:
                    listing.add(keys, table.names.as_arrow().take(at).to_pylist())
                known = ledger.find(keys)
                holds: list[int] = []  # the rows the ledger holds: already imported, or told as a stopped run's
                held: list[LedgerEntry] = []
                again: list[int] = []
                messages: list[str] = []
                added: list[int] = []
                added_messages: list[str] = []
                for pos, key in zip(at.tolist(), keys):
                    entry = known.get(key)
                    if entry is None:
                        continue
                    if not entry.stored:
                        unanswered[entry.key] = entry
                        continue
                    table.imported[pos] = True
                    table.total_days[pos] = table.texts.code(entry.total_days)
                    holds.append(pos)
                    held.append(entry)
                    sent = stopped.sent_by(leave_key(entry.key), entry.accepted_at) if stopped is not None else None
                    if sent is not None:
                        what = f"time-off record {entry.record_id}" if entry.record_id is not None else ""
                        run, outcome = sent
                        told.count(run, outcome, int(table.column("row")[pos]))
                        if not dry_run:  # a dry run's rows read as the ledger holds them: its note says it
                            added.append(pos)
                            added_messages.append(run.told(outcome, what))
                            continue
                    record = f"record {entry.record_id}, " if entry.record_id is not None else ""
                    again.append(pos)
                    messages.append(f"Already imported on {entry.accepted_at} ({record}from {entry.source_file} "
                                    f"row {entry.source_row}); not sent again.")
                _changed_since_imported(part.keep, table.rows(holds), held, facts.field_sources, settings,
                                        config.report.mask)
                _answered_doubts(part.keep, table.column("row")[np.asarray(holds, dtype=np.int64)].tolist())
                part.settle(table, again, Outcome.ALREADY_IMPORTED, messages)
                part.settle(table, added, Outcome.ADDED, added_messages)

        # -- in-file overlaps ---------------------------------------------------------------------------
        pending = ~table.imported & unrepeated
        overlapping = table.overlaps()
        ends = [part.hi for part in parts]
        for r in table.rows(sorted(overlapping)):
            pending[r.pos] = False
            found = overlapping[r.pos]
            parts[bisect.bisect_right(ends, r.pos)].listed.append(RowOutcome(
                r.row, r.external_id, table.name(r.pos), Outcome.INVALID, tuple(found),
                " ".join(p.message for p in found), r.details()))
        # -- leaves imported before that a row's period overlaps: a corrected leave, or one booked twice ---
        if ledger is not None and ledger.knows(service, customer_id):  # a first import has nothing to overlap
            for part in parts:
                at = part.positions(pending)
                keys = table.ledger_keys(at, service, customer_id)
                overlapped = ledger.overlapping(keys)
                if listing is not None:  # named by the row's warning: not told again as no longer in the export
                    listing.told(e.key for found in overlapped.values() for e in found)
                for back in _overlapping_imports(part.keep, table, overlapped, at.tolist(), keys,
                                                 facts.field_sources.get("start_date"),
                                                 strict="overlaps-imported" in settings.strict_checks):
                    pending[back.pos] = False
                    part.listed.append(back.outcome)
        # -- leave imported before that this export no longer lists (cancelled or moved in the HR system) -------
        gone = gone_leave(listing) if listing is not None else None
        if listing is not None:
            listing.close()  # its tables are not needed while sending
        if gone:
            notes.append(gone_note(len(gone), config.path.name))
        timings["check"] = checked + time.perf_counter() - t

        # -- total days ---------------------------------------------------------------------------------
        t = time.perf_counter()
        workers = concurrency or config.concurrency
        warnings: dict[int, list[Problem]] = {}  # doubts of the rows still to send, by position
        if client is None:
            for part in parts:
                at = part.positions(pending)
                given = table.column("given")[at]
                table.total_days[at] = given
                empty = table.texts.code("")
                messages = [VALID_MESSAGE if code != empty else VALID_TO_CALCULATE for code in given.tolist()]
                part.settle(table, at.tolist(), Outcome.VALID, messages)
            pending[:] = False
        elif pending.any():
            checking = int(pending.sum())
            announce(f"Checking the total days of {checking:,} rows with the service")
            # one request per distinct period: a long history takes a while, said in the log now and then
            counted = ProgressLog("total days", done="checked")
            settler = TotalsSettler(client, workers=workers, policy=settings.total_days, sources=facts.field_sources,
                                    progress=lambda rows: counted(rows, checking))
            for part in parts:
                rows = table.rows(part.positions(pending))
                refused: dict[int, RowOutcome] = {}
                for r in settler.settle(rows, refused):
                    table.total_days[r.pos] = table.texts.code(r.total_days)
                    if r.warnings:
                        warnings[r.pos] = r.warnings
                for pos, o in refused.items():
                    pending[pos] = False
                    o.name = table.name(pos)
                    part.listed.append(o)
            settler.finish(notes)
        timings["total_days"] = time.perf_counter() - t

        # -- post -----------------------------------------------------------------------------------------
        t = time.perf_counter()
        if dry_run:
            for part in parts:
                at = part.positions(pending).tolist()
                messages = [f"Valid; would be sent with total_days {table.texts.values[code]} (dry run)."
                            for code in table.total_days[at].tolist()]
                part.settle(table, at, Outcome.VALID, messages, warnings)
        total = int(pending.sum())
        if total and not dry_run:
            assert client is not None  # rows are only pending here when totals were settled online
            announce(f"Sending {total:,} rows")
            for part in parts:
                rows = table.rows(part.positions(pending))
                for r in rows:
                    r.warnings = warnings.get(r.pos, [])
                posted = post_time_off(client, rows, customer_id=customer_id,
                                       ledger=ledger, ledger_key=ledger_key, unanswered=unanswered,
                                       source_file=facts.info.name,
                                       concurrency=workers, on_outcomes=on_outcomes, told=told, found=lost_found,
                                       stopped=(lambda key, at: stopped.sent_by(leave_key(key), at))
                                       if stopped is not None else None,
                                       progress=(lambda n: progress(n, total)) if progress else None)
                part.posted(table, {r.row: r.pos for r in rows}, posted)
        timings["submit"] = time.perf_counter() - t
        # told once posting is done: a leave whose answer a stopped run lost after its journal named it is told there
        if told.counts:
            if repeated is not None:  # the same leave listed again: one leave that run added, not two
                told.count_repeats(repeat.first for repeat in repeated.repeats.values())
            notes.append(told_note(told.summary(), dry_run=dry_run, kind="timeoff"))

    outcomes = OutcomeRows()
    for part in parts:
        last = part.keep.table.row_numbers[-1]
        mine = part.listed.taken(last)  # this chunk's, let go once added
        if repeated is not None:
            repeated.note(mine, part.plain, last=last)
            mine += repeated.taken(last=last)
        # a leave an earlier run's record answers: already imported, or added by a send whose answer was lost (told
        # as a stopped run's when its journal names it)
        _answered_doubts(part.keep, [o.row for o in mine
                                     if o.outcome is Outcome.ALREADY_IMPORTED or o.row in told.runs or o.row in lost_found])
        part.keep.attach(mine)
        outcomes.add(mine, *part.plain)
    # a column headed as a name gives the report its names (``_Names``): read, so not "ignored"
    name_column = None if settings.name_column else _name_header(facts.info.headers)
    result = close_run("timeoff", config, target, facts.info, outcomes, notes=[*facts.notes, *notes],
                       ignored_columns=[c for c in facts.ignored_columns if c != name_column],
                       values_read=facts.values_read, started=started, t0=t0,
                       timings=timings, dry_run=dry_run or target.client is None, rows_read=facts.rows)
    if gone:
        result.gone = gone
        result.info.no_longer_in_export = len(gone)
    result.info.stopped_runs = told.summary()
    return result


def _changed_since_imported(keep: ChunkKeep, rows: list[TimeOffRow], entries: list[LedgerEntry],
                            sources: dict[str, str], settings: TimeOffSettings, mask: tuple[str, ...]) -> None:
    """Warn on each of these rows, which the ledger holds as imported (``entries``, in the same order), whose file
    now gives other values than its record was sent with (``changed_since_imported``): a corrected month's file
    imported again would otherwise say "already imported" of a correction that never reaches the platform."""
    masked = frozenset(name for name in ("total_days", "country", "notes", "decision")
                       if name in mask or sources.get(name) in mask)
    for r, entry in zip(rows, entries, strict=True):
        if entry.body is None:
            continue
        record = f"record {entry.record_id}" if entry.record_id is not None else "its record"
        problem = changed_since_imported(
            r, entry.body, sources=sources, masked=masked, figure_sent=settings.total_days != "service",
            record=f"this leave, imported on {entry.accepted_at} as {record} from {entry.source_file} row "
                   f"{entry.source_row},")
        if problem is not None:
            keep.warnings.setdefault(r.row, []).append(problem)


@dataclass
class _HeldBack:
    """A row to be sent that a check holds back after all: its position and its outcome."""

    pos: int
    outcome: RowOutcome


def _overlapping_imports(keep: ChunkKeep, table: LeaveTable, found: dict[LedgerKey, list[LedgerEntry]],
                         positions: list[int], keys: list[LedgerKey], column: str | None,
                         *, strict: bool) -> list[_HeldBack]:
    """Warn on each row to be sent (``positions``, ``keys``: a chunk's) whose period overlaps records the ledger
    holds for the same person (``found``, by ``Ledger.overlapping``): ``overlaps-imported``; with ``strict``
    (``[timeoff] strict_checks`` names it) hold them back instead, returned."""
    held: list[_HeldBack] = []
    hits = [(pos, found[key]) for pos, key in zip(positions, keys) if key in found]
    for r, (_, entries) in zip(table.rows([pos for pos, _ in hits]), hits, strict=True):
        imported = [f"{e.key.leave_type} {e.key.start_date}..{e.key.end_date} ({e.total_days} day(s)), imported on "
                    f"{e.accepted_at} as {f'record {e.record_id}' if e.record_id is not None else 'a record'} from "
                    f"{e.source_file} row {e.source_row}" for e in entries]
        problem = overlaps_imported(r, imported, column=column, sent=not strict)
        if strict:
            held.append(_HeldBack(r.pos, RowOutcome(r.row, r.external_id, table.name(r.pos), Outcome.INVALID,
                                                    (problem,), problem.message, r.details())))
        else:
            keep.warnings.setdefault(r.row, []).append(problem)
    return held


def _answered_doubts(keep: ChunkKeep, rows: list[int]) -> None:
    """Take the ``PLATFORM_DOUBTS`` off these rows (Excel row numbers) of a chunk: the records the platform
    accepted in an earlier run answered them. A cumulative leave history lists last month's records again every
    month; each would tell again that its leave type or region code may not be taken, though it was."""
    for row in rows:
        found = keep.warnings.get(row)
        if not found:
            continue
        kept = [p for p in found if p.code not in PLATFORM_DOUBTS]
        if kept:
            keep.warnings[row] = kept
        else:
            del keep.warnings[row]


def _repeated_rows(table: LeaveTable, id_column: str) -> RepeatedRows | None:
    """The rows of ``table`` listing an earlier row's leave again exactly (``LeaveTable.repeats``, which marks
    them), to be given the outcomes of the rows they repeat; None when there are none. ``id_column``: the
    column of the external id, which their warnings name."""
    repeats = table.repeats()
    if not repeats:
        return None
    numbers = table.column("row")
    at = np.fromiter(repeats, dtype=np.int64, count=len(repeats))
    rows, firsts = numbers[at].tolist(), numbers[list(repeats.values())].tolist()
    taken_ids, taken_names = table.taken(at)
    ids = taken_ids.tolist()
    found = {row: RepeatedRow(first, repeat_warning(row=row, first=first, external_id=external_id, column=id_column))
             for row, first, external_id in zip(rows, firsts, ids)}
    return RepeatedRows(found, zip(rows, ids, taken_names.tolist()))


@dataclass
class _Part:
    """One chunk of the file, for the rest of the import: what the chunk knows of its rows (``ChunkKeep``),
    the positions of its valid rows in the ``LeaveTable`` (``lo`` to ``hi``), and its rows' outcomes as
    they are found: ``listed`` (a ``RowOutcome`` each: rows needing attention, with warnings or changed
    values; one store every chunk shares, which keeps them out of memory past a few thousand, so a file whose
    every row is invalid stays flat too) and ``plain`` (rows alike but for their details and message, kept
    as columns)."""

    keep: ChunkKeep
    lo: int
    hi: int
    listed: OutcomesByRow
    plain: list[PlainRows] = field(default_factory=list)

    def positions(self, chosen: np.ndarray) -> np.ndarray:
        """The positions of this chunk's valid rows that ``chosen`` (a mask over every valid row) holds."""
        return np.flatnonzero(chosen[self.lo:self.hi]) + self.lo

    def settle(self, table: LeaveTable, positions: Sequence[int], outcome: Outcome, messages: list[str],
               warnings: dict[int, list[Problem]] | None = None) -> None:
        """Give the valid rows at ``positions`` (ascending) a successful ``outcome``, each its message and
        ``warnings``: the rows with nothing of their own (no warning, no changed value to list) go to
        ``plain``, as columns, the others to ``listed``."""
        if not len(positions):
            return
        numbers = table.column("row")
        warned, changed = self.keep.warnings, self.keep.changed
        alike: list[int] = []
        alike_messages: list[str] = []
        own: list[tuple[int, str]] = []
        for pos, row, message in zip(positions, numbers[np.asarray(positions, dtype=np.int64)].tolist(), messages):
            if (warnings and pos in warnings) or row in warned or row in changed:
                own.append((pos, message))
            else:
                alike.append(pos)
                alike_messages.append(message)
        for r, (pos, message) in zip(table.rows([pos for pos, _ in own]), own):
            self.listed.append(RowOutcome(r.row, r.external_id, table.name(pos), outcome,
                                          tuple(warnings.get(pos, ()) if warnings else ()), message, r.details()))
        if not alike:
            return
        at = np.array(alike, dtype=np.int64)
        ids, names = table.taken(at)  # read from the table when the rows are: nothing copied
        distinct = set(alike_messages)
        message = ""
        column: Sequence[str] | None = None
        if len(distinct) == 1:
            message = alike_messages[0]
        elif len(distinct) <= _CODED_MESSAGES:
            codes = Codes()
            column = CodedTexts(codes.codes(alike_messages), codes.values)
        else:  # each its own ("Added as time-off record 12.")
            texts = TextColumn()
            texts.extend(alike_messages)
            column = texts
        self.plain.append(PlainRows(array("q", numbers[at].tobytes()), ids, names, outcome, message,
                                    messages=column, detail_columns=table.detail_columns(at)))

    def posted(self, table: LeaveTable, position: dict[int, int], outcomes: list[RowOutcome]) -> None:
        """Keep the outcomes the service gave this chunk's rows (in the order it answered)."""
        added: list[tuple[int, str]] = []
        for o in outcomes:
            pos = position[o.row]
            if o.outcome is Outcome.ADDED and o.details.get("total_days"):
                # the days of the record added: an earlier run's send, its answer lost, stored the days it sent
                # (``post_time_off``), which this run's count may not be
                table.total_days[pos] = table.texts.code(o.details["total_days"])
            if o.outcome is Outcome.ADDED and not o.problems:
                added.append((pos, o.message))
            else:
                o.name = table.name(pos)
                self.listed.append(o)
        added.sort()
        self.settle(table, [pos for pos, _ in added], Outcome.ADDED, [message for _, message in added])


#: A group of plain rows with at most this many distinct messages keeps them as codes, else as texts.
_CODED_MESSAGES = 256


def _gather(staged: StagedFile, config: ImportConfig, settings: TimeOffSettings, names: _Names, *,
            keep_notes: bool) -> tuple[list[_Part], LeaveTable, float, TextColumn]:
    """Read, map, validate and check ``staged`` chunk by chunk: the invalid rows' outcomes, the valid rows
    in a ``LeaveTable``, the seconds the time-off checks took, and the external ids of the rows held back (their
    leave not known: ``hrimport.timeoff.gone`` compares none of their person's records)."""
    table = LeaveTable(keep_notes=keep_notes)
    held_people = TextColumn()
    parts: list[_Part] = []
    listed = OutcomesByRow()  # every chunk's rows with something of their own
    offset = 0  # rows of the file before the chunk
    checked = 0.0
    for chunk in staged:
        t = time.perf_counter()
        mapped, problems = chunk.mapped, chunk.problems
        frame = mapped.frame

        def col(name: str) -> list[str]:
            return frame[name].tolist() if name in frame else [""] * len(frame)  # noqa: B023 (used at once)

        cells = {name: col(name) for name in
                 ("customer_system_id", "leave_type", "lang", "country", "start_date", "end_date", "total_days",
                  "notes", "decision")}
        who = names.of(chunk.table, mapped, cells["customer_system_id"])
        days_written = _as_written(mapped, "total_days", cells["total_days"])
        part = _Part(ChunkKeep.of(chunk.table, mapped, config.report.mask, config.report.html_row_limit, offset,
                                  spill=True), len(table), len(table), listed)
        offset += len(mapped)
        valid = ValidRows()
        held_ids: list[str] = []
        kept: list[int] = []  # the positions of the chunk's valid rows
        unread: dict[int, str] = {}  # index in ``kept`` -> the half-day cells of a row whose halves were not read
        for pos, row in enumerate(mapped.row_numbers):
            found = list(problems.get(pos, []))
            match, lang, more = check_row(
                row=row, leave_type=cells["leave_type"][pos], lang_cell=cells["lang"][pos],
                config_lang=settings.lang, start=cells["start_date"][pos], end=cells["end_date"][pos],
                sources=mapped.field_sources, strict=settings.strict_checks, country=cells["country"][pos],
            ) if pos not in problems else (None, None, [])
            for problem in more:  # a warning goes with the row, whatever becomes of it, as the mapper's do
                (part.keep.warnings.setdefault(row, []) if problem.is_warning else found).append(problem)
            halves = 0  # half start + 2 * half end, or HALVES_UNREAD
            half_cells = ""  # the half-day cells, of a row whose halves were not read
            if not found:
                try:
                    half_start, half_end = halves_for(
                        start_cell=_cell(mapped.carried, "half_start", pos),
                        end_cell=_cell(mapped.carried, "half_end", pos),
                        day_cell=_cell(mapped.carried, "half_day", pos),
                        one_day=cells["start_date"][pos] == cells["end_date"][pos],
                    )
                    halves = half_start + 2 * half_end
                except HalfDayError as exc:
                    problem = unread_halves(
                        row=row, code=exc.code, reason=exc.message, column=mapped.carried_sources.get(exc.which),
                        key=exc.which, cell=_cell(mapped.carried, exc.which, pos), policy=settings.total_days,
                        total_days=cells["total_days"][pos], days_column=mapped.field_sources.get("total_days"),
                        strict=exc.code in settings.strict_checks, days_written=days_written[pos])
                    if problem.is_warning:
                        # sent with the row's own figure, unchecked (``TotalsSettler``); its cells kept in its
                        # digest, for ``repeats``
                        halves, half_cells = HALVES_UNREAD, _half_cells(mapped.carried, pos)
                        part.keep.warnings.setdefault(row, []).append(problem)
                    else:
                        found.append(problem)
            if found or match is None or lang is None:
                written = {"leave_type": cells["leave_type"][pos], "start_date": cells["start_date"][pos],
                           "end_date": cells["end_date"][pos], "half_days": _halves_written(
                               mapped.carried, pos, one_day=cells["start_date"][pos] == cells["end_date"][pos]),
                           "total_days": days_written[pos] or cells["total_days"][pos]}
                outcome = held_back(config, row, cells["customer_system_id"][pos], who[pos], found, written)
                part.listed.append(outcome)
                if outcome.outcome is Outcome.INVALID:
                    held_ids.append(cells["customer_system_id"][pos])
                continue
            valid.rows.append(row)
            valid.ids.append(cells["customer_system_id"][pos])
            valid.names.append(who[pos])
            valid.matches.append(match)
            valid.langs.append(lang)
            valid.countries.append(cells["country"][pos])
            valid.starts.append(cells["start_date"][pos])
            valid.ends.append(cells["end_date"][pos])
            valid.halves.append(halves)
            valid.given.append(cells["total_days"][pos])
            valid.given_written.append(days_written[pos])
            valid.notes.append(cells["notes"][pos])
            valid.decisions.append(cells["decision"][pos])
            if halves == HALVES_UNREAD:
                unread[len(kept)] = half_cells
            kept.append(pos)
        # what each valid row sends, as a 16-byte digest: the leaves listed twice are found once every row is in
        valid.sent.append(_with_cells(sent_digests(mapped, np.array(kept, dtype=np.int64)), unread))
        table.extend(valid)
        held_people.extend(dict.fromkeys(held_ids))
        part.hi = len(table)
        parts.append(part)
        checked += time.perf_counter() - t
    return parts, table, checked, held_people


def _as_written(mapped: MappedTable, name: str, values: list[str]) -> list[str]:
    """Each row's cell of field ``name`` as the file writes it (``4,5``), where it is not the value read
    (``values``: 4.5, a decimal comma read as a point), else "": what a message quotes (principle 1)."""
    read = mapped.read.get(name)
    if read is None:
        return [""] * len(values)
    return [written if written != value else "" for written, value in zip(read.str.strip().tolist(), values)]


def _cell(cells: dict[str, list[str]], key: str, pos: int) -> str:
    return cells[key][pos] if key in cells else ""


def _halves_written(cells: dict[str, list[str]], pos: int, *, one_day: bool) -> str:
    """The report's half days of a row held back (``cells``: its half-day cells): as they say them, or ``not
    read``, never "none" for a cell that says something else ('Nachmittag')."""
    try:
        half_start, half_end = halves_for(start_cell=_cell(cells, "half_start", pos),
                                          end_cell=_cell(cells, "half_end", pos),
                                          day_cell=_cell(cells, "half_day", pos), one_day=one_day)
    except HalfDayError:
        return HALVES_NOT_READ
    return halves_shown(half_start, half_end, one_day=one_day)


def _half_cells(cells: dict[str, list[str]], pos: int) -> str:
    """A row's half-day cells as one text (they hold no NUL: the reader makes such a cell ``bad-encoding``)."""
    return "\x00".join(_cell(cells, key, pos) for key in HALF_KEYS)


def _with_cells(digests: np.ndarray, unread: dict[int, str]) -> np.ndarray:
    """``digests`` (``sent_digests``) with the half-day cells of the rows at ``unread`` mixed into theirs: two rows
    whose half days were not read are one leave listed twice only when their cells are alike too (``"maybe"``
    and ``"perhaps"`` may mean different days), as two rows whose half days were read must agree on them."""
    for at, text in unread.items():
        mixed = np.frombuffer(hashlib.blake2b(text.encode(), digest_size=16).digest(), dtype=np.uint64)
        digests[at] ^= mixed
    return digests


class _Names:
    """Each row's name for the report (never sent): the file's name column (``[timeoff] name``, else a
    column headed as ``schemas/name_headers.toml`` lists), else the name the platform accepted for that
    external id in a staff import (the state folder, when the run has a ``service``), else the external id.
    Found chunk by chunk; the state folder is opened once, when a chunk first has a row without a name."""

    def __init__(self, state_dir: Path, service: str | None, customer_id: str, stack: ExitStack) -> None:
        self.state_dir, self.service, self.customer_id, self.stack = state_dir, service, customer_id, stack
        self._state: StateStore | None = None
        self._tried = False

    def of(self, table: SourceTable, mapped: MappedTable, ids: list[str]) -> list[str]:
        in_file = mapped.carried.get("name") or _name_column(table) or [""] * len(ids)
        accepted: dict[str, str] = {}
        unnamed = list(dict.fromkeys(ext for ext, name in zip(ids, in_file) if ext and not name))
        state = self._open() if unnamed else None
        if state is not None and self.service:
            try:
                accepted = state.names(self.service, self.customer_id, unnamed)
            except ConfigError:
                pass  # names are a courtesy of the report: an unreadable state folder costs only them
        return [name or accepted.get(ext) or ext for ext, name in zip(ids, in_file)]

    def _open(self) -> StateStore | None:
        if not self._tried:
            self._tried = True
            if self.service and (self.state_dir / STATE_FILE).exists():
                try:
                    self._state = self.stack.enter_context(StateStore.open(self.state_dir))
                except ConfigError:
                    pass  # as above: only the names are lost
        return self._state


def _name_header(headers: Iterable[object]) -> str | None:
    """The file's first column headed as a name (``schemas/name_headers.toml``), or None."""
    known = name_headers()
    return next((str(h) for h in headers if normalize_header(unicodedata.normalize("NFKC", str(h))) in known), None)


def _name_column(table: SourceTable) -> list[str] | None:
    """The cells of the file's first column headed as a name, trimmed; None when it has none."""
    column = _name_header(table.frame.columns)
    return None if column is None else [str(v).strip() for v in table.frame[column].fillna("").tolist()]
