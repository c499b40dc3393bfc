"""Rows a stopped run sent, told by the next run's report: where they would read ``unchanged`` or ``already_imported``.

A run killed after rows were sent and before its report (a reboot, the OOM killer, ``kill -9``) leaves only its
journal (``outcomes.jsonl``: ``hrimport.outcomes.OutcomeJournal``), while the state folder remembers every row it
sent. The next run of the same file then finds those rows as the service last accepted them: a staff import
reads them ``unchanged`` (or, sending every row, ``updated``), a time-off import ``already_imported`` (the
ledger holds them), and a new hire or a leave the stopped run added would be added in no report at all.

So an import reads the journals of the job's runs of its kind to the same service and customer that stopped before
their report since its last run with one to them (``stopped_runs``): each row line's outcome (added or updated) and what identifies its row where
the state folder keeps it (``sent_key``: a person's external id; a leave's external id, leave type, start and
end, as the ledger keys it), the file streamed. A row of this run is told as that run's (``StoppedSends.told``,
``StoppedSends.sent_by``) when this run finds it as the state folder holds it, a journal names it, and the state
folder's record of it was accepted at or after that journal began: it is reported ``added`` or ``updated`` with a
message naming the stopped run. Once this run's report is written, those runs are older than the last reported
run: they are told once only.

The state folder keys what it remembers by service (``embedded-sandbox:...`` or the base URL's scheme, host and
path) and customer, so that a trial on a sandbox never makes production skip a row; a journal names them in its
first line, and only a journal of this run's service and customer is read: a run killed on a sandbox is never told
as what production holds, and a production import's report does not end what the next sandbox import tells.

Not told: a journal of another kind, service or customer; a journal written before journals named their service (which
service it sent to cannot be known, and a row told as added where that run did not add it is worse than a row added
in no report, which its journal still lists); a journal still being written (its run is still sending: it holds a lock on
it: ``hrimport.outcomes.journal_in_use``), and a journal whose run kept its whole outcomes in the state folder to be reported later
(``hrimport report KEPT --output FOLDER``, which tells its rows itself).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hrimport.outcomes import Outcome, journal_in_use
from hrimport.report.history import OUTCOMES_FILE, SUMMARY_JSON, is_run_folder, run_order
from hrimport.service.urls import describe_target
from hrimport.timeoff.leave_types import ledger_name

if TYPE_CHECKING:
    from hrimport.service.connection import Target
    from hrimport.state.ledger import LedgerKey

__all__ = ["StoppedRun", "StoppedSends", "ToldRows", "leave_key", "sent_key", "stopped_runs", "stopped_sends",
           "told_note", "told_verdict"]

_TOLD = (Outcome.ADDED, Outcome.UPDATED)
_JOURNAL = b'{"record": "journal"'
_ROW = b'{"record": "row"'
_STOPPED = b'{"record": "stopped"'
#: What the ``stopped`` line of a run whose outcomes were kept in the state folder asks (``hrimport.imports.stops``)
_KEPT_NEXT = "write the report with: hrimport report "


#: What identifies a row where the state folder keeps it (``sent_key``)
Key = TypeVar("Key", bound=Hashable)


class Accepted(Protocol):
    """The state folder's record of a row sent (``AcceptedRecord``, ``LedgerEntry``): when it was accepted."""

    @property
    def accepted_at(self) -> str: ...


def sent_key(kind: str, record: Mapping[str, Any]) -> Hashable | None:
    """What identifies the row of a journal's ``record`` (a row line) where the state folder keeps it, for an
    import of ``kind``: a person's external id (staff); a leave's external id, leave type as the ledger names it,
    start and end, as ``hrimport.state.ledger`` keys it without its service and customer (time off: the id, and the
    type and dates its details show), as a 16-byte digest (``leave_key``): a long leave history's journal kept in a
    third of the memory. None when the line does not say it (damage: that row is not told)."""
    ext = record.get("external_id")
    if not isinstance(ext, str):
        return None
    if kind != "timeoff":
        return ext
    details = record.get("details")
    if not isinstance(details, dict):
        return None
    name, start, end = (details.get(key) for key in ("leave_type", "start_date", "end_date"))
    if not (isinstance(name, str) and isinstance(start, str) and isinstance(end, str) and name and start and end):
        return None
    return _leave_digest(ext, _ledger_name(name), start, end)


def leave_key(key: LedgerKey) -> Hashable:
    """The ``sent_key`` of a leave the ledger holds under ``key``: its external id, leave type, start and end."""
    return _leave_digest(key.external_id, key.leave_type, key.start_date, key.end_date)


def _leave_digest(*parts: str) -> bytes:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=16).digest()


#: A leave history names a few types on every row: each name looked up once
_ledger_name = lru_cache(maxsize=256)(ledger_name)


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

    def told(self, outcome: Outcome, what: str = "") -> str:
        """A row's message: ``Added by the run of 2026-11-25 09:00, which stopped before its report (its journal:
        reports/.../outcomes.jsonl).``; with ``what``: ``Added as time-off record 12 by the run of ...``."""
        made = f"{outcome.label} as {what}" if what else outcome.label
        return (f"{made} by the run of {self.shown_at}, which stopped before its report (its journal: "
                f"{self.journal}).")


@dataclass
class StoppedSends:
    """What the job's stopped runs sent: each row's outcome in their journals (by ``sent_key``), by run."""

    runs: list[StoppedRun]
    # row key (``sent_key``) -> (index in ``runs``, outcome): the oldest run that added the person or leave, else
    # the newest that updated them
    sent: dict[Hashable, tuple[int, Outcome]] = field(default_factory=dict)

    def sent_by(self, key: Hashable, accepted_at: str) -> tuple[StoppedRun, Outcome] | None:
        """The stopped run that sent the row ``key`` names and its outcome, when the state folder's record of it
        was accepted at ``accepted_at``, at or after that run's journal began (else another run's record: None)."""
        found = self.sent.get(key)
        if found is None:
            return None
        run = self.runs[found[0]]
        return (run, found[1]) if _at_or_after(accepted_at, run.when) else None

    def told(self, rows: Sequence[tuple[int, Key]], before: Callable[[list[Key]], Mapping[Key, Accepted]]) -> ToldRows:
        """Of ``rows`` (row number, key: the rows the plan finds unchanged), those a stopped run sent (``sent_by``),
        their state record asked of ``before`` (the state folder's, for their keys): each row's outcome and
        message."""
        mine = [(row, key) for row, key in rows if key in self.sent]
        accepted = before(list(dict.fromkeys(key for _, key in mine))) if mine else {}
        told = ToldRows()
        for row, key in mine:
            record = accepted.get(key)
            found = self.sent_by(key, record.accepted_at) if record is not None else None
            if found is not None:
                told.tell(row, *found)
        return told


@dataclass
class ToldRows:
    """The rows of a run told as a stopped run's: row number -> (outcome, message), and per run its counts.

    A row repeating a told row exactly (the same person, the same leave, listed twice: ``hrimport.imports.repeats``)
    shares its outcome and message, and is one person or one leave: counted as a repeat (``repeats``), never
    as one more row that run sent, added or updated."""

    rows: dict[int, tuple[Outcome, str]] = field(default_factory=dict)
    counts: dict[StoppedRun, dict[str, int]] = field(default_factory=dict)
    runs: dict[int, StoppedRun] = field(default_factory=dict)  # row number -> the run it is told as sent by

    def tell(self, row: int, run: StoppedRun, outcome: Outcome, what: str = "") -> str:
        """Tell ``row`` as ``run`` sent it (``outcome``; ``what`` it made: ``StoppedRun.told``), counted; its
        message."""
        message = run.told(outcome, what)
        self.rows[row] = (outcome, message)
        self.count(run, outcome, row)
        return message

    def count(self, run: StoppedRun, outcome: Outcome, row: int | None = None) -> None:
        counts = self.counts.setdefault(run, {"rows": 0, "added": 0, "updated": 0, "repeats": 0})
        counts["rows"] += 1
        counts[outcome.value] += 1
        if row is not None:
            self.runs[row] = run

    def count_repeats(self, firsts: Iterable[int]) -> None:
        """Count the rows repeating told rows (``firsts``: the row each repeats) as their runs' ``repeats``."""
        for first in firsts:
            run = self.runs.get(first)
            if run is not None:
                self.counts[run]["repeats"] += 1

    def summary(self) -> list[dict[str, Any]]:
        """``summary.json``'s ``stopped_runs``: each stopped run told, oldest first, with its rows' counts."""
        return [{"started_at": run.started_at, "journal": str(run.journal), **counts}
                for run, counts in sorted(self.counts.items(), key=lambda item: item[0].started_at)]


def told_note(runs: list[dict[str, Any]], *, dry_run: bool, kind: str = "staff") -> str:
    """The report's note of the rows stopped runs of ``kind`` sent (``ToldRows.summary``)."""
    leave = kind == "timeoff"  # a time-off row is added or not: no updated to count
    parts = []
    for run in runs:
        shown = StoppedRun(Path(run["journal"]), run["started_at"]).shown_at
        counted = f"{run['added']:,} added" if leave else f"{run['added']:,} added, {run['updated']:,} updated"
        repeats = run.get("repeats", 0)
        again = (f", and {repeats:,} row{'s' if repeats != 1 else ''} listing {'it' if run['rows'] == 1 else 'one'} "
                 f"again share{'s' if repeats == 1 else ''} {'its' if run['rows'] == 1 else 'their'} outcome"
                 if repeats else "")
        parts.append(f"{run['rows']:,} row{'s' if run['rows'] != 1 else ''} {'were' if run['rows'] != 1 else 'was'} "
                     f"sent by the run of {shown} that stopped before its report ({counted}; its journal: "
                     f"{run['journal']}){again}")
    said = "; ".join(parts)
    said = f"{said[0].upper()}{said[1:]}"
    if leave and dry_run:
        return (f"{said}: the ledger holds them as already imported, and the import reports them as added, as that "
                "run's service answered them, so that no leave it added goes untold.")
    if leave:
        return (f"{said}: this report lists them as added, as that run's service answered them, where they would "
                "read already imported, so that no leave it added goes untold.")
    if dry_run:
        return (f"{said}: the plan finds them unchanged, and the import reports them as that run's service answered "
                "them, so that no one it added goes untold.")
    return (f"{said}: this report lists them as added or updated, as that run's service answered them, where they "
            "would read unchanged, so that no one it added goes untold.")


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


def stopped_runs(job_folder: Path, kind: str, current: Path, target: Target) -> list[StoppedRun]:
    """The runs of ``kind`` to ``target``'s service and customer in ``job_folder`` (both layouts: an import's run
    folder, a ``hrimport run`` step's) left with a journal and no summary, newer than the job's last ``kind`` import
    to them (not a dry run) with a report, oldest first; never the run of ``current`` (this run's report folder)."""
    if not job_folder.is_dir():
        return []
    own = current if is_run_folder(current) and current.parent == job_folder else current.parent
    found: list[StoppedRun] = []  # newest first
    try:
        # newest first, up to the last run with a report: a job's years of runs are never all read
        runs = sorted((p for p in job_folder.iterdir() if is_run_folder(p) and p != own), key=run_order, reverse=True)
        for run in runs:
            folders = [run, *sorted(p for p in run.iterdir() if p.is_dir() and not p.is_symlink())]
            for folder in reversed(folders):
                if (folder / SUMMARY_JSON).exists():
                    if _reported(folder / SUMMARY_JSON, kind, target):
                        return found[::-1]  # those before are older than a run with a report: told by it
                    continue
                journal = _stopped_journal(folder / OUTCOMES_FILE, kind, target)
                if journal is not None:
                    found.append(journal)
    except OSError:
        pass  # a folder this user may not list: the runs newer than it
    return found[::-1]


def _reported(summary: Path, kind: str, target: Target) -> bool:
    """Whether ``summary`` is that of a ``kind`` import to ``target``'s service and customer, not a dry run (one
    that cannot be read: no). A summary names where the rows went as ``describe_target`` does (two embedded
    sandboxes alike); one that names nothing is taken for this service's: it ends the walk, telling less."""
    try:
        data = json.loads(summary.read_bytes())
    except (OSError, ValueError):
        return False
    if not (isinstance(data, dict) and data.get("kind") == kind and data.get("dry_run") is False):
        return False
    shown, customer = data.get("target"), data.get("customer_id")
    return ((shown is None or shown == describe_target(target.service_url))
            and (customer is None or str(customer) == target.customer_id))


def _stopped_journal(path: Path, kind: str, target: Target) -> StoppedRun | None:
    """``path`` as a stopped run's journal of ``kind`` to ``target``'s service and customer; None when it is none
    (absent, another kind, service or customer, one naming no service, a whole run, a journal still written by its
    run, or one whose outcomes are kept to be reported)."""
    try:
        with path.open("rb") as fh:
            head = fh.readline()
            if not head.startswith(_JOURNAL) or not head.endswith(b"\n"):
                return None
            first = json.loads(head)
            if not isinstance(first, dict) or first.get("kind") != kind or not isinstance(first.get("started_at"), str):
                return None
            if first.get("service") != target.keyed_as or first.get("customer_id") != target.customer_id:
                return None  # another service's, or a journal that names none (written before they did)
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


def stopped_sends(job_folder: Path | None, kind: str, current: Path | None, target: Target) -> StoppedSends | None:
    """What the job's stopped runs of ``kind`` to ``target`` (``stopped_runs``) sent, read from their journals, each
    row by ``sent_key``; None when there are none."""
    if job_folder is None or current is None:
        return None
    runs = stopped_runs(job_folder, kind, current, target)
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
                        outcome, key = Outcome(record["outcome"]), sent_key(kind, record)
                    except (ValueError, KeyError, TypeError, AttributeError):
                        continue  # damage: that row is not told
                    if outcome not in _TOLD or key is None:
                        continue
                    held = sent.get(key)
                    if held is None or held[1] is not Outcome.ADDED:
                        sent[key] = (at, outcome)  # the oldest run that added them, else the newest
        except OSError:
            continue
    return sends if sent else None

