"""Rows a stopped run sent, told by the next run's report: where they would read ``unchanged``.

A run killed after rows were sent and before its report (a reboot, the OOM killer, ``kill -9``) leaves only its
journal (``outcomes.jsonl``: ``hrimport.outcomes.OutcomeJournal``), while the state folder remembers every row it
sent. The next run of the same file then finds those rows as the service last accepted them: ``unchanged`` (or,
sending every row, ``updated``), and a new hire the stopped run added would be added in no report at all.

So a staff import reads the journals of the job's runs that stopped before their report since its last run
with one (``stopped_runs``): each row line's external id and outcome (added or updated), a dict of ids, the file
streamed. A row of this run is told as that run's (``StoppedSends.told``) when the plan finds it unchanged, the
journal names its id, and the state folder's record of it was accepted at or after that journal began: it is
reported ``added`` or ``updated`` with a message naming the stopped run. Once this run's report is written, those
runs are older than the last reported run: they are told once only.

Not told: a journal of another kind, a journal still being written (its run is still sending: it holds a lock on
it: ``hrimport.outcomes.journal_in_use``), and a journal whose run kept its whole outcomes in the state folder to be reported later
(``hrimport report KEPT --output FOLDER``, which tells its rows itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrimport.outcomes import Outcome, journal_in_use
from hrimport.report.history import OUTCOMES_FILE, SUMMARY_JSON, is_run_folder, run_order

if TYPE_CHECKING:
    from hrimport.state.store import AcceptedRecord

__all__ = ["StoppedRun", "StoppedSends", "ToldRows", "stopped_runs", "stopped_sends", "told_note", "told_verdict"]

_TOLD = (Outcome.ADDED, Outcome.UPDATED)
_JOURNAL = b'{"record": "journal"'
_ROW = b'{"record": "row"'
_STOPPED = b'{"record": "stopped"'
#: What the ``stopped`` line of a run whose outcomes were kept in the state folder asks (``hrimport.imports.stops``)
_KEPT_NEXT = "write the report with: hrimport report "


@dataclass(frozen=True)
class StoppedRun:
    """A run of the job that stopped after sending rows and before its report: its journal and when it began."""

    journal: Path  # its outcomes.jsonl
    started_at: str  # ISO 8601, as its journal's first line says

    @property
    def when(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.started_at).astimezone()
        except ValueError:
            return None

    @property
    def shown_at(self) -> str:
        """``2026-11-25 09:00``: when it began, to the minute (as written when unreadable)."""
        when = self.when
        return when.strftime("%Y-%m-%d %H:%M") if when is not None else self.started_at

    def told(self, outcome: Outcome) -> str:
        """A row's message: ``Added by the run of 2026-11-25 09:00, which stopped before its report (its journal:
        reports/.../outcomes.jsonl).``"""
        return (f"{outcome.label} by the run of {self.shown_at}, which stopped before its report (its journal: "
                f"{self.journal}).")


@dataclass
class StoppedSends:
    """What the job's stopped runs sent: each external id's outcome in their journals, by run."""

    runs: list[StoppedRun]
    # external id -> (index in ``runs``, outcome): the oldest run that added the person, else the newest that
    # updated them
    sent: dict[str, tuple[int, Outcome]] = field(default_factory=dict)

    def told(self, rows: Sequence[tuple[int, str]],
             before: Callable[[list[str]], Mapping[str, AcceptedRecord]]) -> ToldRows:
        """Of ``rows`` (row number, external id: the rows the plan finds unchanged), those a stopped run sent,
        their state record (``before``: the state folder's, asked for their ids) accepted at or after that run's
        journal began: each row's outcome and message."""
        mine = [(row, ext) for row, ext in rows if ext in self.sent]
        accepted = before(list(dict.fromkeys(ext for _, ext in mine))) if mine else {}
        told = ToldRows()
        for row, ext in mine:
            record = accepted.get(ext)
            at, outcome = self.sent[ext]
            run = self.runs[at]
            if record is None or not _at_or_after(record.accepted_at, run.when):
                continue
            told.rows[row] = (outcome, run.told(outcome))
            told.count(run, outcome)
        return told


@dataclass
class ToldRows:
    """The rows of a run told as a stopped run's: row number -> (outcome, message), and per run its counts."""

    rows: dict[int, tuple[Outcome, str]] = field(default_factory=dict)
    counts: dict[StoppedRun, dict[str, int]] = field(default_factory=dict)

    def count(self, run: StoppedRun, outcome: Outcome) -> None:
        counts = self.counts.setdefault(run, {"rows": 0, "added": 0, "updated": 0})
        counts["rows"] += 1
        counts[outcome.value] += 1

    def summary(self) -> list[dict[str, Any]]:
        """``summary.json``'s ``stopped_runs``: each stopped run told, oldest first, with its rows' counts."""
        return [{"started_at": run.started_at, "journal": str(run.journal), **counts}
                for run, counts in sorted(self.counts.items(), key=lambda item: item[0].started_at)]


def told_note(runs: list[dict[str, Any]], *, dry_run: bool) -> str:
    """The report's note of the rows stopped runs sent (``ToldRows.summary``)."""
    parts = []
    for run in runs:
        shown = StoppedRun(Path(run["journal"]), run["started_at"]).shown_at
        parts.append(f"{run['rows']:,} row{'s' if run['rows'] != 1 else ''} {'were' if run['rows'] != 1 else 'was'} "
                     f"sent by the run of {shown} that stopped before its report ({run['added']:,} added, "
                     f"{run['updated']:,} updated; its journal: {run['journal']})")
    said = "; ".join(parts)
    if dry_run:
        return (f"{said[0].upper()}{said[1:]}: the plan finds them unchanged, and the import reports them as that "
                "run's service answered them, so that no one it added goes untold.")
    return (f"{said[0].upper()}{said[1:]}: this report lists them as added or updated, as that run's service "
            "answered them, where they would read unchanged, so that no one it added goes untold.")


def told_verdict(runs: list[dict[str, Any]], *, rows: bool = False) -> str:
    """The verdict's words for them: ``15 added and 1,985 updated by the run of 2026-11-25 09:00, which stopped
    before its report`` (with ``rows``: ``15 rows added and ...``, for a verdict that counts no rows before)."""
    added, updated = sum(r["added"] for r in runs), sum(r["updated"] for r in runs)
    parts = [f"{n:,} {verb}" for n, verb in ((added, "added"), (updated, "updated")) if n]
    if rows and parts:
        first = added or updated
        parts[0] = parts[0].replace(" ", f" row{'s' if first != 1 else ''} ", 1)
    what = " and ".join(parts)
    shown = [StoppedRun(Path(r["journal"]), r["started_at"]).shown_at for r in runs]
    if len(shown) == 1:
        return f"{what} by the run of {shown[0]}, which stopped before its report"
    return f"{what} by the runs of {', '.join(shown[:-1])} and {shown[-1]}, which stopped before their reports"


def _at_or_after(accepted_at: str, start: datetime | None) -> bool:
    if start is None:
        return False
    try:
        return datetime.fromisoformat(accepted_at).astimezone() >= start
    except ValueError:
        return False


def stopped_runs(job_folder: Path, kind: str, current: Path) -> list[StoppedRun]:
    """The runs of ``kind`` in ``job_folder`` (both layouts: an import's run folder, a ``hrimport run`` step's)
    left with a journal and no summary, newer than the job's last ``kind`` import (not a dry run) with a report,
    oldest first; never the run of ``current`` (this run's report folder)."""
    if not job_folder.is_dir():
        return []
    own = current if is_run_folder(current) and current.parent == job_folder else current.parent
    found: list[StoppedRun] = []
    try:
        runs = sorted((p for p in job_folder.iterdir() if is_run_folder(p) and p != own), key=run_order)
        for run in runs:
            for folder in [run, *sorted(p for p in run.iterdir() if p.is_dir() and not p.is_symlink())]:
                if (folder / SUMMARY_JSON).exists():
                    if _reported(folder / SUMMARY_JSON, kind):
                        found = []  # those before are older than a run with a report: told by it, or before it
                    continue
                journal = _stopped_journal(folder / OUTCOMES_FILE, kind)
                if journal is not None:
                    found.append(journal)
    except OSError:
        return found  # a folder this user may not list: what was found before it
    return found


def _reported(summary: Path, kind: str) -> bool:
    """Whether ``summary`` is that of a ``kind`` import, not a dry run (one that cannot be read: no)."""
    try:
        data = json.loads(summary.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == kind and data.get("dry_run") is False


def _stopped_journal(path: Path, kind: str) -> StoppedRun | None:
    """``path`` as a stopped run's journal of ``kind``; None when it is none (absent, another kind, a whole run, a
    journal still written by its run, or one whose outcomes are kept to be reported)."""
    try:
        with path.open("rb") as fh:
            head = fh.readline()
            if not head.startswith(_JOURNAL) or not head.endswith(b"\n"):
                return None
            first = json.loads(head)
            if not isinstance(first, dict) or first.get("kind") != kind or not isinstance(first.get("started_at"), str):
                return None
            if journal_in_use(fh.fileno()):
                return None
            for line in fh:
                if line.startswith(_STOPPED) and line.endswith(b"\n"):
                    stopped = json.loads(line)
                    if isinstance(stopped, dict) and _KEPT_NEXT in str(stopped.get("next", "")):
                        return None
    except (OSError, ValueError):
        return None
    return StoppedRun(path, first["started_at"])


def stopped_sends(job_folder: Path | None, kind: str, current: Path | None) -> StoppedSends | None:
    """What the job's stopped runs (``stopped_runs``) sent, read from their journals; None when there are none."""
    if job_folder is None or current is None:
        return None
    runs = stopped_runs(job_folder, kind, current)
    if not runs:
        return None
    sends = StoppedSends(runs)
    sent = sends.sent
    for at, run in enumerate(runs):
        try:
            with run.journal.open("rb") as fh:
                for line in fh:
                    if not line.startswith(_ROW) or not line.endswith(b"\n"):
                        continue  # the first line, a stopped line, a last line cut as it was appended
                    try:
                        record = json.loads(line)
                        ext, outcome = record["external_id"], Outcome(record["outcome"])
                    except (ValueError, KeyError, TypeError):
                        continue  # damage: that row is not told
                    if outcome not in _TOLD or not isinstance(ext, str):
                        continue
                    held = sent.get(ext)
                    if held is None or held[1] is not Outcome.ADDED:
                        sent[ext] = (at, outcome)  # the oldest run that added them, else the newest
        except OSError:
            continue
    return sends if sent else None

