"""Unattended runs: a job file names the steps of a monthly import; ``run_job`` runs them (issue 6).

A job file (TOML)::

    name = "monthly"                     # default: the file's name without .toml
    state_dir = ".hrimport"              # lock, fingerprints, time-off ledger (relative to this file)
    report_dir = "reports"               # one folder per run: reports/<name>/<YYYY-MM-DD_HHMMSS>/
    retention = 12                       # run folders kept; older ones are removed
    sandbox = false                      # true: steps with no base URL may use the embedded sandbox
    max_source_age_days = 20             # a step whose newest file is older sends nothing, exit 2 (default: any)

    [[step]]                             # steps run in file order; staff steps before time-off steps
    kind = "staff"                       # staff | timeoff
    config = "bamboohr_staff.toml"       # the import config (relative to this file)
    source = "exports/staff_*.csv"       # a file, or a glob: the newest matching file is taken

    [[step]]
    kind = "timeoff"
    config = "leave_history.toml"
    source = "exports/leave_*.xlsx"
    max_source_age_days = 40             # a step's own limit over the job's (false: any age)

    [notify]                             # optional: e-mail the verdict (see hrimport.notify)
    when = "attention"                   # always | attention (exit code not 0) | never
    host = "smtp.example.com"
    port = 587                           # default 587 with starttls, 465 with ssl, else 25
    starttls = true                      # or ssl = true for implicit TLS
    # ca_file = "relay-ca.pem"           # a private relay's CA (default: the system's CAs)
    user = "hrimport@example.com"
    password_env = "HRIMPORT_SMTP_PASSWORD"   # the NAME of the variable holding the password
    from = "hrimport@example.com"
    to = ["payroll@example.com"]

``run_job`` takes the job's lock (``hrimport.state.lock``), opens the state (``hrimport.state.store``),
and for each step: finds the source file, refuses it when it holds an export the step imported before its
last import, or when older than ``max_source_age_days`` (``freshness``; ``full`` lifts neither), skips it
when its SHA-256 is the last successful run's (unless ``full``), runs the import with the same stages,
outcomes and reports as the single commands, and remembers the file: as one of the step's exports once the
platform holds rows of it, as the last successful run's when every row was imported. The run's exit code is
the highest of its steps' (``EXIT_MEANINGS``).

One module per part: ``jobfile`` (the job file: ``Job``, ``load_job``, ``find_source``), ``freshness``
(whether a step's file is a new export, and the refusal of one too old), ``run`` (``run_job`` and its
steps, the e-mail; ``load_job_or_tell``, which e-mails a mistake in the job file), ``results``
(``StepResult``, ``JobResult``, ``EXIT_MEANINGS``), ``folders`` (run folders, ``run.json``, retention, runs
that did not finish), ``late_reports`` (the reports of earlier runs kept when their disk was full, written where
they belong) and ``runlog`` (``run.log`` with secrets hidden).
"""

from __future__ import annotations

from hrimport.jobs.folders import RUN_SUMMARY, prune_runs
from hrimport.jobs.jobfile import DEFAULT_RETENTION, Job, JobStep, find_source, load_job, parse_job
from hrimport.jobs.results import EXIT_MEANINGS, JobResult, StepResult
from hrimport.jobs.run import load_job_or_tell, run_job
from hrimport.jobs.runlog import RUN_LOG

__all__ = [
    "DEFAULT_RETENTION",
    "EXIT_MEANINGS",
    "RUN_LOG",
    "RUN_SUMMARY",
    "Job",
    "JobResult",
    "JobStep",
    "StepResult",
    "find_source",
    "load_job",
    "load_job_or_tell",
    "parse_job",
    "prune_runs",
    "run_job",
]
