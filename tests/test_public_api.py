"""What a Python program may use: ``import hrimport`` and the names it exports, pinned.

A name added here is a promise to keep it; a name removed breaks someone's script. This test makes either
a deliberate change.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hrimport

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

PUBLIC = [
    "ConfigError", "FileImport", "HrimportError", "ImportConfig", "InputFileError", "JobLockedError", "JobResult",
    "Outcome", "Problem", "ReportFiles", "RowOutcome", "RunResult", "ServiceError", "SourceTable", "__version__",
    "import_file", "load_config", "load_job", "read_spreadsheet", "run_job", "write_report",
]


def test_the_public_names_are_exactly_these_and_each_resolves() -> None:
    assert sorted(hrimport.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(hrimport, name) is not None, name


def test_importing_hrimport_loads_no_pandas_until_a_name_is_used() -> None:
    code = "import sys, hrimport; print('pandas' in sys.modules); hrimport.read_spreadsheet; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_a_python_program_validates_a_sample_and_writes_its_report(tmp_path: Path) -> None:
    config = hrimport.load_config(SAMPLES / "bamboohr_staff.toml")
    run = hrimport.import_file(config, SAMPLES / "bamboohr_staff.csv", dry_run=True, report_dir=tmp_path)
    assert isinstance(run, hrimport.FileImport) and isinstance(run.result, hrimport.RunResult)
    assert run.report is not None and run.report.html.is_file() and run.report.html.is_relative_to(tmp_path)
    assert len(run.result.rows) > 0
    assert all(row.outcome in (hrimport.Outcome.VALID, hrimport.Outcome.INVALID) for row in run.result.rows)
