"""The demo: the embedded sandbox, the sample exports imported into it, a report for each.

``make demo`` runs ``hrimport demo``; it needs no credentials and no network beyond loopback.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from pathlib import Path

from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.outcomes import RunResult
from hrimport.report import ReportFiles
from hrimport.resources import data_dir
from hrimport.sandbox.embedded import running_sandbox
from hrimport.service.client import open_client
from hrimport.service.connection import SANDBOX_CUSTOMER_ID, SANDBOX_CUSTOMER_TOKEN, Target
from hrimport.service.urls import EMBEDDED_SANDBOX

#: (config, export) pairs in samples/, in the order a real month runs them: staff before time off
STAFF_SAMPLES = [("bamboohr_staff.toml", "bamboohr_staff.csv"), ("workday_staff.toml", "workday_staff.xlsx")]
TIMEOFF_SAMPLES = [("leave_history.toml", "leave_history.xlsx")]


@dataclass
class DemoStep:
    config: Path
    source: Path
    result: RunResult
    report: ReportFiles


def run_demo(
    output: Path, *, port: int = 0, on_url: Callable[[str], None] | None = None
) -> Generator[DemoStep, None, None]:
    """Start the sandbox on a fresh database in ``output``, import each sample, write its report."""
    output.mkdir(parents=True, exist_ok=True)
    db = output / "sandbox.db"
    state = output / ".hrimport"
    # a demo starts from the demo dataset every time, and so from an empty time-off ledger
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)
    shutil.rmtree(state, ignore_errors=True)
    samples = data_dir("samples")
    with running_sandbox(db, port=port) as url, open_client(url, SANDBOX_CUSTOMER_TOKEN) as client:
        if on_url:
            on_url(url)
        # the demo's reports say, like any run's, that their rows went to the embedded sandbox
        target = Target(client, SANDBOX_CUSTOMER_ID, EMBEDDED_SANDBOX, f"demo-sandbox:{db.resolve()}")
        for config_name, source_name in [*STAFF_SAMPLES, *TIMEOFF_SAMPLES]:
            config_path, source = samples / config_name, samples / source_name
            if not config_path.exists() or not source.exists():
                continue
            config = replace(load_config(config_path), state_dir=state)
            run = import_file(config, source, target=target, report_dir=output / "reports")
            assert run.report is not None
            yield DemoStep(config.path, source, run.result, run.report)
