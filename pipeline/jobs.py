"""Unattended runs: a job file names the steps of a monthly import; ``run_job`` runs them (issue 6).

A job file (TOML)::

    name = "monthly"                     # default: the file's name without .toml
    state_dir = ".hrimport"              # lock, fingerprints, time-off ledger (relative to this file)
    report_dir = "reports"               # one folder per run: reports/<name>/<YYYY-MM-DD_HHMMSS>/
    retention = 12                       # run folders kept; older ones are removed

    [[step]]                             # steps run in file order; staff steps before time-off steps
    kind = "staff"                       # staff | timeoff
    config = "bamboohr_staff.toml"       # the import config (relative to this file)
    source = "exports/staff_*.csv"       # a file, or a glob: the newest matching file is taken

    [[step]]
    kind = "timeoff"
    config = "leave_history.toml"
    source = "exports/leave_*.xlsx"

    [notify]                             # optional: e-mail the verdict (see pipeline.notify)
    when = "attention"                   # always | attention (exit code not 0) | never
    host = "smtp.example.com"
    port = 587                           # default 587 with starttls, 465 with ssl, else 25
    starttls = true                      # or ssl = true for implicit TLS
    # ca_file = "relay-ca.pem"           # a private relay's CA (default: the system's CAs)
    user = "hrimport@example.com"
    password_env = "HRIMPORT_SMTP_PASSWORD"   # the NAME of the variable holding the password
    from = "hrimport@example.com"
    to = ["payroll@example.com"]

``run_job`` takes the job's lock (``pipeline.lock``), opens the state (``pipeline.state``), and for each
step: finds the source file, skips it when its SHA-256 is the last successful run's (unless ``full``), runs
the import with the same stages, outcomes and reports as the single commands, and remembers the file when
every row was imported. The run's exit code is the highest of its steps' (``EXIT_MEANINGS``).
"""

from __future__ import annotations

import dataclasses
import glob
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pipeline.config import ImportConfig, load_config
from pipeline.connection import Target, open_target, resolve_connection, service_key
from pipeline.errors import (
    EXIT_INPUT,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_ROWS_NEED_ATTENTION,
    EXIT_SERVICE,
    ConfigError,
    HrimportError,
    InputFileError,
    JobLockedError,
)
from pipeline.lock import job_lock
from pipeline.notify import WHEN_VALUES, NotifyError, NotifySettings, send_mail, should_notify
from pipeline.outcomes import Progress, RunResult
from pipeline.report import ReportFiles, default_report_folder, write_report
from pipeline.report.private import make_private_folder, open_private
from pipeline.state import AcceptedStaff, StateStore, file_sha256
from pipeline.timeoff.ledger import LEDGER_LOCK
from pipeline.tomlfile import read_toml, reject_unknown_keys

__all__ = [
    "EXIT_MEANINGS", "Job", "JobResult", "JobStep", "StepResult", "find_source", "load_job", "run_job",
]

log = logging.getLogger(__name__)

DEFAULT_RETENTION = 12
RUN_LOG = "run.log"
RUN_SUMMARY = "run.json"  # marks a folder as a ``hrimport run`` folder: only those are ever pruned
_RUN_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}_\d{6}(-\d+)?")
_GLOB_CHARS = re.compile(r"[*?\[]")

#: What each exit code means for whoever is on call (also in the README and the e-mail).
EXIT_MEANINGS = {
    EXIT_OK: "everything imported (or already imported): nothing to do",
    EXIT_ROWS_NEED_ATTENTION: "some rows need attention: send report.html and to_fix to HR; they fix the rows "
    "and the next run imports them",
    EXIT_INPUT: "a usage, config or input-file error: fix the job file, config or source file it names, "
    "then run again",
    EXIT_LOCKED: "another run of the same job is in progress: nothing was done; if that run is stuck, end it "
    "and run again",
    EXIT_SERVICE: "the service was unreachable or refused the token: check the service and the token "
    "variable, then run again (nothing is imported twice)",
}

StepKind = Literal["staff", "timeoff"]
StepStatus = Literal["imported", "already_imported", "error", "not_run"]
ProgressBar = Callable[[str], AbstractContextManager[Progress | None]]


# ------------------------------------------------------------------------------------------ job file


@dataclass(frozen=True)
class JobStep:
    """One import of a job: its kind, its loaded config and its source file or glob."""

    name: str  # unique within the job; keys the remembered source file
    kind: StepKind
    config: ImportConfig
    source: str  # as written in the job file (a path or a glob), resolved against ``base``
    base: Path

    @property
    def pattern(self) -> Path:
        source = Path(self.source).expanduser()
        return source if source.is_absolute() else self.base / source


@dataclass(frozen=True)
class Job:
    """A whole job file."""

    path: Path
    name: str
    state_dir: Path
    report_dir: Path
    retention: int
    steps: tuple[JobStep, ...]
    notify: NotifySettings | None = None


_JOB_KEYS = {"name", "state_dir", "report_dir", "retention", "step", "notify"}
_STEP_KEYS = {"kind", "config", "source", "name"}
_NOTIFY_KEYS = {
    "when", "host", "port", "starttls", "ssl", "ca_file", "user", "password_env", "from", "to", "subject_prefix",
}


def load_job(path: str | Path) -> Job:
    """Read and check a job file and every import config it names; a mistake is a ``ConfigError``."""
    path = Path(path).absolute()  # absolute: cron starts in $HOME, and messages then name real places
    data = read_toml(path, "job file")
    return parse_job(data, path)


def parse_job(data: dict[str, Any], path: Path) -> Job:
    """Check a job already parsed from TOML (relative paths are taken from ``path``'s folder)."""
    where = path.name
    base = path.parent
    reject_unknown_keys(data, _JOB_KEYS, where)
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f'{where}: name must be a non-empty text, e.g. name = "monthly"')
    retention = data.get("retention", DEFAULT_RETENTION)
    if isinstance(retention, bool) or not isinstance(retention, int) or retention < 1:
        raise ConfigError(f"{where}: retention must be a whole number of runs, at least 1 (default {DEFAULT_RETENTION})")

    raw_steps = data.get("step")
    if not isinstance(raw_steps, list) or not raw_steps or not all(isinstance(s, dict) for s in raw_steps):
        raise ConfigError(
            f'{where}: needs at least one [[step]] with kind, config and source, e.g. [[step]] kind = "staff" '
            f'config = "staff.toml" source = "exports/staff_*.csv"'
        )
    steps: list[JobStep] = []
    for number, raw in enumerate(raw_steps, start=1):
        steps.append(_parse_step(raw, number, base, where, [s.name for s in steps]))
    kinds = [s.kind for s in steps]
    if "timeoff" in kinds and "staff" in kinds and kinds.index("timeoff") < len(kinds) - kinds[::-1].index("staff") - 1:
        raise ConfigError(
            f"{where}: put the staff step(s) before the time-off step(s): new hires must exist before their "
            f"time off is imported"
        )
    return Job(
        path=path,
        name=name.strip(),
        state_dir=_path(data, "state_dir", ".hrimport", base, where),
        report_dir=_path(data, "report_dir", "reports", base, where),
        retention=retention,
        steps=tuple(steps),
        notify=_parse_notify(data["notify"], where, base) if "notify" in data else None,
    )


def _parse_step(raw: dict[str, Any], number: int, base: Path, where: str, taken: list[str]) -> JobStep:
    here = f"{where} step {number}"
    reject_unknown_keys(raw, _STEP_KEYS, here)
    kind = raw.get("kind")
    if kind not in ("staff", "timeoff"):
        raise ConfigError(f'{here}: kind must be "staff" or "timeoff", not {kind!r}')
    for key in ("config", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(f"{here}: {key} must be a path (relative to the job file), e.g. {key} = "
                              f"{'staff.toml' if key == 'config' else 'exports/staff_*.csv'!r}")
    config_path = Path(raw["config"]).expanduser()
    config = load_config(config_path if config_path.is_absolute() else base / config_path)
    section = config.staff if kind == "staff" else config.timeoff
    if section is None:
        raise ConfigError(f"{here}: {config.path} has no [{kind}] section, so it cannot drive a {kind} step")
    name = raw.get("name", kind)
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{here}: name must be a non-empty text")
    if "name" not in raw and name in taken:
        name = f"{kind}-{number}"
    if name in taken:
        raise ConfigError(f"{here}: another step is already named {name!r}; give each step its own name")
    return JobStep(name=name, kind=kind, config=config, source=raw["source"].strip(), base=base)


def _parse_notify(raw: Any, where: str, base: Path) -> NotifySettings:
    here = f"{where} [notify]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: notify must be a table ([notify])")
    if any(k.lower() in ("password", "smtp_password") for k in raw):
        raise ConfigError(f"{here}: never put the password in a file; set password_env to the name of the "
                          f"environment variable that holds it")
    reject_unknown_keys(raw, _NOTIFY_KEYS, here)
    to = raw.get("to")
    if isinstance(to, str):
        to = [to]
    if not isinstance(to, list) or not to or not all(isinstance(t, str) and "@" in t for t in to):
        raise ConfigError(f'{here}: to must list the addresses to tell, e.g. to = ["payroll@example.com"]')
    sender = raw.get("from")
    if not isinstance(sender, str) or "@" not in sender:
        raise ConfigError(f'{here}: from must be the sender address, e.g. from = "hrimport@example.com"')
    when = raw.get("when", "attention")
    if when not in WHEN_VALUES:
        raise ConfigError(f"{here}: when must be one of {', '.join(WHEN_VALUES)}, not {when!r}")
    for key in ("starttls", "ssl"):
        if not isinstance(raw.get(key, False), bool):
            raise ConfigError(f"{here}: {key} must be true or false")
    use_ssl = raw.get("ssl", False)
    starttls = raw.get("starttls", False)
    if use_ssl and starttls:
        raise ConfigError(f"{here}: choose starttls (usually port 587) or ssl (usually port 465), not both")
    port = raw.get("port", 465 if use_ssl else 587 if starttls else 25)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError(f"{here}: port must be a port number, e.g. 587")
    for key in ("host", "user", "password_env", "subject_prefix", "ca_file"):
        if key in raw and not isinstance(raw[key], str):
            raise ConfigError(f"{here}: {key} must be text")
    if raw.get("user") and not raw.get("password_env"):
        raise ConfigError(f"{here}: user is set but password_env is not: name the environment variable that "
                          f"holds the SMTP password")
    ca_file = None
    if raw.get("ca_file"):
        ca_file = Path(raw["ca_file"]).expanduser()
        ca_file = ca_file if ca_file.is_absolute() else base / ca_file
        if not ca_file.is_file():
            raise ConfigError(f"{here}: ca_file {ca_file} does not exist")
    return NotifySettings(
        to=tuple(to), sender=sender, host=raw.get("host", "localhost"), port=port, starttls=starttls,
        ssl=use_ssl, ca_file=ca_file, user=raw.get("user") or None, password_env=raw.get("password_env") or None, when=when,
        subject_prefix=raw.get("subject_prefix", "[hrimport]"),
    )


def _path(data: dict[str, Any], key: str, default: str, base: Path, where: str) -> Path:
    value = data.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a folder path")
    path = Path(value).expanduser()
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


def find_source(step: JobStep) -> Path:
    """The step's source file: the path itself, or the newest file matching its glob."""
    pattern = step.pattern
    if not _GLOB_CHARS.search(step.source):
        if not pattern.is_file():
            raise InputFileError(f"step {step.name}: source file {pattern} not found; put this month's export "
                                 f"there or fix source in the job file")
        return pattern
    matches = [Path(p) for p in glob.glob(str(pattern)) if Path(p).is_file()]
    if not matches:
        raise InputFileError(f"step {step.name}: no file matches {pattern}; put this month's export there or "
                             f"fix source in the job file")
    # newest by modification time; the name breaks ties so the choice is the same on every run
    return max(matches, key=lambda p: (p.stat().st_mtime, p.name))


# ------------------------------------------------------------------------------------------ results


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
    pruned: list[Path] = field(default_factory=list)
    error: str | None = None  # a failure of the run as a whole (the lock)
    error_code: int = EXIT_OK

    @property
    def exit_code(self) -> int:
        """The highest exit code of the steps (and of the run's own failure)."""
        return max([self.error_code, *(s.exit_code for s in self.steps)])

    @property
    def log_path(self) -> Path | None:
        return self.folder / RUN_LOG if self.folder else None

    def verdict(self) -> str:
        """One line: what happened, for the e-mail subject and the last line on stderr."""
        if self.error:
            return self.error
        if self.steps and all(s.status == "already_imported" for s in self.steps):
            return "already imported: the source files are the ones imported last time"
        code = self.exit_code
        if code == EXIT_OK:
            return "everything imported"
        if code == EXIT_ROWS_NEED_ATTENTION:
            rows = sum(len(s.result.need_attention) for s in self.steps if s.result is not None)
            return f"{rows:,} row{'s' if rows != 1 else ''} need{'s' if rows == 1 else ''} attention"
        failed = next(s for s in self.steps if s.exit_code == code)
        return f"{failed.name} step failed: {failed.message}"


# --------------------------------------------------------------------------------------------- run


def run_job(
    job: Job,
    *,
    full: bool = False,
    base_url: str | None = None,
    echo: Callable[[str], None] | None = None,
    progress_bar: ProgressBar | None = None,
) -> JobResult:
    """Run every step of ``job`` under its lock; never raises for a failed step (see ``StepResult``).

    ``full`` sends every row and ignores the remembered source files; ``base_url`` overrides every step's
    service URL. ``echo`` receives one line per step (the CLI prints it on stderr); ``progress_bar(label)``
    may give a progress callback per step (the CLI's draws a bar on a terminal only). Raises
    ``JobLockedError`` (exit 3) when another run of the job holds the lock, after telling ``[notify]``.
    """
    say = echo or (lambda line: None)
    started = datetime.now().astimezone()
    result = JobResult(job.name, started.isoformat(timespec="seconds"), None)
    try:
        with job_lock(job.state_dir, job.name):
            _run_locked(job, result, started, full=full, base_url=base_url, say=say, progress_bar=progress_bar)
    except JobLockedError as exc:
        result.error, result.error_code = f"not started: {exc}", EXIT_LOCKED
        _notify(job, result, say)
        raise
    return result


def _run_locked(
    job: Job, result: JobResult, started: datetime, *, full: bool, base_url: str | None,
    say: Callable[[str], None], progress_bar: ProgressBar | None,
) -> None:
    """The run itself, under the job's lock: its folder and log, the steps, retention, the e-mail."""
    result.folder = _new_run_folder(job, started)
    with _run_log(result.folder / RUN_LOG, job) as secrets:
        log.info("job %s (%s) started%s", job.name, job.path, " with --full" if full else "")
        with StateStore.open(job.state_dir) as state:
            for step in job.steps:
                if any(s.exit_code == EXIT_SERVICE for s in result.steps):
                    # the service is down or refuses the token: later steps would only wait out retries
                    outcome = StepResult(step.name, step.kind, "not_run", EXIT_OK,
                                         "not run: the service could not be used in an earlier step")
                else:
                    outcome = _run_step(job, step, state, full=full, base_url=base_url, secrets=secrets,
                                        folder=result.folder, progress_bar=progress_bar)
                result.steps.append(outcome)
                log.info("step %s: %s (exit %d)", step.name, outcome.message, outcome.exit_code)
                say(f"{step.name}: {outcome.message}")
        result.finished_at = datetime.now().astimezone().isoformat(timespec="seconds")
        log.info("job %s finished: %s (exit %d: %s)", job.name, result.verdict(), result.exit_code,
                 EXIT_MEANINGS[result.exit_code])
        _write_run_summary(result)
        result.pruned = prune_runs(job.report_dir, job.name, job.retention, keep=result.folder)
        for folder in result.pruned:
            log.info("removed the old run folder %s (retention %d runs)", folder, job.retention)
        _notify(job, result, say)
        _write_run_summary(result)  # again: now with whether the e-mail went


def _run_step(
    job: Job, step: JobStep, state: StateStore, *, full: bool, base_url: str | None, secrets: list[str],
    folder: Path, progress_bar: ProgressBar | None,
) -> StepResult:
    """One step: find the file, skip it if already imported, import it, write its report."""
    source: Path | None = None
    digest: str | None = None
    try:
        source = find_source(step)
        digest = file_sha256(source)
        log.info("step %s: %s file %s (sha256 %s)", step.name, step.kind, source, digest)
        last = state.last_import(job.name, step.name)
        if not full and last is not None and last.sha256 == digest:
            return StepResult(
                step.name, step.kind, "already_imported", EXIT_OK,
                f"already imported: {source.name} is the file imported on {last.imported_at}; nothing sent "
                f"(run with --full to import it again)", source, digest,
            )
        # the job's state folder holds everything a step remembers (time-off ledger included)
        config = dataclasses.replace(step.config, state_dir=job.state_dir)
        conn = resolve_connection(config.service, base_url=base_url)
        secrets.append(conn.token)
        bar = progress_bar(f"{step.name}: sending") if progress_bar else _no_progress()
        accepted = state.accepted(service_key(conn))
        with open_target(conn) as target, bar as progress:
            run = _import(step.kind, config, source, target, accepted, full=full, progress=progress)
        report = write_report(run, folder / _safe(step.name))
        if run.exit_code == EXIT_OK:
            state.record_import(job.name, step.name, digest, source)
        message = f"{run.verdict()} ({source.name}); report {report.html}"
        return StepResult(step.name, step.kind, "imported", run.exit_code, message, source, digest, run, report)
    except HrimportError as exc:
        log.error("step %s: %s", step.name, exc)
        return StepResult(step.name, step.kind, "error", exc.exit_code, f"Error: {exc}", source, digest)
    except OSError as exc:  # e.g. the source file vanished or became unreadable between find and read
        log.error("step %s: %s", step.name, exc)
        return StepResult(step.name, step.kind, "error", EXIT_INPUT,
                          f"Error: cannot read {exc.filename or source}: {exc.strerror}", source, digest)


def _import(
    kind: StepKind, config: ImportConfig, source: Path, target: Target, state: AcceptedStaff, *, full: bool,
    progress: Progress | None,
) -> RunResult:
    """Run the single command's import function for this kind of step."""
    if kind == "staff":
        from pipeline.staff_import import import_staff

        return import_staff(config, source, target, state=state, full=full, progress=progress)
    from pipeline.timeoff.importer import import_timeoff

    # the ledger's own lock, the one `hrimport timeoff import` takes: the two never post from one ledger at once
    with job_lock(config.state_dir, LEDGER_LOCK):
        return import_timeoff(config, source, target, progress=progress)


@contextmanager
def _no_progress() -> Iterator[None]:
    yield None


# ----------------------------------------------------------------------------------- folders and log


def _new_run_folder(job: Job, started: datetime) -> Path:
    """``report_dir/<job>/<YYYY-MM-DD_HHMMSS>/``, with ``-2``, ``-3``... for runs started in the same second."""
    folder = default_report_folder(job.report_dir, job.name, started)
    # after the last folder of the same second, never in a gap left by pruning: names stay in run order
    same_second = [p.name for p in folder.parent.glob(f"{folder.name}*") if _RUN_FOLDER.fullmatch(p.name)]
    n = max((_run_sort_key(Path(name))[1] for name in same_second), default=0)
    while True:
        candidate = folder if n == 0 else folder.with_name(f"{folder.name}-{n + 1}")
        try:
            make_private_folder(candidate.parent)
            candidate.mkdir(mode=0o700)
            return candidate
        except FileExistsError:
            n += 1
        except OSError as exc:
            raise ConfigError(f"cannot create the report folder {candidate}: {exc.strerror}; check report_dir "
                              f"in {job.path.name}") from None


class _Redact(logging.Filter):
    """Replace any secret (the token, the SMTP password) that might reach a log line."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        for secret in self.secrets:
            if secret and len(secret) >= 4 and secret in message:
                message = message.replace(secret, "<hidden>")
        record.msg, record.args = message, None
        return True


class _HandOn(logging.Handler):
    """Give the parent loggers (the CLI's stderr line) only what they got before the run log lowered the
    level to INFO: the run's INFO lines belong in run.log, not on stderr."""

    def __init__(self, logger: logging.Logger, level: int) -> None:
        super().__init__(level)
        self.parent = logger.parent

    def emit(self, record: logging.LogRecord) -> None:
        if self.parent is not None:
            self.parent.handle(record)


@contextmanager
def _run_log(path: Path, job: Job) -> Iterator[list[str]]:
    """Log the ``pipeline`` package to the run's ``run.log``; yields the list of secrets to keep out of it."""
    secrets: list[str] = []
    if job.notify and job.notify.password_env:
        secrets.append(os.environ.get(job.notify.password_env, ""))
    stream = open_private(path, "w")  # 0600: the log names files and people's rows
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    redact = _Redact(secrets)
    handler.addFilter(redact)
    package = logging.getLogger("pipeline")
    level, propagate = package.level, package.propagate
    hand_on = _HandOn(package, package.getEffectiveLevel())
    hand_on.addFilter(redact)
    package.setLevel(min(logging.INFO, package.getEffectiveLevel()))
    package.propagate = False
    package.addHandler(handler)
    package.addHandler(hand_on)
    try:
        yield secrets
    except BaseException:
        log.exception("the run stopped on an unexpected error")
        raise
    finally:
        package.removeHandler(hand_on)
        package.removeHandler(handler)
        package.setLevel(level)
        package.propagate = propagate
        handler.close()
        stream.close()  # a StreamHandler never closes its stream


def _write_run_summary(result: JobResult) -> None:
    """``run.json``: the run in numbers for monitoring, and the mark that lets retention prune the folder."""
    assert result.folder is not None
    data = {
        "job": result.job,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "exit_code": result.exit_code,
        "meaning": EXIT_MEANINGS[result.exit_code],
        "verdict": result.verdict(),
        "notified": result.notified,
        "notify_error": result.notify_error,
        "steps": [
            {
                "name": s.name, "kind": s.kind, "status": s.status, "exit_code": s.exit_code,
                "message": s.message, "source": str(s.source) if s.source else None, "sha256": s.sha256,
                "counts": s.result.counts() if s.result else None,
                "report": str(s.report.html) if s.report else None,
            }
            for s in result.steps
        ],
    }
    with open_private(result.folder / RUN_SUMMARY, "w") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)


def prune_runs(report_dir: Path, job: str, retention: int, *, keep: Path | None = None) -> list[Path]:
    """Remove this job's run folders beyond the ``retention`` newest; returns the folders removed.

    Only folders that ``hrimport run`` made (named by their start time, holding ``run.json``) are
    considered, so nothing else under the report folder is ever deleted.
    """
    parent = default_report_folder(report_dir, job, datetime.now()).parent
    if not parent.is_dir():
        return []
    runs = sorted(
        (p for p in parent.iterdir()
         if p.is_dir() and not p.is_symlink() and _RUN_FOLDER.fullmatch(p.name) and (p / RUN_SUMMARY).is_file()),
        key=_run_sort_key,
    )
    old = [p for p in runs[:-retention] if keep is None or p != keep]
    for folder in old:
        shutil.rmtree(folder, ignore_errors=True)
    return old


def _run_sort_key(folder: Path) -> tuple[str, int]:
    """``2024-05-01_090000-2`` -> ``("2024-05-01_090000", 2)``: start time, then the same-second counter."""
    stamp, suffix = folder.name[:17], folder.name[18:]
    return stamp, int(suffix) if suffix else 1


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-") or "step"


# ------------------------------------------------------------------------------------------ e-mail


def _notify(job: Job, result: JobResult, say: Callable[[str], None]) -> None:
    """E-mail the verdict when the job's ``[notify]`` says so; a failure is logged and said, never raised."""
    if not should_notify(job.notify, result.exit_code):
        return
    assert job.notify is not None
    reports = [s for s in result.steps if s.report is not None]
    attachments: list[tuple[str, Path]] = []
    for step in reports:
        assert step.report is not None
        for path in (step.report.html, step.report.to_fix):
            if path is not None:
                # two steps both have a report.html: name each after its step
                attachments.append((path.name if len(reports) == 1 else f"{_safe(step.name)}-{path.name}", path))
    subject = f"{job.name}: {result.verdict()} (exit {result.exit_code})"
    lines = [f"hrimport job {job.name!r} ({job.path}), started {result.started_at}.", ""]
    lines += [f"- {s.name}: {s.message}" for s in result.steps]
    if result.error:
        lines.append(result.error)
    lines += ["", f"Exit code {result.exit_code}: {EXIT_MEANINGS[result.exit_code]}."]
    if result.folder is not None:
        lines.append(f"Report folder: {result.folder} (log: {RUN_LOG}).")
    t = time.perf_counter()
    try:
        send_mail(job.notify, subject, "\n".join(lines) + "\n", attachments)
    except (NotifyError, ConfigError) as exc:
        result.notify_error = str(exc)
        log.error("e-mail not sent: %s", exc)
        say(f"Error: e-mail not sent: {exc}")
        return
    result.notified = True
    log.info("e-mailed the verdict to %s in %.1f s", ", ".join(job.notify.to), time.perf_counter() - t)
