"""Rows sent, report not written (a full disk): one line, exit 6, the outcomes kept, nothing sent twice."""

from __future__ import annotations

import datetime as dt
import errno
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import read_outcomes
from tests.staff_files import person as staff_person
from tests.staff_files import write_config as staff_config
from tests.staff_files import write_csv as staff_csv
from tests.test_timeoff_import import add_staff, hrimport, write_config, write_xlsx

pytestmark = pytest.mark.usefixtures("instant_retries")


def test_a_full_disk_after_sending_is_one_line_exit_6_and_the_next_run_sends_nothing_again(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    add_staff(sandbox, [("000101", "SG"), ("000102", "SG")])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        [person, "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 5), "", "", "SG", "", ""]
        for person in ("000101", "000102")])
    config = write_config(tmp_path)
    command = ["timeoff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports")]

    # A full disk cannot be made for real here (mounting a small filesystem needs privileges): the report's
    # HTML writer fails the way a full disk makes it fail. The import, the sandbox and the state are real.
    def disk_full(*args: object, **kwargs: object) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr("hrimport.report.writer.write_html", disk_full)
        result = hrimport(command, sandbox)

    assert result.exit_code == 6
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    kept = next((tmp_path / ".hrimport" / "unreported").glob("leave-*.jsonl"))
    assert result.stderr.startswith("Error: the report could not be written to ")
    assert ": No space left on device. 2 of 2 rows imported. What the service accepted is recorded in the state " \
           "folder, so the next run does not send it again. The run's outcomes are kept in " in result.stderr
    assert [o.outcome.value for o in read_outcomes(kept).rows] == ["added", "added"]
    assert len(sandbox.time_off(99)) == 2

    again = hrimport(command, sandbox)
    assert again.exit_code == 0, again.output
    assert len(sandbox.time_off(99)) == 2
    assert "2 of 2 rows imported." in again.stdout

    rendered = hrimport(["report", str(kept), "--output", str(tmp_path / "late")])
    assert rendered.exit_code == 0, rendered.output
    assert (tmp_path / "late" / "report.html").exists()


#: A dry run's report written again as report.xlsx once no file may grow past 4 KB (RLIMIT_FSIZE: the kernel
#: refuses the bytes past it, as a full disk does); argv: config, export, folder.
XLSX_ON_A_FULL_DISK = """
import gc, resource, sys
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.report.excel import write_report_xlsx

config, source, folder = map(Path, sys.argv[1:4])
run = import_file(load_config(config), source, dry_run=True, report_folder=folder / "first")
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_report_xlsx(run.result, folder / "report.xlsx")
except OSError as exc:
    print(f"OSError: {exc.strerror}")
gc.collect()
print("done")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as Linux has it")
def test_a_workbook_the_full_disk_refuses_is_an_os_error_and_nothing_on_stderr(tmp_path: Path) -> None:
    # xlsxwriter raises its own FileCreateError when the zip cannot be written: the import's one line for a report
    # not written (exit 6) catches OSError, so a run met a traceback and exit 1 ("rows need attention"), and the
    # half-written zip printed another traceback on stderr when it was collected
    source = staff_csv(tmp_path / "staff.csv", [staff_person(n) for n in range(1, 201)])
    config = staff_config(tmp_path / "staff.toml")

    done = subprocess.run([sys.executable, "-c", XLSX_ON_A_FULL_DISK, str(config), str(source), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "OSError: File too large\ndone\n", "")
    assert not (tmp_path / "report.xlsx").exists() and not (tmp_path / "report.xlsx.partial").exists()
