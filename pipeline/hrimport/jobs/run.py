"""``run_job``: a job's steps in order under its lock, each remembered in the state, then the e-mail.

``run_job`` makes the run's folder and log, runs each step (find the source file, refuse it when it holds
an export the step imported before its last one, or when older than the step's ``max_source_age_days``
(``hrimport.jobs.freshness``), skip it if already imported, import it and write its report with
``import_file``, the single commands' use case, and remember it), writes ``run.json``, prunes old run folders
and e-mails the verdict as ``[notify]`` says. A failed step is a ``StepResult``, never raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path

from hrimport.errors import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_REPORT,
    EXIT_SERVICE,
    EXIT_TERMINATED,
    EXIT_UNEXPECTED,
    ConfigError,
    HrimportError,
    JobLockedError,
    StateNotWritten,
    unexpected_error,
)
from hrimport.imports import import_file
from hrimport.jobs.folders import (
    email_pending,
    new_run_folder,
    prune_runs,
    safe_name,
    unfinished_runs,
    write_run_summary,
)
from hrimport.jobs.freshness import no_new_export, older_export, too_old
from hrimport.jobs.jobfile import Job, JobStep, find_source, load_job, read_notify
from hrimport.jobs.late_reports import write_kept_reports
from hrimport.jobs.results import BUG_BETWEEN_STEPS, EXIT_MEANINGS, JobResult, StepResult, StepStatus
from hrimport.jobs.runlog import (
    EMAILED,
    NOT_EMAILED,
    NOT_EMAILED_TO_ALL,
    RUN_LOG,
    SAID,
    STEPS_DONE,
    RunLogNotMade,
    logged_end,
    run_log,
)
from hrimport.listing import sentences
from hrimport.notify import (
    Attachment,
    NotifyError,
    NotifySettings,
    SomeRecipientsRefused,
    send_mail,
    should_notify,
)
from hrimport.outcomes import Progress, RunResult
from hrimport.report.history import OUTCOMES_FILE, job_folder
from hrimport.report.history_page import update_history
from hrimport.report.writer import unreported_runs
from hrimport.service.connection import BASE_URL_SETTINGS, resolve_base_url, resolve_connection
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target, is_sandbox_target
from hrimport.stages import ProgressLog
from hrimport.state.lock import job_lock
from hrimport.state.store import StateStore, file_sha256

__all__ = ["ProgressBar", "load_job_or_tell", "run_job"]

# the name run.log lines have always carried (%(name)s), kept through the split into modules
log = logging.getLogger("hrimport.jobs")

ProgressBar = Callable[[str], AbstractContextManager[Progress | None]]


def load_job_or_tell(path: Path, *, echo: Callable[[str], None] | None = None) -> Job:
    """``load_job``; when the job file or an import config it names has a mistake, but the job's ``[notify]``
    can be read, the e-mail that the run did not start (exit 2), before the ``ConfigError`` is raised: a config
    edited with a mistake must not stop every monthly run with nobody told but cron's log."""
    try:
        return load_job(path)
    except ConfigError as exc:
        found = read_notify(path)
        if found is not None:
            name, notify = found
            result = JobResult(name, datetime.now().astimezone().isoformat(timespec="seconds"), None,
                               error=f"not started: {exc}", error_code=EXIT_INPUT)
            _notify(notify, name, Path(path).absolute(), result, echo or (lambda line: None))
        raise


def run_job(
    job: Job,
    *,
    full: bool = False,
    accept_drift: bool = False,
    new_ledger: bool = False,
    base_url: str | None = None,
    echo: Callable[[str], None] | None = None,
    progress_bar: ProgressBar | None = None,
) -> JobResult:
    """Run every step of ``job`` under its lock; never raises for a failed step (see ``StepResult``).

    ``full`` sends every row and imports again the file the step imported last (never an older export, nor
    one older than ``max_source_age_days``); ``accept_drift`` releases a file the
    drift guard would hold; ``new_ledger`` lets a time-off step send when its ledger went missing (exit 2
    otherwise: ``hrimport.imports.timeoff``); ``base_url`` overrides every step's
    service URL. ``echo`` receives one line per step (the CLI prints it on stderr); ``progress_bar(label)``
    may give a progress callback per step (the CLI's draws a bar on a terminal only). Raises
    ``JobLockedError`` (exit 3) when another run of the job holds the lock, after telling ``[notify]``.
    """
    say = echo or (lambda line: None)
    started = datetime.now().astimezone()
    result = JobResult(job.name, started.isoformat(timespec="seconds"), None)
    try:
        _check_targets(job, base_url)
    except ConfigError as exc:
        result.error, result.error_code = f"not started: {exc}", EXIT_INPUT
        _notify(job.notify, job.name, job.path, result, say)
        raise
    try:
        with job_lock(job.state_dir, job.name):
            _run_locked(job, result, started, full=full, accept_drift=accept_drift, new_ledger=new_ledger,
                        base_url=base_url, say=say, progress_bar=progress_bar)
    except JobLockedError as exc:
        result.error, result.error_code = f"not started: {exc}", EXIT_LOCKED
        _notify(job.notify, job.name, job.path, result, say)
        raise
    except ConfigError as exc:  # the lock, the run's folder or its log cannot be made (a full disk): mailed too
        result.error, result.error_code = f"not started: {exc}", EXIT_INPUT
        _notify(job.notify, job.name, job.path, result, say)
        raise
    return result


def _check_targets(job: Job, base_url: str | None) -> None:
    """Refuse, before anything is done, a step whose base URL cannot be used (a password or a query string
    in it: ``resolve_base_url`` raises), and one that would go to the embedded sandbox when the job file
    does not say ``sandbox = true``: an unattended run whose environment file failed to load must fail, not
    "succeed" on the sandbox."""
    for step in job.steps:
        if resolve_base_url(step.config.service, base_url=base_url) is None and not job.sandbox:
            raise ConfigError(
                f"step {step.name} has no base URL ({step.config.path.name}): set it with {BASE_URL_SETTINGS}; "
                f"a job uses the embedded sandbox only when {job.path.name} says sandbox = true"
            )


def _run_locked(
    job: Job, result: JobResult, started: datetime, *, full: bool, accept_drift: bool, new_ledger: bool,
    base_url: str | None, say: Callable[[str], None], progress_bar: ProgressBar | None,
) -> None:
    """The run itself, under the job's lock: its folder and log, the steps, retention, the e-mail."""
    result.unfinished = unfinished_runs(job)
    result.folder = new_run_folder(job, started)
    try:
        _run_logged(job, result, full=full, accept_drift=accept_drift, new_ledger=new_ledger, base_url=base_url,
                    say=say, progress_bar=progress_bar)
    except RunLogNotMade:
        with contextlib.suppress(OSError):
            result.folder.rmdir()  # empty: no run folder without its log (it would read as a run killed at once)
        result.folder = None
        raise


def _run_logged(
    job: Job, result: JobResult, *, full: bool, accept_drift: bool, new_ledger: bool, base_url: str | None,
    say: Callable[[str], None], progress_bar: ProgressBar | None,
) -> None:
    """The run in its folder, logged to its run.log: the steps, run.json, retention, the e-mail."""
    assert result.folder is not None
    with run_log(result.folder / RUN_LOG, job) as secrets:
        log.info("job %s (%s) started%s", job.name, job.path, " with --full" if full else "")
        for folder in result.unfinished:
            log.warning("%s: %s", _not_finished(folder), folder)
        # the reports earlier runs could not write (a full disk), written where they belong now that there may be
        # room, before this run's steps: its log and e-mail then name only those still kept
        result.kept_runs = write_kept_reports(job_folder(job.report_dir, job.name), unreported_runs(job.state_dir))
        for kept in result.kept_runs:
            log.warning("%s", kept.written() if kept.report is not None else kept.still_kept())
        try:
            state = StateStore.open(job.state_dir)
        except ConfigError as exc:  # its database cannot be opened (a full disk): no step can run; the run ends
            # as any run does (run.json, the e-mail), so that the next one does not take it for a run killed
            result.error, result.error_code = f"not started: {exc}", EXIT_INPUT
            log.error("%s", exc, extra=SAID)
            say(f"Error: {exc}")
        except Exception as exc:  # noqa: BLE001 -- a bug opening it: the same, exit 70 (a step's own is its StepResult)
            _stopped_on_a_bug(result, exc, say)
        else:
            try:
                with state:
                    _run_steps(job, result, state, full=full, accept_drift=accept_drift, new_ledger=new_ledger,
                               base_url=base_url, say=say, progress_bar=progress_bar, secrets=secrets)
            except Exception as exc:  # noqa: BLE001 -- a bug between the steps (a step's own is its StepResult)
                _stopped_on_a_bug(result, exc, say)
        result.finished_at = datetime.now().astimezone().isoformat(timespec="seconds")
        log.info(STEPS_DONE, job.name, result.verdict(), result.exit_code, EXIT_MEANINGS[result.exit_code])
        result.email_pending = _email_due(job.notify, result)
        written = _write_run_summary(result, say)
        # never the folder of a run whose report is still kept (the next run writes it there), nor of one whose
        # report this run wrote (its e-mail attaches it)
        keep = [result.folder, *(k.folder.parent for k in result.kept_runs if k.folder is not None)]
        result.pruned = prune_runs(job.report_dir, job.name, job.retention, keep=keep)
        for folder in result.pruned:
            log.info("removed the old run folder %s (retention %d runs)", folder, job.retention)
        update_history(result.folder)  # after pruning: the job's index.html lists no run that is gone
        _notify(job.notify, job.name, job.path, result, say)
        email_was_due, result.email_pending = result.email_pending, False
        if email_was_due or not written:  # again: now with whether the e-mail went (or once more: pruned, the
            # disk may have room); a run.json written with no e-mail due is the run's whole already
            _write_run_summary(result, say, after_email=email_was_due)


def _stopped_on_a_bug(result: JobResult, exc: Exception, say: Callable[[str], None]) -> None:
    """A run stopped outside its steps by an exception nobody foresaw: said in one line (the traceback in run.log),
    exit 70, and the run ends as any run does (run.json, the e-mail), not as a run killed."""
    line = unexpected_error(exc) + BUG_BETWEEN_STEPS
    log.error("%s", line, exc_info=exc, extra=SAID)
    result.error, result.error_code = line, EXIT_UNEXPECTED
    say(f"Error: {line}")


def _run_steps(
    job: Job, result: JobResult, state: StateStore, *, full: bool, accept_drift: bool, new_ledger: bool,
    base_url: str | None, say: Callable[[str], None], progress_bar: ProgressBar | None, secrets: list[str],
) -> None:
    """Each step in order, its line said and logged; a step after a failure that would meet it again is not run."""
    assert result.folder is not None
    for step in job.steps:
        if any(s.exit_code == EXIT_SERVICE for s in result.steps):
            # the service is down or refuses the token: later steps would only wait out retries
            outcome = StepResult(step.name, step.kind, "not_run", EXIT_OK,
                                 "not run: the service could not be used in an earlier step")
        elif any(s.exit_code in (EXIT_INTERRUPTED, EXIT_TERMINATED) for s in result.steps):
            outcome = StepResult(step.name, step.kind, "not_run", EXIT_OK,
                                 "not run: the run was stopped (Ctrl-C or SIGTERM) in an earlier step")
        elif any(s.status == "state_not_written" for s in result.steps):
            # the run stopped sending there: a later step would only meet the same full disk
            outcome = StepResult(step.name, step.kind, "not_run", EXIT_OK,
                                 "not run: the state folder could not be written in an earlier step")
        elif any(s.status == "unexpected_error" for s in result.steps):
            # a bug: a later step (time off after staff) may rely on what that step did not finish
            outcome = StepResult(step.name, step.kind, "not_run", EXIT_OK,
                                 "not run: hrimport stopped on an unexpected error in an earlier step")
        else:
            outcome = _run_step(job, step, state, full=full, accept_drift=accept_drift, new_ledger=new_ledger,
                                base_url=base_url, secrets=secrets, folder=result.folder, progress_bar=progress_bar)
        result.steps.append(outcome)
        log.info("step %s: %s (exit %d)", step.name, outcome.message, outcome.exit_code)
        say(f"{step.name}: {outcome.message}")


def _write_run_summary(result: JobResult, say: Callable[[str], None], *, after_email: bool = False) -> bool:
    """``run.json``; a folder that cannot take it (a full disk) is said in one line and makes the run exit 6,
    as a step's report not written does, instead of a traceback and exit 1 ("rows need attention"). The
    verdict keeps what the steps did before it (``JobResult.summary_error``). ``after_email``: the run.json
    written before the e-mail says it was due (``email_pending``), so the next run will say this run may not
    have sent it. Whether it was written."""
    try:
        write_run_summary(result)
    except OSError as exc:
        if result.error_code == EXIT_REPORT:
            return False  # said once
        result.error_code = EXIT_REPORT
        if after_email:
            why = (f"the run's summary could not be written to {result.folder} after its e-mail: "
                   f"{exc.strerror or exc}; free space there (its run.json still says the e-mail was due: the "
                   "next run will say this run may not have sent it)")
        else:
            why = (f"the run's summary could not be written to {result.folder}: {exc.strerror or exc}; free "
                   "space there (the steps' lines say what each sent)")
        if result.exit_code == EXIT_REPORT and any(s.exit_code == EXIT_REPORT for s in result.steps):
            pass  # the verdict already says a step's report met the same full disk
        else:
            result.summary_error = why
        log.error("%s", why, extra=SAID)
        say(f"Error: {why}")
        return False
    return True


def _run_step(
    job: Job, step: JobStep, state: StateStore, *, full: bool, accept_drift: bool, new_ledger: bool,
    base_url: str | None, secrets: list[str],
    folder: Path, progress_bar: ProgressBar | None,
) -> StepResult:
    """One step: find the file, refuse an older export or one too old, skip it if already imported, import it,
    write its report."""
    started_at = datetime.now().astimezone().isoformat(timespec="seconds")
    source: Path | None = None
    digest: str | None = None
    try:
        source = find_source(step)
        digest = file_sha256(source)
        log.info("step %s: %s file %s (sha256 %s)", step.name, step.kind, source, digest)
        # --full lifts neither refusal: a cron line with --full must not send May's file over June's, and must
        # still say that the month's export is missing
        superseded = state.superseded(digest, job.name, step.name)
        if superseded:
            older = older_export(step, source, superseded[0])
            return StepResult(step.name, step.kind, "older_export", EXIT_INPUT, f"Error: {older}", source, digest,
                              started_at=started_at, found=older)
        last = state.last_import(job.name, step.name)
        imported = last if last is not None and last.sha256 == digest else None
        refused = too_old(step, source, imported, job.path)
        if refused is not None:
            return StepResult(step.name, step.kind, "too_old", EXIT_INPUT, f"Error: {refused}", source, digest,
                              started_at=started_at, found=refused)
        if not full and imported is not None:
            found = no_new_export(step, source, imported)
            return StepResult(step.name, step.kind, "already_imported", EXIT_OK,
                              f"no new export: {found}; nothing sent (run with --full to import it again)",
                              source, digest, started_at=started_at, found=found)
        # the job's state folder holds everything a step remembers (time-off ledger included)
        config = dataclasses.replace(step.config, state_dir=job.state_dir)
        conn = resolve_connection(config.service, base_url=base_url)
        secrets.append(conn.token)
        bar = progress_bar(f"{step.name}: sending") if progress_bar else _no_progress()
        with bar as progress:
            # and in run.log, how far the sending is, now and then: a long send is seen to move
            logged = ProgressLog(step.name, progress)
            run = import_file(config, source, kind=step.kind, connection=conn, state=state,
                              skip_unchanged=not full, accept_drift=accept_drift, new_ledger=new_ledger,
                              report_folder=folder / safe_name(step.name), progress=logged)
        assert run.report is not None
        if _took_effect(run.result):
            # whole: the next run skips this file as already imported; in part, it tries the rows again, but
            # either way the file is one of this step's exports, never to be sent over a later one
            state.record_import(job.name, step.name, digest, source, whole=run.exit_code == EXIT_OK)
        url = run.result.info.service_url
        where = (", on the embedded sandbox, not the platform" if url == EMBEDDED_SANDBOX else
                 f", on the {describe_target(url)}, not the platform" if is_sandbox_target(url) else "")
        message = f"{run.result.verdict()} ({source.name}{where}); report {run.report.html}"
        if run.result.info.held:  # why, with its examples: in the step's line (cron's log, the e-mail's body)
            message += ". Why: " + sentences(run.result.info.held)
        gone = run.result.info.no_longer_in_export
        if gone:  # the run's note, shortened: cron's log and the e-mail's body name it beside the rows
            message += (f". No longer in the export: {gone:,} leave{'s' if gone != 1 else ''} imported before (the "
                        "report lists each: cancel it on the platform if it was cancelled or moved, then mark it "
                        "with hrimport timeoff mark-cancelled)")
        return StepResult(step.name, step.kind, "imported", run.exit_code, message, source, digest, run.result,
                          run.report, started_at=started_at)
    except HrimportError as exc:
        log.error("step %s: %s", step.name, exc, extra=SAID)
        status: StepStatus = "state_not_written" if isinstance(exc, StateNotWritten) else "error"
        return StepResult(step.name, step.kind, status, exc.exit_code, f"Error: {exc}", source, digest,
                          started_at=started_at)
    except OSError as exc:  # e.g. the source file vanished or became unreadable between find and read
        log.error("step %s: %s", step.name, exc, extra=SAID)
        return StepResult(step.name, step.kind, "error", EXIT_INPUT,
                          f"Error: cannot read {exc.filename or source}: {exc.strerror}", source, digest,
                          started_at=started_at)
    except Exception as exc:  # a bug of ours or a library's error never met: the run ends as any run does
        # (run.json, the e-mail, exit 70), where a traceback ended it with exit 1 ("rows need attention")
        # and no run.json, which the next run told as a run killed
        what = f"{unexpected_error(exc)} in the {step.name} step"  # the verdict's what happened (``found``)
        line = f"{what}: this is a bug in hrimport; its traceback is in run.log"
        journal = folder / safe_name(step.name) / OUTCOMES_FILE
        if journal.is_file():  # rows were done before it (hrimport.imports keeps a journal only when it holds some)
            line += (f"; each row's outcome before it is in the step's journal {journal}, and what the service "
                     "accepted is remembered in the state folder, so the next run does not send it again")
        log.error("step %s: %s", step.name, line, exc_info=exc, extra=SAID)
        return StepResult(step.name, step.kind, "unexpected_error", EXIT_UNEXPECTED,
                          f"Error: {line}; report it with run.log", source, digest, started_at=started_at, found=what)


def _took_effect(result: RunResult) -> bool:
    """Whether the platform now holds rows of this file as it has them: one row added, updated or found as
    the platform already had it, in a run that was not held by the drift guard (which sent nothing)."""
    return not result.info.held and result.imported > 0


@contextmanager
def _no_progress() -> Iterator[None]:
    yield None


def _notify(notify: NotifySettings | None, name: str, path: Path, result: JobResult,
            say: Callable[[str], None]) -> None:
    """E-mail the verdict of the job ``name`` (its file ``path``) when its ``[notify]`` says so; a failure is
    logged and said, never raised."""
    if notify is None or not _email_due(notify, result):
        return
    steps = [s.report for s in result.steps if s.report is not None]
    # two steps both have a report.html: each named after its step; an earlier run's report written by this run (its
    # disk was full: HR never had it) always after that run and its step
    reports = [("" if len(steps) == 1 else f"{report.folder.name}-", report) for report in steps]
    reports += [(f"{k.report.folder.parent.name}-{k.report.folder.name}-", k.report)
                for k in result.late_reports if k.report is not None]
    attachments: list[Attachment] = []
    for prefix, report in reports:
        # a page too big for the e-mail (every row of a big month) gives its place to the workbook of the same rows
        attachments.append(Attachment(prefix + report.html.name, report.html,
                                      stand_in=Attachment(prefix + report.xlsx.name, report.xlsx)))
        if report.to_fix is not None:
            attachments.append(Attachment(prefix + report.to_fix.name, report.to_fix))
    subject = f"{name}: {result.headline()} (exit {result.exit_code})"
    lines = [f"hrimport job {name!r} ({path}), started {_shown_time(result.started_at)}.", ""]
    lines += [f"- {s.name}: {s.message}" for s in result.steps]
    lines += [error for error in (result.error, result.summary_error) if error]
    for folder in result.unfinished:
        if email_pending(folder) is not None:  # its steps finished: this run did nothing in its place
            note = f"Note: {_not_finished(folder)}. Its folder: {folder}"
        else:
            note = (f"Note: {_not_finished(folder)}; the lines above say what this run did in its place (nothing "
                    f"is stored twice). Its folder: {folder}")
        lines += ["", note]
    lines += [line for kept in result.kept_runs
              for line in ("", f"Note: {kept.written() if kept.report is not None else kept.still_kept()}")]
    lines += ["", f"Exit code {result.exit_code}: {EXIT_MEANINGS[result.exit_code]}."]
    if result.folder is not None:
        lines.append(f"Report folder: {result.folder} (log: {RUN_LOG}).")
    t = time.perf_counter()
    try:
        send_mail(notify, subject, "\n".join(lines) + "\n", attachments)
    except SomeRecipientsRefused as exc:  # sent all the same: the others have it
        result.notified, result.notify_error = True, str(exc)
        log.error(NOT_EMAILED_TO_ALL, exc, extra=SAID)
        say(f"Error: e-mail not sent to every recipient: {exc}")
        return
    except (NotifyError, ConfigError) as exc:
        result.notify_error = str(exc)
        log.error(NOT_EMAILED, exc, extra=SAID)
        say(f"Error: e-mail not sent: {exc}")
        return
    result.notified = True
    log.info(EMAILED, ", ".join(notify.to), time.perf_counter() - t)


def _email_due(notify: NotifySettings | None, result: JobResult) -> bool:
    """Whether ``[notify]`` wants this run's verdict e-mailed."""
    # a run that did not finish sent no e-mail: under "attention", the next one is due, clean or not (a run killed
    # on the 1st, by the OOM killer or a reboot, would otherwise be known to no one)
    # and leave imported before that an export no longer lists is news though every row is fine (exit 0): still on
    # the platform, it is paid as leave until HR cancels it
    # and an earlier run's report this run wrote: HR never had it (its run could not write it)
    return should_notify(notify, result.exit_code) or (
        notify is not None and notify.when == "attention"
        and (bool(result.unfinished) or result.no_longer_in_export > 0 or bool(result.late_reports)))


def _shown_time(iso: str) -> str:
    """``2024-06-01 06:15 (UTC+02:00)``: a run's ISO 8601 start as a person reads it, to the minute."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    zone = when.strftime("%z")
    return when.strftime("%Y-%m-%d %H:%M") + (f" (UTC{zone[:3]}:{zone[3:]})" if zone else "")


def _not_finished(folder: Path) -> str:
    """What a run folder without its run.json, or whose run.json says its e-mail was due, says, from its name
    (its start), that run.json and its run.log."""
    started = datetime.strptime(folder.name[:17], "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")
    pending = email_pending(folder)
    if pending is None:
        end = logged_end(folder / RUN_LOG)
        if end is not None and end.cut:  # the log stopped mid-line: not a kill, which lands between two lines
            return (f"the run started {started} did not finish, or could not write its folder (its run.log is cut: "
                    "the machine stopped, or its disk was full), so whether it sent its e-mail is unknown")
        return f"the run started {started} did not finish (killed, or the machine stopped), so it sent no e-mail"
    verdict = ", ".join(part for part in (pending.verdict, None if pending.exit_code is None
                                          else f"exit {pending.exit_code}") if part)
    if pending.email_error is not None and pending.summary_written:  # its run.json or run.log says why
        return (f"the run started {started} finished its steps ({verdict}) but did not send its e-mail (e-mail not "
                f"sent: {pending.email_error})")
    if pending.email_error is not None:  # its run.log says the e-mail failed, and why: no doubt about it
        return (f"the run started {started} finished its steps ({verdict}) but did not send its e-mail (its run.log "
                f"says: e-mail not sent: {pending.email_error}), and its run.json could not be written")
    if not pending.summary_written:
        # its run.json written neither before the e-mail nor after: its run.log says the steps were done, not
        # whether the e-mail went (it would say so if it had, unless the log stopped there too)
        return (f"the run started {started} finished its steps ({verdict}) but its run.json could not be written, "
                "so whether it sent its e-mail is unknown")
    # killed as it sent the e-mail, or its run.json not written again once it had: whether the e-mail went is
    # not known (the relay may have taken it), only that the steps finished, and with what verdict
    return (f"the run started {started} finished its steps ({verdict}) but may not have sent its e-mail (killed "
            "while sending it, or its run.json could not be written after it)")
