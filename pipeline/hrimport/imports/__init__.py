"""The use cases: import one file and write its report, the one step every command runs.

``import_file(config, source)`` is the whole of "import this export": it takes the state folder's lock
where the import keeps a ledger, connects to the service (or stays offline), runs the staff or time-off
import, writes the report, and returns the run and its report's files. ``hrimport staff|timeoff
import|validate``, ``hrimport run`` and the demo all call it, so whatever an import must do (a plan of
changes, guards, checks after writing) is added here once.

The two compositions sit side by side and only compose stages (read, map, validate, send, close):

- ``staff``: ``prepare_staff`` (no network) and ``import_staff``;
- ``timeoff``: ``prepare_timeoff`` and ``import_timeoff``;
- ``runs``: what both share: reading, mapping and validating the source as the config says
  (``read_map_validate``), closing a run (``finish_run``);
- ``lookups``: the read-only use cases, ``count_leave_days`` and ``list_customers``.

Example::

    run = import_file(load_config(Path("samples/bamboohr_staff.toml")), Path("samples/bamboohr_staff.csv"))
    run.result.verdict(), run.report.html
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hrimport.config import ImportConfig
from hrimport.errors import ConfigError, HrimportError, ReportNotWritten, name_journal
from hrimport.outcomes import OutcomeJournal, OutcomesDone, Progress, RunResult
from hrimport.private_files import make_private_folder
from hrimport.service.connection import Connection, Target, open_target, resolve_connection

if TYPE_CHECKING:
    from hrimport.report import ReportFiles
    from hrimport.state.store import StateStore

__all__ = ["FileImport", "ImportKind", "import_file"]

ImportKind = Literal["staff", "timeoff"]


@dataclass
class FileImport:
    """One file's import: every row's outcome (``result``) and the report written for it (None when
    only validated)."""

    result: RunResult
    report: ReportFiles | None = None

    @property
    def exit_code(self) -> int:
        return self.result.exit_code


def import_file(
    config: ImportConfig,
    source: Path,
    *,
    kind: ImportKind | None = None,
    validate_only: bool = False,
    dry_run: bool = False,
    base_url: str | None = None,
    connection: Connection | None = None,
    target: Target | None = None,
    state: StateStore | None = None,
    skip_unchanged: bool = False,
    accept_drift: bool = False,
    batch_size: int | None = None,
    concurrency: int | None = None,
    report_dir: Path | None = None,
    report_folder: Path | None = None,
    progress: Progress | None = None,
    chunk_rows: int | None = None,
    new_ledger: bool = False,
) -> FileImport:
    """Import ``source`` as ``config`` describes and write the report; never raises for a bad row.

    - ``kind``: "staff" or "timeoff"; by default the config's own section (a config has one of them).
    - ``validate_only``: read, map and check every row, no network, no lock, no report
      (``hrimport staff|timeoff validate``). ``dry_run``: everything but sending, report included (a
      time-off dry run still asks the calculation endpoint, which only reads).
    - Where to send: an open ``target`` (the demo's sandbox), else ``connection``, else the one
      ``resolve_connection`` finds from ``base_url``, the config and the environment.
    - ``state``: the state folder's memory of what the platform accepted (``hrimport run`` passes its own;
      by default the config's ``state_dir`` is opened when staff rows are sent), updated with every staff
      row the platform accepts; a staff dry run reads an existing one, for its plan. A staff import with a
      state has a plan (``hrimport.changes``) and the drift guard, which holds a suspicious file (nothing
      sent, exit 5) unless ``accept_drift``. With ``skip_unchanged`` (``hrimport run`` without ``--full``)
      a row the platform last accepted exactly as it is now is not sent again. A staff file that holds an
      export a job step of the state folder imported before that step's last import is sent all the same (a
      person's command is their decision; ``hrimport run`` refuses it before calling this), with a note
      saying so.
    - The report goes to ``report_folder``, else a dated folder under ``report_dir`` (default: the
      config's ``[report] folder``).
    - ``chunk_rows``: the file is read, mapped and validated this many rows at a time (default
      ``hrimport.imports.runs.CHUNK_ROWS``); the outcome is the same whatever it is.
    - ``new_ledger``: a time-off import whose ledger knows nothing of what the job's earlier imports (in its
      report folder) sent stops (exit 2: the state folder was lost or moved); with it, it sends all the same.

    Raises ``HrimportError`` subclasses for what stops the whole file: a bad config or file (exit 2),
    the time-off ledger held by another import (3), a service that cannot be used (4).
    """
    kind = kind or _kind_of(config)
    unremembered = ""
    made: list[Path] = []  # folders this call made, deepest first: removed again if the run stops early
    journal: OutcomeJournal | None = None
    journal_path: Path | None = None
    if not validate_only:
        # before anything is sent: a report folder that cannot be made is a config problem, said in one line;
        # the run's outcomes go into it as rows finish (its journal), so a run killed half way leaves a record
        from hrimport.report.history import OUTCOMES_FILE

        made, report_folder = _make_report_folder(report_dir, report_folder, config)
        journal_path = report_folder / OUTCOMES_FILE
    # the job's report folder: its earlier imports show a time-off ledger gone missing (imports.timeoff)
    from hrimport.report.history import job_folder_of

    history = job_folder_of(report_folder) if report_folder is not None else None
    try:
        with ExitStack() as stack:
            if validate_only:
                target = Target(None, config.service.customer_id or "", "")
            else:
                if kind == "timeoff":
                    # The ledger's lock: two imports never post from one ledger at once (``hrimport run`` of
                    # another job included); taken before connecting, so a second import fails fast.
                    from hrimport.state.ledger import LEDGER_LOCK
                    from hrimport.state.lock import job_lock

                    stack.enter_context(job_lock(config.state_dir, LEDGER_LOCK,
                                                 running="a time-off import using this state folder's ledger"))
                if kind == "staff" and state is None and dry_run:
                    # a dry run plans against what the platform accepted, and remembers nothing: it opens a
                    # state folder that exists, never makes one
                    from hrimport.state.store import STATE_FILE, StateStore

                    if (config.state_dir / STATE_FILE).exists():
                        try:
                            state = stack.enter_context(StateStore.open(config.state_dir))
                        except ConfigError as exc:
                            unremembered = f"No plan: {exc}."
                elif kind == "staff" and state is None:
                    from hrimport.state.store import StateStore

                    try:
                        state = stack.enter_context(StateStore.open(config.state_dir))
                    except ConfigError as exc:
                        # Remembering is for the next run's benefit: the rows are still sent (the service
                        # updates by external id), and the summary says what is not remembered.
                        unremembered = (
                            f"What the service accepts is not remembered: {exc}; the next `hrimport run` sends "
                            "these rows again. Set state_dir in the config to a folder hrimport may write."
                        )
                if target is None:
                    conn = connection or resolve_connection(config.service, base_url=base_url)
                    if not conn.customer_id:
                        # every row would go out with an empty customer_id and come back refused, one
                        # "problem" per row for HR: it is the config's, said once before anything is sent
                        raise ConfigError(f"no customer id: set customer_id in the [service] table of "
                                          f"{config.path.name}, or $HRIMPORT_CUSTOMER_ID (the company's number)")
                    # a staff dry run needs no service at all; a time-off one asks the calculation endpoint
                    target = stack.enter_context(open_target(conn, offline=dry_run and kind == "staff"))
                if target.client is not None:
                    from hrimport.interrupts import stop_sending_on_signals

                    stack.enter_context(stop_sending_on_signals(target.client))
                # opened once the service is known, before anything is sent: its first line names the service
                # and customer as the state folder keys them, so that the journal of a run killed on a sandbox is
                # never read as what production holds (``hrimport.imports.stopped_runs``)
                assert journal_path is not None
                journal = OutcomeJournal(journal_path, kind=kind, job=config.report.job, source=source,
                                         started_at=datetime.now().astimezone().isoformat(timespec="seconds"),
                                         service=target.keyed_as, customer_id=target.customer_id)
            result = _run(kind, config, source, target, validate_only=validate_only, dry_run=dry_run, state=state,
                          skip_unchanged=skip_unchanged, accept_drift=accept_drift, batch_size=batch_size,
                          concurrency=concurrency, progress=progress, chunk_rows=chunk_rows,
                          on_outcomes=journal.add if journal is not None else None, new_ledger=new_ledger,
                          history=history, current=report_folder)
            if kind == "staff" and state is not None and not validate_only:
                result.info.notes.extend(_older_export_notes(state, result.info.source.sha256))
            if kind == "staff" and history is not None and (result.info.plan is None or result.info.plan["first_run"]):
                result.info.notes.extend(_state_folder_lost(config, history, result.info.service_url,
                                                            result.info.customer_id))
    except BaseException as exc:
        if journal is not None:
            if not journal.rows:  # nothing happened to any row (a bad file, a refused token): nothing to keep
                journal.close()
                journal.path.unlink(missing_ok=True)
            else:
                _end_journal(journal, exc)
        _remove_if_empty(made)  # a run stopped before its report leaves no empty folders behind
        raise
    if journal is not None:
        journal.close()
    if unremembered:
        result.info.notes.append(unremembered)
    if validate_only:
        return FileImport(result)
    assert report_folder is not None
    folder = report_folder
    # the writers (jinja2, xlsxwriter) load only for a run that writes a report: not for validate, nor for
    # the read-only lookups beside this module (leave-days, customers)
    from hrimport.report import write_report
    from hrimport.report.history_page import update_history

    try:
        report = write_report(result, folder)
    except OSError as exc:
        raise _report_not_written(result, folder, config.state_dir, exc, journal) from None
    except BaseException as exc:
        if journal is not None:  # the journal, whole, unless the run's outcomes were written over it
            _end_journal(journal, exc)
        raise
    update_history(report.folder)  # the job's index.html: this run beside the earlier ones
    return FileImport(result, report)


def _end_journal(journal: OutcomeJournal, exc: BaseException) -> None:
    """A run that ``exc`` stopped after rows were done: its journal ends saying why and what to do
    (``hrimport.imports.stops``), for ``hrimport runs``, ``index.html`` and ``hrimport report``; a bug's error
    names the journal, for the command's one line (a known error's own line says where the rows are)."""
    from hrimport.imports.stops import stop_of

    stop = stop_of(exc)
    written = stop is not None and journal.stopped(*stop)
    journal.close()
    if written and isinstance(exc, Exception) and not isinstance(exc, HrimportError):
        name_journal(exc, journal.path)


def _state_folder_lost(config: ImportConfig, history: Path, service_url: str, customer_id: str) -> list[str]:
    """The note of a staff import whose state folder remembers no earlier import (its plan is a first run's), while
    the job's report folder (``history``) holds earlier imports that sent staff to the same service and customer:
    the state folder was lost or moved (a job copied without its dot folder). Nothing is sent twice for it (the
    platform updates people by external id), but the plan and the drift guard compared the file with nothing.
    None for the embedded sandbox, whose people live in the state folder too."""
    from hrimport.imports.ledger_recovery import earlier_imports_to

    earlier = earlier_imports_to(history, "staff", service_url, customer_id)
    if earlier is None:
        return []
    note = (f"The state folder {config.state_dir} remembers no staff import to this service, but {earlier.runs:,} "
            f"earlier import(s) in {history} sent staff there (the last: {earlier.last.parent}): the state folder was "
            "lost or moved. So everyone counts as new in the plan, and the drift guard had no earlier file to compare "
            "this one with; the platform updates people by their external id, so no one is added twice. Bring the "
            "folder back for the next run to compare again.")
    return [note]


def _older_export_notes(state: StateStore, sha256: str) -> list[str]:
    """The note for a file (its bytes' ``sha256``, as the reader hashed them) that holds an export a job step
    imported before its last import: ``This file holds the export imported on 2024-05-01 06:15
    (staff_2024-05.csv; job monthly, step staff), before the last import (staff_2024-06.csv, on 2024-06-01
    06:15): ...``; none for any other file."""
    superseded = state.superseded(sha256)
    if not superseded:
        return []
    older = superseded[0]  # the step whose last import is the latest
    imported, last = older.imported, older.last
    return [(f"This file holds the export imported on {imported.shown_at} ({imported.name}; job {older.job}, step "
             f"{older.step}), before the last import ({last.name}, on {last.shown_at}): what it changes puts that "
             f"older export's values back over newer ones (the plan shows each change).")]


def _report_not_written(result: RunResult, folder: Path, state_dir: Path, exc: OSError,
                        journal: OutcomeJournal | None) -> ReportNotWritten:
    """The one line for a report that could not be written, after keeping the run's outcomes in the state
    folder when that can be written (``hrimport report`` renders them later) and ending the run's journal,
    when it is still there, with why and how to write the report."""
    from hrimport.imports.stops import report_not_written
    from hrimport.report.writer import keep_unreported

    kept = keep_unreported(result, state_dir, folder)  # its report belongs in that folder: recorded
    if journal is not None:
        journal.stopped(*report_not_written(folder, exc, kept))
    sent = ("" if result.info.dry_run else
            " What the service accepted is recorded in the state folder, so the next run does not send it again.")
    later = (f" The run's outcomes are kept in {kept}: `hrimport report {kept} --output FOLDER` writes the report "
             "once there is room." if kept else "")
    return ReportNotWritten(f"the report could not be written to {folder}: {exc.strerror or exc}. "
                            f"{result.verdict()}.{sent}{later}")


def _make_report_folder(report_dir: Path | None, report_folder: Path | None,
                        config: ImportConfig) -> tuple[list[Path], Path]:
    """Create the run's report folder (0700): ``report_folder``, else a new dated one in ``FOLDER/<job>``
    (``new_report_folder``), or raise ``ConfigError``. Returns the folders it made, deepest first, and the
    run's folder."""
    from hrimport.report.writer import default_report_folder, new_report_folder

    folder = report_folder or default_report_folder(report_dir or config.report.folder, config.report.job,
                                                     datetime.now())
    made = [folder, *folder.parents]
    made = made[:next((i for i, p in enumerate(made) if p.exists()), len(made))]
    try:
        if report_folder is not None:
            return made, make_private_folder(report_folder)
        folder = new_report_folder(report_dir or config.report.folder, config.report.job, datetime.now())
        return [folder, *made[1:]], folder
    except OSError as exc:
        setting = ("--report-dir" if report_dir is not None else
                   "the job's report_dir" if report_folder is not None else
                   f"[report] folder in {config.path.name}")
        raise ConfigError(
            f"cannot create the report folder {folder.parent}: {exc.strerror}; set {setting} to a folder you "
            "may write"
        ) from None


def _remove_if_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()  # only ever an empty folder
        except OSError:
            return


def _kind_of(config: ImportConfig) -> ImportKind:
    if config.staff is not None:
        return "staff"
    if config.timeoff is not None:
        return "timeoff"
    raise ConfigError(f"{config.path.name} has neither a [staff] nor a [timeoff] section: nothing to import")


def _run(
    kind: ImportKind, config: ImportConfig, source: Path, target: Target, *, validate_only: bool, dry_run: bool,
    state: StateStore | None, skip_unchanged: bool, accept_drift: bool, batch_size: int | None,
    concurrency: int | None, progress: Progress | None, on_outcomes: OutcomesDone | None, chunk_rows: int | None,
    new_ledger: bool = False, history: Path | None = None, current: Path | None = None,
) -> RunResult:
    if kind == "staff":
        from hrimport.imports.runs import CHUNK_ROWS
        from hrimport.imports.staff import import_staff
        from hrimport.imports.stopped_runs import stopped_sends

        accepted = (state.accepted(target.service_key, config.report.job)
                    if state is not None and not validate_only else None)
        # what the job's runs that stopped before their report sent: told by this run, where it reads unchanged
        stopped = stopped_sends(history, kind, current, target) if accepted is not None else None
        return import_staff(config, source, target, dry_run=dry_run, validate_only=validate_only, batch_size=batch_size,
                            state=accepted, full=not skip_unchanged, accept_drift=accept_drift, progress=progress,
                            concurrency=concurrency, on_outcomes=on_outcomes, chunk_rows=chunk_rows or CHUNK_ROWS,
                            stopped=stopped)
    from hrimport.imports.runs import CHUNK_ROWS
    from hrimport.imports.stopped_runs import stopped_sends
    from hrimport.imports.timeoff import import_timeoff

    # what the job's runs that stopped before their report sent: told by this run, where it reads already imported
    stopped = stopped_sends(history, kind, current, target) if not validate_only else None
    return import_timeoff(config, source, target, dry_run=dry_run, use_ledger=not validate_only,
                          concurrency=concurrency, progress=progress, on_outcomes=on_outcomes,
                          chunk_rows=chunk_rows or CHUNK_ROWS, history=history, new_ledger=new_ledger,
                          stopped=stopped)
