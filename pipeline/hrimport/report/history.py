"""A job's runs, newest first, read from its report folder: what ``index.html`` and ``hrimport runs`` show.

A job's folder (``reports/<job>/``) holds one folder per run, named by its start time, of two kinds::

    reports/<job>/
        index.html                   the history page (``hrimport.report.history_page``)
        2024-05-01_090000/           ``hrimport staff|timeoff import``: summary.json, report.html, ...
        2024-06-01_061500/           ``hrimport run``: run.json, run.log, and one folder per step
            staff/summary.json ...
        2024-06-01_061500-2/         a second run started in the same second

One ``RunLine`` per report (a run of a two-step job has two lines), from each report's ``summary.json``
(``hrimport.report.summary``) and, for ``hrimport run``, its ``run.json``. A summary that is missing or
cannot be read makes a line saying so, never an error: the history must not be the reason a run fails.
Only counts, verdicts, file names and exit codes are read: never a row's value.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hrimport.errors import ConfigError
from hrimport.listing import one_line
from hrimport.private_files import safe_segment

__all__ = [
    "BUG_NEXT",
    "OUTCOMES_FILE",
    "RUN_JSON",
    "EarlierImports",
    "RunLine",
    "earlier_imports",
    "import_reports",
    "is_run_folder",
    "job_folder",
    "job_folder_of",
    "list_runs",
    "read_runs",
    "report_folders",
    "run_order",
]

RUN_JSON = "run.json"  # what ``hrimport run`` writes in its run folder (``hrimport.jobs.folders``)
SUMMARY_JSON = "summary.json"
REPORT_HTML = "report.html"
_RUN_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}_\d{6}(-\d+)?")
_RUN_LOG = "run.log"
#: A run's outcomes file in its report folder (its journal while it sends); named here, where the light readers
#: of a report folder find it, and used by the writer (``hrimport.report.writer``).
OUTCOMES_FILE = "outcomes.jsonl"
# how the journal's lines begin (``hrimport.outcomes.JOURNAL_START``, ``row_line``), read here without loading them
_JOURNAL_START = b'{"record": "journal"'
_RECORD = b'{"record": '
_ROW_START = b'{"record": "row"'
_STOPPED_START = b'{"record": "stopped"'  # a journal's last line, why hrimport stopped its run (``OutcomeJournal``)
#: What to do after a bug (``hrimport.imports.stops``), and what a journal's ``stopped`` line written without
#: ``next`` (before lines had one: a bug's) asks
BUG_NEXT = "report the bug, and run the import again once it is fixed: nothing is sent twice"


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a run's folder: a real folder named by a start time (``2024-05-01_090000``, with
    ``-2``... for runs started in the same second). Anything else a person puts in the job's folder is not."""
    return _RUN_FOLDER.fullmatch(path.name) is not None and path.is_dir() and not path.is_symlink()


def run_order(folder: Path) -> tuple[str, int]:
    """Sort key of run folders in the order the runs started: ``2024-05-01_090000-2`` ->
    ``("2024-05-01_090000", 2)``, after ``2024-05-01_090000`` and before ``2024-05-01_090000-10``."""
    stamp, suffix = folder.name[:17], folder.name[18:]
    return stamp, int(suffix) if suffix.isdigit() else 1


def job_folder(report_dir: Path, job: str) -> Path:
    """The folder of ``job``'s runs under ``report_dir``: ``report_dir/<job>`` (the job's name made a safe folder
    name)."""
    return report_dir / safe_segment(job, "job")


def job_folder_of(report_folder: Path) -> Path | None:
    """The job's folder a run's report folder sits in: the parent of the run folder (``reports/<job>/<run>``
    of an import, ``reports/<job>/<run>/<step>`` of a ``hrimport run`` step); None for a folder named
    otherwise (``hrimport report ... --output FOLDER``), which belongs to no history."""
    for run in (report_folder, report_folder.parent):
        if _RUN_FOLDER.fullmatch(run.name):
            return run.parent
    return None


@dataclass(frozen=True)
class RunLine:
    """One report of a job's history. Counts are None when the summary could not be read (``problem``)."""

    run: str  # the run folder's name
    started_at: str  # ISO 8601, from the summary or run.json, else the folder's name
    step: str  # the ``hrimport run`` step ("" for an import run by itself)
    kind: str  # "staff", "timeoff", or "" when not known
    file: str  # the source file's name ("" when not known)
    dry_run: bool
    verdict: str
    rows_read: int | None
    imported: int | None
    skipped: int | None  # rows skipped as no record, as the config says: read = imported + skipped + attention
    need_attention: int | None
    exit_code: int | None
    report: str | None  # report.html relative to the job's folder (POSIX), None when there is none
    problem: str = ""  # why the figures are missing: "summary.json is missing", ...


def read_runs(job_folder: Path) -> list[RunLine]:
    """Every run in ``job_folder``, newest first; a run's steps in the order they ran. Empty when the folder
    does not exist."""
    if not job_folder.is_dir():
        return []
    runs = sorted((p for p in job_folder.iterdir() if is_run_folder(p)), key=run_order, reverse=True)
    return [line for run in runs for line in _lines_of_run(run, job_folder)]


def list_runs(job_or_folder: Path) -> tuple[Path, list[RunLine]]:
    """``hrimport runs``: the job's folder and its runs, from a job file (its ``report_dir`` and name), an
    import config (its ``[report]`` folder and job: where ``staff import`` and ``timeoff import`` write) or
    the folder itself (``reports/<job>``). Raises ``ConfigError`` for a path that is none of these."""
    if job_or_folder.is_file():
        # here, not at the top: hrimport.jobs runs imports, whose reports import this module
        from hrimport.config import load_config
        from hrimport.jobs import load_job
        from hrimport.tomlfile import read_toml

        if {"staff", "timeoff"} & set(read_toml(job_or_folder, "job file or import config")):
            report = load_config(job_or_folder).report
            folder = job_folder(report.folder, report.job)
        else:
            job = load_job(job_or_folder)
            folder = job_folder(job.report_dir, job.name)
    elif job_or_folder.is_dir():
        folder = job_or_folder
    else:
        raise ConfigError(f"{job_or_folder} is neither a file nor a folder: give a job file (JOB.toml), an import "
                          "config or a job's report folder (reports/<job>)")
    lines = read_runs(folder)
    if not lines and job_or_folder.is_dir():
        jobs = sorted(p.name for p in folder.iterdir() if p.is_dir() and any(map(is_run_folder, p.iterdir())))
        if jobs:
            raise ConfigError(f"{folder} holds no runs itself but the folders of jobs {', '.join(jobs)}: "
                              f"give one of them, e.g. {folder / jobs[0]}")
    return folder, lines


@dataclass(frozen=True)
class EarlierImports:
    """What a job's earlier imports of one kind to one service and customer did, as their summaries say."""

    runs: int  # imports (not dry runs) of which the service took rows (added, updated, unchanged, found imported)
    added: int  # rows they added
    last: Path  # the newest one's summary.json


def import_reports(job_folder: Path, kind: str, target: str, customer_id: str) -> list[tuple[Path, dict[str, Any]]]:
    """The report folders in ``job_folder`` (both layouts: an import's run folder, a ``hrimport run`` step's) of
    ``kind`` imports ("staff" or "timeoff"), not dry runs, that sent rows to ``target``
    (``hrimport.service.urls.describe_target`` of the service URL, as summary.json writes it) for ``customer_id``
    and of which the service took some (its ``imported`` count), oldest first, each with its summary. A summary
    that cannot be read is passed over."""
    found: list[tuple[Path, dict[str, Any]]] = []
    if not job_folder.is_dir():
        return found
    for run in sorted((p for p in job_folder.iterdir() if is_run_folder(p)), key=run_order):
        for summary in [run / SUMMARY_JSON, *sorted(run.glob(f"*/{SUMMARY_JSON}"))]:
            data, _ = _read_json(summary)
            if (data is None or data.get("kind") != kind or data.get("dry_run") is not False
                    or data.get("target") != target or str(data.get("customer_id")) != customer_id):
                continue
            if _int(data, "imported"):
                found.append((summary.parent, data))
    return found


def report_folders(job_folder: Path) -> list[Path]:
    """Every report folder in ``job_folder`` (an import's run folder, a ``hrimport run`` step's) that holds an
    outcomes file, whether its run finished or not, oldest run first."""
    if not job_folder.is_dir():
        return []
    runs = sorted((p for p in job_folder.iterdir() if is_run_folder(p)), key=run_order)
    return [folder for run in runs for folder in [run, *sorted(p for p in run.iterdir() if p.is_dir())]
            if (folder / OUTCOMES_FILE).is_file()]


def earlier_imports(job_folder: Path, kind: str, target: str, customer_id: str) -> EarlierImports | None:
    """What the job's earlier ``kind`` imports to ``target`` for ``customer_id`` did (``import_reports``); None
    when there are none."""
    reports = import_reports(job_folder, kind, target, customer_id)
    if not reports:
        return None
    added = sum(_int(counts, "added") or 0 for _, data in reports if isinstance(counts := data.get("counts"), dict))
    return EarlierImports(len(reports), added, reports[-1][0] / SUMMARY_JSON)


def _lines_of_run(run: Path, job_folder: Path) -> list[RunLine]:
    try:
        if (run / RUN_JSON).exists() or (run / _RUN_LOG).exists():
            return _job_run_lines(run, job_folder)
        return [_report_line(run, run, job_folder, step="")]
    except OSError as exc:  # a folder this user may not list
        return [_bare_line(run, {}, problem=f"the run's folder cannot be read: {exc.strerror or exc}")]


def _job_run_lines(run: Path, job_folder: Path) -> list[RunLine]:
    """A ``hrimport run`` folder: a line per step from run.json, with each report's own summary; while the
    run goes on (or when it was killed) run.json is not written yet, and the steps' folders say what ran."""
    data, problem = _read_json(run / RUN_JSON)
    steps = data.get("steps") if data is not None else None
    if isinstance(steps, list) and steps:
        return [_step_line(run, step, data or {}, job_folder) for step in steps if isinstance(step, dict)]
    if data is not None:  # stopped before any step (a config error): run.json says why
        return [_bare_line(run, data, problem="")]
    folders = sorted(p for p in run.iterdir() if p.is_dir() and not p.is_symlink())
    if folders:
        lines = [_report_line(p, run, job_folder, step=p.name) for p in folders]
        # in the order the steps ran, as for a finished run (step names need not sort that way): by the start
        # in each summary, and last the step that was killed, which wrote none
        return sorted(lines, key=lambda line: (line.rows_read is None, line.started_at))
    return [_bare_line(run, {}, problem=problem)]


def _step_line(run: Path, step: dict[str, Any], data: dict[str, Any], job_folder: Path) -> RunLine:
    name = _text(step, "name")
    report = step.get("report")
    if isinstance(report, str) and report:
        # the step's folder by its name in run.json's path: right even when the reports were moved
        return _report_line(run / Path(report).parent.name, run, job_folder, step=name)
    own = run / safe_segment(name, "step")
    if name and (own / SUMMARY_JSON).is_file():
        # its report was written after the run (kept when its disk was full, written by a later run): shown as
        # the report says, where run.json still says it could not be written
        return _report_line(own, run, job_folder, step=name)
    source = step.get("source")
    # when the step itself began (a step that sent nothing has no summary), else the run's start
    started_at = _text(step, "started_at") or _text(data, "started_at") or _started_from_name(run)
    return RunLine(
        run=run.name, started_at=started_at, step=name, kind=_text(step, "kind"),
        file=Path(source).name if isinstance(source, str) else "", dry_run=False, verdict=_text(step, "message"),
        rows_read=None, imported=None, skipped=None, need_attention=None, exit_code=_int(step, "exit_code"),
        report=None,
    )


def _report_line(folder: Path, run: Path, job_folder: Path, *, step: str) -> RunLine:
    """The line of one report folder, from its summary.json."""
    summary, problem = _read_json(folder / SUMMARY_JSON)
    if summary is not None and _int(summary, "rows_read") is None:
        summary, problem = None, f"{SUMMARY_JSON} cannot be read: it is not a run's summary"
    if summary is None and not (folder / SUMMARY_JSON).exists():
        # no summary yet: a run killed (or still sending), or stopped while writing its report
        journal, stopped = _without_summary(folder)
        summary, problem = journal or {}, stopped or problem
    summary = summary or {}
    html = folder / REPORT_HTML
    source = summary.get("source")
    return RunLine(
        run=run.name,
        started_at=_text(summary, "started_at") or _started_from_name(run),
        step=step,
        kind=_text(summary, "kind"),
        file=_text(source, "name") if isinstance(source, dict) else "",
        dry_run=summary.get("dry_run") is True,
        verdict=_text(summary, "verdict"),
        rows_read=_int(summary, "rows_read"),
        imported=_int(summary, "imported"),
        skipped=_skipped(summary),
        need_attention=_int(summary, "need_attention"),
        exit_code=_int(summary, "exit_code"),
        report=html.relative_to(job_folder).as_posix() if html.is_file() else None,
        problem=problem,
    )


def _without_summary(folder: Path) -> tuple[dict[str, Any] | None, str]:
    """What a report folder without its summary.json says of its run, from its outcomes file: the journal's
    first line (kind, source, start) and why there is no report, in words for the page; ``(None, "")`` when
    that file says nothing (absent, unreadable). The rows answered are the journal's whole lines, as
    ``hrimport report`` counts them: a last line without its line break was cut as it was appended (a kill, a
    power cut), and is not an answer; a line that is not a row's with lines after it is damage, said so. A
    journal whose last line says why its run stopped (a full disk, a refused token, a signal, a bug:
    ``hrimport.imports.stops``) is told so, with what to do."""
    outcomes = folder / OUTCOMES_FILE
    try:
        with outcomes.open("rb") as fh:
            head = fh.readline()
            if head and not head.endswith(b"\n") and _JOURNAL_START.startswith(head[:len(_JOURNAL_START)]):
                first: Any = {"record": "journal"}  # cut in its first line: nothing more is known of the run
            else:
                first = json.loads(head)
            answered, damaged, why, next_step = 0, 0, "", ""
            for number, line in enumerate(fh, 2):
                if not line.endswith(b"\n"):
                    break  # cut as it was appended
                # the line saying why hrimport stopped the run is the last: nothing whole follows it
                if line.startswith(_ROW_START) and line.endswith(b"}\n") and line.count(_RECORD) == 1 and not why:
                    answered += 1
                    continue
                stopped = None if why or not line.startswith(_STOPPED_START) else _stopped_why(line)
                if stopped:
                    why, next_step = stopped
                elif not damaged:
                    damaged = number
    except (OSError, ValueError):
        return None, ""
    if not isinstance(first, dict):
        return None, ""
    if first.get("record") == "run":  # the whole run was written, then the report was not
        return None, (f"{SUMMARY_JSON} is missing: the run stopped while writing its report; "
                      f"hrimport report {outcomes} writes it again")
    if first.get("record") != "journal":
        return None, ""
    source = first.get("source")
    journal = {"kind": first.get("kind"), "started_at": first.get("started_at"),
               "source": {"name": Path(source).name} if isinstance(source, str) else None}
    if damaged:
        return journal, (f"no report: the run was stopped before it finished, and its journal, {OUTCOMES_FILE}, is "
                         f"damaged (its line {damaged} is not a whole record); run the import again: nothing is "
                         "sent twice")
    if why:
        return journal, (f"no report: {why}; the {answered:,} rows the service answered are in its journal, "
                         f"{OUTCOMES_FILE}; {next_step}")
    return journal, (f"no report: the run was stopped before it finished (or is still sending); the "
                     f"{answered:,} rows the service answered are in its journal, {OUTCOMES_FILE}; run the import "
                     "again: nothing is sent twice")


def _skipped(summary: dict[str, Any]) -> int | None:
    """The rows a summary's run skipped as no record; 0 for a summary written before runs could skip a row (it
    has no ``skipped``, and its rows read are its rows imported and needing attention), None without figures."""
    skipped = _int(summary, "skipped")
    if skipped is None and _int(summary, "rows_read") is not None and "skipped" not in summary:
        return 0
    return skipped


def _stopped_why(line: bytes) -> tuple[str, str] | None:
    """Why a journal's ``stopped`` line says its run stopped, and what to do, each in one line; None for a line
    that is not a whole such record. A line without ``next`` was written for a bug, before lines had one."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    why, next_step = record.get("why"), record.get("next")
    if not isinstance(why, str) or not why.strip():
        return None
    if not isinstance(next_step, str) or not next_step.strip():
        next_step = BUG_NEXT
    return one_line(why, None), one_line(next_step, None)


def _bare_line(run: Path, data: dict[str, Any], *, problem: str) -> RunLine:
    return RunLine(
        run=run.name, started_at=_text(data, "started_at") or _started_from_name(run), step="", kind="",
        file="", dry_run=False, verdict=_text(data, "verdict"), rows_read=None, imported=None, skipped=None,
        need_attention=None, exit_code=_int(data, "exit_code"), report=None, problem=problem,
    )


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in ``path``, or None and why not, in words for the page."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, f"{path.name} is missing"
    except OSError as exc:
        return None, f"{path.name} cannot be read: {exc.strerror}"
    except ValueError:
        return None, f"{path.name} cannot be read: it is not JSON"
    if not isinstance(data, dict):
        return None, f"{path.name} cannot be read: it is not a JSON object"
    return data, ""


def _text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _started_from_name(run: Path) -> str:
    try:
        return datetime.strptime(run.name[:17], "%Y-%m-%d_%H%M%S").isoformat()
    except ValueError:
        return ""
