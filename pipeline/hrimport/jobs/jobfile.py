"""The job file: ``load_job`` reads and checks it into a ``Job``; ``find_source`` finds a step's file.

The format is in ``hrimport.jobs``. A mistake in the job file, or in an import config it names, is a
``ConfigError`` that says what to write instead; a step's missing source file is an ``InputFileError``.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hrimport.config import ImportConfig, load_config
from hrimport.errors import ConfigError, InputFileError
from hrimport.notify import WHEN_VALUES, NotifySettings
from hrimport.tomlfile import read_toml, reject_unknown_keys

__all__ = ["DEFAULT_RETENTION", "Job", "JobStep", "StepKind", "find_source", "load_job", "parse_job", "read_notify"]

DEFAULT_RETENTION = 12
_GLOB_CHARS = re.compile(r"[*?\[]")

StepKind = Literal["staff", "timeoff"]


@dataclass(frozen=True)
class JobStep:
    """One import of a job: its kind, its loaded config and its source file or glob."""

    name: str  # unique within the job; keys the remembered source file
    kind: StepKind
    config: ImportConfig
    source: str  # as written in the job file (a path or a glob), resolved against ``base``
    base: Path
    # the oldest, in days, the file this step takes may be (``hrimport.jobs.freshness``); None: any age
    max_source_age_days: int | None = None

    @property
    def is_glob(self) -> bool:
        """Whether ``source`` is a glob (the newest matching file is taken) rather than one file."""
        return _GLOB_CHARS.search(self.source) is not None

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
    # true: a step with no base URL may use the embedded sandbox (a trial); else such a step stops the run
    sandbox: bool = False


_JOB_KEYS = {"name", "state_dir", "report_dir", "retention", "step", "notify", "sandbox", "max_source_age_days"}
_STEP_KEYS = {"kind", "config", "source", "name", "max_source_age_days"}
_NOTIFY_KEYS = {
    "when", "host", "port", "starttls", "ssl", "ca_file", "user", "password_env", "from", "to", "subject_prefix",
}


def load_job(path: str | Path) -> Job:
    """Read and check a job file and every import config it names; a mistake is a ``ConfigError``."""
    path = Path(path).absolute()  # absolute: cron starts in $HOME, and messages then name real places
    data = read_toml(path, "job file")
    return parse_job(data, path)


def read_notify(path: str | Path) -> tuple[str, NotifySettings] | None:
    """The job's name and its ``[notify]`` table, read alone: to tell the people on call of a mistake elsewhere
    in the job file or in an import config it names. None when the file cannot be read or has no usable
    ``[notify]``."""
    path = Path(path).absolute()
    try:
        data = read_toml(path, "job file")
        if "notify" not in data:
            return None
        name = data.get("name")
        name = name.strip() if isinstance(name, str) and name.strip() else path.stem
        return name, _parse_notify(data["notify"], path.name, path.parent)
    except ConfigError:
        return None


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

    sandbox = data.get("sandbox", False)
    if not isinstance(sandbox, bool):
        raise ConfigError(f"{where}: sandbox must be true or false (true lets steps with no base URL use the "
                          f"embedded sandbox)")

    max_age = _max_source_age(data, None, where)
    raw_steps = data.get("step")
    if not isinstance(raw_steps, list) or not raw_steps or not all(isinstance(s, dict) for s in raw_steps):
        raise ConfigError(
            f'{where}: needs at least one [[step]] with kind, config and source, e.g. [[step]] kind = "staff" '
            f'config = "staff.toml" source = "exports/staff_*.csv"'
        )
    steps: list[JobStep] = []
    for number, raw in enumerate(raw_steps, start=1):
        steps.append(_parse_step(raw, number, base, where, [s.name for s in steps], max_age))
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
        sandbox=sandbox,
    )


def _parse_step(raw: dict[str, Any], number: int, base: Path, where: str, taken: list[str],
                max_age: int | None) -> JobStep:
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
    return JobStep(name=name, kind=kind, config=config, source=raw["source"].strip(), base=base,
                   max_source_age_days=_max_source_age(raw, max_age, here))


def _max_source_age(table: dict[str, Any], default: int | None, here: str) -> int | None:
    """``max_source_age_days`` of the job (``default`` None) or of a step (``default`` the job's): a whole
    number of days, or false for no limit (a step's way out of the job's)."""
    value = table.get("max_source_age_days", default)
    if value is False or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{here}: max_source_age_days must be a whole number of days, at least 1 (e.g. 20 "
                          f"for a monthly export), or false for no limit")
    return value


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
    """The step's source file: the path itself, or the newest file matching its glob. A refusal does not name
    the step: every line that shows it (stderr, run.log, the e-mail) starts with the step's name."""
    pattern = step.pattern
    if not step.is_glob:
        if not pattern.is_file():
            raise InputFileError(f"source file {pattern} not found; put this month's export there or fix source "
                                 "in the job file")
        return pattern
    matches = [Path(p) for p in glob.glob(str(pattern)) if Path(p).is_file()]
    if not matches:
        raise InputFileError(f"no file matches {pattern}; put this month's export there or fix source in the "
                             "job file")
    # newest by modification time; the name breaks ties so the choice is the same on every run
    return max(matches, key=lambda p: (p.stat().st_mtime, p.name))
