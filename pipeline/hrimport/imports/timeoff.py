"""The time-off import: read -> map -> validate -> type, lang and halves -> ledger -> in-file overlaps ->
total days -> post, composed into one ``RunResult`` (``kind="timeoff"``).

Like ``hrimport.imports.staff`` this module only composes; each stage lives in its own module and returns
plain data. Every source row ends with exactly one outcome (``RunResult.check_accounted``):

=====================  ==================================================================================
``invalid``            our checks found problems (field checks, unknown leave type, half-day markers,
                       overlaps within the file, no figure for a period without working days; with
                       ``[timeoff] total_days = "strict"``, a figure disagreeing with the calculation)
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
import unicodedata
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hrimport.config import ImportConfig
from hrimport.errors import ConfigError
from hrimport.imports.runs import finish_run, read_map_validate
from hrimport.mapper import MappedTable
from hrimport.outcomes import Outcome, OutcomesDone, Problem, Progress, RowOutcome, RunResult
from hrimport.reader import SourceTable
from hrimport.reader.grid import normalize_header
from hrimport.service.connection import Target
from hrimport.service.timeoff import post_time_off
from hrimport.stages import announce
from hrimport.state.ledger import Ledger, LedgerEntry, LedgerKey, open_ledger
from hrimport.state.store import STATE_FILE, StateStore
from hrimport.timeoff.days import settle_totals
from hrimport.timeoff.halves import HalfDayError, halves_for
from hrimport.timeoff.rows import TimeOffRow, check_row, find_overlaps
from hrimport.timeoff.settings import TimeOffSettings, name_headers

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
    """Read, map and validate a time-off export as the config's ``[timeoff]`` section says."""
    if config.timeoff is None:
        raise ConfigError(f"{config.path.name} has no [timeoff] section: it describes a staff import")
    settings = TimeOffSettings.from_mapping(config.timeoff, config.path.name)
    mapping = settings.import_mapping(config.timeoff)
    table, mapped, problems, timings = read_map_validate(config, path, mapping)
    return PreparedTimeOff(table, mapped, settings, problems, timings)


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
) -> RunResult:
    """Import one time-off export; one outcome per source row (never raises for a bad row).

    ``target.client`` None means no network: totals are neither filled nor checked and nothing is sent
    (``hrimport timeoff validate``). ``dry_run`` with a client asks the calculation endpoint (read-only)
    but posts nothing. The ledger is ``config.state_dir``'s unless one is given; ``use_ledger=False``
    skips it. ``on_outcomes`` gets each record posted as the service answers it.
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
                    start_cell=_cell(mapped.carried, "half_start", pos), end_cell=_cell(mapped.carried, "half_end", pos),
                    day_cell=_cell(mapped.carried, "half_day", pos),
                    one_day=cells["start_date"][pos] == cells["end_date"][pos],
                )
            except HalfDayError as exc:
                column = mapped.carried_sources.get(exc.which)
                found.append(Problem(exc.code, f"Row {row}, column '{column}': {exc.message}.", row, column,
                                     exc.which, _cell(mapped.carried, exc.which, pos)))
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
    client = target.client  # None: offline (validate), nothing asked or sent
    offline = client is None
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
        unanswered: dict[LedgerKey, LedgerEntry] = {}  # sent by an earlier run whose answer was lost
        if ledger is not None:
            known = ledger.find(ledger_key(r) for r in rows)
            for r in rows:
                entry = known.get(ledger_key(r))
                if entry is None:
                    continue
                if not entry.stored:
                    unanswered[entry.key] = entry
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
        if client is None:
            for r in pending:
                r.total_days = r.total_given
                checked = "" if r.total_given else "; total days to be calculated by the service when imported"
                outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.VALID,
                                             message=f"Valid{checked}; not sent.", details=r.details())
            pending = []
        elif pending:
            announce(f"Checking the total days of {len(pending):,} rows with the service")
            pending = settle_totals(pending, client, workers=workers, policy=prep.settings.total_days,
                                    sources=mapped.field_sources, outcomes=outcomes, notes=notes)
        timings["total_days"] = time.perf_counter() - t

        # -- post -----------------------------------------------------------------------------------------
        t = time.perf_counter()
        if dry_run:
            for r in pending:
                outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.VALID, tuple(r.warnings),
                                             message=f"Valid; would be sent with total_days {r.total_days} "
                                                     "(dry run).", details=r.details())
        if pending and not dry_run:
            assert client is not None  # rows are only pending here when totals were settled online
            announce(f"Sending {len(pending):,} rows")
            posted = post_time_off(client, pending, customer_id=customer_id,
                                   ledger=ledger, ledger_key=ledger_key, unanswered=unanswered,
                                   source_file=prep.table.info.name,
                                   concurrency=workers, on_outcomes=on_outcomes,
                                   progress=(lambda n: progress(n, len(pending))) if progress else None)
            position = {row: pos for pos, row in enumerate(mapped.row_numbers)}
            for o in posted:
                outcomes[position[o.row]] = o
        timings["submit"] = time.perf_counter() - t

    names = _person_names(prep, cells["customer_system_id"], config.state_dir,
                          None if offline else target.service_key, customer_id)
    for pos, o in outcomes.items():
        o.name = names[pos]
    return finish_run("timeoff", config, target, prep.table, mapped, outcomes.values(), started=started, t0=t0,
                      timings=prep.timings, dry_run=dry_run or target.client is None, notes=notes)


def _cell(cells: dict[str, list[str]], key: str, pos: int) -> str:
    return cells[key][pos] if key in cells else ""


def _person_names(prep: PreparedTimeOff, ids: list[str], state_dir: Path, service: str | None,
                  customer_id: str) -> list[str]:
    """Each row's name for the report (never sent): the file's name column (``[timeoff] name``, else a column
    headed as ``schemas/name_headers.toml`` lists), else the name the platform accepted for that external id
    in a staff import (the state folder), else the external id."""
    in_file = prep.mapped.carried.get("name") or _name_column(prep.table) or [""] * len(ids)
    accepted: dict[str, str] = {}
    unnamed = list(dict.fromkeys(ext for ext, name in zip(ids, in_file) if ext and not name))
    if unnamed and service and (state_dir / STATE_FILE).exists():
        try:
            with StateStore.open(state_dir) as state:
                accepted = state.names(service, customer_id, unnamed)
        except ConfigError:
            pass  # names are a courtesy of the report: an unreadable state folder costs only them
    return [name or accepted.get(ext) or ext for ext, name in zip(ids, in_file)]


def _name_column(table: SourceTable) -> list[str] | None:
    """The cells of the file's first column headed as a name, trimmed; None when it has none."""
    known = name_headers()
    for column in table.frame.columns:
        if normalize_header(unicodedata.normalize("NFKC", str(column))) in known:
            return [str(v).strip() for v in table.frame[column].fillna("").tolist()]
    return None
