"""The time-off import: read -> map -> validate -> type, lang and halves -> ledger -> in-file overlaps ->
total days -> post, composed into one ``RunResult`` (``kind="timeoff"``).

Like ``hrimport.staff_import`` this module only composes; each stage lives in its own module and returns
plain data. Every source row ends with exactly one outcome (``RunResult.check_accounted``):

=====================  ==================================================================================
``invalid``            our checks found problems (field checks, unknown leave type, half-day markers,
                       overlaps within the file, ``total_days`` disagreeing with the calculation)
``already_imported``   the ledger holds the record: accepted by this service in an earlier run
``valid``              dry run or ``validate``: would be sent
``added``              the service accepted it (and the ledger now holds it)
``overlaps_existing``  the service holds an overlapping record
``rejected``           the service refused it (unknown staff, its own total, ...)
``failed``             the service could not be reached or kept failing
=====================  ==================================================================================

Example::

    result = import_timeoff(load_config("samples/leave_history.toml"), Path("samples/leave_history.xlsx"),
                            Target(client, "99", "http://127.0.0.1:8765/sandbox"))
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd

from hrimport.config import ImportConfig
from hrimport.errors import (
    ConfigError,
    InputFileError,
    RequestRejected,
    RetriesExhausted,
    ServiceUnavailableError,
)
from hrimport.mapper import MappedTable, map_records
from hrimport.outcomes import Outcome, Problem, Progress, RowOutcome, RunResult
from hrimport.reader import SourceTable
from hrimport.runs import finish_run, read_source
from hrimport.service.connection import Target
from hrimport.service.timeoff import post_time_off
from hrimport.timeoff.days import DayCalculator, DayKey, format_days, parse_days
from hrimport.timeoff.halves import HalfDayError, halves_for
from hrimport.timeoff.ledger import Ledger, LedgerKey, open_ledger
from hrimport.timeoff.rows import TimeOffRow, check_row, find_overlaps
from hrimport.timeoff.settings import TimeOffSettings
from hrimport.validate import validate_records

__all__ = ["PreparedTimeOff", "import_timeoff", "prepare_timeoff"]

# The sheet may leave these empty (this stage fills them), and one person has many leave rows.
_OPTIONAL_HERE = {"total_days", "lang"}


@dataclass
class PreparedTimeOff:
    """A time-off export read, mapped and validated (no network)."""

    table: SourceTable
    mapped: MappedTable
    settings: TimeOffSettings
    problems: dict[int, list[Problem]]
    half_cells: dict[str, list[str]]  # half_start/half_end/half_day -> the column's cells
    half_sources: dict[str, str]  # same keys -> the column's header as in the file
    timings: dict[str, float]


def prepare_timeoff(config: ImportConfig, path: Path) -> PreparedTimeOff:
    """Read, map and validate a time-off export as the config's ``[timeoff]`` section says."""
    mapping = config.timeoff
    if mapping is None:
        raise ConfigError(f"{config.path.name} has no [timeoff] section: it describes a staff import")
    settings = TimeOffSettings.from_mapping(mapping, config.path.name)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    table = read_source(config, path, [*mapping.source_columns, *settings.half_sources])
    timings["read"] = time.perf_counter() - t

    t = time.perf_counter()
    half_cells: dict[str, list[str]] = {}
    half_sources: dict[str, str] = {}
    for key, column in (settings.half_columns or {}).items():
        actual = table.column(column)
        if actual is None:
            headers = ", ".join(repr(h) for h in table.info.headers)
            raise InputFileError(f"{table.info.name}: the config's [timeoff] {key} names column {column!r}, "
                                 f"which is not in the file (its header row {table.info.header_row} has {headers})")
        half_cells[key] = table.frame[actual].fillna("").astype("str").str.strip().tolist()
        half_sources[key] = actual
    mapped = map_records(
        table, mapping, date_order=config.source.date_order, formula_text=config.source.formula_text
    )
    mapped.ignored_columns = [c for c in mapped.ignored_columns if c not in half_sources.values()]
    if settings.default_country:
        country = mapped.frame["country"] if "country" in mapped.frame else pd.Series("", index=mapped.frame.index)
        mapped.frame["country"] = country.mask(country == "", settings.default_country).astype("str")
        mapped.field_sources.setdefault("country", "(config default_country)")
    mapped.fields = tuple(
        replace(f, required="no" if f.name in _OPTIONAL_HERE else f.required, key=False) for f in mapped.fields
    )
    timings["map"] = time.perf_counter() - t
    t = time.perf_counter()
    problems = validate_records(mapped)
    timings["validate"] = time.perf_counter() - t
    return PreparedTimeOff(table, mapped, settings, problems, half_cells, half_sources, timings)


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
) -> RunResult:
    """Import one time-off export; one outcome per source row (never raises for a bad row).

    ``target.client`` None means no network: totals are neither filled nor checked and nothing is sent
    (``hrimport timeoff validate``). ``dry_run`` with a client asks the calculation endpoint (read-only)
    but posts nothing. The ledger is ``config.state_dir``'s unless one is given; ``use_ledger=False``
    skips it.
    """
    started = datetime.now().astimezone()
    t0 = time.perf_counter()
    prep = prepare_timeoff(config, path)
    mapped, timings = prep.mapped, prep.timings
    frame = mapped.frame

    def col(name: str) -> list[str]:
        return frame[name].tolist() if name in frame else [""] * len(frame)

    cells = {name: col(name) for name in
             ("customer_system_id", "leave_type", "lang", "country", "start_date", "end_date", "total_days",
              "notes", "decision")}
    outcomes: dict[int, RowOutcome] = {}

    def written_details(pos: int) -> dict[str, str]:
        return {"leave_type": cells["leave_type"][pos], "start_date": cells["start_date"][pos],
                "end_date": cells["end_date"][pos], "half_days": "", "total_days": cells["total_days"][pos]}

    def invalid(pos: int, found: list[Problem], details: dict[str, str] | None = None) -> None:
        outcomes[pos] = RowOutcome(mapped.row_numbers[pos], cells["customer_system_id"][pos], "", Outcome.INVALID,
                                   tuple(found), " ".join(p.message for p in found), details or written_details(pos))

    # -- leave type, lang, half days, period ------------------------------------------------------------
    t = time.perf_counter()
    rows: list[TimeOffRow] = []
    for pos, row in enumerate(mapped.row_numbers):
        found = list(prep.problems.get(pos, []))
        match, lang, more = check_row(
            row=row, leave_type=cells["leave_type"][pos], lang_cell=cells["lang"][pos],
            config_lang=prep.settings.lang, start=cells["start_date"][pos], end=cells["end_date"][pos],
            sources=mapped.field_sources,
        ) if pos not in prep.problems else (None, None, [])
        found += more
        half_start = half_end = False
        if not found:
            try:
                half_start, half_end = halves_for(
                    start_cell=_cell(prep.half_cells, "half_start", pos), end_cell=_cell(prep.half_cells, "half_end", pos),
                    day_cell=_cell(prep.half_cells, "half_day", pos),
                    one_day=cells["start_date"][pos] == cells["end_date"][pos],
                )
            except HalfDayError as exc:
                column = prep.half_sources.get(exc.which)
                found.append(Problem(exc.code, f"Row {row}, column '{column}': {exc.message}.", row, column,
                                     exc.which, _cell(prep.half_cells, exc.which, pos)))
        if found or match is None or lang is None:
            invalid(pos, found)
            continue
        rows.append(TimeOffRow(
            pos=pos, row=row, external_id=cells["customer_system_id"][pos], match=match, lang=lang,
            country=cells["country"][pos], start=cells["start_date"][pos], end=cells["end_date"][pos],
            half_start=half_start, half_end=half_end, total_given=cells["total_days"][pos],
            notes=cells["notes"][pos], decision=cells["decision"][pos],
        ))

    # -- ledger: records this service accepted before are not sent again -------------------------------
    customer_id = target.customer_id
    offline = target.client is None
    if not offline and not customer_id.isdigit():
        raise ConfigError(f"customer id {customer_id!r} is not a number: set [service] customer_id in "
                          f"{config.path.name} or HRIMPORT_CUSTOMER_ID")
    service = target.service_key or target.service_url

    def ledger_key(r: TimeOffRow) -> LedgerKey:
        return LedgerKey(service, customer_id, r.external_id, r.match.leave_type.en, r.start, r.end)

    with ExitStack() as stack:
        if ledger is None and use_ledger and not offline:
            ledger = stack.enter_context(open_ledger(config.state_dir))
        imported: set[int] = set()
        if ledger is not None:
            known = ledger.find(ledger_key(r) for r in rows)
            for r in rows:
                entry = known.get(ledger_key(r))
                if entry is None:
                    continue
                imported.add(r.pos)
                r.total_days = entry.total_days
                record = f"record {entry.record_id}, " if entry.record_id is not None else ""
                outcomes[r.pos] = RowOutcome(
                    r.row, r.external_id, "", Outcome.ALREADY_IMPORTED,
                    message=f"Already imported on {entry.accepted_at} ({record}from {entry.source_file} row "
                            f"{entry.source_row}); not sent again.",
                    details=r.details(),
                )

        # -- in-file overlaps ---------------------------------------------------------------------------
        for pos, found in find_overlaps(rows, imported).items():
            invalid(pos, found, next(r.details() for r in rows if r.pos == pos))
        pending = [r for r in rows if r.pos not in outcomes]
        timings["check"] = time.perf_counter() - t

        # -- total days ---------------------------------------------------------------------------------
        t = time.perf_counter()
        notes: list[str] = []
        workers = concurrency or config.concurrency
        if offline:
            for r in pending:
                r.total_days = r.total_given
                checked = "" if r.total_given else "; total days to be calculated by the service when imported"
                outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.VALID,
                                             message=f"Valid{checked}; not sent.", details=r.details())
            pending = []
        else:
            pending = _settle_totals(pending, target.client, workers, outcomes, notes)
        timings["total_days"] = time.perf_counter() - t

        # -- post -----------------------------------------------------------------------------------------
        t = time.perf_counter()
        if dry_run:
            for r in pending:
                outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.VALID,
                                             message=f"Valid; would be sent with total_days {r.total_days} "
                                                     "(dry run).", details=r.details())
        elif pending:
            posted = post_time_off(target.client, pending, customer_id=customer_id,  # type: ignore[arg-type]
                                   ledger=ledger, ledger_key=ledger_key, source_file=prep.table.info.name,
                                   concurrency=workers,
                                   progress=(lambda n: progress(n, len(pending))) if progress else None)
            if not posted.reached and all(o.outcome is Outcome.FAILED for o in posted.outcomes):
                raise ServiceUnavailableError(posted.outcomes[0].message.split(": ", 1)[-1])
            position = {row: pos for pos, row in enumerate(mapped.row_numbers)}
            for o in posted.outcomes:
                outcomes[position[o.row]] = o
        timings["submit"] = time.perf_counter() - t

    return finish_run("timeoff", config, target, prep.table, mapped, outcomes.values(), started=started, t0=t0,
                      timings=prep.timings, dry_run=dry_run or target.client is None, notes=notes)


def _cell(cells: dict[str, list[str]], key: str, pos: int) -> str:
    return cells[key][pos] if key in cells else ""


def _settle_totals(pending: list[TimeOffRow], client: object, workers: int, outcomes: dict[int, RowOutcome],
                   notes: list[str]) -> list[TimeOffRow]:
    """Fill or check each row's ``total_days`` against the calculation; returns the rows still to send.

    Each distinct period of a Working-basis type is asked once (in parallel); Calendar-basis types are
    counted locally (``hrimport.timeoff.days``).
    """
    calculator = DayCalculator(client)  # type: ignore[arg-type]
    working = list(dict.fromkeys(r.day_key for r in pending if r.match.leave_type.basis == "Working"))
    answers: dict[DayKey, Decimal | Exception] = {}

    def ask(key: DayKey) -> tuple[DayKey, Decimal | Exception]:
        try:
            return key, calculator.days(key, "Working")
        except (RequestRejected, RetriesExhausted) as exc:  # a per-row problem; 401 and the like propagate
            return key, exc

    if working:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hrimport-days") as pool:
            answers.update(pool.map(ask, working))
    unreachable = [a for a in answers.values() if isinstance(a, RetriesExhausted) and a.unreachable]
    if unreachable and len(unreachable) == len(answers):
        raise ServiceUnavailableError(str(unreachable[0]))

    still: list[TimeOffRow] = []
    filled = 0
    for r in pending:
        key = r.day_key
        answer = answers[key] if r.match.leave_type.basis == "Working" else calculator.days(key, "Calendar")
        if isinstance(answer, Exception):
            outcome, code = ((Outcome.FAILED, answer.code) if isinstance(answer, RetriesExhausted)
                             else (Outcome.REJECTED, "service-rejected"))
            reason = answer.reasons if isinstance(answer, RequestRejected) else str(answer)
            text = f"Row {r.row}: the service could not calculate the days of {key.describe()}: {reason}."
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", outcome, (Problem(code, text, r.row),), text,
                                         r.details())
            continue
        given = parse_days(r.total_given) if r.total_given else None
        if answer == 0:
            # every day of the period is a weekend day or public holiday: nothing to book, and the
            # service refuses a record of zero days
            text = (f"Row {r.row}: {key.describe()} holds no working day (weekends and public holidays of "
                    f"{key.country}), so there is no leave to book; not sent.")
            problem = Problem("no-leave-days", text, r.row, None, "start_date", r.start)
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.INVALID, (problem,), text, r.details())
            continue
        if given is None:
            r.total_days = format_days(answer)
            filled += 1
        elif given != answer:
            basis = ("the service counts" if r.match.leave_type.basis == "Working"
                     else f"{r.match.leave_type.en} counts every day, so it is")
            text = (f"Row {r.row}: total_days is {r.total_given} but {basis} {format_days(answer)} for "
                    f"{key.describe()}; not sent (correct the figure, or mark the half days).")
            problem = Problem("total-days-mismatch", text, r.row, None, "total_days", r.total_given)
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.INVALID, (problem,), text, r.details())
            continue
        else:
            r.total_days = format_days(given)
        still.append(r)
    if pending:
        notes.append(f"total_days filled from the calculation for {filled} row(s); {calculator.asked} distinct "
                     "period(s) asked of the calculation endpoint.")
    return still
