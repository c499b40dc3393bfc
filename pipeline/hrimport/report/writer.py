"""``write_report``: every report file of a run, into one private folder (issue 4).

The reporter is its own stage: it takes a ``RunResult`` and writes files; it computes nothing about the
import itself. A run's folder holds::

    reports/<job>/<YYYY-MM-DD_HHMMSS>/     (0700)
        report.html      the page to read and forward        (0600, like every file here)
        report.xlsx      Summary, Rows and Problems sheets
        to_fix.xlsx      rows not imported, in the source's layout, bad cells marked
        to_fix.csv       a CSV source only: the same rows as CSV, for systems that need CSV
        summary.json     counts, exit status, file facts, timings
        outcomes.jsonl   the run itself, so ``hrimport report outcomes.jsonl`` can render it again
        payloads.jsonl   a staff dry run only: the request bodies that would be sent, one batch a line
"""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import cast

from hrimport.outcomes import RowOutcome, RunResult, SourceInfo, write_outcomes
from hrimport.private_files import (
    make_folder_durably,
    make_private_folder,
    open_private,
    partial_path,
    safe_segment,
    written_whole,
)
from hrimport.report.digest import digest_rows
from hrimport.report.excel import write_report_xlsx
from hrimport.report.fix_file import FIX_XLSX, FixFiles, fix_csv_name, write_fix_files
from hrimport.report.fix_process import FixJob, answer_of
from hrimport.report.history import OUTCOMES_FILE, is_run_folder, job_folder, run_order
from hrimport.report.html import write_html
from hrimport.report.summary import write_summary
from hrimport.report.view import RowMasking
from hrimport.stores import PickledRows
from hrimport.to_fix_format import date_orders_read

PAYLOADS_FILE = "payloads.jsonl"
# From this many cells, to_fix is written by a second process while this one writes the other files, so a run
# with many bad rows stays within the 15 s budget (issue 4) on this 2-core machine: to_fix costs ~4.5 us of CPU
# a cell (comments and to_fix.csv included), and starting the process ~0.1 s of CPU (its modules) before it
# writes. Below it, the process costs more time than it saves.
PARALLEL_FIX_CELLS = 80_000


@dataclass(frozen=True)
class ReportFiles:
    """The files ``write_report`` wrote; ``to_fix`` (``to_fix.xlsx``) is None when every row was imported,
    ``to_fix_csv`` unless the source was a CSV/TSV file."""

    folder: Path
    html: Path
    xlsx: Path
    summary: Path
    outcomes: Path
    to_fix: Path | None = None
    timings: dict[str, float] = field(default_factory=dict, compare=False)  # seconds per file
    payloads: Path | None = None  # a staff dry run's request bodies
    to_fix_csv: Path | None = None  # the rows of to_fix as CSV, for systems that need CSV

    def paths(self) -> list[Path]:
        """Every file written, in the order a person would open them."""
        found = [self.html, self.xlsx, self.to_fix, self.to_fix_csv, self.summary, self.outcomes,
                 self.payloads]
        return [p for p in found if p is not None]


def default_report_folder(base: Path, job: str, started_at: datetime | str) -> Path:
    """``base/<job>/<YYYY-MM-DD_HHMMSS>/`` for a run of ``job`` started at ``started_at`` (ISO text or datetime).

    >>> default_report_folder(Path("reports"), "staff", "2024-05-01T09:00:00+02:00").as_posix()
    'reports/staff/2024-05-01_090000'
    """
    moment = datetime.fromisoformat(started_at) if isinstance(started_at, str) else started_at
    return job_folder(base, job) / moment.strftime("%Y-%m-%d_%H%M%S")


def new_report_folder(base: Path, job: str, started_at: datetime) -> Path:
    """Make (0700) and return a new folder for a run: ``default_report_folder``, or ``...-2``, ``-3`` for a
    run started in the same second as an earlier one, which must never share (and overwrite) its report.
    Raises ``OSError`` when it cannot be made."""
    folder = default_report_folder(base, job, started_at)
    make_private_folder(folder.parent)
    # after the last folder of the same second, never in a gap left by pruning: names stay in run order
    n = max((run_order(p)[1] for p in folder.parent.glob(f"{folder.name}*") if is_run_folder(p)), default=0)
    while True:
        candidate = folder if n == 0 else folder.with_name(f"{folder.name}-{n + 1}")
        try:
            make_folder_durably(candidate)  # the run's journal and run.json go in it: a power cut must not lose it
            return candidate
        except FileExistsError:
            n += 1


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


#: The rows to fix, what else the process writing ``to_fix`` needs, and its answer, on their way between it and
#: the run (removed once read).
_FIX_ROWS_FILE = ".to_fix-rows.pickle"
_FIX_JOB_FILE = ".to_fix-job.pickle"
_FIX_ANSWER_FILE = ".to_fix-answer.pickle"


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """SIGINT held back (blocked, not lost) in this thread meanwhile; a process started meanwhile starts with it
    held back too, until it lets it in (``fix_process._end_with_run``; Python would turn it into a traceback
    while starting)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks (and no terminal process groups)
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a Ctrl-C meanwhile arrives here


class _FixFileJob:
    """``to_fix`` written in a fresh process when it is big, else here: ``result()`` gives its files.

    A plain process given files (``hrimport.report.fix_process``), not ``multiprocessing``: a process pool's
    queues are named semaphores, which a run killed outright (``kill -9``, the OOM killer) never removes
    (multiprocessing's resource tracker printed "There appear to be 5 leaked semaphore objects to clean up at
    shutdown" in cron's log after the run was gone), and a spawned process reads its task from a pipe that a
    run killed at that moment leaves cut (its "Ran out of input" traceback came after the run was gone too).
    """

    def __init__(self, source: SourceInfo, rows: Sequence[RowOutcome], folder: Path,
                 date_orders: dict[str, str]) -> None:
        self.args: tuple[SourceInfo, Sequence[RowOutcome], Path, dict[str, str]] = (source, rows, folder, date_orders)
        self.process: subprocess.Popen[bytes] | None = None
        self.files = [folder / name for name in (_FIX_ROWS_FILE, _FIX_JOB_FILE, _FIX_ANSWER_FILE)]
        self.answer = folder / _FIX_ANSWER_FILE
        if len(rows) * (len(source.headers) + 1) >= PARALLEL_FIX_CELLS:
            try:
                # the rows go by a file in the run's private folder, a piece at a time: pickled whole into the
                # process's pipe, 100,000 rows to fix (each with its cells) took as much memory again
                rows_file, job_file = self.files[:2]
                handed = PickledRows.write(rows, rows_file, open_private(rows_file, "wb"))
                with open_private(job_file, "wb") as out:
                    pickle.dump(FixJob(os.getpid(), source, handed, folder, self.answer, date_orders), out,
                                protocol=pickle.HIGHEST_PROTOCOL)
                with _ctrl_c_held():  # the process starts here
                    self.process = subprocess.Popen([sys.executable, "-m", "hrimport.report.fix_process",
                                                     str(job_file)], stdin=subprocess.DEVNULL)
            except (OSError, ValueError, subprocess.SubprocessError):  # no processes here (a sandbox, a frozen
                self.close()  # app): write it here

    def result(self) -> FixFiles:
        try:
            if self.process is None:
                return write_fix_files(*self.args)
            code = self.process.wait()
            answer = answer_of(self.answer)
            if answer is None:  # it died without a word (the OOM killer): the report says to_fix was not written
                raise RuntimeError(f"the process writing to_fix ended unexpectedly (exit code {code})")
            written, files = answer
            if not written:
                raise cast(Exception, files)
            return cast(FixFiles, files)
        finally:
            self.close()

    def close(self) -> None:
        if self.process is not None:
            self.process.wait()  # as a pool's shutdown did: a to_fix begun is finished, never left half written
            self.process = None
        for path in self.files:
            path.unlink(missing_ok=True)
            partial_path(path).unlink(missing_ok=True)


def write_report(result: RunResult, folder: Path, *, outcomes_path: Path | None = None) -> ReportFiles:
    """Write every report file of ``result`` into ``folder`` (created 0700; files 0600).

    ``outcomes.jsonl`` is saved first, so a report can be rendered again even if a later file fails;
    when re-rendering from ``outcomes_path`` and that is this folder's ``outcomes.jsonl``, it is left as is.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 3)
        clock = now

    make_private_folder(folder)
    source = result.info.source
    attention = result.need_attention  # to_fix's rows, to write first, in parallel when they are many
    fix_job = _FixFileJob(source, attention, folder, date_orders_read(result.info.values_read)) if attention else None
    try:
        outcomes = folder / OUTCOMES_FILE
        if outcomes_path is None or not _same_file(outcomes_path, outcomes):
            write_outcomes(outcomes, result)  # a new file, 0600, renamed over any older one
            lap(OUTCOMES_FILE)
        # what the other files need of all the rows, in one walk; then each walks them once more for its lines
        digest = digest_rows(result)
        masking = RowMasking(result, digest)
        html = write_html(
            result, folder / "report.html", masking=masking, digest=digest, fix_file_name=FIX_XLSX,
            fix_csv_name=fix_csv_name(source),
        )
        lap("report.html")
        xlsx = write_report_xlsx(result, folder / "report.xlsx", masking=masking, digest=digest)
        lap("report.xlsx")
        to_fix = fix_job.result() if fix_job is not None else None
        if to_fix is not None:
            lap(to_fix.xlsx.name)
    finally:
        if fix_job is not None:
            fix_job.close()
    payloads = _write_payloads(result, folder)
    files = ReportFiles(folder, html, xlsx, folder / "summary.json", outcomes,
                        to_fix.xlsx if to_fix else None, timings, payloads, to_fix.csv if to_fix else None)
    write_summary(result, files.summary, files={p.name: p.name for p in files.paths()}, digest=digest)
    lap("summary.json")
    return files


def _write_payloads(result: RunResult, folder: Path) -> Path | None:
    """A staff dry run's request bodies, one batch per line, each byte for byte as a request would carry it
    (the token is in headers, never in a body)."""
    if result.payloads is None:
        return None
    path = folder / PAYLOADS_FILE
    with written_whole(path) as fh:
        fh.writelines(body + "\n" for body in result.payloads)
    return path


#: The state folder's folder of runs whose report could not be written (``keep_unreported``).
UNREPORTED = "unreported"


#: The record, after the run's, naming the report folder a kept run's report belongs in (``keep_unreported``)
_REPORT_FOLDER = "report_folder"


def keep_unreported(result: RunResult, state_dir: Path, report_folder: Path | None = None) -> Path | None:
    """A run whose report folder cannot be written: its ``outcomes.jsonl`` kept in the state folder
    (``STATE/unreported/<job>-<YYYY-MM-DD_HHMMSS>.jsonl``, private), so ``hrimport report`` can write the
    report later, with ``report_folder``, the folder its report belongs in (``kept_report_folder``: the next
    ``hrimport run`` of its job writes it there); None when that cannot be written either (the same full disk).
    Kept until its report is written (``is_unreported``), and told by every ``hrimport run`` until then
    (``unreported_runs``)."""
    after_run: list[dict[str, object]] = []
    if report_folder is not None:
        after_run.append({"record": _REPORT_FOLDER, "folder": str(report_folder.absolute())})
    try:
        folder = make_private_folder(state_dir / UNREPORTED)
        stamp = datetime.fromisoformat(result.info.started_at).strftime("%Y-%m-%d_%H%M%S")
        kept = folder / f"{safe_segment(result.info.job, 'job')}-{stamp}.jsonl"
        write_outcomes(kept, result, after_run=after_run)
    except OSError:
        return None
    return kept


def kept_report_folder(kept: Path) -> Path | None:
    """The folder the report of the run ``kept`` holds belongs in, as ``keep_unreported`` recorded it (the line
    after the run's); None when it says none (kept by a version before it) or cannot be read."""
    try:
        with kept.open("rb") as fh:
            fh.readline()  # the run's record
            line = fh.readline()
        data = json.loads(line) if line.startswith(b'{"record": "%s"' % _REPORT_FOLDER.encode()) else None
    except (OSError, ValueError):
        return None
    folder = data.get("folder") if isinstance(data, dict) else None
    return Path(folder) if isinstance(folder, str) and folder else None


_KEPT_NAME = re.compile(r".+-\d{4}-\d{2}-\d{2}_\d{6}\.jsonl")  # <job>-<YYYY-MM-DD_HHMMSS>.jsonl


def is_unreported(path: Path) -> bool:
    """Whether ``path`` is a run's outcomes ``keep_unreported`` kept in a state folder (by its folder and name)."""
    return path.parent.name == UNREPORTED and _KEPT_NAME.fullmatch(path.name) is not None


def unreported_runs(state_dir: Path) -> list[Path]:
    """The runs' outcomes kept in ``state_dir`` because their report could not be written, oldest first (their
    names end with when the run started); none when there is no such folder or it cannot be read."""
    try:
        return sorted((p for p in (state_dir / UNREPORTED).iterdir() if is_unreported(p) and p.is_file()),
                      key=lambda p: (p.name[-23:], p.name))
    except OSError:
        return []
