"""Run folders: one per run under ``report_dir/<job>/``, its ``run.json``, and retention (``prune_runs``).

A folder is named by the run's start time, so names sort in run order; ``run.json`` marks it as made by
``hrimport run``, and only such folders are ever pruned.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hrimport.errors import ConfigError
from hrimport.jobs.jobfile import Job
from hrimport.jobs.results import EXIT_MEANINGS, JobResult
from hrimport.jobs.runlog import RUN_LOG, logged_end
from hrimport.private_files import safe_segment, written_whole
from hrimport.report.history import RUN_JSON, is_run_folder, job_folder, run_order
from hrimport.report.writer import default_report_folder, new_report_folder

__all__ = ["RUN_SUMMARY", "PendingEmail", "email_pending", "new_run_folder", "prune_runs", "safe_name",
           "unfinished_runs", "write_run_summary"]

RUN_SUMMARY = RUN_JSON  # marks a folder as a ``hrimport run`` folder: only those are ever pruned


def new_run_folder(job: Job, started: datetime) -> Path:
    """``report_dir/<job>/<YYYY-MM-DD_HHMMSS>/``, with ``-2``, ``-3``... for runs started in the same second."""
    try:
        return new_report_folder(job.report_dir, job.name, started)
    except OSError as exc:
        where = Path(exc.filename) if exc.filename else default_report_folder(job.report_dir, job.name, started)
        raise ConfigError(f"cannot create the report folder {where}: {exc.strerror}; check report_dir "
                          f"in {job.path.name}") from None


def write_run_summary(result: JobResult) -> None:
    """``run.json``: the run in numbers for monitoring, and the mark that lets retention prune the folder."""
    assert result.folder is not None
    data = {
        "job": result.job,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "exit_code": result.exit_code,
        "meaning": EXIT_MEANINGS[result.exit_code],
        "verdict": result.verdict(),
        "embedded_sandbox": result.embedded_sandbox,
        "notified": result.notified,
        "notify_error": result.notify_error,
        "email_pending": result.email_pending,
        "steps": [
            {
                "name": s.name, "kind": s.kind, "started_at": s.started_at or None, "status": s.status,
                "exit_code": s.exit_code,
                "message": s.message, "source": str(s.source) if s.source else None, "sha256": s.sha256,
                "counts": s.result.counts() if s.result else None,
                "report": str(s.report.html) if s.report else None,
            }
            for s in result.steps
        ],
        # the reports of earlier runs (kept when their disk was full) this run wrote where they belong, and the
        # kept outcomes it could not write, still in the state folder
        "late_reports": [{"said": k.written(), "report": str(k.report.html)}
                         for k in result.late_reports if k.report is not None],
        "unreported": [{"said": k.still_kept(), "kept": str(k.kept)} for k in result.unreported],
    }
    # written beside it and renamed over it: a run killed while writing leaves the run.json that was there (or
    # none), never a cut one that would read as finished
    with written_whole(result.folder / RUN_SUMMARY) as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)


def unfinished_runs(job: Job) -> list[Path]:
    """The job's runs since its last finished one that did not finish (a ``run.log``, no ``run.json``): killed,
    or stopped with the machine, they sent no e-mail; and those whose e-mail was due and is not known to have gone,
    or could not be sent (``email_pending``): the next e-mail is the first to tell anyone of them. Oldest first; none once a later run has finished, so each is told once. A run whose
    run.json could not be written but whose run.log says its steps were done and its e-mail went has finished."""
    parent = job_folder(job.report_dir, job.name)
    if not parent.is_dir():
        return []
    unfinished: list[Path] = []
    for folder in sorted((p for p in parent.iterdir() if is_run_folder(p)), key=run_order, reverse=True):
        if email_pending(folder) is None:
            if (folder / RUN_SUMMARY).is_file():
                break
            end = logged_end(folder / RUN_LOG)
            if end is not None and end.verdict is not None and end.emailed:
                break
        if (folder / RUN_LOG).is_file():
            unfinished.append(folder)
    return unfinished[::-1]


@dataclass(frozen=True)
class PendingEmail:
    """A run whose e-mail was due and not known to be sent: its steps finished (with this verdict and exit code),
    but it was killed while sending the e-mail, or its run.json could not be written again once it had
    (``summary_written``: the run.json written before the e-mail says so), or not at all (False: its run.log
    says its steps were done); or its run.json or run.log says the e-mail could not be sent (``email_error``,
    why): nobody was told of that run."""

    verdict: str
    exit_code: int | None
    summary_written: bool = True
    email_error: str | None = None


def email_pending(folder: Path) -> PendingEmail | None:
    """The run of ``folder`` as its ``run.json`` left it when that says its e-mail was due (with why it failed when
    its run.log says so), or could not be sent;
    with no run.json, as its run.log left it when that says its steps were done but not that its e-mail went;
    else None."""
    if not (folder / RUN_SUMMARY).is_file():
        # not written (a run killed before it, or both writes failed: the folder's disk full, a folder where
        # the file should be): only the log can tell a run that got to its e-mail from one killed before
        end = logged_end(folder / RUN_LOG)
        if end is None or end.verdict is None or end.emailed:
            return None
        return PendingEmail(end.verdict, end.exit_code, summary_written=False, email_error=end.email_error)
    try:
        data = json.loads((folder / RUN_SUMMARY).read_bytes())
        if data.get("notified") is False and data.get("notify_error"):  # due, tried, and not sent: nobody knows
            return PendingEmail(str(data.get("verdict") or ""), int(data.get("exit_code") or 0),
                                email_error=str(data["notify_error"]))
        if data.get("email_pending") is not True:
            return None
        # run.json could not be written again after the e-mail: its run.log may say the e-mail failed, and why (a
        # log line saying it went is not taken as sure: the disk that stopped run.json may have kept that line)
        end = logged_end(folder / RUN_LOG)
        return PendingEmail(str(data.get("verdict") or ""), int(data.get("exit_code") or 0),
                            email_error=end.email_error if end is not None else None)
    except (OSError, ValueError, TypeError, AttributeError):
        return None  # a run.json this version did not write, or cannot read: as it was, a finished run


def prune_runs(report_dir: Path, job: str, retention: int, *, keep: Collection[Path] = ()) -> list[Path]:
    """Remove this job's run folders beyond the ``retention`` newest; returns the folders removed.

    Only folders that ``hrimport run`` made (named by their start time, holding ``run.json``, or ``run.log``
    alone: a run killed, which the run pruning, under the job's lock, has told) are considered, so nothing
    else under the report folder is ever deleted. A killed run's folder counts as a run: it holds its journal
    and report files, and would otherwise stay for ever. The folders in ``keep`` are never removed (this run's, and
    those of runs whose report, kept in the state folder, is still to be written there).
    """
    parent = job_folder(report_dir, job)
    if not parent.is_dir():
        return []
    runs = sorted((p for p in parent.iterdir()
                   if is_run_folder(p) and ((p / RUN_SUMMARY).is_file() or (p / RUN_LOG).is_file())),
                  key=run_order)
    kept = {p.absolute() for p in keep}
    old = [p for p in runs[:-retention] if p.absolute() not in kept]
    for folder in old:
        shutil.rmtree(folder, ignore_errors=True)
    return old


def safe_name(name: str) -> str:
    """A step name as a folder or file name: letters, digits, ``.``, ``_`` and ``-`` only."""
    return safe_segment(name, "step")
