"""hrimport: load HRIS spreadsheet exports into an HR/payroll platform's API, with a report of every row.

Stages (each a module with plain data in and out)::

    reader -> mapper -> validate -> service (send) -> report

Using it from Python: everything a program needs is here, the rest is internal::

    from pathlib import Path
    import hrimport

    config = hrimport.load_config(Path("samples/bamboohr_staff.toml"))
    run = hrimport.import_file(config, Path("samples/bamboohr_staff.csv"), dry_run=True)
    print(run.result.verdict(), run.report.html)

The names are loaded on first use, ``__version__`` too (the package metadata it is read from costs more than
the rest of ``import hrimport``), so ``import hrimport`` (and the ``hrimport`` command's start-up) does not
pay for pandas, the readers and the reporter until they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from hrimport.config import ImportConfig, load_config
    from hrimport.errors import (
        ConfigError,
        HrimportError,
        InputFileError,
        JobLockedError,
        ServiceError,
    )
    from hrimport.imports import FileImport, import_file
    from hrimport.jobs import JobResult, load_job, run_job
    from hrimport.outcomes import Outcome, Problem, RowOutcome, RunResult
    from hrimport.reader import SourceTable, read_spreadsheet
    from hrimport.report import ReportFiles, write_report

#: Public name -> the module that defines it.
_PUBLIC = {
    "load_config": "hrimport.config",
    "ImportConfig": "hrimport.config",
    "import_file": "hrimport.imports",
    "FileImport": "hrimport.imports",
    "load_job": "hrimport.jobs",
    "run_job": "hrimport.jobs",
    "JobResult": "hrimport.jobs",
    "read_spreadsheet": "hrimport.reader",
    "SourceTable": "hrimport.reader",
    "write_report": "hrimport.report",
    "ReportFiles": "hrimport.report",
    "RunResult": "hrimport.outcomes",
    "RowOutcome": "hrimport.outcomes",
    "Outcome": "hrimport.outcomes",
    "Problem": "hrimport.outcomes",
    "HrimportError": "hrimport.errors",
    "ConfigError": "hrimport.errors",
    "InputFileError": "hrimport.errors",
    "JobLockedError": "hrimport.errors",
    "ServiceError": "hrimport.errors",
}

__all__ = [
    "ConfigError",
    "FileImport",
    "HrimportError",
    "ImportConfig",
    "InputFileError",
    "JobLockedError",
    "JobResult",
    "Outcome",
    "Problem",
    "ReportFiles",
    "RowOutcome",
    "RunResult",
    "ServiceError",
    "SourceTable",
    "__version__",
    "import_file",
    "load_config",
    "load_job",
    "read_spreadsheet",
    "run_job",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = _installed_version()
        return globals()[name]
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'hrimport' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hrimport")
    except PackageNotFoundError:  # running from a checkout without an install
        return "0.0.0+checkout"


def __dir__() -> list[str]:
    return sorted(__all__)
