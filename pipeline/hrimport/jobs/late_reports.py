"""Reports an earlier run could not write, written by the next run of its job where they belong.

A step whose rows were sent and whose report folder's disk was full (exit 6) keeps the run's outcomes in the
state folder's ``unreported/`` (``hrimport.report.writer.keep_unreported``), with the step's report folder. The
next ``hrimport run`` of that job, once there is room, writes the report into that folder, from the kept file,
and removes the file only once the report is whole (its ``summary.json`` is written last): nobody has to type
``hrimport report KEPT --output FOLDER`` for a report that could be written. A kept file it cannot write (the
disk still full, its run's folder pruned or moved, a file kept by an earlier version, which names no folder, or
another job's) stays, and is named by every run until its report is written (principle 4: never lost).

Its report written, the step's folder holds a ``summary.json``: ``hrimport runs`` and ``index.html`` show the
report, and the next imports' stopped-runs walk (``hrimport.imports.stopped_runs``) reads it as a run with a
report, as it passed over its journal before (whose rows the kept report tells).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hrimport.errors import unexpected_error
from hrimport.jobs.runlog import SAID
from hrimport.outcomes import read_outcomes
from hrimport.report import ReportFiles, write_report
from hrimport.report.history import is_run_folder
from hrimport.report.history_page import update_history
from hrimport.report.writer import kept_report_folder

__all__ = ["KeptRun", "write_kept_reports"]

log = logging.getLogger("hrimport.jobs")


@dataclass(frozen=True)
class KeptRun:
    """A run's outcomes kept in the state folder, and what this run did with them."""

    kept: Path  # the file in the state folder's unreported/ (removed once its report is written)
    folder: Path | None  # the step's report folder its report belongs in (None: the file names none)
    report: ReportFiles | None = None  # the report this run wrote there
    error: str = ""  # why this run could not write it ("": it did not try: not its job's, or no folder named)

    @property
    def shown_at(self) -> str:
        """``2026-11-25 09:00``: when the run that sent its rows began, by its run folder's name (a later step of a
        long run began later), else by the kept file's (when its step began)."""
        names = [self.folder.parent.name[:17]] if self.folder is not None else []
        for name in [*names, self.kept.stem[-17:]]:
            try:
                return datetime.strptime(name, "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")
            except ValueError:
                continue
        return self.kept.stem

    def written(self) -> str:
        """The line of a report this run wrote."""
        assert self.report is not None
        return (f"the report of the run of {self.shown_at}, kept when its disk was full, is now written: "
                f"{self.report.folder}")

    def still_kept(self) -> str:
        """The line of a report still not written: where its outcomes are, and the command that writes it."""
        folder = self.folder if self.folder is not None else "FOLDER"
        said = (f"the report of the run of {self.shown_at} could not be written (a full disk?), and its outcomes are "
                f"kept in {self.kept}: hrimport report {self.kept} --output {folder} writes it (and then removes that "
                "file)")
        return f"{said}; this run could not write it either: {self.error}" if self.error else said


def write_kept_reports(job_folder: Path, kept_files: list[Path]) -> list[KeptRun]:
    """Each kept file of ``kept_files`` whose report belongs in a run folder of ``job_folder`` (the job's runs) written
    there and removed; the others as they are. Never raises for one that cannot be written: it is kept."""
    return [_write_kept(job_folder, kept) for kept in kept_files]


def _write_kept(job_folder: Path, kept: Path) -> KeptRun:
    folder = kept_report_folder(kept)
    if folder is None or not _same_folder(folder.parent.parent, job_folder):
        return KeptRun(kept, folder)  # kept by an earlier version, or by another job's run: a person writes it
    if not folder.parent.exists():  # its run's folder is gone (removed by hand, or moved)
        return KeptRun(kept, folder, error=f"its run's folder {folder.parent} is gone")
    if not is_run_folder(folder.parent):
        return KeptRun(kept, folder)
    try:
        result = read_outcomes(kept)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return KeptRun(kept, folder, error=f"{kept} cannot be read ({exc})")
    try:
        report = write_report(result, folder, outcomes_path=kept)
    except OSError as exc:
        return KeptRun(kept, folder, error=f"it could not be written to {folder}: {exc.strerror or exc}")
    except Exception as exc:  # a bug: the kept file stays (never lost), and this month's steps still run
        why = f"{unexpected_error(exc)} as it was written: this is a bug in hrimport; its traceback is in run.log"
        log.error("%s", why, exc_info=exc, extra=SAID)  # its traceback in run.log; the run's line says the rest
        return KeptRun(kept, folder, error=why)
    update_history(report.folder)  # the job's index.html: the run's report now beside its step
    try:
        kept.unlink()  # only now: its outcomes are in the report's folder, whole
    except FileNotFoundError:
        pass
    except OSError as exc:  # the report is written: the next run writes it again, the same, and tries once more
        log.warning("%s could not be removed from the state folder: %s", kept, exc.strerror or exc)
    return KeptRun(kept, folder, report)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
