"""Rows sent, report not written (a full disk): one line, exit 6, the outcomes kept, nothing sent twice."""

from __future__ import annotations

import datetime as dt
import errno
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import read_outcomes
from tests.staff_files import person as staff_person
from tests.staff_files import write_config as staff_config
from tests.staff_files import write_csv as staff_csv
from tests.test_run_job import JobFolder, run_cli
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


def kept_on_a_full_disk(job: JobFolder, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The monthly run meets a full disk as it writes the staff report (exit 6): its outcomes kept in
    state/unreported/. The kept file and the staff step's folder its report belongs in."""
    def disk_full(*args: object, **kwargs: object) -> Path:  # a full disk cannot be made here: see the test above
        raise OSError(errno.ENOSPC, "No space left on device")  # (tests/test_state_not_written.py makes one)

    with monkeypatch.context() as patch:
        patch.setattr("hrimport.report.writer.write_html", disk_full)
        assert run_cli("run", str(job.job)).exit_code == 6
    [kept] = (job.root / "state" / "unreported").iterdir()
    [run] = job.runs()
    return kept, run / "staff"


def test_a_report_the_next_run_cannot_write_either_is_kept_and_told_until_a_run_can(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next run tries to write the kept report where it belongs and cannot (a folder where report.html should
    be): the kept file stays, and the run says why beside the command that writes it; once the folder is fixed,
    the run after writes it and removes the file. Meanwhile retention (here 1 run) keeps the folder it belongs in."""
    job = JobFolder(tmp_path / "job", sandbox, retention=1)
    job.export("2024-05", job.people(2))
    kept, step_folder = kept_on_a_full_disk(job, monkeypatch)
    (step_folder / "report.html").mkdir()  # what stands in the way: renaming the page over it fails, as it would
    started = datetime.strptime(step_folder.parent.name, "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")  # the run's

    for _ in range(2):  # told by each run while it is there
        later = run_cli("run", str(job.job))
        assert later.exit_code == 0, later.stderr  # this month's steps are not held by an earlier run's report
        assert (f"hrimport: the report of the run of {started} could not be written (a full disk?), and its outcomes "
                f"are kept in {kept}: hrimport report {kept} --output {step_folder} writes it (and then removes that "
                f"file); this run could not write it either: it could not be written to {step_folder}: Is a "
                "directory\n") in later.stderr
        assert kept.is_file() and step_folder.parent in job.runs()
        assert json.loads((job.runs()[-1] / "run.json").read_text())["unreported"] == [
            {"said": later.stderr.split("hrimport: ", 1)[1].split("\n")[0], "kept": str(kept)}]

    (step_folder / "report.html").rmdir()
    fixed = run_cli("run", str(job.job))
    assert fixed.exit_code == 0, fixed.stderr
    assert (f"hrimport: the report of the run of {started}, kept when its disk was full, is now written: "
            f"{step_folder}\n") in fixed.stderr
    assert not kept.exists() and (step_folder / "report.html").is_file()  # kept by the run that wrote it
    assert [o.outcome.value for o in read_outcomes(step_folder / "outcomes.jsonl").rows] == ["added", "added"]
    run_cli("run", str(job.job))
    assert job.runs() == [max(job.runs())]  # then retention as ever


def test_a_report_kept_by_an_earlier_version_is_told_by_each_run_until_hrimport_report_writes_it(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept file an earlier version wrote names no folder for its report: every later run says so on its log
    (cron's mail) until someone writes the report. `hrimport report KEPT --output FOLDER` writes it and removes the
    kept file (its outcomes are in FOLDER now), so the runs after it say nothing more."""
    job = JobFolder(tmp_path / "job", sandbox)
    job.export("2024-05", job.people(2))
    kept, _ = kept_on_a_full_disk(job, monkeypatch)
    run_line, folder_line, *rows = kept.read_text().splitlines(keepends=True)
    assert json.loads(folder_line)["record"] == "report_folder"
    kept.write_text(run_line + "".join(rows))  # as an earlier version kept it
    started = datetime.strptime(kept.stem[-17:], "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")  # its step's: no folder named
    told = (f"hrimport: the report of the run of {started} could not be written (a full disk?), and its outcomes are "
            f"kept in {kept}: hrimport report {kept} --output FOLDER writes it (and then removes that file)\n")

    for _ in range(2):  # told by each run while it is there, not once (nothing new to import: exit 0)
        later = run_cli("run", str(job.job))
        assert later.exit_code == 0, later.stderr
        assert told in later.stderr

    beside = run_cli("report", str(kept))  # the report would land in the state folder, where nobody looks
    assert (beside.exit_code, beside.stderr) == (2, (
        f"Error: {kept} is the outcomes of a run kept in the state folder: give the folder to write its report into "
        f"with --output FOLDER (hrimport report {kept} --output FOLDER)\n"))
    late = tmp_path / "late"
    written = run_cli("report", str(kept), "--output", str(late))
    assert written.exit_code == 0, written.stderr
    assert written.stdout.endswith(f"Removed {kept} from the state folder: its outcomes are in "
                                   f"{late / 'outcomes.jsonl'} now.\n")
    assert not kept.exists() and (late / "report.html").is_file()
    assert [o.outcome.value for o in read_outcomes(late / "outcomes.jsonl").rows] == ["added", "added"]

    after = run_cli("run", str(job.job))
    assert after.exit_code == 0 and "could not be written" not in after.stderr
