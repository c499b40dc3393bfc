"""A time-off ledger gone missing: found before any leave is sent twice, and rebuilt from the reports.

The ledger (``hrimport.state.ledger``) is what keeps a time-off import from sending a leave twice, and it
lives in the state folder. A job copied to a new machine without that folder (``.hrimport/``, a dot folder,
is easily left behind) has a ledger that knows nothing, while its report folder still holds the reports of
the imports that sent the time off. The platform's interface lists no time off (spec: no such endpoint), so
those reports are the only other record of what the platform holds:

- ``missing_ledger``: why an import stops (exit 2) when the ledger knows no time off sent to the service for
  the customer, but the job's reports show imports that sent some;
- ``earlier_imports_to``: the job's earlier imports to a service, which a staff import whose state folder knows
  none of them also tells in a note (``hrimport.imports``);
- ``rebuild_ledger`` (``hrimport timeoff rebuild-ledger``): every record those reports list as added or
  already imported, written back into the ledger as stored, so the next import sends only what is new.

The embedded sandbox keeps its records in the state folder too: a lost folder took them with it, so it is
never stopped for this.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hrimport.errors import ConfigError
from hrimport.outcomes import Outcome, read_outcomes
from hrimport.report.history import OUTCOMES_FILE, EarlierImports, earlier_imports, job_folder, report_folders
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target, service_host
from hrimport.state.ledger import Ledger, LedgerEntry, LedgerKey, open_ledger
from hrimport.timeoff.leave_types import ledger_name

if TYPE_CHECKING:
    from hrimport.config import ImportConfig

__all__ = ["Rebuilt", "earlier_imports_to", "missing_ledger", "rebuild_ledger", "rebuild_ledgers", "timeoff_imports"]

_RECORD_ID = re.compile(r"time-off record (\d+)")


def earlier_imports_to(history: Path, kind: str, service_url: str, customer_id: str) -> EarlierImports | None:
    """What the job's earlier ``kind`` imports (``history``: its report folder) sent to the service at
    ``service_url`` for ``customer_id``, or None; always None for the embedded sandbox, whose records live in the
    state folder too (a lost folder took them with it)."""
    if service_url == EMBEDDED_SANDBOX:
        return None
    return earlier_imports(history, kind, describe_target(service_url), customer_id)


def missing_ledger(ledger: Ledger, state_dir: Path, history: Path, service_url: str, customer_id: str) -> str:
    """Why the import stops, when ``ledger`` knows nothing of this service and customer (checked by the caller)
    but the job's earlier imports (``history``: its report folder) sent them time off; "" otherwise."""
    earlier = earlier_imports_to(history, "timeoff", service_url, customer_id)
    if earlier is None:
        return ""
    return (f"the time-off ledger {ledger.path} knows no time off sent to this service for customer {customer_id}, "
            f"but {earlier.runs:,} earlier import(s) in {history} sent some ({earlier.added:,} record(s) added; the "
            f"last: {earlier.last.parent}): the state folder was lost or moved, and sending this file could book "
            f"leave twice. Bring the folder back to {state_dir} (a folder whose name starts with a dot is easily "
            "left behind when copying), or rebuild the ledger from those reports with hrimport timeoff "
            "rebuild-ledger, or, if that time off is not on the platform, run again with --new-ledger")


@dataclass
class Rebuilt:
    """What ``rebuild_ledger`` did."""

    ledger: Path  # the ledger file
    history: Path  # the job's report folder read
    reports: int = 0  # reports read
    records: int = 0  # records added to the ledger (those it held already are kept as they were)
    unread: list[str] = field(default_factory=list)  # reports that could not be read, each with why


def rebuild_ledger(ledger: Ledger, history: Path, *, service_url: str, service: str,
                   customer_id: str) -> Rebuilt:
    """Write into ``ledger`` every record the time-off reports in ``history`` (a job's report folder) list as
    added or already imported by ``service_url`` for ``customer_id``, as stored under ``service`` (the ledger's
    name of the service), oldest report first: each report folder's outcomes file, whole runs only (a run that
    stopped before its report, even with its summary missing, wrote the whole run there). A time-off run killed
    before it finished left only its journal, not a whole run: it is listed in ``unread``, its rows not taken for
    on the platform."""
    done = Rebuilt(ledger.path, history)
    target = describe_target(service_url)
    for folder in report_folders(history):
        outcomes = folder / OUTCOMES_FILE
        try:
            run = read_outcomes(outcomes)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            if _journal_kind(outcomes) == "timeoff":
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                done.unread.append(f"{folder}: {reason}")
            continue
        info = run.info
        if (info.kind != "timeoff" or info.dry_run or describe_target(info.service_url) != target
                or info.customer_id != customer_id):
            continue
        entries: list[LedgerEntry] = []
        for row in run.rows:
            details = row.details or {}
            name, start, end = (details.get(key, "") for key in ("leave_type", "start_date", "end_date"))
            if row.outcome not in (Outcome.ADDED, Outcome.ALREADY_IMPORTED) or not (name and start and end):
                continue
            # the ledger's key names the type in English, as the import's does (年假 and Annual Leave are one)
            leave_type = ledger_name(name)
            record = _RECORD_ID.search(row.message)
            entries.append(LedgerEntry(
                LedgerKey(service, customer_id, row.external_id, leave_type, start, end),
                int(record.group(1)) if record else None, details.get("total_days", ""), info.source.name,
                row.row, info.started_at))
        done.records += ledger.add_stored(entries)
        done.reports += 1
    return done


def _journal_kind(path: Path) -> str:
    """The kind ("staff", "timeoff") a run's outcomes file names in its first line, or "" when it names none."""
    try:
        with path.open("rb") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return ""
    kind = first.get("kind") if isinstance(first, dict) else None
    return kind if isinstance(kind, str) else ""


def timeoff_imports(path: Path, *, report_dir: Path | None = None,
                    what: str = "there is no time-off ledger to rebuild") -> list[tuple[ImportConfig, Path, Path]]:
    """The time-off imports of an import config (its state folder, its ``[report]`` folder's job folder, or
    ``report_dir``'s) or of a job file (each time-off step, with the job's state folder and report folder):
    (config, state folder, job's report folder) each. ``ConfigError`` (``what`` says what follows) for a file
    with no time-off import."""
    # here: the job's and the config's loaders are needed by these commands only
    from hrimport.config import load_config
    from hrimport.jobs import load_job
    from hrimport.tomlfile import read_toml

    if "step" in read_toml(path, "job file or import config"):
        job = load_job(path)
        imports = [(step.config, job.state_dir, job_folder(job.report_dir, job.name))
                   for step in job.steps if step.kind == "timeoff"]
        if not imports:
            raise ConfigError(f"{path.name} has no time-off step: {what}")
        return imports
    config = load_config(path)
    if config.timeoff is None:
        raise ConfigError(f"{path.name} has no [timeoff] section: {what}")
    return [(config, config.state_dir, job_folder(report_dir or config.report.folder, config.report.job))]


def rebuild_ledgers(path: Path, *, base_url: str | None = None, report_dir: Path | None = None) -> list[Rebuilt]:
    """``hrimport timeoff rebuild-ledger``: rebuild the ledger of an import config's state folder from the
    reports in its ``[report]`` folder (``report_dir`` instead), or, for a job file, the ledger of the job's state
    folder from the job's reports, for each of its time-off steps. Raises ``ConfigError`` for a config with no
    time-off import, a step bound for the embedded sandbox (whose records went with the state folder) and for
    reports none of which sent time off to that service and customer."""
    from hrimport.service.connection import resolve_connection, service_key

    done = []
    for config, state_dir, history in timeoff_imports(path, report_dir=report_dir):
        conn = resolve_connection(config.service, base_url=base_url, sending=False)  # the key only: no token
        if conn.base_url is None:
            raise ConfigError(f"{config.path.name} sends to the embedded sandbox, which keeps its time off in the state "
                              "folder: a lost folder took it with it, and there is no ledger to rebuild")
        customer_id = conn.customer_id or ""
        with open_ledger(state_dir) as ledger:
            rebuilt = rebuild_ledger(ledger, history, service_url=service_host(conn.base_url),
                                     service=service_key(conn), customer_id=customer_id)
        if not rebuilt.reports and not rebuilt.unread:
            raise ConfigError(f"{history} holds no report of a time-off import that sent time off to "
                              f"{describe_target(service_host(conn.base_url))} for customer {customer_id}: "
                              "nothing to rebuild the ledger from")
        done.append(rebuilt)
    return done
