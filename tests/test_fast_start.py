"""A command loads what it uses, and no more (issue 17): ``hrimport --help``, ``sandbox --help``,
``leave-days`` and ``customers`` answer without importing pandas and the readers, the reporter or the
sandbox's server, which took a second of every start before.

Each command runs in a child process with Python's import log (``PYTHONPROFILEIMPORTTIME``), which names every
module the process imported; no timing is asserted (the machine's load is not the code's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.child_process import Finished, run_hrimport

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

DATA_FRAMES = {"pandas", "pandera", "pyarrow"}
REPORTER = {"jinja2", "xlsxwriter", "openpyxl"}
SANDBOX_SERVER = {"fastapi", "uvicorn"}


def logged_imports(*args: str | Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Finished, set[str]]:
    """Run ``hrimport ARGS``; return what it did and the top-level packages it imported."""
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")  # "import time: self | cumulative | module" lines on stderr
    finished = run_hrimport(*args, cwd=cwd)
    packages = {line.rsplit("|", 1)[1].strip().split(".")[0]
                for line in finished.stderr.splitlines() if line.startswith("import time:")}
    assert "click" in packages, "the import log was not read"  # every command imports click
    return finished, packages


def test_help_lists_every_command_and_loads_no_subsystem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    finished, packages = logged_imports("--help", cwd=tmp_path, monkeypatch=monkeypatch)
    assert finished.exit_code == 0
    for command in ("staff", "timeoff", "run", "init", "leave-days", "customers", "report", "demo", "sandbox"):
        assert f"  {command} " in finished.stdout, command
    assert packages & (DATA_FRAMES | REPORTER | SANDBOX_SERVER) == set()
    assert "httpx" not in packages  # not even the HTTP client: --help sends nothing


def test_sandbox_help_does_not_start_loading_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    finished, packages = logged_imports("sandbox", "--help", cwd=tmp_path, monkeypatch=monkeypatch)
    assert finished.exit_code == 0 and "  serve " in finished.stdout
    assert packages & (DATA_FRAMES | REPORTER | SANDBOX_SERVER) == set()


def test_leave_days_asks_the_service_with_the_http_client_alone(
    sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    finished, packages = logged_imports("leave-days", "SG", "2024-03-04", "2024-03-08", "--base-url",
                                        sandbox.base_url, cwd=tmp_path, monkeypatch=monkeypatch)
    assert (finished.exit_code, finished.stdout) == (0, "5\n")
    assert "httpx" in packages
    assert packages & (DATA_FRAMES | REPORTER | SANDBOX_SERVER) == set()


def test_customers_lists_them_with_the_http_client_alone(
    sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-vendor")
    finished, packages = logged_imports("customers", "--base-url", sandbox.base_url, cwd=tmp_path,
                                        monkeypatch=monkeypatch)
    assert finished.exit_code == 0 and "customer(s)" in finished.stdout
    assert packages & (DATA_FRAMES | REPORTER | SANDBOX_SERVER) == set()


def test_validate_loads_the_readers_but_neither_the_reporter_nor_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finished, packages = logged_imports("staff", "validate", SAMPLES / "bamboohr_staff.toml",
                                        SAMPLES / "bamboohr_staff.csv", cwd=tmp_path, monkeypatch=monkeypatch)
    assert finished.exit_code in (0, 1) and "Rows read:" in finished.stdout
    assert {"pandas", "pyarrow"} <= packages  # what validating a file needs
    assert packages & (REPORTER | SANDBOX_SERVER) == set()  # validate writes no report and sends nothing
