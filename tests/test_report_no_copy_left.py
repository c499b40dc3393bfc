"""A run killed outright while writing its report leaves no copy of the HR data in the temporary folder.

The workbook libraries write each part of report.xlsx and to_fix.xlsx to a named file before zipping it
(xlsxwriter also streams each sheet's rows to one): to_fix holds every cell of the rows to fix, unmasked. Each
test runs a real dry run in a child process whose ``TMPDIR`` is a folder of its own, kills it with a real
SIGKILL while such a file is being zipped by its name, and looks in that folder and in the report folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hrimport.config import load_config
from hrimport.imports import import_file
from tests.staff_files import person, write_config, write_csv, write_workbook
from tests.test_chunks import workbook_cells
from tests.test_no_copy_left import killed_in
from tests.test_staff_import import hrimport

#: A dry run killed while a workbook library zips a part it wrote to a file whose name starts with argv[3].
KILLED_WHILE_ZIPPING = """
import os, signal, sys, zipfile
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports import import_file

zip_from_file = zipfile.ZipFile.write

def write(self, filename, *rest, **options):
    if Path(filename).name.startswith(sys.argv[3]):  # the part's file, named, being read into the package
        os.kill(os.getpid(), signal.SIGKILL)
    return zip_from_file(self, filename, *rest, **options)

zipfile.ZipFile.write = write
import_file(load_config(Path(sys.argv[1])), Path(sys.argv[2]), dry_run=True)
"""


@pytest.mark.parametrize(("writer", "export", "prefix"), [
    ("xlsxwriter (report.xlsx)", "staff.csv", "tmp"),
    ("openpyxl (to_fix.xlsx from the workbook itself)", "staff.xlsx", "openpyxl."),
])
def test_a_run_killed_while_writing_a_workbook_leaves_nothing_in_the_temporary_folder(
        tmp_path: Path, writer: str, export: str, prefix: str) -> None:
    rows = [person(n, Email=f"person{n}-at-acme") for n in range(1, 41)]  # every row to fix
    source = tmp_path / export
    write_csv(source, rows) if export.endswith(".csv") else write_workbook(source, rows)
    config = write_config(tmp_path / "staff.toml", date_order=None, email_check="strict")  # every address refused

    left = killed_in(tmp_path, KILLED_WHILE_ZIPPING, config, source, prefix)

    assert left == [], writer
    # what the library was writing stays where the report's own files are, in the run's private folder: in the
    # folder named for the workbook it was writing
    [folder] = (tmp_path / "reports" / "test-staff").iterdir()
    assert not [path for path in folder.iterdir() if path.name.startswith(prefix)], writer
    [partial] = [path for path in folder.iterdir() if path.name.endswith(".xlsx.partial")]
    parts = [path for path in partial.iterdir() if path.name.startswith(prefix)]
    assert parts, writer
    assert {path.stat().st_mode & 0o777 for path in parts} == {0o600}
    assert folder.stat().st_mode & 0o777 == 0o700 and partial.stat().st_mode & 0o777 == 0o700


#: ``hrimport report OUTCOMES --output FOLDER`` (argv 1, 2), killed while xlsxwriter zips a part of report.xlsx.
KILLED_WHILE_RENDERING = """
import os, signal, sys, zipfile
from pathlib import Path

zip_from_file = zipfile.ZipFile.write

def write(self, filename, *rest, **options):
    if Path(filename).name.startswith("tmp"):  # a part xlsxwriter wrote to a named file, being packed
        os.kill(os.getpid(), signal.SIGKILL)
    return zip_from_file(self, filename, *rest, **options)

zipfile.ZipFile.write = write
from hrimport.cli import main
main(["report", sys.argv[1], "--output", sys.argv[2]])
"""


def rendered_in_a_shared_folder(tmp_path: Path, rows: list[dict[str, str]], **config: str) -> tuple[int, Path, Path]:
    """A dry run of ``rows`` (the staff config with ``config``), and its report rendered into HR's folder, which
    holds other files too (as last month's report would be): (the dry run's exit code, its outcomes.jsonl, the
    folder)."""
    source = write_csv(tmp_path / "staff.csv", rows)
    run = import_file(load_config(write_config(tmp_path / "staff.toml", **config)), source, dry_run=True,
                      report_folder=tmp_path / "run")
    outcomes = tmp_path / "run" / "outcomes.jsonl"
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("for the payroll meeting\n")
    assert hrimport("report", str(outcomes), "--output", str(shared)).exit_code == 0  # a render exits 0
    return run.exit_code, outcomes, shared


def test_a_report_rendered_into_a_folder_of_ones_own_and_killed_leaves_a_named_partial_folder_cleaned_next_time(
        tmp_path: Path) -> None:
    code, outcomes, shared = rendered_in_a_shared_folder(tmp_path, [person(n) for n in range(1, 41)])
    assert code == 0
    before = (shared / "report.xlsx").read_bytes()

    left = killed_in(tmp_path, KILLED_WHILE_RENDERING, outcomes, shared)

    assert left == []  # nothing in $TMPDIR
    # nothing loose whose name says nothing ("tmpk2j4_x9a"): the parts are in a folder named for the workbook,
    # private, and the report.xlsx that was there is whole, not cut
    assert sorted(p.name for p in shared.iterdir()) == [
        "notes.txt", "outcomes.jsonl", "report.html", "report.xlsx", "report.xlsx.partial", "summary.json"]
    partial = shared / "report.xlsx.partial"
    assert partial.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in partial.iterdir() if not p.name.startswith("tmp")) == ["report.xlsx"]
    assert (shared / "report.xlsx").read_bytes() == before

    again = hrimport("report", str(outcomes), "--output", str(shared))

    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in shared.iterdir()) == [
        "notes.txt", "outcomes.jsonl", "report.html", "report.xlsx", "summary.json"]  # the partial folder cleaned
    assert workbook_cells(shared / "report.xlsx")["Rows"][40][0] == 41  # whole: row 41 of the export, the last
    assert (shared / "report.xlsx").stat().st_mode & 0o777 == 0o600
