"""What a run did: a ``StepResult`` per step, the ``JobResult`` of the run, and ``EXIT_MEANINGS``.

The run's exit code is the highest of its steps' (and of its own failure, the lock); ``verdict()`` says the
outcome in one line for stderr, the log, ``run.json`` and the e-mail subject (``headline``: with where the
rows went when that was the embedded sandbox).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hrimport.errors import (
    EXIT_HELD,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_REPORT,
    EXIT_ROWS_NEED_ATTENTION,
    EXIT_SERVICE,
    EXIT_TERMINATED,
    EXIT_UNEXPECTED,
)
from hrimport.jobs.jobfile import StepKind
from hrimport.jobs.late_reports import KeptRun
from hrimport.outcomes import Outcome, RunResult
from hrimport.report import ReportFiles
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target, is_sandbox_target

__all__ = ["EXIT_MEANINGS", "JobResult", "StepResult", "StepStatus"]

#: What each exit code means for whoever is on call (also in the README and the e-mail).
EXIT_MEANINGS = {
    EXIT_OK: "nothing to do: everything imported, or no new export since the last import",
    EXIT_ROWS_NEED_ATTENTION: "some rows need attention: send report.html and to_fix to HR; they fix the rows "
    "and the next run imports them (rows that failed on the service's side, outcome failed, need no fixing: "
    "the next run sends them again)",
    EXIT_INPUT: "a usage, config or input-file error (among them an export missing, unreadable, too old, or older "
    "than the last one imported): fix the job file, config or source file it names, then run again",
    EXIT_LOCKED: "another run of the same job is in progress: nothing was done; if that run is stuck, end it "
    "and run again",
    EXIT_SERVICE: "the service was unreachable (or went down mid-run: the report lists the rows not sent) or "
    "refused the token: check the service and the token variable, then run again (nothing is imported twice)",
    EXIT_HELD: "held for review: the drift guard found the file too different from last time (headcount, "
    "missing people, a field changing for many, an emptied column) and sent nothing; check the report, then run "
    "again with --accept-drift if the file is right",
    EXIT_REPORT: "a file of the run could not be written (a full disk, an unwritable folder): a step's report (its "
    "rows were sent; their outcomes are kept in the state folder's unreported/, the next run does not send "
    "them again and writes that report where it belongs once there is room), the run's summary run.json, or the state folder mid-run, which stopped the sending; free space "
    "or fix the folder the line above names, then run again (nothing is imported twice)",
    EXIT_UNEXPECTED: "hrimport stopped on an unexpected error, a bug in hrimport (its traceback is in run.log): "
    "report it with run.log; what was sent before it is in the step's journal and the state folder, and the next "
    "run does not send it again",
    EXIT_INTERRUPTED: "stopped by Ctrl-C (SIGINT): the rows sent are reported, the rest are not_sent; run again "
    "to send them (nothing is imported twice)",
    EXIT_TERMINATED: "stopped by SIGTERM (e.g. systemd stopping the unit): the rows sent are reported, the rest "
    "are not_sent; run again to send them (nothing is imported twice)",
}

#: How the line of a run stopped outside its steps by a bug ends, after the error it quotes
BUG_BETWEEN_STEPS = ": this is a bug in hrimport; its traceback is in run.log, report it"

# older_export: the step refused its file as an export it imported before its last import (exit 2);
# too_old: the step refused its newest file as older than its max_source_age_days (exit 2);
# unexpected_error: the step stopped on an exception nobody foresaw, a bug (exit 70)
StepStatus = Literal["imported", "already_imported", "older_export", "too_old", "error", "state_not_written",
                     "unexpected_error", "not_run"]


@dataclass
class StepResult:
    """What one step did."""

    name: str
    kind: StepKind
    status: StepStatus
    exit_code: int
    message: str  # one line for stderr, the log and the e-mail
    source: Path | None = None
    sha256: str | None = None
    result: RunResult | None = None
    report: ReportFiles | None = None
    started_at: str = ""  # ISO 8601: when the step began (its line in ``hrimport runs`` when it has no report)
    # already_imported, older_export and too_old: what the step found instead of a new export, for the verdict
    # ("the newest file matching exports/staff_*.csv (staff_2024-05.csv) is the one imported on 2024-06-01 06:15");
    # unexpected_error: the error it stopped on, in the step (what happened, before "this is a bug")
    found: str = ""


@dataclass
class JobResult:
    """A whole run of a job."""

    job: str
    started_at: str
    folder: Path | None  # the run's report folder (None when the job was locked)
    steps: list[StepResult] = field(default_factory=list)
    finished_at: str = ""
    notified: bool = False
    notify_error: str | None = None
    # an e-mail is due and not yet tried: run.json says so while it is sent, so that a run killed then (the
    # relay slow to answer, a reboot) counts as unfinished, told by the next run like a run killed mid-step
    email_pending: bool = False
    pruned: list[Path] = field(default_factory=list)
    # the job's runs since its last finished one that did not finish (killed), which sent no e-mail
    unfinished: list[Path] = field(default_factory=list)
    # outcomes of earlier runs whose report could not be written, kept in the state folder: those this run wrote
    # where they belong (the kept file removed), and those still kept, named until their report is written
    kept_runs: list[KeptRun] = field(default_factory=list)
    error: str | None = None  # a failure of the run as a whole (the lock): what it did, in place of the verdict
    # run.json not written (a full disk): said after the steps' verdict, which it must not hide
    summary_error: str | None = None
    error_code: int = EXIT_OK

    @property
    def late_reports(self) -> list[KeptRun]:
        """The reports of earlier runs kept when their disk was full that this run wrote where they belong."""
        return [k for k in self.kept_runs if k.report is not None]

    @property
    def unreported(self) -> list[KeptRun]:
        """The runs' outcomes still kept in the state folder, their report not written."""
        return [k for k in self.kept_runs if k.report is None]

    @property
    def embedded_sandbox(self) -> bool:
        """Whether a step sent its rows to the embedded sandbox (a job file saying ``sandbox = true``)."""
        return any(s.result is not None and s.result.info.service_url == EMBEDDED_SANDBOX for s in self.steps)

    @property
    def exit_code(self) -> int:
        """The highest exit code of the steps (and of the run's own failure)."""
        return max([self.error_code, *(s.exit_code for s in self.steps)])

    @property
    def sandbox(self) -> str:
        """Where a step sent its rows when that was a sandbox, not the platform: ``the embedded sandbox`` or
        ``the sandbox at URL`` (one served by ``hrimport sandbox serve``); ``""`` otherwise."""
        for s in self.steps:
            url = s.result.info.service_url if s.result is not None else ""
            if url == EMBEDDED_SANDBOX:
                return "the embedded sandbox"
            if is_sandbox_target(url):
                return f"the {describe_target(url)}"
        return ""

    def headline(self) -> str:
        """The verdict, and where the rows went when that was a sandbox: the last line on stderr and the e-mail
        subject, which must never read "everything imported" for rows no platform received."""
        what, then = self._verdict_parts()
        if not self.sandbox:
            return what + then
        # after what happened, before what to do ("...; run again with --accept-drift if the file is right"),
        # which the place would otherwise seem to qualify, and never inside an error it quotes
        return f"{what} on {self.sandbox}, not the platform{then}"

    def verdict(self) -> str:
        """One line: what happened, for ``run.json``, the log and (with ``headline``) the last line on stderr and
        the e-mail subject."""
        return "".join(self._verdict_parts())

    def _verdict_parts(self) -> tuple[str, str]:
        """The verdict as what happened, and the rest (what to do, an error it quotes, what else happened): where
        ``headline`` says the place between."""
        if self.error and self.error.endswith(BUG_BETWEEN_STEPS):  # the error it quotes is what happened
            return self.error.removesuffix(BUG_BETWEEN_STEPS), BUG_BETWEEN_STEPS
        if self.error:
            return self.error, ""
        what, then = self._steps_verdict()
        return what, f"{then}; {self.summary_error}" if self.summary_error else then

    @property
    def no_longer_in_export(self) -> int:
        """The leave imported before that the time-off steps' exports no longer list (``hrimport.timeoff.gone``)."""
        return sum(s.result.info.no_longer_in_export for s in self.steps if s.result is not None)

    def _gone(self) -> str:
        """``; 1 leave imported before no longer in the export (...)``, or "": said in the verdict though no row
        needs attention, so that a leave cancelled in the HR system but still on the platform is never unseen."""
        gone = self.no_longer_in_export
        if not gone:
            return ""
        return (f"; {gone:,} leave{'s' if gone != 1 else ''} imported before no longer in the export (cancel "
                f"{'it' if gone == 1 else 'them'} on the platform if cancelled or moved: see the report)")

    def _stopped(self) -> str:
        """``; 15 rows added and 1,985 updated by the run of 2026-11-25 09:00, which stopped before its report``, or
        "": the rows of runs killed before their report, which this run's report tells (``hrimport.imports.
        stopped_runs``), said in the verdict, so that the people they added are counted this month."""
        from hrimport.imports.stopped_runs import told_verdict

        runs = [run for s in self.steps if s.result is not None and not s.result.info.dry_run
                for run in s.result.info.stopped_runs]
        return f"; {told_verdict(runs, rows=True)} (see the report)" if runs else ""

    def _steps_verdict(self) -> tuple[str, str]:
        """What the steps did, by the highest of their exit codes: what happened, and the rest (``_verdict_parts``)."""
        # a step that found no new export says so in the verdict too: the subject of the e-mail must not read as
        # "everything imported" when a month's export never came
        idle = [s for s in self.steps if s.status == "already_imported"]
        if self.steps and len(idle) == len(self.steps):
            found = idle[0].found if len(idle) == 1 else "; ".join(f"{s.name}: {s.found}" for s in idle)
            return f"no new export: {found}", "; nothing sent"
        code = max([EXIT_OK, *(s.exit_code for s in self.steps)])
        if code == EXIT_OK:
            warned = sum(s.result.with_warnings for s in self.steps if s.result is not None)
            done = "everything imported"
            if warned:
                done += f" ({warned:,} row{'s' if warned != 1 else ''} with warnings to look at)"
            more = ""
            skipped = sum(s.result.skipped for s in self.steps if s.result is not None)
            if skipped:  # said, so that a row skipped as no record is never unseen (the report names each)
                more += f"; {skipped:,} row{'s' if skipped != 1 else ''} skipped (no record{'s' if skipped != 1 else ''})"
            more += self._gone() + self._stopped()
            if not idle:
                return done, more
            imported = ", ".join(s.name for s in self.steps if s.status == "imported")
            return f"{imported}: {done}", "".join([more, *(f"; {s.name}: no new export: {s.found}" for s in idle)])
        if code == EXIT_ROWS_NEED_ATTENTION:
            rows = sum(len(s.result.need_attention) for s in self.steps if s.result is not None)
            return f"{rows:,} row{'s' if rows != 1 else ''} need{'s' if rows == 1 else ''} attention", (
                self._gone() + self._stopped())
        failed = next(s for s in self.steps if s.exit_code == code)
        if failed.status in ("older_export", "too_old"):
            # what the step found, then what to do ("; nothing sent: put the new export in exports/"): the last of
            # these words, after any file name
            what, then, to_do = failed.found.rpartition("; nothing sent" if failed.status == "too_old" else "; sending it")
            return (f"{failed.name}: {what}", then + to_do) if then else (f"{failed.name}: {failed.found}", "")
        run = failed.result
        if code == EXIT_REPORT and failed.status == "state_not_written":
            # "; " first: a sandbox's place goes after "stopped sending", never after "disk is full"
            return f"the {failed.name} step stopped sending", f"; {failed.message.removeprefix('Error: ')}"
        if code == EXIT_UNEXPECTED:  # the line names the step, and says what was kept
            line = failed.message.removeprefix("Error: ")
            # the error it quotes ("hrimport stopped on an unexpected error (...) in the staff step") is what happened
            return (failed.found, line.removeprefix(failed.found)) if line.startswith(failed.found) else (line, "")
        if code == EXIT_REPORT:
            why = failed.message.removeprefix("Error: ")
            return "sent", f", but the {failed.name} step's report was not written: {why}"
        why = failed.message.removeprefix("Error: ")  # the verdict is a sentence, not an error line
        if run is None:
            return f"{failed.name} step failed", f": {why}"
        unsent = sum(1 for s in self.steps if s.result is not None for r in s.result.rows
                     if r.outcome is Outcome.NOT_SENT)
        not_sent = f"{unsent:,} row{'s' if unsent != 1 else ''} not sent"
        if code == EXIT_HELD:
            # why is said in the step's line, with the people it names: not in an e-mail subject, which shows on
            # lock screens and in the relay's log
            tripped = len(run.info.held)
            what = (f"held for review: the {failed.name} step sent nothing, the drift guard tripped on "
                    f"{tripped:,} check{'s' if tripped != 1 else ''} (see the step's line)")
            return what, "; run again with --accept-drift if the file is right"
        if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
            how = "Ctrl-C (SIGINT)" if code == EXIT_INTERRUPTED else "SIGTERM"
            if unsent == 0:  # stopped as the last answer came in: nothing left to send, the run itself unfinished
                return (f"stopped by {how} in the {failed.name} step after every row to send was sent",
                        "; run again to finish the run (nothing is imported twice)")
            return f"stopped by {how} in the {failed.name} step: {not_sent}", "; run again to send them"
        if run.info.service_lost:
            return f"the service became unreachable in the {failed.name} step: {not_sent}", "; run again once it is reachable"
        return f"{failed.name} step failed", f": {why}"
